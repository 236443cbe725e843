"""The one long-lived inference thread: it owns the pipeline; requests go in over a queue, events come out.

No Qt here: the app's bridge drains :attr:`InferenceWorker.events` on a timer and turns events into signals.
A Speak request may name its own ``sink`` (anything with ``put(event)``, e.g. a queue): its Started, Chunk,
Finished, Failed and Cancelled events go there instead of :attr:`InferenceWorker.events` (the local speech API routes
each HTTP request's events this way, so the window never sees them). Every request has an id; ``cancel(id)``
marks it and the decode loop stops between steps; events of cancelled requests are not emitted. A failed
request becomes a :class:`Failed` event and the worker lives on.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

from core.engine.errors import ChatterboxError, Notice, SynthesisCancelled, first_line
from core.engine.options import RuntimeOptions
from core.engine.pipeline import Pipeline
from core.engine.streaming.synthesis import SynthesisRequest
from core.engine.worker.events import (
    Cancelled,
    Chunk,
    Failed,
    Finished,
    LoadProgress,
    ModelFailed,
    ModelLoaded,
    Started,
)
from core.narration import Project, RenderProgress, RenderSummary, regenerate, render_pending

log = logging.getLogger(__name__)


# --- commands ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LoadModel:
    bundle: Path
    runtime: RuntimeOptions


@dataclass(frozen=True)
class Speak:
    request: SynthesisRequest
    runtime: RuntimeOptions | None = None
    """Switches for this request (applied without a reload when only non-session fields changed)."""
    sink: object = None
    """Where this request's events go (anything with ``put(event)``); ``None``: :attr:`InferenceWorker.events`."""


@dataclass(frozen=True)
class RenderProject:
    """Render a narration project's pending segments (or a new take of one segment) on the inference thread.

    The project belongs to the worker until :class:`RenderDone`, :class:`Failed` or :class:`Cancelled` arrives:
    the window reads it on events but does not change it meanwhile.
    """

    request_id: int
    project: Project
    regenerate: int | None = None
    """A segment number: render a new take of it (``seed`` or a new one) instead of the pending segments."""
    seed: int | None = None
    numbers: tuple[int, ...] | None = None
    """Only these pending segments (``None``: all)."""
    runtime: RuntimeOptions | None = None


@dataclass(frozen=True)
class _Stop:
    pass


@dataclass(frozen=True)
class RenderStep:
    """A chunk of a segment being rendered, or a segment done / failed (``progress.kind``)."""

    request_id: int
    progress: RenderProgress


@dataclass(frozen=True)
class RenderDone:
    request_id: int
    summary: RenderSummary


