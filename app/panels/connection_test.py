"""A Ray cluster's connection test on its own thread, its result back on the GUI thread.

Joining a cluster (or starting a Ray instance on this computer) takes seconds, and an unreachable address waits for
Ray's time-out: the probe never runs on the GUI thread (:class:`app.background_job.BackgroundJob`: its one result
comes back on the GUI thread). Ray is imported by the probe only (``core.narration.probe_cluster``), never when the
window starts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from core.engine import ChatterboxError

from ..background_job import BackgroundJob

log = logging.getLogger(__name__)

Probe = Callable[[str | None], Any]
"""``probe(address) -> ClusterInfo``; raises ``ClusterError`` (``cluster.not_installed``, ``cluster.unreachable``)."""


def probe_cluster(address: str | None) -> Any:
    """The real probe: Ray is imported here, on the test's thread, the first time a test runs."""
    from core.narration import probe_cluster as probe

    return probe(address)


class ConnectionTest(BackgroundJob):
    succeeded = Signal(object)  # the ClusterInfo
    failed = Signal(object)  # the exception: a ChatterboxError (worded by its code) or another one

    def __init__(self, probe: Probe | None = None, parent: QObject | None = None, poll_ms: int = 50) -> None:
        super().__init__(parent, poll_ms)
        self.probe = probe or probe_cluster

    def start(self, address: str | None) -> bool:
        """Probe ``address`` on a new thread; ``False`` (nothing happens) while a test runs."""
        return self._start(self._run, (address,), "cluster-test")

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
            self._put("failed", exc)
        else:
            self._put("succeeded", info)

    def _deliver(self, kind: str, value: Any) -> None:
        (self.succeeded if kind == "succeeded" else self.failed).emit(value)
