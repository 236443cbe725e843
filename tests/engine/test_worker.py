"""The inference thread under faults and load: failed requests, GPU failure, cancellation storms, queues."""

from __future__ import annotations

import queue
import time
from dataclasses import replace

import pytest

import core.engine as w
from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from core.engine.streaming.synthesis import SynthesisRequest
from core.wording import describe_failure, describe_notice

TERMINAL = (w.Finished, w.Failed, w.Cancelled)


def next_event(worker, kinds, timeout=30.0, seen=None):
    """The next event of one of ``kinds`` (others are collected into ``seen``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            event = worker.events.get(timeout=0.05)
        except queue.Empty:
            continue
        if isinstance(event, kinds):
            return event
        if seen is not None:
            seen.append(event)
    raise AssertionError(f"no {kinds} event within {timeout} s")


def terminal_events(worker, count, timeout=60.0):
    found = []
    while len(found) < count:
        found.append(next_event(worker, TERMINAL, timeout))
    return found


@pytest.fixture
def make_worker(tmp_path):
    workers = []

    def make(bundle, factory=Pipeline.from_bundle, runtime=None):
        worker = w.InferenceWorker(pipeline_factory=factory)
        worker.start()
        workers.append(worker)
        worker.load(bundle, runtime or RuntimeOptions(cache_dir=tmp_path / "cache"))
        loaded = next_event(worker, (w.ModelLoaded, w.ModelFailed))
        assert isinstance(loaded, w.ModelLoaded), loaded
        return worker

    yield make
    for worker in workers:
        assert worker.shutdown(10.0)


def speak(worker, text="Hello there.", seed=1, runtime=None):
    rid = worker.new_request_id()
    worker.speak(SynthesisRequest(text, None, SynthesisOptions(seed=seed), rid), runtime)
    return rid


def test_an_exception_inside_a_request_is_a_failed_event_and_the_worker_lives_on(bundles, make_worker):
    worker = make_worker(bundles["original"])
    pipe = worker.pipeline
    real_stream = pipe.stream
    pipe.stream = lambda *a, **k: (_ for _ in ()).throw(ZeroDivisionError("boom"))
    rid = speak(worker)
    failed = next_event(worker, TERMINAL)
    assert isinstance(failed, w.Failed) and failed.request_id == rid and failed.internal
    assert failed.code == "worker.internal" and failed.data == {"kind": "ZeroDivisionError", "detail": "boom"}
    assert "ZeroDivisionError" in describe_failure(failed) and worker.alive

    pipe.stream = real_stream
    rid = speak(worker)
    done = next_event(worker, TERMINAL)
    assert isinstance(done, w.Finished) and done.request_id == rid and done.report.speech_tokens


def test_a_bug_outside_the_stream_still_ends_the_request(bundles, make_worker):
    worker = make_worker(bundles["original"])
    worker.pipeline.update_runtime = lambda runtime: 1 / 0
    rid = speak(worker, runtime=RuntimeOptions())
    failed = next_event(worker, TERMINAL)
    assert isinstance(failed, w.Failed) and failed.request_id == rid and worker.alive


def gpu_that_fails_mid_run(loads: list):
    """A pipeline factory whose non-CPU pipelines claim the GPU and then fail with a driver error mid-request."""

    def factory(bundle, runtime, **load_options):
        loads.append(runtime)
        pipe = Pipeline.from_bundle(bundle, replace(runtime, provider="cpu"), **load_options)
        pipe._parts.runtime = runtime  # as a real pipeline keeps the options it was asked for
        if runtime.provider != "cpu":
            caps = pipe._parts.capabilities
            pipe._parts.capabilities = replace(caps, providers=dict.fromkeys(caps.providers, "cuda"))

            def broken(request, cancelled=None):
                yield from ()
                raise RuntimeError("CUDA failure 700: an illegal memory access was encountered")

            pipe.stream = broken
        return pipe

    return factory


def test_gpu_failing_mid_run_falls_back_to_cpu_for_the_next_request(bundles, make_worker, tmp_path):
    loads: list[RuntimeOptions] = []
    factory = gpu_that_fails_mid_run(loads)
    runtime = RuntimeOptions(provider="auto", cache_dir=tmp_path / "cache")
    worker = make_worker(bundles["original"], factory, runtime)
    rid = speak(worker, runtime=runtime)
    failed = next_event(worker, TERMINAL)
    assert isinstance(failed, w.Failed) and failed.request_id == rid and not failed.internal
    assert failed.code == "worker.gpu_failed" and "illegal memory access" in failed.data["reason"]
    assert "GPU failed" in describe_failure(failed) and "press Speak" in describe_failure(failed, "window")
    reloaded = next_event(worker, (w.ModelLoaded, w.ModelFailed))
    assert isinstance(reloaded, w.ModelLoaded)
    assert set(reloaded.capabilities.providers.values()) == {"cpu"} and reloaded.notice.code == "provider.gpu_failed"
    assert "illegal memory access" in reloaded.notice.data["reason"]
    assert "GPU failed" in describe_notice(reloaded.notice)
    assert "press Speak" not in describe_notice(reloaded.notice, "cli")
    assert loads[-1].provider == "cpu"

    # The next requests (the app still asks for "auto") run on the CPU without reloading the GPU sessions.
    for _ in range(2):
        rid = speak(worker, runtime=runtime)
        done = next_event(worker, TERMINAL)
        assert isinstance(done, w.Finished) and done.request_id == rid
    assert [r.provider for r in loads] == ["auto", "cpu"]

    # Choosing the model again explicitly gives the GPU another chance.
    worker.load(bundles["original"], runtime)
    next_event(worker, (w.ModelLoaded,))
    assert loads[-1].provider == "auto"


def test_a_cuda_provider_that_cannot_load_falls_back_with_a_notice(bundles, tmp_path):
    pipe = Pipeline.from_bundle(bundles["original"], RuntimeOptions(provider="cuda", cache_dir=tmp_path))
    if set(pipe.providers.values()) == {"cuda"}:
        assert pipe.provider_notice is None  # a machine with a working GPU
    else:
        assert set(pipe.providers.values()) == {"cpu"}
        assert pipe.provider_notice.code == "provider.cuda_unusable"
        assert "CUDA was requested but is not usable" in describe_notice(pipe.provider_notice)
        assert pipe.synthesize("Hello.", options=SynthesisOptions(seed=1)).audio.size


def test_a_failed_reload_for_new_settings_fails_the_request_not_the_worker(bundles, make_worker, tmp_path):
    calls = []

    def factory(bundle, runtime, **load_options):
        calls.append(runtime)
        if len(calls) > 1:
            raise RuntimeError("out of memory while creating sessions")
        return Pipeline.from_bundle(bundle, runtime, **load_options)

    worker = make_worker(bundles["original"], factory)
    rid = speak(worker, runtime=RuntimeOptions(threads=1, cache_dir=tmp_path / "cache"))
    failed = next_event(worker, TERMINAL)
    assert isinstance(failed, w.Failed) and failed.request_id == rid
    assert failed.code == "worker.reload_failed" and failed.data == {"fields": ["threads"]}
    assert "threads" in describe_failure(failed)
    rid = speak(worker)  # the old model is still there
    assert isinstance(next_event(worker, TERMINAL), w.Finished)


def test_fifty_rapid_speak_cancel_sequences_leave_exactly_one_request(bundles, make_worker):
    worker = make_worker(bundles["original"])
    previous = None
    for i in range(50):
        if previous is not None:
            worker.cancel(previous)
        previous = speak(worker, text=f"Request number {i} is a little longer than the others.", seed=i)
    ends = terminal_events(worker, 50)
    assert sorted(e.request_id for e in ends) == list(range(1, 51))
    finished = [e for e in ends if isinstance(e, w.Finished)]
    assert [e.request_id for e in finished] == [previous]
    assert all(isinstance(e, w.Cancelled) for e in ends if e.request_id != previous)
    assert worker.scheduler.empty() and worker.events.empty()


def test_a_queue_of_twenty_requests_drains_in_order(bundles, make_worker):
    worker = make_worker(bundles["original"])
    ids = [speak(worker, text=f"Sentence {i}.", seed=i) for i in range(20)]
    seen: list = []
    ends = [next_event(worker, TERMINAL, seen=seen) for _ in ids]
    assert all(isinstance(e, w.Finished) for e in ends)
    assert [e.request_id for e in ends] == ids
    started = [e.request_id for e in seen if isinstance(e, w.Started)]
    assert started == ids
    # Each request's chunks arrive between its own start and end, never interleaved with another's.
    owner = None
    for event in seen:
        if isinstance(event, w.Started):
            owner = event.request_id
        elif isinstance(event, w.Chunk):
            assert event.request_id == owner
