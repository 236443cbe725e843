"""A Ray cluster's connection test on its own thread, its result back on the GUI thread.

Joining a cluster (or starting a Ray instance on this computer) takes seconds, and an unreachable address waits for
Ray's time-out: the probe never runs on the GUI thread. As :mod:`app.studio.export_runner` does, the thread puts its
one result on a queue that a QTimer on the GUI thread drains, so the signal is emitted on the GUI thread. Ray is
imported by the probe only (``core.narration.probe_cluster``), never when the window starts.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from core.engine import ChatterboxError

log = logging.getLogger(__name__)

Probe = Callable[[str | None], Any]
"""``probe(address) -> ClusterInfo``; raises ``ClusterError`` (``cluster.not_installed``, ``cluster.unreachable``)."""


def probe_cluster(address: str | None) -> Any:
    """The real probe: Ray is imported here, on the test's thread, the first time a test runs."""
    from core.narration import probe_cluster as probe

    return probe(address)


class ConnectionTest(QObject):
    succeeded = Signal(object)  # the ClusterInfo
    failed = Signal(object)  # the exception: a ChatterboxError (worded by its code) or another one

    def __init__(self, probe: Probe | None = None, parent: QObject | None = None, poll_ms: int = 50) -> None:
        super().__init__(parent)
        self.probe = probe or probe_cluster
        self._results: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._drain)

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self, address: str | None) -> bool:
        """Probe ``address`` on a new thread; ``False`` (nothing happens) while a test runs."""
        if self._thread is not None:
            return False
        self._thread = threading.Thread(target=self._run, args=(address,), name="cluster-test", daemon=True)
        self._thread.start()
        self._timer.start()
        return True

    def shutdown(self, timeout: float = 2.0) -> bool:
        """The window closes: wait a little for a test in progress (a daemon thread: it cannot hold the exit)."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        self._timer.stop()
        self._thread = None
        return not thread.is_alive()

    def _run(self, address: str | None) -> None:
        try:
            info = self.probe(address)
        except Exception as exc:  # every failure becomes the test's result
            if not isinstance(exc, ChatterboxError):
                log.exception("the cluster connection test failed")
            self._results.put((False, exc))
        else:
            self._results.put((True, info))

    @Slot()
    def _drain(self) -> None:
        try:
            ok, value = self._results.get_nowait()
        except queue.Empty:
            return
        thread, self._thread = self._thread, None
        self._timer.stop()
        if thread is not None:
            thread.join()  # it put its result: it ends now
        (self.succeeded if ok else self.failed).emit(value)
