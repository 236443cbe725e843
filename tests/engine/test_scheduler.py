"""The worker's scheduler: interactive jobs before background ones, a background job paused between its steps for
the interactive jobs that wait, status, cancel, failures that stay with their job, a model load as a barrier.

The jobs here are small fakes on a fake pipeline (no model): each records what it ran into a shared log, and tests
wait on events (gates), never on sleeps.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from core.engine import (
    Cancelled,
    Failed,
    Finished,
    InferenceWorker,
    JobContext,
    ModelLoaded,
    Priority,
    RuntimeOptions,
    Scheduler,
    Started,
)

TIMEOUT = 10.0


# --- a pipeline without a model ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FakeCapabilities:
    on_gpu: bool = False
    variant: str = "fake"


@dataclass(frozen=True)
class FakeFiles:
    root: Path


class FakePipeline:
    def __init__(self, bundle: Path, runtime: RuntimeOptions):
        self.files, self.runtime = FakeFiles(Path(bundle)), runtime
        self.capabilities = FakeCapabilities()
        self.provider_notice = None

    def update_runtime(self, runtime: RuntimeOptions) -> None:
        assert not runtime.session_changes(self.runtime)
        self.runtime = runtime


def fake_factory(loads: list):
    def factory(bundle, runtime, **_options):
        loads.append((Path(bundle).name, runtime))
        return FakePipeline(bundle, runtime)

    return factory


# --- jobs that log what they do -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FakeJob:
    request_id: int
    log: list = field(compare=False)
    steps_count: int = 1
    priority: Priority = Priority.INTERACTIVE
    runtime: RuntimeOptions | None = None
    sink: object = None
    label: str = "fake"
    kind: str = "fake"
    gate: threading.Event | None = field(default=None, compare=False)
    """Step 1 waits for it (the job holds the worker until the test opens it)."""
    entered: threading.Event | None = field(default=None, compare=False)
    """Set when step 1 begins."""
    fail_at: int | None = None
    on_step: object = field(default=None, compare=False)
    """``on_step(number, context)`` at the start of each step, on the inference thread."""

    def steps(self, context: JobContext) -> Generator[None, None, object]:
        for number in range(1, self.steps_count + 1):
            self.log.append((self.request_id, number, context.pipeline, context.pipeline.runtime))
            if number == 1 and self.entered is not None:
                self.entered.set()
            if number == 1 and self.gate is not None:
                assert self.gate.wait(TIMEOUT)
            if self.on_step is not None:
                self.on_step(number, context)
            if number == self.fail_at:
                raise ZeroDivisionError("boom")
            if number < self.steps_count:
                yield
        return Finished(self.request_id, None)


@pytest.fixture
def worker(tmp_path):
    loads: list = []
    made = InferenceWorker(pipeline_factory=fake_factory(loads))
    made.loads = loads
    made.start()
    made.load(tmp_path / "first", RuntimeOptions())
    assert isinstance(made.events.get(timeout=TIMEOUT), ModelLoaded)
    yield made
    assert made.shutdown(TIMEOUT)


def ends(worker, count: int) -> list:
    """The next ``count`` terminal events (Started events are skipped)."""
    found = []
    while len(found) < count:
        event = worker.events.get(timeout=TIMEOUT)
        if isinstance(event, (Finished, Failed, Cancelled)):
            found.append(event)
    return found


def blocker(worker, log) -> tuple[FakeJob, threading.Event]:
    """An interactive job that holds the worker until the gate opens (it has begun when this returns)."""
    gate, entered = threading.Event(), threading.Event()
    job = FakeJob(worker.new_request_id(), log, gate=gate, entered=entered, label="blocker")
    worker.submit(job)
    assert entered.wait(TIMEOUT)
    return job, gate


def order(log) -> list[tuple[int, int]]:
    return [(rid, number) for rid, number, _pipe, _runtime in log]


# --- the scheduler alone ------------------------------------------------------------------------------------------
def test_the_scheduler_serves_interactive_first_and_each_lane_in_order():
    lanes: Scheduler[str] = Scheduler()
    for item, priority in [
        ("b1", Priority.BACKGROUND),
        ("i1", Priority.INTERACTIVE),
        ("b2", Priority.BACKGROUND),
        ("i2", Priority.INTERACTIVE),
    ]:
        lanes.put(item, priority)
    assert lanes.waiting() == ["i1", "i2", "b1", "b2"] and lanes.qsize() == 4
    assert [lanes.take(0) for _ in range(4)] == ["i1", "i2", "b1", "b2"]
    assert lanes.take(0.01) is None and lanes.empty()


def test_take_interactive_stops_at_a_barrier():
    lanes: Scheduler[object] = Scheduler()
    lanes.put("i1")
    lanes.put(1.5)  # a "command"
    lanes.put("i2")
    lanes.put("b1", Priority.BACKGROUND)
    assert lanes.take_interactive(float) == "i1"
    assert lanes.take_interactive(float) is None  # the barrier is first; i2 waits behind it
    assert lanes.take(0) == 1.5 and lanes.take_interactive(float) == "i2"
    assert lanes.take_interactive(float) is None  # never a background item


def test_the_scheduler_is_thread_safe():
    lanes: Scheduler[int] = Scheduler()
    threads = [threading.Thread(target=lambda k=k: [lanes.put(k * 1000 + i) for i in range(500)]) for k in range(4)]
    for thread in threads:
        thread.start()
    taken = [lanes.take(TIMEOUT) for _ in range(2000)]
    for thread in threads:
        thread.join()
    assert sorted(taken) == sorted(k * 1000 + i for k in range(4) for i in range(500))
    for k in range(4):  # first come, first served for each producer
        mine = [t for t in taken if t // 1000 == k]
        assert mine == sorted(mine)


# --- the worker -----------------------------------------------------------------------------------------------------
def test_interactive_jobs_run_before_background_ones_first_come_first_served(worker):
    log: list = []
    first, gate = blocker(worker, log)
    ids = {}
    for name, priority in [
        ("b1", Priority.BACKGROUND),
        ("i1", Priority.INTERACTIVE),
        ("b2", Priority.BACKGROUND),
        ("i2", Priority.INTERACTIVE),
    ]:
        ids[name] = worker.submit(FakeJob(worker.new_request_id(), log, priority=priority))
    gate.set()
    ends(worker, 5)
    names = {rid: name for name, rid in ids.items()}
    assert [names.get(rid, "blocker") for rid, _n in order(log)] == ["blocker", "i1", "i2", "b1", "b2"]


def test_waiting_interactive_jobs_run_between_two_steps_of_a_background_job(worker):
    log: list = []
    submitted: list[int] = []

    def during(number, context):  # while step 2 runs, two interactive jobs come in
        if number == 2:
            for _ in range(2):
                submitted.append(worker.submit(FakeJob(worker.new_request_id(), log)))

    background = FakeJob(worker.new_request_id(), log, steps_count=4, priority=Priority.BACKGROUND, on_step=during)
    worker.submit(background)
    events = ends(worker, 3)
    bid = background.request_id
    assert order(log) == [(bid, 1), (bid, 2), (submitted[0], 1), (submitted[1], 1), (bid, 3), (bid, 4)]
    assert [e.request_id for e in events] == [*submitted, bid]
    assert all(isinstance(e, Finished) for e in events)


def test_a_background_job_gets_the_current_pipeline_and_its_own_runtime_back(worker):
    """An interactive job between two steps reloads the model for other session settings (threads) and switches
    the stream plan; the background job's next step runs on the reloaded pipeline, switched back to its runtime."""
    log: list = []
    mine = RuntimeOptions(threads=2, stream_plan="fixed")
    theirs = RuntimeOptions(threads=1, stream_plan="adaptive")

    def during(number, context):
        if number == 1:
            worker.submit(FakeJob(worker.new_request_id(), log, runtime=theirs))

    background = FakeJob(
        worker.new_request_id(), log, steps_count=3, priority=Priority.BACKGROUND, runtime=mine, on_step=during
    )
    worker.submit(background)
    ends(worker, 2)
    (_, _, pipe1, runtime1), (_, _, pipe_i, runtime_i), (_, _, pipe2, runtime2), (_, _, pipe3, runtime3) = log
    assert runtime1 == mine and runtime_i == theirs and runtime2 == runtime3 == mine
    assert pipe_i is not pipe1 and pipe2 is not pipe_i and pipe3 is pipe2  # reloaded for them, then for it
    assert pipe2 is worker.pipeline
    assert [runtime.threads for _name, runtime in worker.loads] == [None, 2, 1, 2]


