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


def started_worker(bundle: Path, runtime: RuntimeOptions | None = None) -> w.InferenceWorker:
    worker = w.InferenceWorker()
    worker.start()
    worker.load(bundle, runtime or RuntimeOptions(provider="cpu"))
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


CODEC_SLACK = 2400
"""Samples a streamed mp3, aac or opus may decode to beyond the audio (encoder priming and the last frame's padding:
a stream cannot go back to write the exact length in a header)."""


def decoded_samples(data: bytes, response_format: str) -> int:
    """How many 24 kHz samples the response decodes to (PyAV for the compressed formats, as players read them)."""
    if response_format == "pcm":
        assert len(data) % 2 == 0
        return len(data) // 2
    if response_format == "wav":
        audio, rate = sf.read(io.BytesIO(data), dtype="float32")
        assert rate == 24000
        return audio.shape[0]
    import av

    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        samples = sum(frame.samples for frame in container.decode(stream))
        rate = stream.rate
    return round(samples * 24000 / rate)


def same_length(decoded: int, samples: int, response_format: str) -> bool:
    """Exact for wav, pcm and flac; within :data:`CODEC_SLACK` for the lossy codecs."""
    if response_format in ("wav", "pcm", "flac"):
        return decoded == samples
    return samples <= decoded <= samples + CODEC_SLACK


def wait_idle(worker, server, timeout: float = 30.0) -> bool:
    """Whether the worker and the server have nothing left to do within ``timeout`` (it returns as soon as they are:
    the margin is for a loaded two-core machine, where a cancelled sentence may take seconds to stop)."""
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
