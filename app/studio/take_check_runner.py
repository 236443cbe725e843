"""Screening the rendered takes again, the slow part on a thread of its own: each take's audio read and measured
(:func:`core.narration.measure_again`, with speech recognition when asked), progress and Stop; the studio stores what
it found on the GUI thread (:mod:`app.studio.take_check`). Reports through :class:`app.background_job.BackgroundJob`,
as an export does."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from PySide6.QtCore import Signal

from core.engine import ChatterboxError
from core.narration import measure_again, recogniser_for
from core.wording import describe_error

from ..background_job import CancellableJob

log = logging.getLogger(__name__)

PROGRESS_EVERY_S = 0.1


class TakeCheckRunner(CancellableJob):
    """The measuring part on its own thread: ``progress(done, total)``, then ``finished(measured, cancelled)`` or
    ``failed(sentence)``."""

    progress = Signal(int, int)
    finished = Signal(object, bool)
    failed = Signal(str)
    PASSING = frozenset({"progress"})

    def start(self, takes: list, listen: bool, language: str) -> bool:
        """Start measuring ``takes``; ``False`` while it runs (:meth:`cancel` stops it, keeping what was measured)."""
        return self._start_cancellable(self._run, (takes, listen, language), "take-check")

    def _run(self, takes: list, listen: bool, language: str, cancel: threading.Event) -> None:
        sent = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if now - sent[0] >= PROGRESS_EVERY_S or done >= total:
                sent[0] = now
                self._put("progress", (done, total))

        try:
            recogniser = recogniser_for(language, "auto") if listen else None
            measured = measure_again(takes, recogniser, progress, cancel.is_set)
        except Exception as exc:
            if not isinstance(exc, ChatterboxError):
                log.exception("screening the takes again failed")
            self._put("failed", describe_error(exc))
        else:
            self._put("finished", (measured, cancel.is_set()))

    def _deliver(self, kind: str, value: Any) -> None:
        if kind == "progress":
            self.progress.emit(*value)
        elif kind == "finished":
            self.finished.emit(*value)
        else:
            self.failed.emit(value)