def test_a_background_job_without_a_runtime_keeps_the_one_it_started_with(worker):
    log: list = []
    started_with = worker.pipeline.runtime

    def during(number, context):
        if number == 1:
            worker.submit(FakeJob(worker.new_request_id(), log, runtime=replace(started_with, stream_plan="fixed")))

    worker.submit(FakeJob(worker.new_request_id(), log, steps_count=2, priority=Priority.BACKGROUND, on_step=during))
    ends(worker, 2)
    assert [runtime.stream_plan for *_rest, runtime in log] == [
        started_with.stream_plan,
        "fixed",
        started_with.stream_plan,
    ]


def test_status_reports_what_runs_what_pauses_and_what_waits(worker):
    log: list = []
    assert worker.status().running is None and worker.status().waiting == ()
    seen = {}
    gate = threading.Event()
    entered = threading.Event()

    def during(number, context):
        if number == 1:
            worker.submit(
                FakeJob(worker.new_request_id(), log, gate=gate, entered=entered, label="API request", kind="speak")
            )

    render = FakeJob(
        worker.new_request_id(),
        log,
        steps_count=2,
        priority=Priority.BACKGROUND,
        label="Book",
        kind="render",
        on_step=during,
    )
    blocked, open_first = blocker(worker, log)
    worker.submit(render)
    later = worker.submit(FakeJob(worker.new_request_id(), log, label="Speak", kind="speak"))
    status = worker.status()
    assert status.running.request_id == blocked.request_id and status.paused is None
    assert [(j.request_id, j.kind, j.priority) for j in status.waiting] == [
        (later, "speak", Priority.INTERACTIVE),
        (render.request_id, "render", Priority.BACKGROUND),
    ]
    assert status.waiting[1].label == "Book" and status.background is None
    open_first.set()
    assert entered.wait(TIMEOUT)  # the render's first step is done; the API request runs between its steps
    seen["paused"] = worker.status()
    gate.set()
    ends(worker, 4)
    status = seen["paused"]
    assert status.running.label == "API request" and status.paused.request_id == render.request_id
    assert status.background.label == "Book" and status.waiting == ()
    assert worker.status().running is None and worker.status().waiting == ()
    assert status.running.as_dict(label=False) == {
        "request_id": status.running.request_id,
        "kind": "speak",
        "priority": "interactive",
    }


