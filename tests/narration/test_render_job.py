"""A project render as a background job on the inference worker: a Speak request that comes in during the render
starts before the render's next segment, and the render then goes on to the end with the takes an uninterrupted
render gives (even when the request reloads the model for other session settings)."""

from __future__ import annotations

import queue
import threading
from dataclasses import replace

import numpy as np
import pytest
import soundfile as sf

from core.engine import (
    Cancelled,
    Chunk,
    Failed,
    Finished,
    InferenceWorker,
    ModelFailed,
    ModelLoaded,
    Pipeline,
    RuntimeOptions,
    Started,
    SynthesisOptions,
    SynthesisRequest,
)
from core.narration import (
    RenderDone,
    RenderJob,
    RenderStep,
    create_project,
    import_document,
    parse_text,
    render_pending,
    source_identity,
)
from tests.narration_support import BOOK

TIMEOUT = 120.0
RUNTIME = RuntimeOptions(provider="cpu", stream=False)
"""As the studio renders when nobody listens: the look-ahead batches the Turbo stand-in's sentences."""


def new_project(tmp_path, name, voice):
    project = create_project(tmp_path / name, "Book")
    source = source_identity("b", BOOK, str(voice))
    import_document(project, parse_text(BOOK, "Book"), str(voice), None, tmp_path, source)
    project.seed = 7
    project.save()
    return project


def takes(project):
    found = []
    for segment in project.segments:
        take = segment.takes[segment.chosen]
        audio, _rate = sf.read(project.path(take.file), dtype="float32")
        found.append((take.tokens, audio))
    return found


class Recorder:
    """An event sink that keeps every event in order, and runs ``hook(event)`` on the inference thread as it comes."""

    def __init__(self, hook=None):
        self.events: list = []
        self.hook = hook
        self.queue: queue.Queue = queue.Queue()

    def put(self, event) -> None:
        self.events.append(event)
        self.queue.put(event)
        if self.hook is not None:
            self.hook(event)

    def wait_for(self, kinds, request_id):
        while True:
            event = self.queue.get(timeout=TIMEOUT)
            if isinstance(event, kinds) and event.request_id == request_id:
                return event


@pytest.fixture
def worker(bundles):
    made = InferenceWorker()
    made.start()
    try:
        made.load(bundles["turbo"], RUNTIME)
        while not isinstance(event := made.events.get(timeout=TIMEOUT), (ModelLoaded, ModelFailed)):
            pass
        assert isinstance(event, ModelLoaded), event
        yield made
    finally:
        assert made.shutdown(10.0)


@pytest.fixture(scope="module")
def reference(bundles, tmp_path_factory, voice_wav):
    """The takes of the book rendered straight through (as the command line renders it)."""
    project = new_project(tmp_path_factory.mktemp("reference"), "Reference.cbproj", voice_wav)
    summary = render_pending(project, Pipeline.from_bundle(bundles["turbo"], RUNTIME))
    assert summary.rendered == len(project.segments) == 10  # two headings, eight sentences
    return takes(project)


def assert_same_takes(one, other):
    assert len(one) == len(other)
    for number, (a, b) in enumerate(zip(one, other), 1):
        assert a[0] == b[0], f"segment {number}: tokens differ"
        assert np.array_equal(a[1], b[1]), f"segment {number}: samples differ"


@pytest.mark.parametrize("reload", [False, True], ids=["same-settings", "request-reloads-the-model"])
def test_a_speak_request_during_a_render_starts_before_the_next_segment(tmp_path, worker, reference, voice_wav, reload):
    project = new_project(tmp_path, "Book.cbproj", voice_wav)
    render_id, speak_id = worker.new_request_id(), worker.new_request_id()
    speak_runtime = RuntimeOptions(provider="cpu", threads=1) if reload else RUNTIME
    submitted = threading.Event()

    def after_the_first_segment(event):  # on the inference thread, within the render's first step
        if isinstance(event, RenderStep) and event.progress.kind == "segment" and not submitted.is_set():
            submitted.set()
            request = SynthesisRequest(
                "A question while the book renders.", voice_wav, SynthesisOptions(seed=3), speak_id
            )
            worker.speak(request, speak_runtime, sink=recorder, label="API request")

    recorder = Recorder(after_the_first_segment)
    worker.submit(RenderJob(render_id, project, runtime=RUNTIME, sink=recorder))
    done = recorder.wait_for((RenderDone, Failed, Cancelled), render_id)
    assert isinstance(done, RenderDone), done
    assert done.summary.rendered == 10 and not done.summary.failed

    # The request ran between the render's first and second segment.
    def position(predicate):
        return next(i for i, e in enumerate(recorder.events) if predicate(e))

    first_segment = position(lambda e: isinstance(e, RenderStep) and e.progress.kind == "segment")
    speak_started = position(lambda e: isinstance(e, Started) and e.request_id == speak_id)
    speak_finished = position(lambda e: isinstance(e, (Finished, Failed)) and e.request_id == speak_id)
    second = position(lambda e: isinstance(e, RenderStep) and e.progress.number == 2)
    assert first_segment < speak_started < speak_finished < second
    assert isinstance(recorder.events[speak_finished], Finished)
    assert any(isinstance(e, Chunk) and e.request_id == speak_id for e in recorder.events)
    steps = [e.progress.number for e in recorder.events if isinstance(e, RenderStep) and e.progress.kind == "segment"]
    assert steps == list(range(1, 11))

    # ... and the render went on with the takes it gets alone.
    assert_same_takes(takes(project), reference)
    assert worker.pipeline.runtime == RUNTIME
    loads = 0
    while not worker.events.empty():
        loads += isinstance(worker.events.get_nowait(), ModelLoaded)
    assert loads == (2 if reload else 0)  # for the request's settings, and back for the render's


def test_cancelling_a_render_job_between_segments_keeps_what_is_finished(tmp_path, worker, voice_wav):
    project = new_project(tmp_path, "Book.cbproj", voice_wav)
    render_id = worker.new_request_id()

    def cancel_after_two(event):
        if isinstance(event, RenderStep) and event.progress.kind == "segment" and event.progress.number == 2:
            worker.cancel(render_id)

    recorder = Recorder(cancel_after_two)
    worker.submit(RenderJob(render_id, project, runtime=RUNTIME, sink=recorder))
    ended = recorder.wait_for((RenderDone, Failed, Cancelled), render_id)
    assert isinstance(ended, Cancelled)
    assert project.counts()["rendered"] == 2


def test_a_render_job_regenerates_one_segment_and_reports_its_label(tmp_path, worker, voice_wav):
    project = new_project(tmp_path, "Book.cbproj", voice_wav)
    job = RenderJob(worker.new_request_id(), project, regenerate=3, seed=11, runtime=RUNTIME)
    assert (job.kind, job.label, job.priority.name) == ("render", "Book, segment 3", "BACKGROUND")
    recorder = Recorder()
    worker.submit(replace(job, sink=recorder))
    done = recorder.wait_for((RenderDone, Failed, Cancelled), job.request_id)
    assert isinstance(done, RenderDone) and done.summary.rendered == 1
    assert project.segments[2].takes[0].seed == 11 and project.counts()["rendered"] == 1
