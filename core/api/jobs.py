"""Bridging HTTP requests of the local speech API to the one :class:`~core.engine.InferenceWorker`.

Each request gets a worker request id and its own event sink (:class:`AsyncSink`), so its events reach only the
coroutine that serves it; the worker runs them as interactive jobs in the order they came, before a book render's
next segment.
:class:`JobQueue` refuses a request when more than ``max_waiting`` API requests already wait, and a :class:`Job`
that ends early (client gone, server stopping) cancels its worker request at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from core.engine import (
    AudioChunk,
    Cancelled,
    Chunk,
    Failed,
    Finished,
    InferenceWorker,
    RequestReport,
    RuntimeOptions,
    Started,
    SynthesisRequest,
)

POLL_S = 0.2
"""How often a waiting request checks whether its client is still connected."""


class AsyncSink:
    """A worker event sink that hands each event, with the time it was put, to an asyncio queue (thread-safe)."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.queue: asyncio.Queue = asyncio.Queue()

    def put(self, event) -> None:
        with contextlib.suppress(RuntimeError):  # the server's loop is closed: nobody waits for this request
            self.loop.call_soon_threadsafe(self.queue.put_nowait, (time.monotonic(), event))


class QueueFull(Exception):
    def __init__(self, waiting: int, retry_after: int):
        super().__init__(f"{waiting} requests are waiting")
        self.waiting, self.retry_after = waiting, retry_after


class JobFailed(Exception):
    """A request that failed (``code`` and ``data`` say why: :func:`core.wording.describe` words them)."""

    def __init__(self, code: str, data: dict | None = None, internal: bool = False, cancelled: bool = False):
        super().__init__(code)
        self.code, self.data, self.internal, self.cancelled = code, dict(data or {}), internal, cancelled


@dataclass(frozen=True)
class JobRecord:
    """A finished request, as tests and ``/health`` see it."""

    request_id: int
    samples: int
    finished_at: float
    """``time.monotonic()`` when the worker put its Finished event."""


class Job:
    def __init__(self, queue: JobQueue, request_id: int, sink: AsyncSink):
        self.jobs, self.request_id, self.sink = queue, request_id, sink
        self.started = False
        self.done = False
        self.report: RequestReport | None = None

    async def chunks(self, disconnected: Callable[[], Awaitable[bool]]) -> AsyncIterator[AudioChunk]:
        """The request's chunks as they come; ends when it finishes (:class:`JobFailed` if it fails or is cancelled).

        While it waits it asks ``disconnected()`` every :data:`POLL_S`; a client that has gone cancels the request.
        """
        checked = time.monotonic()
        while not self.done:
            try:
                stamp, event = await asyncio.wait_for(self.sink.queue.get(), POLL_S)
            except asyncio.TimeoutError:
                stamp, event = 0.0, None
            if time.monotonic() - checked >= POLL_S:
                checked = time.monotonic()
                if await disconnected():
                    self.close()
                    raise JobFailed("api.disconnected", cancelled=True)
            if event is None:
                continue
            if isinstance(event, Started):
                self.started = True
            elif isinstance(event, Chunk):
                yield event.chunk
            elif isinstance(event, Finished):
                self.report = event.report
                self._end(JobRecord(self.request_id, event.report.samples, stamp))
            elif isinstance(event, Failed):
                self._end(None)
                raise JobFailed(event.code, event.data, internal=event.internal)
            elif isinstance(event, Cancelled):
                self._end(None)
                raise JobFailed("synthesis.cancelled", cancelled=True)

    def close(self) -> None:
        """End the job; a request still queued or running is cancelled on the worker at once."""
        if not self.done:
            self.jobs.worker.cancel(self.request_id)
            self._end(None)

    def _end(self, record: JobRecord | None) -> None:
        self.done = True
        self.jobs.ended(self, record)


class JobQueue:
    """The API's requests on the worker: ids, the waiting limit, and what was served."""

    def __init__(self, worker: InferenceWorker, max_waiting: int = 16, runtime: RuntimeOptions | None = None):
        self.worker = worker
        self.max_waiting = max_waiting
        self.runtime = runtime
        self._lock = threading.Lock()
        self._active: dict[int, Job] = {}
        self.served = 0
        """Requests that finished with audio."""
        self.history: deque[JobRecord] = deque(maxlen=256)
        self._seconds: deque[float] = deque(maxlen=20)
        self._submitted: dict[int, float] = {}

    def submit(self, request: SynthesisRequest, loop: asyncio.AbstractEventLoop) -> Job:
        """Queue a request on the worker (:class:`QueueFull` when too many wait); the id is set here."""
        with self._lock:
            waiting = sum(not job.started for job in self._active.values())
            if waiting >= self.max_waiting:
                raise QueueFull(waiting, self._retry_after(waiting))
            rid = self.worker.new_request_id()
            job = Job(self, rid, AsyncSink(loop))
            self._active[rid] = job
            self._submitted[rid] = time.monotonic()
        self.worker.speak(
            SynthesisRequest(request.text, request.voice, request.options, rid), self.runtime, job.sink, "API request"
        )
        return job

    def ended(self, job: Job, record: JobRecord | None) -> None:
        with self._lock:
            self._active.pop(job.request_id, None)
            submitted = self._submitted.pop(job.request_id, None)
            if record is not None:
                self.served += 1
                self.history.append(record)
                if submitted is not None:
                    self._seconds.append(time.monotonic() - submitted)

    def record(self, request_id: int) -> JobRecord | None:
        return next((r for r in self.history if r.request_id == request_id), None)

    @property
    def active(self) -> int:
        """API requests queued or running."""
        with self._lock:
            return len(self._active)

    @property
    def waiting(self) -> int:
        with self._lock:
            return sum(not job.started for job in self._active.values())

    def cancel_all(self) -> None:
        with self._lock:
            jobs = list(self._active.values())
        for job in jobs:
            job.close()

    def _retry_after(self, waiting: int) -> int:
        """Seconds until a place is likely free: the recent median request time (1 s before any)."""
        typical = statistics.median(self._seconds) if self._seconds else 1.0
        return max(1, round(typical))
