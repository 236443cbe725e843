"""The one long-lived inference thread: it owns the pipeline; jobs go in through a scheduler, events come out.

No Qt here: the app's bridge drains :attr:`InferenceWorker.events` on a timer and turns events into signals.
Jobs (:mod:`core.engine.worker.jobs`) come with a priority: interactive ones (Speak in the window, an API request)
run before background ones (a book render), first come first served within each. A background job runs in steps;
between two steps the worker runs every interactive job that waits, then gives the background job the current
pipeline, switched back to its own runtime, for its next step. Loading a model is a command handled in order with
the interactive jobs (it waits for a background job under way; see :mod:`core.engine.worker.scheduler`).

A job may name its own ``sink`` (anything with ``put(event)``, e.g. a queue): its Started, Chunk, Finished, Failed
and Cancelled events go there instead of :attr:`InferenceWorker.events` (the local speech API routes each HTTP
request's events this way, so the window never sees them). Every job has a request id; ``cancel(id)`` takes a
waiting job out of the queue (it ends Cancelled at once) or marks a running one, which stops between decode steps;
events of cancelled jobs are not emitted. A failed job becomes a :class:`Failed` event and the worker lives on.
:meth:`InferenceWorker.status` says what runs and what waits.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import traceback
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.engine.errors import ChatterboxError, Notice, SynthesisCancelled, first_line
from core.engine.options import RuntimeOptions
from core.engine.pipeline import Pipeline
from core.engine.streaming.conversion import ConversionRequest
from core.engine.streaming.synthesis import SynthesisRequest
from core.engine.worker.events import Cancelled, Failed, LoadProgress, ModelFailed, ModelLoaded, Started
from core.engine.worker.jobs import Convert, EventSink, Job, JobContext, Priority, Speak, WorkerStatus, job_info
from core.engine.worker.scheduler import Scheduler

log = logging.getLogger(__name__)


# --- commands that are not jobs ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class LoadModel:
    bundle: Path
    runtime: RuntimeOptions


@dataclass(frozen=True)
class _Stop:
    pass


_COMMANDS = (LoadModel, _Stop)


class InferenceWorker:
    """Start with :meth:`start`; stop with :meth:`shutdown` (bounded)."""

    def __init__(
        self,
        pipeline_factory: Callable[..., Pipeline] = Pipeline.from_bundle,
        events: queue.Queue[Any] | None = None,
    ) -> None:
        self.pipeline_factory = pipeline_factory
        """Loads a model: ``(bundle, runtime, progress=…, background=True) -> Pipeline`` (``Pipeline.from_bundle``)."""
        self.events: queue.Queue[Any] = events if events is not None else queue.Queue()
        self.scheduler: Scheduler[Job | LoadModel | _Stop] = Scheduler()
        self.pipeline: Pipeline | None = None
        self._cancelled: set[int] = set()
        self._stopping = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="inference", daemon=True)
        self._next_id = 0
        self._gpu_failed: str | None = None
        """Why the GPU failed mid-request; until the next explicit load, requests run on the CPU."""
        self._jobs: list[Job] = []
        """The jobs under way: a background job, and on top of it the interactive one run between its steps."""

    # --- called from any thread ----------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def new_request_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    def load(self, bundle: Path, runtime: RuntimeOptions) -> None:
        self.scheduler.put(LoadModel(Path(bundle), runtime), Priority.INTERACTIVE)

    def submit(self, job: Job) -> int:
        """Queue a job in the lane of its priority; its events go to ``job.sink`` or, by default, :attr:`events`."""
        self.scheduler.put(job, job.priority)
        return job.request_id

    def speak(
        self,
        request: SynthesisRequest,
        runtime: RuntimeOptions | None = None,
        sink: EventSink | None = None,
        label: str = "Speak",
    ) -> int:
        """Queue an interactive request; its events go to ``sink`` or, by default, :attr:`events`."""
        return self.submit(Speak(request, runtime, sink, label))

    def convert(
        self,
        request: ConversionRequest,
        runtime: RuntimeOptions | None = None,
        sink: EventSink | None = None,
        label: str = "Re-voice",
    ) -> int:
        """Queue a recording to re-voice (interactive, as Speak); its events go to ``sink`` or :attr:`events`."""
        return self.submit(Convert(request, runtime, sink, label))

    @property
    def queued(self) -> int:
        """Jobs and commands waiting for the inference thread (not counting those under way)."""
        return self.scheduler.qsize()

    @property
    def running(self) -> int | None:
        """The id of the job on the inference thread now (``None`` while it waits for work)."""
        with self._lock:
            return self._jobs[-1].request_id if self._jobs else None

    def status(self) -> WorkerStatus:
        """What runs now, what pauses between steps, and what waits (cancelled jobs not counted)."""
        queued = [item for item in self.scheduler.waiting() if not isinstance(item, _COMMANDS)]
        with self._lock:
            jobs = list(self._jobs)
            waiting = tuple(job_info(job) for job in queued if job.request_id not in self._cancelled)
        running = job_info(jobs[-1]) if jobs else None
        paused = job_info(jobs[0]) if len(jobs) > 1 else None
        return WorkerStatus(running, waiting, paused)

    def cancel(self, request_id: int) -> None:
        """Cancel a job: a waiting one ends at once (Cancelled), a running one between two decode steps."""
        with self._lock:
            self._cancelled.add(request_id)
        job = self.scheduler.remove(request_id)
        if job is not None and not isinstance(job, _COMMANDS):
            self._sink(job).put(Cancelled(request_id))

    def is_cancelled(self, request_id: int) -> bool:
        with self._lock:
            return self._stopping or request_id in self._cancelled

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Cancel everything queued or running, stop the thread; ``False`` if it did not end within ``timeout``."""
        with self._lock:
            self._stopping = True
        self.scheduler.put(_Stop(), Priority.INTERACTIVE)
        if self._thread.is_alive():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    # --- the inference thread ------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self.scheduler.take()
            if isinstance(item, _Stop):
                for left in self.scheduler.drain():  # every request ends with an event
                    if not isinstance(left, _COMMANDS):
                        self._sink(left).put(Cancelled(left.request_id))
                self.pipeline = None
                return
            if isinstance(item, LoadModel):
                self._gpu_failed = None  # an explicit load tries the GPU again
                try:
                    self._load(item)
                except Exception:  # the thread must outlive any bug
                    log.exception("unexpected error in the inference thread")
            elif item is not None:
                self._run_job(item)

    def _sink(self, job: Job) -> EventSink:
        """Where a job's events go."""
        return self.events if job.sink is None else job.sink

    def _run_job(self, job: Job) -> None:
        """Run one job to its end (a background one with the waiting interactive jobs between its steps)."""
        rid, sink = job.request_id, self._sink(job)
        with self._lock:
            self._jobs.append(job)
        pipe: Pipeline | None = None
        steps: Generator[None, None, object] | None = None
        try:
            if self.is_cancelled(rid):
                sink.put(Cancelled(rid))
                return
            pipe = self._pipeline_for(rid, job.runtime, sink)
            if pipe is None:
                return
            runtime = job.runtime if job.runtime is not None else pipe.runtime
            sink.put(Started(rid))
            context = JobContext(rid, sink, lambda: self.is_cancelled(rid), pipe)
            steps = job.steps(context)
            while True:
                pipe = context.pipeline
                final = _step(steps)
                if final is not _MORE:
                    break
                if job.priority is Priority.BACKGROUND:
                    self._run_interactive_jobs()
                if self.is_cancelled(rid):
                    sink.put(Cancelled(rid))
                    return
                if self.pipeline is not context.pipeline or context.pipeline.runtime != runtime:
                    restored = self._pipeline_for(rid, runtime, sink)
                    if restored is None:
                        return
                    context.pipeline = restored
            if final is None:
                raise RuntimeError(f"the {job.kind} job ended without an event")
            sink.put(final)
        except SynthesisCancelled:
            sink.put(Cancelled(rid))
        except ChatterboxError as exc:
            sink.put(Failed(rid, exc.code, dict(exc.data)))
        except Exception as exc:  # noqa: BLE001 - one failed job never takes the worker down
            log.error("request %d failed:\n%s", rid, traceback.format_exc())
            if pipe is not None and pipe.capabilities.on_gpu and _is_device_failure(exc):
                self._fall_back_to_cpu(rid, pipe, exc, sink)
            else:
                sink.put(_internal_failure(rid, exc))
        finally:
            if steps is not None:
                _close(steps)
            with self._lock:
                self._jobs.remove(job)

    def _run_interactive_jobs(self) -> None:
        """Between two steps of a background job: every interactive job that waits (up to a model load)."""
        while (job := self.scheduler.take_interactive(_COMMANDS)) is not None:
            if not isinstance(job, _COMMANDS):
                self._run_job(job)

    def _load(self, command: LoadModel) -> None:
        failed: list[str] = []
        lock = threading.Lock()

        def progress(graph: str, seconds: float | None) -> None:
            with lock:  # graphs loading in parallel may still report after the load failed: they are not heard
                if not failed:
                    self.events.put(LoadProgress(command.bundle, graph, seconds))

        def fail(code: str, data: dict[str, Any]) -> None:
            with lock:
                failed.append(code)
                self.events.put(ModelFailed(command.bundle, code, data))

        try:
            pipe = self.pipeline_factory(command.bundle, command.runtime, progress=progress, background=True)
        except ChatterboxError as exc:
            fail(exc.code, exc.data)
            return
        except Exception as exc:
            log.exception("loading %s failed", command.bundle)
            fail("worker.load_internal", {"kind": type(exc).__name__, "detail": str(exc)})
            return
        self.pipeline = pipe
        notice = (
            Notice("provider.gpu_failed", {"reason": self._gpu_failed}) if self._gpu_failed else pipe.provider_notice
        )
        self.events.put(ModelLoaded(command.bundle, pipe.capabilities, notice))

    def _pipeline_for(self, rid: int, runtime: RuntimeOptions | None, sink: EventSink) -> Pipeline | None:
        """The pipeline for a job, reloaded or switched to its runtime; ``None`` after the event saying why."""
        pipe = self.pipeline
        if pipe is None:
            sink.put(Failed(rid, "worker.no_model"))
            return None
        if runtime is not None:
            runtime = replace(runtime, provider="cpu") if self._gpu_failed else runtime
            changed = runtime.session_changes(pipe.runtime)
            if changed:
                self._load(LoadModel(pipe.files.root, runtime))
                if self.pipeline is pipe or self.pipeline is None:  # the reload failed (ModelFailed says why)
                    sink.put(Failed(rid, "worker.reload_failed", {"fields": list(changed)}))
                    return None
                pipe = self.pipeline
            pipe.update_runtime(runtime)
        return pipe

    def _fall_back_to_cpu(self, rid: int, pipe: Pipeline, exc: Exception, sink: EventSink) -> None:
        """The GPU failed mid-request: report it, and reload on the CPU so the next request works."""
        self._gpu_failed = first_line(str(exc), 200) or type(exc).__name__
        sink.put(Failed(rid, "worker.gpu_failed", {"reason": self._gpu_failed}))
        self.pipeline = None  # release the GPU sessions before building the CPU ones
        self._load(LoadModel(pipe.files.root, replace(pipe.runtime, provider="cpu")))


_MORE = object()


def _step(steps: Generator[None, None, object]) -> object:
    """Run one step: :data:`_MORE` when the job has more, else its final event."""
    try:
        next(steps)
    except StopIteration as stop:
        return stop.value
    return _MORE


def _close(steps: Generator[None, None, object]) -> None:
    """Let a job that ended early clean up now (a no-op once it has returned); its bugs stay its own."""
    try:
        steps.close()
    except Exception:  # the thread must outlive any job
        log.exception("closing a job failed")


_DEVICE_ERROR = re.compile(r"cuda|cudnn|cublas|curand|cufft|out of memory|device|gpu", re.IGNORECASE)


def _is_device_failure(exc: Exception) -> bool:
    """An onnxruntime or driver error (not a bug in our own code) while sessions run on the GPU."""
    return type(exc).__module__.startswith("onnxruntime") or bool(_DEVICE_ERROR.search(str(exc)))


def _internal_failure(rid: int, exc: Exception) -> Failed:
    return Failed(rid, "worker.internal", {"kind": type(exc).__name__, "detail": str(exc)}, internal=True)