def test_cancelling_a_waiting_background_job_ends_it_at_once(worker):
    log: list = []
    _blocked, gate = blocker(worker, log)
    waiting = FakeJob(worker.new_request_id(), log, steps_count=3, priority=Priority.BACKGROUND)
    worker.submit(waiting)
    assert [j.request_id for j in worker.status().waiting] == [waiting.request_id]
    worker.cancel(waiting.request_id)
    (event,) = ends(worker, 1)  # before the job that runs has ended
    assert isinstance(event, Cancelled) and event.request_id == waiting.request_id
    assert worker.status().waiting == () and worker.queued == 0
    gate.set()
    ends(worker, 1)
    assert all(rid != waiting.request_id for rid, _n in order(log))  # it never started


def test_cancelling_a_running_background_job_stops_it_between_steps(worker):
    log: list = []

    def during(number, context):
        if number == 2:
            worker.cancel(context.request_id)

    job = FakeJob(worker.new_request_id(), log, steps_count=5, priority=Priority.BACKGROUND, on_step=during)
    worker.submit(job)
    (event,) = ends(worker, 1)
    assert isinstance(event, Cancelled) and order(log) == [(job.request_id, 1), (job.request_id, 2)]


def test_a_background_job_that_raises_fails_only_itself(worker):
    log: list = []
    broken = FakeJob(worker.new_request_id(), log, steps_count=3, priority=Priority.BACKGROUND, fail_at=2)
    worker.submit(broken)
    after = FakeJob(worker.new_request_id(), log, steps_count=2, priority=Priority.BACKGROUND)
    worker.submit(after)
    failed, done = ends(worker, 2)
    assert isinstance(failed, Failed) and failed.request_id == broken.request_id and failed.internal
    assert failed.code == "worker.internal" and failed.data["kind"] == "ZeroDivisionError"
    assert isinstance(done, Finished) and done.request_id == after.request_id and worker.alive


