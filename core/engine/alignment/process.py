"""The forced aligner (:func:`~core.engine.alignment.align.align`) in a process of its own.

pocketsphinx holds the GIL for the whole of an alignment (0.18 s for 4 s of audio, measured): on a thread it stalls
every other thread of the process — the API's event loop that streams each response's audio, the inference thread's
decode loop, a render, the window. In a child process it costs the caller only the pickling of the samples, and the
calling thread waits on a pipe with the GIL released. The API's word timestamps, the takes' words during a render
and after it, and the Speak tab's highlighted word all align through it.

The child is started at the first alignment (a plain interpreter runs it with ``-c``, so nothing of the caller's
main script is imported again; the frozen app, which has no ``-c``, through multiprocessing, whose launcher calls
``freeze_support``), aligns one recording at a time at a lower CPU priority than its parent's (on a machine with few
cores the inference thread gets them first: words can wait, audio not), and ends when it is closed or its parent
goes. A child that dies is started again for the next recording. :func:`shared_aligner` is the one child a process
shares (closed when the process exits); the API server keeps one of its own, closed when it stops.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np

from core.engine.alignment.errors import AlignmentError
from core.engine.alignment.words import Alignment, WordTime
from core.engine.errors import ChatterboxError, _rebuild

log = logging.getLogger(__name__)
CHILD = "from core.engine.alignment.process import serve_stdio; serve_stdio()"
NICENESS = 10
"""How much lower the child's CPU priority is than the server's (where the OS has one)."""


class AlignerFailed(RuntimeError):
    """The aligner's process failed (not the alignment: that is a :class:`ChatterboxError`)."""


class _Channel(Protocol):
    def send_bytes(self, message: bytes) -> None: ...

    def recv_bytes(self) -> bytes: ...

    def close(self) -> None: ...


class AlignerProcess:
    """:func:`core.engine.align` in a child process, one recording at a time (callers on several threads wait their
    turn)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._channel: _Channel | None = None
        self.cpu_seconds = 0.0
        """The child's CPU time spent aligning so far (what the benchmark weighs against a render's)."""

    def align(
        self, audio: np.ndarray, sample_rate: int, text: str, language: str = "en", spoken: str | None = None
    ) -> Alignment:
        """As :func:`core.engine.align` (its :class:`AlignmentError` when nothing can be placed);
        :class:`AlignerFailed` when the process fails."""
        request = encode_request(np.asarray(audio, dtype=np.float32), sample_rate, text, language, spoken)
        with self._lock:
            for attempt in range(2):  # an idle child may have died since: once more with a new one
                try:
                    channel = self._channel or self._start()
                    channel.send_bytes(request)
                    reply = channel.recv_bytes()
                    break
                except (EOFError, OSError) as exc:
                    self._drop()
                    if attempt:
                        raise AlignerFailed(f"the aligner's process ended: {exc!r}") from exc
        self.cpu_seconds += answer_cpu_seconds(reply)
        return decode_answer(reply)

    def close(self) -> None:
        """End the child (it reads the end of its input and exits)."""
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._channel is not None:
            with contextlib.suppress(OSError):
                self._channel.close()
            self._channel = None

    def _start(self) -> _Channel:
        self._channel = _ProcessChild() if getattr(sys, "frozen", False) else _StdioChild()
        return self._channel


_shared: AlignerProcess | None = None
_shared_lock = threading.Lock()


def shared_aligner() -> AlignerProcess:
    """The process's one aligner child, for whoever needs words (renders, the Speak tab); ended at exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = AlignerProcess()
            atexit.register(_shared.close)
        return _shared


# --- what crosses the pipe -------------------------------------------------------------------------------------------
_LENGTH = struct.Struct("<Q")


def _framed(header: dict[str, Any], payload: bytes = b"") -> bytes:
    encoded = json.dumps(header, ensure_ascii=False).encode("utf-8")
    return _LENGTH.pack(len(encoded)) + encoded + payload


