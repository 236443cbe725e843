"""``GET /health`` says what the worker runs and what waits: request id, kind and priority (no labels: the route
needs no key, and a label may name the window's book), beside every field it had before."""

from __future__ import annotations

import queue
from dataclasses import dataclass

import httpx

from core.engine import Cancelled, Finished, JobContext, Priority
from tests.api_support import occupy, serving, wait_idle


@dataclass(frozen=True)
class BookRender:
    """A stand-in for narration's render job: a background job of a few steps."""

    request_id: int
    sink: queue.Queue
    priority: Priority = Priority.BACKGROUND
    kind: str = "render"
    label: str = "My Secret Book"
    runtime: None = None

    def steps(self, context: JobContext):
        for _ in range(3):
            yield
        return Finished(self.request_id, None)


def test_health_shows_the_running_job_and_the_waiting_ones(worker, tmp_path):
    with serving(worker, tmp_path / "voices") as server:
        url = server.url.removesuffix("/v1") + "/health"
        idle = httpx.get(url).json()
        assert idle["worker"] == {"running": None, "paused": None, "waiting": []}

        speaking, speak_events = occupy(worker)
        sink: queue.Queue = queue.Queue()
        render = worker.submit(BookRender(worker.new_request_id(), sink))
        health = httpx.get(url).json()
        assert health["worker"]["running"] == {"request_id": speaking, "kind": "speak", "priority": "interactive"}
        assert health["worker"]["waiting"] == [{"request_id": render, "kind": "render", "priority": "background"}]
        assert health["worker"]["paused"] is None
        assert "My Secret Book" not in str(health)
        # The fields it had before stay as they were.
        assert health["running"] is True and health["queue_depth"] == 1 and health["worker_alive"]
        assert {"status", "model_loaded", "variant", "api_active", "api_waiting", "served"} <= set(health)

        worker.cancel(render)
        assert isinstance(sink.get(timeout=10), Cancelled)
        assert httpx.get(url).json()["worker"]["waiting"] == []
        worker.cancel(speaking)
        while not isinstance(speak_events.get(timeout=30), Cancelled):
            pass
        assert wait_idle(worker, server)
        assert httpx.get(url).json()["worker"] == {"running": None, "paused": None, "waiting": []}
