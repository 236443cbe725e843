"""Helpers for the local speech API tests: a worker with a stand-in model, a real uvicorn server on a free port."""

from __future__ import annotations

import io
import queue
import time
from contextlib import contextmanager
from pathlib import Path

import soundfile as sf

import core.engine as w
from core.api.server import ApiConfig, ApiServer, create_app
from core.engine.options import RuntimeOptions
from core.voices.library import VoiceLibrary
from core.wording import describe_failure


def started_worker(bundle: Path) -> w.InferenceWorker:
    worker = w.InferenceWorker()
    worker.start()
    worker.load(bundle, RuntimeOptions(provider="cpu"))
    while True:
        event = worker.events.get(timeout=60)
        if isinstance(event, w.ModelLoaded):
            return worker
        assert not isinstance(event, w.ModelFailed), describe_failure(event)


@contextmanager
def serving(worker, library_dir: Path, **config):
    """A real server on 127.0.0.1 and a free port, stopped afterwards."""
    server = ApiServer(create_app(worker, VoiceLibrary(library_dir), ApiConfig(**config)), "127.0.0.1", 0)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def decoded_samples(data: bytes, response_format: str) -> int:
    if response_format == "pcm":
        assert len(data) % 2 == 0
        return len(data) // 2
    audio, rate = sf.read(io.BytesIO(data), dtype="float32")
    assert rate == 24000
    return audio.shape[0]


def wait_idle(worker, server, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if worker.running is None and worker.queued == 0 and server.jobs.active == 0:
            return True
        time.sleep(0.02)
    return False


def occupy(worker, seconds_of_text: int = 60) -> tuple[int, queue.Queue]:
    """Keep the worker busy with a long request of its own (cancel it with ``worker.cancel(rid)``)."""
    from core.engine.streaming.synthesis import SynthesisRequest

    sink: queue.Queue = queue.Queue()
    rid = worker.new_request_id()
    text = " ".join(f"This is the blocking sentence number {i}." for i in range(seconds_of_text))
    worker.speak(SynthesisRequest(text, request_id=rid), sink=sink)
    while not isinstance(sink.get(timeout=30), w.Started):
        pass
    return rid, sink


def long_text(sentences: int = 12, tag: str = "") -> str:
    return " ".join(f"Sentence {tag} number {i} is spoken here." for i in range(sentences))
