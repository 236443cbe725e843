"""*Takes ▾ → Screen the rendered takes again* (and *… with speech recognition*): every chosen take's audio read and
measured again on a thread of its own, with progress and Stop, then judged against the whole book and stored on the
GUI thread (:mod:`core.narration.screening.check`). What a project rendered before takes were screened needs, and
what a narrator asks for after changing a voice's takes by hand. Meanwhile the project is busy, as during an export:
no edits, no render."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.engine import ChatterboxError
from core.narration import takes_to_check
from core.wording import describe_error

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object

log = logging.getLogger(__name__)


class TakeCheck(_Part):
    """Screening the takes again, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def _connect_take_check(self) -> None:
        self.take_check.progress.connect(self._takes_job_progress)
        self.take_check.finished.connect(self._on_check_finished)
        self.take_check.failed.connect(self._on_check_failed)
        self.takes.check_action.triggered.connect(lambda: self.screen_again(False))
        self.takes.listen_action.triggered.connect(lambda: self.screen_again(True))

    def screen_again(self, listen: bool) -> bool:
        """Start (or, while one runs, stop) screening the rendered takes again; ``False`` when it cannot start."""
        if self.checking:
            self.take_check.cancel()
            return False
        if not self._writable():
            return False
        project = self.project
        assert project is not None
        takes = takes_to_check(project)
        if not takes:
            self.status.setText("No rendered takes to screen.")
            return False
        if not self.take_check.start(takes, listen, project.language):
            return False
        self._checked_project = project
        status = "Screening the takes" + (" with speech recognition…" if listen else "…")
        self._takes_job_began(len(takes), "Screening {done} of {total} takes", status)
        return True

    def _on_check_finished(self, measured: list, cancelled: bool) -> None:
        if self.project is not getattr(self, "_checked_project", None):
            self._takes_job_ended("")  # another project is open now: these measures were the closed one's
            return
        try:
            report = self.controller.store_checked(measured, cancelled)
        except ChatterboxError as exc:
            self._takes_job_ended("Screening stopped: " + describe_error(exc))
            self.message.emit(describe_error(exc), True)
            return
        self.segments.segments_changed(report.changed)
        unreadable = f"; {len(report.missing)} take(s) could not be read" if report.missing else ""
        stopped = " (stopped early: the rest keep their screens)" if cancelled else ""
        flagged = len(report.flagged)
        self._takes_job_ended(f"Screened {report.checked} take(s){stopped}: {flagged} need review{unreadable}.")
        self._show_counts()
        self.changed.emit()

    def _on_check_failed(self, message: str) -> None:
        self._takes_job_ended("Screening stopped: " + message)
        self.message.emit(message, True)
