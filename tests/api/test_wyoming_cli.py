"""``python -m core serve --wyoming``: the Wyoming server beside the HTTP API in one process (one worker, one request
queue), or alone with ``--no-http``; Ctrl-C stops both at once."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from tests.wyoming_support import synthesize


def _start(args: list[str]) -> tuple[subprocess.Popen, dict[str, str]]:
    """Start ``serve``; return the process and the addresses it printed (``wyoming``, ``http``)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "core", "serve", *args, "--provider", "cpu"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    found: dict[str, str] = {}
    deadline = time.monotonic() + 60
    assert proc.stderr is not None
    while time.monotonic() < deadline and "serving" not in found:
        line = proc.stderr.readline()
        if not line:
            break
        if m := re.search(r"Wyoming text to speech on tcp://127\.0\.0\.1:(\d+)", line):
            found["wyoming"] = m.group(1)
        if m := re.search(r"on (http://\S+/v1)", line):
            found["http"] = m.group(1)
        if line.startswith("serving ") and "Ctrl-C" in line:
            found["serving"] = line
    return proc, found


def _stop(proc: subprocess.Popen) -> tuple[int, str]:
    """Ctrl-C: the exit status and what it wrote after (``serve``'s HTTP server ends as ``interrupted``, exit 1)."""
    time.sleep(0.3)  # the servers' signal handlers are installed once they serve
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.stderr is not None
    rest = proc.stderr.read()
    proc.stderr.close()
    return code, rest


def test_serve_runs_wyoming_beside_the_http_api(bundles, tmp_path):
    proc, found = _start(
        [
            "--bundle",
            str(bundles["original"]),
            "--library",
            str(tmp_path),
            "--port",
            "0",
            "--wyoming",
            "tcp://127.0.0.1:0",
        ]
    )
    try:
        assert "wyoming" in found and "http" in found, found
        heard = asyncio.run(synthesize(int(found["wyoming"]), "Both at once."))
        assert heard.stopped and heard.samples > 0
        health = httpx.get(found["http"].removesuffix("/v1") + "/health", timeout=10).json()
        assert health["served"] == 1  # the Wyoming request went through the HTTP API's own queue
    finally:
        code, rest = _stop(proc)
    assert code in (0, 1) and "Traceback" not in rest, rest


def test_serve_wyoming_alone(bundles, tmp_path):
    proc, found = _start(
        [
            "--bundle",
            str(bundles["original"]),
            "--library",
            str(tmp_path),
            "--wyoming",
            "tcp://127.0.0.1:0",
            "--no-http",
        ]
    )
    try:
        assert "wyoming" in found and "http" not in found, found
        assert asyncio.run(synthesize(int(found["wyoming"]), "Alone.")).samples > 0
    finally:
        code, rest = _stop(proc)
    assert code == 0 and "Traceback" not in rest, rest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--no-http"], "--no-http serves nothing without --wyoming"),
        (["--wyoming", "unix:///tmp/x"], "--wyoming takes tcp://HOST:PORT"),
    ],
)
def test_serve_refuses_what_it_cannot_do(bundles, args, message):
    done = subprocess.run(
        [sys.executable, "-m", "core", "serve", "--bundle", str(bundles["turbo"]), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and message in done.stderr
