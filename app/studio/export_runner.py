"""A project export on its own thread: progress with time left, cancel, and the result back on the GUI thread.

The export is neither on the GUI thread (the window stays responsive) nor on the inference worker (Speak and a
render go on while a book is written). The thread reports through :class:`app.background_job.BackgroundJob`:
signals are emitted on the GUI thread only. Cancel sets an event
that the export checks between segments; the export writes under a temporary name, so a cancelled export leaves
no file under the final name.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from core.engine import ChatterboxError
from core.wording import describe_error

from ..background_job import CancellableJob

log = logging.getLogger(__name__)

Export = Callable[..., Any]
"""``export(project, request, progress=callback, cancelled=callable) -> result``; raises on failure, and
``ExportCancelled`` when ``cancelled()`` said so."""

PROGRESS_EVERY_S = 0.1
"""At most ten progress reports a second reach the GUI (an export reports every segment)."""


class ExportRunner(CancellableJob):
    progress = Signal(object)  # the export's progress report (``stage``, ``done``, ``total``, ``seconds_left``…)
    finished = Signal(object)  # the export's result
    failed = Signal(str)  # the sentence a person reads
    cancelled = Signal()
    PASSING = frozenset({"progress"})

    def __init__(self, export: Export, parent: QObject | None = None, poll_ms: int = 50) -> None:
        super().__init__(parent, poll_ms)
        self.export = export

    def start(self, project: Any, request: Any) -> bool:
        """Start exporting; ``False`` when an export already runs (:meth:`cancel` stops it: :attr:`cancelled`)."""
        return self._start_cancellable(self._run, (project, request), "export")

    # --- the export's thread -----------------------------------------------------------------------------------
    def _run(self, project: Any, request: Any, cancel: threading.Event) -> None:
        sent: dict[str, Any] = {"at": 0.0, "stage": None}  # when the last report went out, and its stage

        def progress(report: Any) -> None:
            now, stage = time.monotonic(), getattr(report, "stage", None)
            done = getattr(report, "done", 0) >= getattr(report, "total", 1)
            if now - sent["at"] >= PROGRESS_EVERY_S or stage != sent["stage"] or done:
                sent["at"], sent["stage"] = now, stage
                self._put("progress", report)

        try:
            result = self.export(project, request, progress=progress, cancelled=cancel.is_set)
        except Exception as exc:
            if type(exc).__name__ == "ExportCancelled":
                self._put("cancelled")
                return
            if not isinstance(exc, ChatterboxError):  # a bug must not leave the studio waiting for an export
                log.exception("the export failed")
            self._put("failed", describe_error(exc))
        else:  # a cancel that came after the last check: the file is whole, and it is where it was asked
            self._put("finished", result)

    # --- the GUI thread ----------------------------------------------------------------------------------------
    def _deliver(self, kind: str, value: Any) -> None:
        if kind == "progress":
            self.progress.emit(value)
        elif kind == "finished":
            self.finished.emit(value)
        elif kind == "failed":
            self.failed.emit(value)
        else:
            self.cancelled.emit()
