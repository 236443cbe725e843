"""``--ray [ADDRESS]`` and ``--actors N`` of ``narrate`` and ``project --render``: the pending segments rendered by Ray
actors (:mod:`core.narration.cluster.render`), with the same progress bar and exit codes as a local render.

Ray ends a driver process itself when the raylet of its own node goes away (the local instance's raylet or
dashboard agent killed, or this machine's node of a cluster: its core worker exits with status 1 the moment its
connection to the node's object store breaks), so no ``except`` in that process can say what happened. A command
with ``--ray`` therefore runs in a child process that this one watches (:func:`run_watched`). The child writes two
records to a status file: the render's segments as it begins, and that ``main`` finished. When the child ends the
way Ray ends it, after the render began and before ``main`` finished, the watcher says so (``cluster.gone``, exit 2)
with the segments stored by then, read from the project. Rendering again continues with the pending ones.

Ray's own lines (a raylet's notice of a dead worker or node, printed by the driver; what its processes write to
the standard output they inherit) go to stderr: standard output stays the command's own (``--json``: one object).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.cli.errors import CliError

LOCAL = "local"
STATUS_ENV = "CHATTERBOX_RAY_STATUS"
"""The status file a watched command writes its records to (set by :func:`run_watched` for its child)."""
RAY_EXIT_CODES = (1, -signal.SIGABRT)
"""How Ray ends a driver whose node is gone: ``_Exit(1)`` (its connection to the object store broken), or an abort
(a fatal check, such as the GCS not answering again in time)."""

_status: str | None = None
"""In the child of :func:`run_watched`: the status file."""


def add_cluster_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ray",
        nargs="?",
        const=LOCAL,
        metavar="ADDRESS",
        help="render on Ray actors: alone, a local Ray instance on this computer; 'auto', HOST:6379 or "
        "ray://HOST:10001 joins a cluster (needs pip install .[cluster])",
    )
    p.add_argument(
        "--actors", type=int, metavar="N", help="with --ray: how many actors (default one per GPU, else per 4 cores)"
    )


def check_cluster_arguments(args) -> None:
    if getattr(args, "actors", None) is not None and (args.actors < 1 or args.ray is None):
        raise CliError("--actors needs --ray and a number of at least 1.")
    if getattr(args, "ray", None) is None:
        return
    if getattr(args, "regenerate", None) is not None:
        raise CliError("--ray renders the pending segments (--render); --regenerate runs on this computer.")
    if args.command == "project" and not args.render:
        raise CliError("--ray goes with --render: it says where the pending segments are rendered.")


def wants_cluster(args) -> bool:
    return getattr(args, "ray", None) is not None


def render_on_cluster(project, args, pipe, bar, numbers, policy=None):
    """The pending segments (or ``numbers``) on Ray; the summary carries the ``cluster`` report. Ray is shut down
    before this returns, so that nothing of it writes after the command's own output."""
    from core.narration import ONE_TAKE, ClusterStats, cluster_steps, run_steps
    from core.narration.cluster.connect import disconnect, label
    from core.narration.cluster.render import cluster_todo

    address = None if args.ray == LOCAL else args.ray
    stats = ClusterStats()
    todo = cluster_todo(project, pipe, numbers, policy or ONE_TAKE)
    _record({"render": {"address": label(address), "project": str(project.folder), "numbers": _numbers(project, todo)}})
    try:
        with ray_output_to_stderr():
            try:
                summary = run_steps(
                    cluster_steps(
                        project, lambda: pipe, address, bar.update, None, numbers, args.actors, stats, policy=policy
                    )
                )
            finally:
                disconnect()
    finally:
        if stats.actors and not getattr(args, "json", False):
            print(_line(stats), file=sys.stderr)
    summary.cluster = stats.as_dict()
    return summary


def _numbers(project, segments) -> list[int]:
    return [project.number(s) for s in segments]


def _line(stats) -> str:
    return (
        f"ray ({stats.address}): {stats.actors} actor(s) on {stats.nodes} node(s), {stats.units} unit(s), "
        f"{stats.requeued_units} re-queued; start-up {stats.startup_s:.1f} s"
    )


