"""Fair turns: a short request that arrives while a long one streams (or a book render runs) is served within about
two sentences, not after all of it; ``/health`` says which API requests run and which wait."""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass

import httpx

from core.engine import Finished, JobContext, Priority, SynthesisRequest
from tests.api_support import long_text, serving, wait_idle


def _stream_in_thread(url: str, body: dict, out: dict) -> threading.Thread:
    """POST ``body`` in a thread; ``out`` gets the first byte's time, the data and the request id."""

    def run() -> None:
        with httpx.stream("POST", url, json=body, timeout=120) as r:
            out["rid"] = int(r.headers["x-request-id"])
            for part in r.iter_bytes():
                out.setdefault("first", time.monotonic())
                out["data"] = out.get("data", b"") + part

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _wait_for(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert condition()


def test_a_short_request_is_served_between_the_sentences_of_a_long_one(worker, tmp_path):
    with serving(worker, tmp_path / "voices") as server:
        long: dict = {}
        body = {"input": long_text(20, "long"), "response_format": "pcm"}
        thread = _stream_in_thread(server.url + "/audio/speech", body, long)
        _wait_for(lambda: "first" in long)
        health = httpx.get(server.url.removesuffix("/v1") + "/health").json()
        (running,) = health["api_requests"]
        assert running["state"] == "running" and running["sentences"] == 20 and running["sentences_done"] < 20
        short = httpx.post(server.url + "/audio/speech", json={"input": "Just this.", "response_format": "pcm"})
        thread.join(120)
        assert short.status_code == 200
        short_record = server.jobs.record(int(short.headers["x-request-id"]))
        long_record = server.jobs.record(long["rid"])
        assert short_record.finished_at < long_record.finished_at  # it did not wait for the whole long request
        assert len(long["data"]) // 2 == long_record.samples  # and the long one lost nothing
        assert wait_idle(worker, server)


@dataclass(frozen=True)
class SentenceRender:
    """A stand-in for a book render: a background job that speaks one sentence per step."""

    request_id: int
    sink: queue.Queue
    sentences: int = 8
    priority: Priority = Priority.BACKGROUND
    kind: str = "render"
    label: str = "Book"
    runtime: None = None

    def steps(self, context: JobContext):
        for i in range(self.sentences):
            for _chunk in context.pipeline.stream(SynthesisRequest(f"Segment number {i} of the book.")):
                pass
            self.sink.put(("segment", i, time.monotonic()))
            yield
        return Finished(self.request_id, None)


def test_a_request_during_a_book_render_is_served_between_two_segments(worker, tmp_path):
    with serving(worker, tmp_path / "voices") as server:
        sink: queue.Queue = queue.Queue()
        worker.submit(SentenceRender(worker.new_request_id(), sink))
        while not isinstance(sink.get(timeout=30), tuple):  # Started, then the first segment
            pass
        r = httpx.post(server.url + "/audio/speech", json={"input": "Between two segments.", "response_format": "pcm"})
        assert r.status_code == 200
        done_at = server.jobs.record(int(r.headers["x-request-id"])).finished_at
        segments = []
        while not isinstance(event := sink.get(timeout=60), Finished):
            if isinstance(event, tuple):
                segments.append(event)
        assert any(at > done_at for _kind, _i, at in segments)  # the render went on after the request, not before
        assert wait_idle(worker, server)
