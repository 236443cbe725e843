"""A project export on its own thread: progress with time left, cancel, and the result back on the GUI thread.

The export is neither on the GUI thread (the window stays responsive) nor on the inference worker (Speak and a
render go on while a book is written). The thread reports through a queue that a QTimer on the GUI thread drains,
as :mod:`app.engine_bridge` does for the worker: signals are emitted on the GUI thread only. Cancel sets an event
that the export checks between segments; the export writes under a temporary name, so a cancelled export leaves
no file under the final name.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from core.engine import ChatterboxError
from core.wording import describe_error

log = logging.getLogger(__name__)

Export = Callable[..., Any]
"""``export(project, request, progress=callback, cancelled=callable) -> result``; raises on failure, and
``ExportCancelled`` when ``cancelled()`` said so."""

PROGRESS_EVERY_S = 0.1
"""At most ten progress reports a second reach the GUI (an export reports every segment)."""


class ExportRunner(QObject):
    progress = Signal(object)  # the export's progress report (``stage``, ``done``, ``total``, ``seconds_left``…)
    finished = Signal(object)  # the export's result
    failed = Signal(str)  # the sentence a person reads
    cancelled = Signal()

    def __init__(self, export: Export, parent: QObject | None = None, poll_ms: int = 50) -> None:
        super().__init__(parent)
        self.export = export
        self._events: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._drain)

    @property
    def running(self) -> bool:
        """An export was started and its end has not been reported yet."""
        return self._thread is not None

    def start(self, project: Any, request: Any) -> bool:
        """Start exporting; ``False`` when an export already runs."""
        if self._thread is not None:
            return False
        self._cancel = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(project, request, self._cancel), name="export", daemon=True
        )
        self._thread.start()
        self._timer.start()
        return True

    @Slot()
    def cancel(self) -> None:
        """Ask the export to stop (it stops at its next check; :attr:`cancelled` follows)."""
        self._cancel.set()

    def shutdown(self, timeout: float = 10.0) -> bool:
        """Cancel and wait for the thread (the window is closing); ``False`` if it did not end in time."""
        thread = self._thread
        if thread is None:
            return True
        self._cancel.set()
        thread.join(timeout)
        self._drain()
        return not thread.is_alive()

    # --- the export's thread -----------------------------------------------------------------------------------
    def _run(self, project: Any, request: Any, cancel: threading.Event) -> None:
        sent: dict[str, Any] = {"at": 0.0, "stage": None}  # when the last report went out, and its stage

        def progress(report: Any) -> None:
            now, stage = time.monotonic(), getattr(report, "stage", None)
            done = getattr(report, "done", 0) >= getattr(report, "total", 1)
            if now - sent["at"] >= PROGRESS_EVERY_S or stage != sent["stage"] or done:
                sent["at"], sent["stage"] = now, stage
                self._events.put(("progress", report))

        try:
            result = self.export(project, request, progress=progress, cancelled=cancel.is_set)
        except Exception as exc:
            if type(exc).__name__ == "ExportCancelled":
                self._events.put(("cancelled", None))
                return
            if not isinstance(exc, ChatterboxError):  # a bug must not leave the studio waiting for an export
                log.exception("the export failed")
            self._events.put(("failed", describe_error(exc)))
        else:  # a cancel that came after the last check: the file is whole, and it is where it was asked
            self._events.put(("finished", result))

    # --- the GUI thread ----------------------------------------------------------------------------------------
    @Slot()
    def _drain(self) -> None:
        while True:
            try:
                kind, value = self._events.get_nowait()
            except queue.Empty:
                return
            if kind == "progress":
                self.progress.emit(value)
                continue
            thread, self._thread = self._thread, None
            self._timer.stop()
            if thread is not None:
                thread.join()  # it put its last event: it ends now
            if kind == "finished":
                self.finished.emit(value)
            elif kind == "failed":
                self.failed.emit(value)
            else:
                self.cancelled.emit()
