"""One job on a thread of its own, its events back on the GUI thread.

The job's thread puts ``(kind, value)`` events on a queue that a QTimer on the GUI thread drains, so signals are
emitted on the GUI thread only (as :mod:`app.engine_bridge` does for the worker's events). An event whose kind is in
:attr:`BackgroundJob.PASSING` (a progress report) is handed on as it comes; any other is the job's last: its thread
is joined (it has put its last event, it ends now) and the timer stops before :meth:`BackgroundJob._deliver` sees
it. Used by a project export (:mod:`app.studio.export_runner`), the takes screened again
(:mod:`app.studio.take_check_runner`) and given their word times (:mod:`app.studio.word_times_runner`) — all
:class:`CancellableJob`, the last two :class:`TakesJob` — and a cluster's connection test
(:mod:`app.panels.connection_test`).
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
PROGRESS_EVERY_S = 0.1
"""How often a :class:`TakesJob` reports its progress at most (the last step always)."""


class BackgroundJob(QObject):
    PASSING: frozenset[str] = frozenset()
    """Kinds of event that do not end the job."""

    def __init__(self, parent: QObject | None = None, poll_ms: int = 50) -> None:
        super().__init__(parent)
        self._events: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._drain)

    @property
    def running(self) -> bool:
        """A job was started and its end has not been reported yet."""
        return self._thread is not None

    def _start(self, target: Callable[..., None], args: tuple[Any, ...], name: str) -> bool:
        """Run ``target(*args)`` on a new daemon thread; ``False`` (nothing happens) while a job runs."""
        if self._thread is not None:
            return False
        self._thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._thread.start()
        self._timer.start()
        return True

    def _put(self, kind: str, value: Any = None) -> None:
        """From the job's thread: an event for the GUI thread."""
        self._events.put((kind, value))

    @Slot()
    def _drain(self) -> None:
        while True:
            try:
                kind, value = self._events.get_nowait()
            except queue.Empty:
                return
            if kind not in self.PASSING:
                thread, self._thread = self._thread, None
                self._timer.stop()
                if thread is not None:
                    thread.join()  # it put its last event: it ends now
            self._deliver(kind, value)

    def _deliver(self, kind: str, value: Any) -> None:
        """On the GUI thread: emit the signal for one event."""
        raise NotImplementedError


class CancellableJob(BackgroundJob):
    """A job that can be asked to stop: its target gets a :class:`threading.Event` as its last argument and checks it
    between steps; :meth:`shutdown` (the window closing) sets it and waits for the thread."""

    def __init__(self, parent: QObject | None = None, poll_ms: int = 50) -> None:
        super().__init__(parent, poll_ms)
        self._cancel = threading.Event()

    def _start_cancellable(self, target: Callable[..., None], args: tuple[Any, ...], name: str) -> bool:
        """:meth:`_start` with a fresh cancel event after ``args``; ``False`` while a job runs."""
        if self.running:
            return False
        self._cancel = threading.Event()
        return self._start(target, (*args, self._cancel), name)

    @Slot()
    def cancel(self) -> None:
        """Ask the job to stop (it stops at its next check; its last event follows)."""
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


class TakesJob(CancellableJob):
    """Work on a project's takes, one after another: ``progress(done, total)`` as it goes, then ``finished(result,
    cancelled)`` — what was done so far, which the studio stores on the GUI thread — or ``failed(sentence)``."""

    progress = Signal(int, int)
    finished = Signal(object, bool)
    failed = Signal(str)
    PASSING = frozenset({"progress"})

    def _report(self, work: Callable[[Callable[[int, int], None]], Any], cancel: threading.Event, what: str) -> None:
        """On the job's thread: run ``work(progress)`` and report its result (``what`` names it in the log)."""
        sent = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if now - sent[0] >= PROGRESS_EVERY_S or done >= total:
                sent[0] = now
                self._put("progress", (done, total))

        try:
            result = work(progress)
        except Exception as exc:
            if not isinstance(exc, ChatterboxError):
                log.exception("%s failed", what)
            self._put("failed", describe_error(exc))
        else:
            self._put("finished", (result, cancel.is_set()))

    def _deliver(self, kind: str, value: Any) -> None:
        if kind == "progress":
            self.progress.emit(*value)
        elif kind == "finished":
            self.finished.emit(*value)
        else:
            self.failed.emit(value)
