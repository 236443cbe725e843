"""The window's status bar says what the inference worker runs and what waits (the local API's requests too)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from app.engine_bridge import describe_work
from core.engine import Finished, JobContext, JobInfo, Priority, WorkerStatus
from tests.app_support import make_window

RENDER = JobInfo(1, "render", Priority.BACKGROUND, "Story")
SPEAK = JobInfo(2, "speak", Priority.INTERACTIVE, "API request")


def test_the_words_for_what_the_worker_does():
    assert describe_work(WorkerStatus()) == ""
    assert describe_work(WorkerStatus(RENDER)) == "Rendering “Story”"
    assert describe_work(WorkerStatus(RENDER, (SPEAK,))) == "Rendering “Story” · 1 request waiting"
    assert describe_work(WorkerStatus(SPEAK, (SPEAK, SPEAK), RENDER)) == (
        "Rendering “Story” · API request running · 2 requests waiting"
    )
    assert describe_work(WorkerStatus(SPEAK)) == "API request running"


@dataclass(frozen=True)
class Gated:
    request_id: int
    gate: threading.Event = field(compare=False)
    priority: Priority = Priority.BACKGROUND
    kind: str = "render"
    label: str = "Story"
    runtime: None = None
    sink: None = None

    def steps(self, context: JobContext):
        assert self.gate.wait(30)
        yield
        return Finished(self.request_id, None)


def test_the_status_bar_shows_a_render_and_the_requests_waiting(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["original"])
    worker = window.bridge.worker
    gate = threading.Event()
    try:
        worker.submit(Gated(worker.new_request_id(), gate))
        qtbot.waitUntil(lambda: window.work_label.text() == "Rendering “Story”", timeout=10000)
        worker.submit(Gated(worker.new_request_id(), gate, Priority.INTERACTIVE, "speak", "API request"))
        qtbot.waitUntil(lambda: window.work_label.text() == "Rendering “Story” · 1 request waiting", timeout=10000)
    finally:
        gate.set()
    qtbot.waitUntil(lambda: window.work_label.text() == "", timeout=10000)
    window.close()
