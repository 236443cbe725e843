"""What the inference thread runs: jobs, written as steps, each with a priority; and the Speak job.

A job is anything with a ``request_id``, a ``priority``, a ``kind`` and ``label`` (what status shows), the
``runtime`` it wants (``None``: whatever the pipeline has), a ``sink`` for its events (``None``: the worker's own
queue) and a :meth:`Job.steps` generator. The worker prepares the pipeline (switched to the job's runtime, reloaded
if sessions must change), emits :class:`~core.engine.worker.events.Started`, then advances the generator one step
at a time. Each ``yield`` ends a step: between two steps of a background job the worker runs the interactive jobs
that wait, then gives the background job its pipeline and runtime back (:attr:`JobContext.pipeline` is always the
current one: never keep it across a ``yield``). The generator returns the job's last event (e.g.
:class:`~core.engine.worker.events.Finished`), which the worker emits; a job that returns none fails as an internal
error. An exception ends the job: :class:`~core.engine.errors.SynthesisCancelled` as Cancelled, any other as Failed
(a job never takes the worker down). A job cancelled between two steps is closed and ends Cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Protocol

from core.engine.errors import SynthesisCancelled
from core.engine.options import RuntimeOptions
from core.engine.streaming.conversion import ConversionRequest, ConversionStream
from core.engine.streaming.synthesis import SynthesisRequest, SynthesisStream
from core.engine.worker.events import Chunk, Finished

if TYPE_CHECKING:
    from core.engine.pipeline import Pipeline


class Priority(IntEnum):
    """Interactive jobs (Speak in the window, an API request) run before background ones (a book render)."""

    INTERACTIVE = 0
    BACKGROUND = 1


class EventSink(Protocol):
    """Where a job's events go: anything with ``put(event)`` (a :class:`queue.Queue`, the API's async sink)."""

    def put(self, event: object) -> None: ...


@dataclass(frozen=True)
class JobInfo:
    """A job as status reports it."""

    request_id: int
    kind: str
    """``speak``, ``render``, … (chosen by the job)."""
    priority: Priority
    label: str
    """A short description for a person: a project's title, "API request", …"""

    def as_dict(self, label: bool = True) -> dict[str, object]:
        """As JSON; ``label=False`` leaves the label out (it may name a person's book)."""
        found: dict[str, object] = {"request_id": self.request_id, "kind": self.kind}
        found["priority"] = self.priority.name.lower()
        if label:
            found["label"] = self.label
        return found


@dataclass(frozen=True)
class WorkerStatus:
    """What the inference thread runs now and what waits, in the order it will run."""

    running: JobInfo | None = None
    """The job on the inference thread now (an interactive one while a background job pauses between steps)."""
    waiting: tuple[JobInfo, ...] = ()
    paused: JobInfo | None = None
    """A background job between two steps while interactive jobs run; it goes on after them."""

    @property
    def background(self) -> JobInfo | None:
        """The background job under way (running or paused), if any."""
        if self.paused is not None:
            return self.paused
        if self.running is not None and self.running.priority is Priority.BACKGROUND:
            return self.running
        return None


class JobContext:
    """What a job's steps see. The worker refreshes :attr:`pipeline` before every step."""

    def __init__(self, request_id: int, sink: EventSink, cancelled: Callable[[], bool], pipeline: Pipeline):
        self.request_id = request_id
        self.sink = sink
        self.cancelled = cancelled
        self.pipeline = pipeline

    def emit(self, event: object) -> None:
        """Put one of the job's events (dropped once the job is cancelled: nobody waits for them)."""
        if not self.cancelled():
            self.sink.put(event)


class Job(Protocol):
    """A unit of work for the inference thread (see the module's docstring)."""

    @property
    def request_id(self) -> int: ...

    @property
    def priority(self) -> Priority: ...

    @property
    def kind(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def runtime(self) -> RuntimeOptions | None: ...

    @property
    def sink(self) -> EventSink | None: ...

    def steps(self, context: JobContext) -> Generator[None, None, object]: ...


def job_info(job: Job) -> JobInfo:
    return JobInfo(job.request_id, job.kind, job.priority, job.label)


@dataclass(frozen=True)
class Speak:
    """Speak one request, streaming its chunks (interactive: one step)."""

    request: SynthesisRequest
    runtime: RuntimeOptions | None = None
    """Switches for this request (applied without a reload when only non-session fields changed)."""
    sink: EventSink | None = None
    """Where this request's events go (anything with ``put(event)``); ``None``: :attr:`InferenceWorker.events`."""
    label: str = "Speak"
    priority: Priority = Priority.INTERACTIVE
    kind: str = "speak"

    @property
    def request_id(self) -> int:
        return self.request.request_id

    def steps(self, context: JobContext) -> Generator[None, None, object]:
        return _one_stream(context, self.request_id, context.pipeline.stream(self.request, context.cancelled))
        yield  # a generator of one step


@dataclass(frozen=True)
class Convert:
    """Re-voice one recording, streaming its windows as they are converted (interactive: one step, as Speak)."""

    request: ConversionRequest
    runtime: RuntimeOptions | None = None
    sink: EventSink | None = None
    label: str = "Re-voice"
    priority: Priority = Priority.INTERACTIVE
    kind: str = "convert"

    @property
    def request_id(self) -> int:
        return self.request.request_id

    def steps(self, context: JobContext) -> Generator[None, None, object]:
        stream = context.pipeline.convert_stream(self.request, context.cancelled)
        return _one_stream(context, self.request_id, stream)
        yield  # a generator of one step


def _one_stream(context: JobContext, rid: int, stream: SynthesisStream | ConversionStream) -> Finished:
    """A stream's chunks put as they come, in one step; its report in the last event (Speak and Convert)."""
    for chunk in stream:
        if context.cancelled():
            raise SynthesisCancelled()
        context.sink.put(Chunk(rid, chunk))
    return Finished(rid, stream.report)
