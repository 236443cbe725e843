"""Finding the characters of a book off the GUI thread: the attribution (:func:`core.narration.attribute_project`)
takes about a second on a 1 MB novel, so it runs on a thread of its own, on a copy of what it reads (the segments'
text and place, their speakers, the cast), while the window stays responsive. What it found is adopted on the GUI
thread (:func:`adopt`), as one undoable edit (:mod:`app.studio.cast_edits`); the studio lets nothing edit the book
meanwhile, so the copy is the book when it ends. Reports through :class:`app.background_job.CancellableJob`.

The attribution is pure Python: on a thread it holds the interpreter lock for the interpreter's switch interval
(5 ms) at a time, and every call Qt makes into Python (each cell the list paints, each model query of a layout) waits
that long for it. A 1 MB book froze the window for the whole second; while the search runs the interval is
:data:`SWITCH_S` (the search takes about a third longer; a repaint of the list about 35 ms), then it is put back."""

from __future__ import annotations

import copy
import logging
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Signal

from core.engine import ChatterboxError
from core.narration import Edit, Project, ProjectError, attribute_project, editing
from core.wording import describe_error

from ..background_job import CancellableJob

log = logging.getLogger(__name__)
SWITCH_S = 0.0005
"""The interpreter's switch interval while the attribution runs (see above)."""


@dataclass
class FoundCast:
    """What the attribution found on the copy of ``project``."""

    project: Project
    """The project it was started on (the copy's original)."""
    copy: Project
    """The copy, with its speakers and cast as found."""
    edit: Edit
    """The undo record of the copy's changes (as it would be on the project itself)."""
    seconds: float
    """How long the attribution took."""


def shadow(project: Project) -> Project:
    """A copy of what the attribution reads and changes: each segment copied (not its takes), the cast and the
    chapters deep; nothing of the store (the copy is never saved). About 10 ms for 10,000 segments."""
    twin = copy.copy(project)
    twin.segments = [copy.copy(s) for s in project.segments]
    twin.cast = copy.deepcopy(project.cast)
    twin.chapters = copy.deepcopy(project.chapters)
    twin.positions, twin.store, twin.history_records = {}, None, {"undo": [], "redo": []}
    return twin


def adopt(project: Project, found: FoundCast) -> Edit:
    """Give ``project`` the cast and the speakers found on its copy; the undo record. ``ProjectError`` (nothing
    changes) when the book's shape changed since the copy was made."""
    edit = found.edit
    if editing.fingerprint(project) != edit.fingerprint:
        raise ProjectError("project.history_stale", op="attribute")
    changed = {entry[0] for entry in edit.speakers or ()}
    for segment, twin in zip(project.segments, found.copy.segments):
        if twin.id in changed:
            segment.speaker, segment.speaker_confidence = twin.speaker, twin.speaker_confidence
            segment.speaker_fixed = twin.speaker_fixed
    project.cast = found.copy.cast
    return edit


class CastFinder(CancellableJob):
    """``finished(FoundCast)``, ``failed(sentence)``, or ``cancelled()`` (a closed project: nothing to adopt)."""

    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    _interval: float | None = None

    def start(self, project: Project) -> bool:
        """Attribute a copy of ``project``; ``False`` while a search runs."""
        if self.running:
            return False
        self._interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._interval, SWITCH_S))
        if not self._start_cancellable(self._run, (project, shadow(project)), "find-characters"):
            self._restore()
            return False
        return True

    def _restore(self) -> None:
        if self._interval is not None:
            sys.setswitchinterval(self._interval)
            self._interval = None

    def shutdown(self, timeout: float = 10.0) -> bool:
        ended = super().shutdown(timeout)
        self._restore()
        return ended

    def _run(self, project: Project, twin: Project, cancel: threading.Event) -> None:
        started = time.perf_counter()
        try:
            edit = attribute_project(twin)
        except Exception as exc:
            if not isinstance(exc, ChatterboxError):
                log.exception("finding the characters failed")
            self._put("failed", describe_error(exc))
            return
        if cancel.is_set():
            self._put("cancelled")
        else:
            self._put("finished", FoundCast(project, twin, edit, time.perf_counter() - started))

    def _deliver(self, kind: str, value: Any) -> None:
        self._restore()  # the thread has ended (its last event)
        if kind == "finished":
            self.finished.emit(value)
        elif kind == "failed":
            self.failed.emit(value)
        else:
            self.cancelled.emit()