@contextlib.contextmanager
def ray_output_to_stderr() -> Iterator[None]:
    """Standard output goes to stderr meanwhile: ``sys.stdout`` (Ray's driver prints its raylet's notices there,
    as ``(raylet) …`` lines) and file descriptor 1 itself (what Ray's C++ core writes, and the standard output that
    the processes of a local Ray instance started meanwhile inherit for their whole life)."""
    _flush(sys.stdout, sys.__stdout__)
    saved_fd: int | None = None
    with contextlib.suppress(OSError, ValueError):  # no usable descriptors (a windowed process): sys.stdout only
        saved_fd = os.dup(1)
        os.dup2(2, 1)
    saved, sys.stdout = sys.stdout, sys.stderr
    try:
        yield
    finally:
        sys.stdout = saved
        _flush(sys.stderr, sys.__stdout__)
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


def _flush(*streams) -> None:
    for stream in streams:
        if stream is not None:
            stream.flush()


# --- the watcher: a command with --ray runs in a child process ------------------------------------------------------
def claim_status() -> None:
    """In a watched child, take the status file's path (out of the environment, so Ray's processes do not get it)."""
    global _status
    if STATUS_ENV in os.environ:
        _status = os.environ.pop(STATUS_ENV)


def watched(args) -> bool:
    """Whether this command runs in a child process watched by this one (see the module's docstring): ``--ray`` on
    ``narrate`` or ``project``, in the parent, with Ray installed and a Python to start (not a frozen build)."""
    if _status is not None or not wants_cluster(args) or args.command not in ("narrate", "project"):
        return False
    if getattr(sys, "frozen", False) or not sys.executable:
        return False
    try:
        import ray  # noqa: F401 - only whether it is installed (the child imports it anyway)
    except ImportError:  # not installed, or ``ray`` set to None in sys.modules: as if not installed
        return False
    return True


def run_watched(argv: list[str]) -> int:
    """Run ``python -m core ARGV`` in a child process and return its exit status; where Ray ended it in the middle
    of its render, raise ``cluster.gone`` with the segments stored by then."""
    import core

    root = str(Path(core.__file__).resolve().parents[1])  # the child imports this same core
    with tempfile.TemporaryDirectory(prefix="chatterbox-ray-") as folder:
        status = Path(folder) / "status.jsonl"
        status.touch()
        env = {**os.environ, STATUS_ENV: str(status)}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
        child = subprocess.Popen([sys.executable, "-m", "core", *argv], env=env)
        code = _wait(child)
        records = _read_records(status)
    if "finished" in records or "render" not in records or code not in RAY_EXIT_CODES:
        return code if code >= 0 else 128 - code  # a signal, as a shell reports it
    raise _gone(records["render"], code)


def _wait(child: subprocess.Popen) -> int:
    """The child's exit status. Ctrl-C reaches the child from the terminal (it stops its render and says what is
    kept): this process lets it finish; a SIGTERM sent to this process is passed on to the child."""
    if threading.current_thread() is not threading.main_thread():
        return child.wait()

    def forward(signum: int, _frame: Any) -> None:
        child.send_signal(signum)

    handlers: dict[signal.Signals, Any] = {signal.SIGINT: signal.SIG_IGN, signal.SIGTERM: forward}
    previous = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    try:
        return child.wait()
    finally:
        for signum, handler in previous.items():
            if handler is not None:  # None: set outside Python, left as it is
                signal.signal(signum, handler)


def _gone(render: dict, code: int) -> Exception:
    """``cluster.gone`` for a child that Ray ended: the render's segments stored by then, read from the project."""
    from core.narration import ClusterError, open_project

    numbers = set(render["numbers"])
    project = open_project(Path(render["project"]))
    kept = sum(1 for n, s in enumerate(project.segments, 1) if n in numbers and project.status(s) == "rendered")
    how = f"exit status {code}" if code >= 0 else f"signal {-code}"
    return ClusterError(
        "cluster.gone",
        address=render["address"],
        reason=f"Ray ended the render's process: {how}",
        kept=kept,
        left=len(numbers) - kept,
    )


def note_finished() -> None:
    """In a watched child: ``main`` is done (whatever its exit status, Ray did not end the process)."""
    _record({"finished": True})


def _record(record: dict) -> None:
    if _status is None:
        return
    with open(_status, "a", encoding="utf-8") as file:
        file.write(json.dumps(record) + "\n")


def _read_records(path: Path) -> dict:
    records: dict = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):  # a line cut short by the end of the process
            records.update(json.loads(line))
    return records