@dataclass
class InferenceWorker:
    """Start with :meth:`start`; stop with :meth:`shutdown` (bounded)."""

    pipeline_factory: object = Pipeline.from_bundle
    """Loads a model: ``(bundle, runtime, progress=…, background=True) -> Pipeline``, as ``Pipeline.from_bundle``."""
    commands: queue.Queue = field(default_factory=queue.Queue)
    events: queue.Queue = field(default_factory=queue.Queue)

    def __post_init__(self) -> None:
        self._cancelled: set[int] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="inference", daemon=True)
        self.pipeline: Pipeline | None = None
        self._next_id = 0
        self._gpu_failed: str | None = None
        """Why the GPU failed mid-request; until the next explicit load, requests run on the CPU."""
        self.running: int | None = None
        """The id of the request on the inference thread now (``None`` while it waits for a command)."""

    # --- called from any thread ----------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def new_request_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    def load(self, bundle: Path, runtime: RuntimeOptions) -> None:
        self.commands.put(LoadModel(Path(bundle), runtime))

    def speak(self, request: SynthesisRequest, runtime: RuntimeOptions | None = None, sink=None) -> int:
        """Queue a request; its events go to ``sink`` (anything with ``put(event)``) or, by default, :attr:`events`."""
        self.commands.put(Speak(request, runtime, sink))
        return request.request_id

    @property
    def queued(self) -> int:
        """Commands waiting for the inference thread (not counting the one it runs)."""
        return self.commands.qsize()

    def render(self, command: RenderProject) -> int:
        self.commands.put(command)
        return command.request_id

    def cancel(self, request_id: int) -> None:
        with self._lock:
            self._cancelled.add(request_id)

    def is_cancelled(self, request_id: int) -> bool:
        with self._lock:
            return request_id in self._cancelled

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Cancel everything queued or running, stop the thread; ``False`` if it did not end within ``timeout``."""
        with self._lock:
            self._cancelled.update(range(self._next_id + 1))
        self.commands.put(_Stop())
        if self._thread.is_alive():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    # --- the inference thread ------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            command = self.commands.get()
            if isinstance(command, _Stop):
                self.pipeline = None
                return
            if isinstance(command, (Speak, RenderProject)):
                self.running = command.request.request_id if isinstance(command, Speak) else command.request_id
            try:
                if isinstance(command, LoadModel):
                    self._gpu_failed = None  # an explicit load tries the GPU again
                    self._load(command)
                elif isinstance(command, Speak):
                    self._speak(command)
                elif isinstance(command, RenderProject):
                    self._render(command)
            except Exception as exc:  # the thread must outlive any bug
                log.exception("unexpected error in the inference thread")
                if isinstance(command, (Speak, RenderProject)):  # every request ends with an event
                    rid = command.request.request_id if isinstance(command, Speak) else command.request_id
                    self._sink(command).put(_internal_failure(rid, exc))
            finally:
                self.running = None

    def _sink(self, command):
        """Where a command's request events go."""
        sink = getattr(command, "sink", None)
        return self.events if sink is None else sink

    def _load(self, command: LoadModel) -> None:
        failed, lock = [], threading.Lock()

        def progress(graph: str, seconds: float | None) -> None:
            with lock:  # graphs loading in parallel may still report after the load failed: they are not heard
                if not failed:
                    self.events.put(LoadProgress(command.bundle, graph, seconds))

        def fail(code: str, data: dict) -> None:
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

    def _prepare(self, rid: int, runtime: RuntimeOptions | None, sink=None) -> Pipeline | None:
        """The pipeline for a request, reloaded or switched to its runtime; ``None`` after the event saying why."""
        sink = self.events if sink is None else sink
        if self.is_cancelled(rid):
            sink.put(Cancelled(rid))
            return None
        pipe = self.pipeline
        if pipe is None:
            sink.put(Failed(rid, "worker.no_model"))
            return None
        if runtime is not None:
            runtime = replace(runtime, provider="cpu") if self._gpu_failed else runtime
            changed = runtime.session_changes(pipe.runtime)
            if changed:
                self._load(LoadModel(pipe.files.root, runtime))
                if self.pipeline is pipe:  # the reload failed (ModelFailed says why); the old model stays
                    sink.put(Failed(rid, "worker.reload_failed", {"fields": list(changed)}))
                    return None
                pipe = self.pipeline
            pipe.update_runtime(runtime)
        sink.put(Started(rid))
        return pipe

    def _render(self, command: RenderProject) -> None:
        rid = command.request_id
        pipe = self._prepare(rid, command.runtime)
        if pipe is None:
            return
        cancelled = lambda: self.is_cancelled(rid)  # noqa: E731

        def progress(step: RenderProgress) -> None:
            if not cancelled():
                self.events.put(RenderStep(rid, step))

        try:
            if command.regenerate is not None:
                summary = regenerate(command.project, pipe, command.regenerate, command.seed, progress, cancelled)
            else:
                numbers = list(command.numbers) if command.numbers is not None else None
                summary = render_pending(command.project, pipe, progress, cancelled, numbers)
        except ChatterboxError as exc:
            self.events.put(Failed(rid, exc.code, exc.data))
            return
        self.events.put(Cancelled(rid) if summary.cancelled else RenderDone(rid, summary))

    def _speak(self, command: Speak) -> None:
        rid = command.request.request_id
        sink = self._sink(command)
        pipe = self._prepare(rid, command.runtime, sink)
        if pipe is None:
            return
        try:
            stream = pipe.stream(command.request, cancelled=lambda: self.is_cancelled(rid))
            for chunk in stream:
                if self.is_cancelled(rid):
                    raise SynthesisCancelled()
                sink.put(Chunk(rid, chunk))
        except SynthesisCancelled:
            sink.put(Cancelled(rid))
            return
        except ChatterboxError as exc:
            sink.put(Failed(rid, exc.code, exc.data))
            return
        except Exception as exc:  # noqa: BLE001 - one failed request never takes the worker down
            log.error("request %d failed:\n%s", rid, traceback.format_exc())
            if pipe.capabilities.on_gpu and _is_device_failure(exc):
                self._fall_back_to_cpu(rid, pipe, exc, sink)
            else:
                sink.put(_internal_failure(rid, exc))
            return
        sink.put(Finished(rid, stream.report))

    def _fall_back_to_cpu(self, rid: int, pipe: Pipeline, exc: Exception, sink=None) -> None:
        """The GPU failed mid-request: report it, and reload on the CPU so the next request works."""
        self._gpu_failed = first_line(str(exc), 200) or type(exc).__name__
        (self.events if sink is None else sink).put(
            Failed(rid, "worker.gpu_failed", {"reason": self._gpu_failed})
        )
        self.pipeline = None  # release the GPU sessions before building the CPU ones
        self._load(LoadModel(pipe.files.root, replace(pipe.runtime, provider="cpu")))


_DEVICE_ERROR = re.compile(r"cuda|cudnn|cublas|curand|cufft|out of memory|device|gpu", re.IGNORECASE)


def _is_device_failure(exc: Exception) -> bool:
    """An onnxruntime or driver error (not a bug in our own code) while sessions run on the GPU."""
    return type(exc).__module__.startswith("onnxruntime") or bool(_DEVICE_ERROR.search(str(exc)))


def _internal_failure(rid: int, exc: Exception) -> Failed:
    return Failed(rid, "worker.internal", {"kind": type(exc).__name__, "detail": str(exc)}, internal=True)
