"""Shared by the security tests: a Python audit hook that records opens and socket calls, a network blocker, a
payload that proves a pickle was loaded, and the environment of a child process with a throw-away home."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from pathlib import Path

from core.engine.options import RuntimeOptions

ROOT = Path(__file__).resolve().parent.parent
FAST = RuntimeOptions(provider="cpu", threads=1)


# --- watching Python-level events ------------------------------------------------------------------------------------
_AUDIT: list | None = None
"""Audit hooks cannot be removed: the hook records only while a test holds this list (see :func:`audited`)."""
_AUDIT_EVENTS = {
    "open",
    "socket.connect",
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.gethostbyname_ex",
    "socket.gethostbyaddr",
    "socket.sendto",
    "socket.sendmsg",
}


def _audit_hook(event: str, args: tuple) -> None:
    log = _AUDIT
    if log is not None and event in _AUDIT_EVENTS:
        log.append((event, args))


sys.addaudithook(_audit_hook)


@contextlib.contextmanager
def audited():
    global _AUDIT
    events: list = []
    _AUDIT = events
    try:
        yield events
    finally:
        _AUDIT = None


class Evil:
    """Unpickling this creates ``marker``: proof that a pickle was loaded."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return os.makedirs, (self.marker,)


def child_env(home: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "ORT_"))}
    env.update({"HOME": str(home), "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT), **extra})
    for var in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        env[var] = str(home / var.lower())
    return env


def block_network(monkeypatch) -> list:
    attempts: list = []

    def refuse(name):
        def blocked(*args, **kwargs):
            attempts.append((name, args, kwargs))
            raise OSError(f"test: network access attempted ({name})")

        return blocked

    for name in ("connect", "connect_ex", "sendto", "sendmsg"):
        monkeypatch.setattr(socket.socket, name, refuse(f"socket.{name}"))
    for name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr"):
        monkeypatch.setattr(socket, name, refuse(name))
    return attempts


def socket_events(events: list) -> list:
    return [e for e in events if e[0] != "open"]