def test_an_interactive_job_that_raises_between_steps_leaves_the_background_job_going(worker):
    log: list = []
    bad: list[int] = []

    def during(number, context):
        if number == 1:
            bad.append(worker.submit(FakeJob(worker.new_request_id(), log, fail_at=1)))

    background = FakeJob(worker.new_request_id(), log, steps_count=3, priority=Priority.BACKGROUND, on_step=during)
    worker.submit(background)
    failed, done = ends(worker, 2)
    assert isinstance(failed, Failed) and failed.request_id == bad[0]
    assert isinstance(done, Finished) and done.request_id == background.request_id
    assert order(log)[-2:] == [(background.request_id, 2), (background.request_id, 3)]


def test_a_job_that_ends_without_an_event_fails_as_an_internal_error(worker):
    @dataclass(frozen=True)
    class Silent(FakeJob):
        def steps(self, context):
            return None
            yield

    job = Silent(worker.new_request_id(), [])
    worker.submit(job)
    (event,) = ends(worker, 1)
    assert isinstance(event, Failed) and event.internal and event.request_id == job.request_id


def test_a_model_load_waits_for_the_background_job_and_so_do_the_jobs_after_it(worker, tmp_path):
    log: list = []
    late: list[int] = []

    def during(number, context):
        if number == 1:
            worker.load(tmp_path / "second", RuntimeOptions())
            late.append(worker.submit(FakeJob(worker.new_request_id(), log)))

    background = FakeJob(worker.new_request_id(), log, steps_count=3, priority=Priority.BACKGROUND, on_step=during)
    worker.submit(background)
    seen = []
    while len([e for e in seen if isinstance(e, Finished)]) < 2:
        seen.append(worker.events.get(timeout=TIMEOUT))
    kinds = [type(e).__name__ for e in seen if not isinstance(e, Started)]
    assert kinds == ["Finished", "ModelLoaded", "Finished"]
    assert [rid for rid, _n in order(log)] == [background.request_id] * 3 + late
    assert {pipe.files.root.name for *_r, pipe, _rt in log[:3]} == {"first"} and log[3][2].files.root.name == "second"


def test_shutdown_during_a_background_job_is_bounded_and_ends_everything(tmp_path):
    worker = InferenceWorker(pipeline_factory=fake_factory([]))
    worker.start()
    worker.load(tmp_path / "m", RuntimeOptions())
    assert isinstance(worker.events.get(timeout=TIMEOUT), ModelLoaded)
    log: list = []
    entered = threading.Event()
    release = threading.Event()

    def during(number, context):
        if number == 1:
            entered.set()
            release.wait(TIMEOUT)

    running = FakeJob(worker.new_request_id(), log, steps_count=100, priority=Priority.BACKGROUND, on_step=during)
    worker.submit(running)
    assert entered.wait(TIMEOUT)
    waiting = [worker.submit(FakeJob(worker.new_request_id(), log, priority=p)) for p in Priority]
    threading.Timer(0.05, release.set).start()
    assert worker.shutdown(TIMEOUT) and not worker.alive
    ended = {}
    while True:
        try:
            event = worker.events.get_nowait()
        except queue.Empty:
            break
        ended[event.request_id] = type(event).__name__
    assert ended == {running.request_id: "Cancelled", **dict.fromkeys(waiting, "Cancelled")}
    assert len(order(log)) == 1
