"""Connecting to Ray for a cluster render: a local instance on this computer, or an existing cluster.

Ray (``pip install .[cluster]``) is optional: it is imported only here, when a cluster render or a connection test
asks for it, so the rest of the app (and the frozen desktop build, which leaves Ray out) works without it.

``address``: ``None`` starts (or reuses) a Ray instance on this computer; ``"auto"`` joins the cluster this computer
already belongs to (``ray start``); ``"HOST:6379"`` joins a cluster's head directly; ``"ray://HOST:10001"`` connects
through the Ray Client. A process holds one connection: connecting to another address shuts the first one down.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from core.engine import ChatterboxError

LOCAL = "local"
"""How a local Ray instance is named in reports (``address=None``)."""

LOCAL_SYSTEM_CONFIG = {"worker_niceness": 0}
"""Ray runs its workers at niceness 15 (to keep a busy driver responsive); a render's actors are the work itself,
and at 15 they ran 3x slower than a local render on a machine busy with other processes (docs/PERFORMANCE-LOG.md)."""

_lock = threading.Lock()
_connected: str | None = None
"""The address this module connected to (``LOCAL`` for a local instance), ``None`` when it did not connect."""


class ClusterError(ChatterboxError):
    """Ray is missing, the cluster cannot be reached, or the cluster cannot render (code + data, worded by the front
    ends): ``cluster.not_installed``, ``cluster.unreachable`` (address, reason), ``cluster.start_failed`` (reason),
    ``cluster.no_resources`` (address), ``cluster.lost`` (segments, reason), ``cluster.gone`` (address, reason, kept:
    the segments of the render stored before Ray went away, left: those still pending)."""


@dataclass(frozen=True)
class ClusterInfo:
    """What a connection test finds: the alive nodes and the resources they offer."""

    address: str
    nodes: int
    cpus: float
    gpus: float
    ray_version: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "nodes": self.nodes,
            "cpus": self.cpus,
            "gpus": self.gpus,
            "ray_version": self.ray_version,
        }


def import_ray() -> ModuleType:
    """The ``ray`` module, or :class:`ClusterError` ``cluster.not_installed``."""
    try:
        import ray
    except ImportError as exc:
        raise ClusterError("cluster.not_installed", reason=str(exc)) from None
    return ray


def label(address: str | None) -> str:
    return LOCAL if address is None else address


def connect(address: str | None, timeout_s: float = 15.0) -> ModuleType:
    """Connect this process to Ray (see the module's docstring) and return the ``ray`` module.

    The same address again reuses the connection; a Ray that this process started by itself (``ray.init`` elsewhere,
    as tests do) serves a local render. An address that does not answer within ``timeout_s`` raises
    ``cluster.unreachable`` before the current connection is touched."""
    global _connected
    ray = import_ray()
    wanted = label(address)
    with _lock:
        if ray.is_initialized() and (_connected == wanted or (_connected is None and address is None)):
            return ray
        _check_reachable(address, timeout_s)
        if ray.is_initialized():
            ray.shutdown()
            _connected = None
        try:
            if address is None:
                ray.init(
                    address=LOCAL,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                    _system_config=LOCAL_SYSTEM_CONFIG,
                )
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        except ClusterError:
            raise
        except Exception as exc:  # noqa: BLE001 - ray raises ConnectionError, RuntimeError, ValueError… by version
            if address is None:
                raise ClusterError("cluster.start_failed", reason=reason_of(exc)) from None
            raise ClusterError("cluster.unreachable", address=address, reason=reason_of(exc)) from None
        _connected = wanted
    return ray


def disconnect() -> None:
    """Shut down the connection this module made (a Ray started elsewhere in the process is left alone)."""
    global _connected
    with _lock:
        if _connected is None:
            return
        ray = import_ray()
        if ray.is_initialized():
            ray.shutdown()
        _connected = None


def probe_cluster(address: str | None, timeout_s: float = 15.0) -> ClusterInfo:
    """Connect (or start the local instance) and report the alive nodes, their CPUs and GPUs, and Ray's version."""
    ray = connect(address, timeout_s)
    try:
        alive = [node for node in ray.nodes() if node.get("Alive", node.get("alive", False))]
        resources = ray.cluster_resources()
    except Exception as exc:  # noqa: BLE001 - a connection lost while asking
        raise ClusterError("cluster.unreachable", address=label(address), reason=reason_of(exc)) from None
    return ClusterInfo(
        address=_address_of(ray, address),
        nodes=len(alive),
        cpus=float(resources.get("CPU", 0.0)),
        gpus=float(resources.get("GPU", 0.0)),
        ray_version=str(ray.__version__),
    )


def _address_of(ray: ModuleType, address: str | None) -> str:
    if address is not None and address != "auto":
        return address
    try:
        return str(ray.get_runtime_context().gcs_address)
    except Exception:  # noqa: BLE001 - a Ray Client connection has no GCS address to show
        return label(address)


def _check_reachable(address: str | None, timeout_s: float) -> None:
    """A ``HOST:PORT`` or ``ray://HOST:PORT`` address must accept a TCP connection within ``timeout_s`` (Ray's own
    client retries for a long time before it gives up)."""
    if address is None or address == "auto":
        return
    target = address.removeprefix("ray://").rstrip("/")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise ClusterError("cluster.unreachable", address=address, reason="not HOST:PORT, ray://HOST:PORT or auto")
    started = time.monotonic()
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=max(0.1, timeout_s)):
            pass
    except OSError as exc:
        waited = time.monotonic() - started
        raise ClusterError(
            "cluster.unreachable", address=address, reason=exc.strerror or type(exc).__name__, seconds=round(waited, 1)
        ) from None


def reason_of(exc: BaseException) -> str:
    """The first line of an exception's text (at most 300 characters), or its type's name: the reason an error names."""
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
