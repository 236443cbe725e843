"""One renderer per project: a lock that whoever renders or edits a project holds while it does.

The lock is an operating-system file lock on ``.project.lock`` in the project folder, taken through ``filelock``
(``fcntl.flock`` on Linux and macOS, ``msvcrt.locking`` on Windows). The operating system drops such a lock when its
process ends, however it ends, so a lock left by a crashed process (``kill -9``, power cut of a network client whose
lease expires) is simply free: the next process takes it over without guessing from pids or clocks. Beside it,
``.project-lock.json`` says who holds it (host, pid, since when, what for), so a second process can tell its user
who is using the project; a holder file whose process is gone is just overwritten by the next holder.

Within one process the lock is shared: a second :class:`ProjectLock` of the same folder (the window's studio and the
render it starts) takes a share of the first instead of refusing its own process; the lock is released with the
last share.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from filelock import FileLock, Timeout

from core.engine import write_json_atomic
from core.narration.projects.project import HOLDER_FILE, LOCK_FILE, ProjectError


class ProjectLocked(ProjectError):
    """Another process renders or edits the project (``data``: folder, host, pid, since, purpose)."""


@dataclass(frozen=True)
class LockHolder:
    host: str
    pid: int
    since: str
    """When the lock was taken (ISO 8601, UTC)."""
    purpose: str
    """What the holder does: ``render``, ``edit``, ``studio``, ``narrate``, ``export``."""
    app: str = "Chatterbox Desk"

    def since_local(self) -> str:
        """``since`` in this computer's time zone, to the minute (what a person reads)."""
        try:
            return datetime.fromisoformat(self.since).astimezone().strftime("%Y-%m-%d %H:%M")
        except ValueError:
            return self.since

    def is_here(self) -> bool:
        return self.host == socket.gethostname()


@dataclass
class _Held:
    lock: FileLock
    shares: int
    holder: LockHolder
    made: bool
    """The folder did not exist before the lock (a new project): removed again if nothing but the lock was put in."""


_SHARED: dict[Path, _Held] = {}
"""Folder → this process's lock."""
_GUARD = threading.Lock()


class ProjectLock:
    """``with ProjectLock(folder, "render"):`` — raises :class:`ProjectLocked` when another process holds it."""

    def __init__(self, folder: Path | str, purpose: str = "edit"):
        self.folder = Path(folder)
        self.purpose = purpose
        self.held = False

    @property
    def _key(self) -> Path:
        return self.folder.resolve()

    def acquire(self) -> ProjectLock:
        if self.held:
            return self
        key = self._key
        with _GUARD:
            if key in _SHARED:
                _SHARED[key].shares += 1
                self.held = True
                return self
            made = not self.folder.exists()
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                lock = FileLock(str(self.folder / LOCK_FILE), timeout=0, thread_local=False)
                lock.acquire(timeout=0)
            except Timeout:
                raise self._locked_error() from None
            except OSError as exc:
                raise ProjectError(
                    "project.lock_failed", folder=str(self.folder), reason=str(exc.strerror or exc)
                ) from exc
            holder = LockHolder(
                socket.gethostname(),
                os.getpid(),
                datetime.now(timezone.utc).isoformat(timespec="seconds"),
                self.purpose,
            )
            with contextlib.suppress(OSError):  # the lock holds without it (a second process cannot say who)
                write_json_atomic(self.folder / HOLDER_FILE, asdict(holder))
            _SHARED[key] = _Held(lock, 1, holder, made)
            self.held = True
            return self

    def release(self) -> None:
        if not self.held:
            return
        key = self._key
        with _GUARD:
            self.held = False
            held = _SHARED[key]
            held.shares -= 1
            if held.shares:
                return
            del _SHARED[key]
            with contextlib.suppress(OSError):
                if _read_holder(self.folder) == held.holder:
                    (self.folder / HOLDER_FILE).unlink(missing_ok=True)
            held.lock.release()
            if held.made:
                _remove_if_only_lock(self.folder)

    def holder(self) -> LockHolder | None:
        """Who holds the lock now: this process (when it does), another process, or ``None`` when it is free."""
        key = self._key
        with _GUARD:
            if key in _SHARED:
                return _SHARED[key].holder
        if not (self.folder / LOCK_FILE).exists():
            return None
        probe = FileLock(str(self.folder / LOCK_FILE), timeout=0, thread_local=False)
        try:
            probe.acquire(timeout=0)
        except (Timeout, OSError):
            return _read_holder(self.folder) or LockHolder("unknown host", 0, "", "unknown")
        probe.release()
        return None

    def __enter__(self) -> ProjectLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    def _locked_error(self) -> ProjectLocked:
        holder = None
        for _ in range(20):  # the holder writes its file just after it takes the lock
            holder = _read_holder(self.folder)
            if holder is not None:
                break
            time.sleep(0.01)
        if holder is None:
            holder = LockHolder("unknown host", 0, "", "unknown")
        return ProjectLocked(
            "project.locked",
            folder=str(self.folder),
            host=holder.host,
            pid=holder.pid,
            since=holder.since_local() or "an unknown time",
            purpose=holder.purpose,
        )


def _read_holder(folder: Path) -> LockHolder | None:
    try:
        data = json.loads((folder / HOLDER_FILE).read_text(encoding="utf-8"))
        return LockHolder(
            str(data["host"]), int(data["pid"]), str(data["since"]), str(data["purpose"]), str(data.get("app", ""))
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _remove_if_only_lock(folder: Path) -> None:
    """A folder made for the lock alone (a command that failed before it wrote a project) is removed again."""
    with contextlib.suppress(OSError):
        if {p.name for p in folder.iterdir()} <= {LOCK_FILE}:
            (folder / LOCK_FILE).unlink(missing_ok=True)
            folder.rmdir()