def _unframed(message: bytes) -> tuple[dict[str, Any], bytes]:
    if len(message) < _LENGTH.size:
        raise AlignerFailed("a message from the aligner's process was cut short")
    (length,) = _LENGTH.unpack_from(message)
    try:
        header = json.loads(message[_LENGTH.size : _LENGTH.size + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise AlignerFailed(f"a message from the aligner's process is not readable: {exc}") from exc
    if not isinstance(header, dict):
        raise AlignerFailed("a message from the aligner's process is not readable")
    return header, message[_LENGTH.size + length :]


def encode_request(audio: np.ndarray, sample_rate: int, text: str, language: str, spoken: str | None) -> bytes:
    header = {"rate": int(sample_rate), "text": text, "language": language, "spoken": spoken}
    return _framed(header, np.ascontiguousarray(audio, dtype="<f4").tobytes())


def decode_request(message: bytes) -> tuple[np.ndarray, int, str, str, str | None]:
    header, payload = _unframed(message)
    audio = np.frombuffer(payload, dtype="<f4").astype(np.float32)
    return audio, int(header["rate"]), str(header["text"]), str(header["language"]), header.get("spoken")


def encode_answer(kind: str, found: Any, cpu_seconds: float = 0.0) -> bytes:
    spent = {"cpu_s": round(cpu_seconds, 6)}
    if kind == "words":
        words = [[w.word, w.start, w.end] for w in found.words]
        alignment = {k: getattr(found, k) for k in ("duration", "language", "aligner", "total_words")}
        return _framed({"kind": kind, "words": words, **alignment, **spent})
    if kind == "error":
        return _framed({"kind": kind, "code": found.code, "data": found.data, **spent})
    return _framed({"kind": "failed", "why": str(found), **spent})


def answer_cpu_seconds(message: bytes) -> float:
    """The child's CPU time for the answer ``message`` (0 when it is not readable)."""
    try:
        spent = _unframed(message)[0].get("cpu_s", 0.0)
    except AlignerFailed:
        return 0.0
    return float(spent) if isinstance(spent, (int, float)) else 0.0


def decode_answer(message: bytes) -> Alignment:
    header, _payload = _unframed(message)
    kind = header.get("kind")
    try:
        if kind == "words":
            words = [WordTime(str(w), float(start), float(end)) for w, start, end in header["words"]]
            duration, total = float(header["duration"]), int(header["total_words"])
            return Alignment(words, duration, str(header["language"]), str(header["aligner"]), total)
        error = (
            _rebuild(AlignmentError, str(header["code"]), dict(header.get("data") or {})) if kind == "error" else None
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise AlignerFailed(f"an answer of the aligner's process is not readable: {exc!r}") from exc
    if error is not None:
        raise error
    raise AlignerFailed(str(header.get("why", "the aligner's process answered nothing readable")))


# --- the children ----------------------------------------------------------------------------------------------------
class _StdioChild:
    """A ``python -c`` child reading requests on its stdin and answering on its stdout."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[3])  # where ``core`` is, however the caller found it
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in: IO[bytes] = self.process.stdin
        self._out: IO[bytes] = self.process.stdout

    def send_bytes(self, message: bytes) -> None:
        _write(self._in, message)

    def recv_bytes(self) -> bytes:
        return _read(self._out)

    def close(self) -> None:
        for stream in (self._in, self._out):
            with contextlib.suppress(OSError):
                stream.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _write(stream: IO[bytes], message: bytes) -> None:
    stream.write(_LENGTH.pack(len(message)) + message)
    stream.flush()


def _read(stream: IO[bytes]) -> bytes:
    size = stream.read(_LENGTH.size)
    if len(size) < _LENGTH.size:
        raise EOFError("the aligner's pipe was closed")
    (length,) = _LENGTH.unpack(size)
    message = stream.read(length)
    if len(message) < length:
        raise EOFError("the aligner's pipe was closed")
    return message


class _ProcessChild:
    """A multiprocessing child (the frozen app) on a pipe."""

    def __init__(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self._conn, theirs = context.Pipe()
        self.process = context.Process(target=serve_pipe, args=(theirs,), name="aligner", daemon=True)
        self.process.start()
        theirs.close()

    def send_bytes(self, message: bytes) -> None:
        self._conn.send_bytes(message)

    def recv_bytes(self) -> bytes:
        return self._conn.recv_bytes()

    def close(self) -> None:
        self._conn.close()
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


# --- the child -------------------------------------------------------------------------------------------------------
def answer(message: bytes) -> bytes:
    """One recording aligned: its words, the :class:`ChatterboxError` that refused it, or why it failed."""
    from core.engine.alignment.align import align

    started = time.process_time()
    try:
        audio, sample_rate, text, language, spoken = decode_request(message)
        found = align(audio, sample_rate, text, language, spoken)
        return encode_answer("words", found, time.process_time() - started)
    except ChatterboxError as exc:
        return encode_answer("error", exc, time.process_time() - started)
    except Exception as exc:  # reported to the parent, which gives the recording no words
        log.exception("aligning a recording failed")
        return encode_answer("failed", f"{type(exc).__name__}: {exc}", time.process_time() - started)


def _background() -> None:
    """The child yields the CPU to its parent (whose inference thread streams audio): words can wait, audio not.
    (Linux's ``SCHED_IDLE`` instead, measured with ``bench-words``: the render took 1.53× its time without word
    times against 1.37× niced, the takes' words piling up until the render's end.)"""
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(NICENESS)


def serve_stdio() -> None:
    """The ``-c`` child: requests on stdin, answers on stdout (whatever else writes to stdout goes to stderr)."""
    _background()
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    while True:
        try:
            request = _read(requests)
        except (EOFError, OSError):
            return
        _write(answers, answer(request))


def serve_pipe(conn: Any) -> None:
    """The multiprocessing child (the frozen app)."""
    _background()
    while True:
        try:
            request = conn.recv_bytes()
        except (EOFError, OSError):
            return
        conn.send_bytes(answer(request))
