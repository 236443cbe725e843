"""Bridging HTTP requests of the local speech API to the one :class:`~core.engine.InferenceWorker`, in fair turns.

A request's text is split into sentences here (:func:`plan`, the engine's own splitter) and each sentence goes to the
worker as an interactive job of its own; the next sentence is queued the moment the previous one starts. So another
request that arrives meanwhile queues behind at most that one sentence: requests take turns sentence by sentence,
and a short request's first audio comes within about two sentences' time whatever else is running (a book render, a
background job, yields to interactive jobs between its segments anyway). The silences between sentences and of
``[pause]`` tags are made here, in order with the sentences' audio.

A recording to re-voice (speech-to-speech) takes turns the same way: it is cut into pieces of about
:data:`PIECE_SECONDS` at the engine's own window cuts (:func:`plan_pieces`), each piece a Convert job, and the pieces'
audio is crossfaded over the token they share (:class:`Seams`), as the engine joins its windows.

Each request gets its own event sink (:class:`AsyncSink`), so its events reach only the coroutine that serves it.
:class:`JobQueue` refuses a request when more than ``max_waiting`` API requests already wait, and a :class:`Job`
that ends early (client gone, server stopping) cancels its worker jobs at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from core.engine import (
    SAMPLE_RATE,
    SAMPLES_PER_TOKEN,
    SENTENCE_GAP_S,
    AudioChunk,
    Cancelled,
    Chunk,
    ConversionRequest,
    Failed,
    Finished,
    InferenceWorker,
    Pause,
    RequestReport,
    RuntimeOptions,
    SourceRecording,
    Started,
    SynthesisRequest,
    new_seed,
    plan_windows,
    split_text,
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
class Part:
    """One piece of a request: a sentence the worker speaks (``text``), or a silence made here."""

    text: str | None
    seconds: float = 0.0
    """A silence's length."""
    sentence: int = -1
    """The sentence's number among the request's sentences (-1: a silence)."""
    piece: int = 0
    """Its place in the engine's split (what the engine adds to the seed, so a seed gives the same audio)."""
    kind: str = "speech"
    """``speech``, ``gap`` (between two sentences) or ``pause`` (a ``[pause]`` tag)."""


def plan(text: str) -> list[Part]:
    """The request's sentences and silences, as the engine would speak them in one stream.

    Raises :class:`core.engine.TextInputError` (``text.nothing_to_say``) when nothing in the text can be spoken.
    """
    parts: list[Part] = []
    sentences = 0
    previous_was_sentence = False
    for number, piece in enumerate(split_text(text)):
        if isinstance(piece, Pause):
            parts.append(Part(None, piece.seconds, kind="pause"))
            previous_was_sentence = False
            continue
        if previous_was_sentence:
            parts.append(Part(None, SENTENCE_GAP_S, kind="gap"))
        parts.append(Part(piece.text, sentence=sentences, piece=number))
        sentences += 1
        previous_was_sentence = True
    return parts


@dataclass(frozen=True)
class JobRecord:
    """A finished request, as tests and ``/health`` see it."""

    request_id: int
    samples: int
    finished_at: float
    """``time.monotonic()`` when the worker put the last sentence's Finished event."""


@dataclass
class _Progress:
    """Where a request is: the worker job of each sentence submitted, and what the finished ones reported."""

    submitted: int = 0
    """Parts before this index have been looked at for submission (sentences submitted, silences skipped)."""
    running: dict[int, int] = field(default_factory=dict)
    """Worker request id → part index, for the sentences submitted and not yet ended."""
    finished: int = 0
    samples: int = 0
    chunks: int = 0
    tokens: list[int] = field(default_factory=list)
    warnings: list = field(default_factory=list)
    ended: bool = False


class Job:
    """One API request on the worker: its parts as worker jobs, their events relayed to one :class:`AsyncSink`.

    What a part is and how it goes to the worker is the subclass's: a sentence to speak (:class:`SpeechJob`) or a
    piece of a recording to re-voice (:class:`ConversionJob`)."""

    kind = "speech"

    def __init__(
        self,
        queue: JobQueue,
        request_id: int,
        sink: AsyncSink,
        parts: list[Part],
        runtime: RuntimeOptions | None,
        seed: int | None,
    ):
        self.jobs, self.request_id, self.sink = queue, request_id, sink
        self.parts, self.runtime = parts, runtime
        self.seed = seed if seed is not None else new_seed()
        self.sentences = [p.text or "" for p in parts if p.text is not None]
        self.started = False
        self.done = False
        self.report: RequestReport | None = None
        self._lock = threading.RLock()  # cancelling a worker job calls put() back on the same thread
        self._progress = _Progress()
        self.submitted_at = time.monotonic()
        """When it was queued (:class:`JobQueue` makes it then): its time to serve, for ``Retry-After``."""

    # --- the worker side (any thread) -------------------------------------------------------------------------
    def begin(self) -> None:
        """Submit the first sentence (its worker id is the request's id)."""
        with self._lock:
            self._submit_next(self.request_id)

    def put(self, event: object) -> None:
        """The worker's events of this request's sentences (called on the inference thread, or by ``cancel``)."""
        with self._lock:
            progress = self._progress
            if progress.ended:
                return
            part_index = progress.running.get(getattr(event, "request_id", -1))
            if part_index is None:
                return
            if isinstance(event, Started):
                if not self.started:
                    self.started = True
                    self.sink.put(Started(self.request_id))
                    self._silences(0)  # a [pause] before the first sentence
                self._submit_next()  # queued now: the next sentence waits behind at most this one
            elif isinstance(event, Chunk):
                part = self.parts[part_index]
                self._relay(replace(event.chunk, sentence=part.sentence))
            elif isinstance(event, Finished):
                del progress.running[event.request_id]
                progress.finished += 1
                progress.tokens += event.report.speech_tokens
                progress.warnings += [w for w in event.report.warnings if w not in progress.warnings]
                self._silences(part_index + 1)  # the gap or pauses after this sentence, before the next one
                self._submit_next()
                if not progress.running and self._complete():
                    self._finish()
            elif isinstance(event, (Failed, Cancelled)):
                progress.running.pop(event.request_id, None)
                others = self._stop_parts()
                self.sink.put(replace(event, request_id=self.request_id))
                self._cancel_parts(others)  # their Cancelled events are not relayed (ended)

    def _stop_parts(self) -> list[int]:
        """End the request's bookkeeping (no event of it is relayed after this); the worker ids of its sentences
        still queued or running, for :meth:`_cancel_parts`."""
        progress = self._progress
        progress.ended = True
        rids = list(progress.running)
        progress.running.clear()
        return rids

    def _cancel_parts(self, rids: list[int]) -> None:
        for rid in rids:
            self.jobs.worker.cancel(rid)

    def _submit_next(self, rid: int | None = None) -> None:
        """Submit the next sentence to the worker, keeping at most two of this request's sentences there."""
        progress = self._progress
        while progress.submitted < len(self.parts) and len(progress.running) < 2:
            index = progress.submitted
            part = self.parts[index]
            progress.submitted += 1
            if part.text is None:
                continue
            rid = rid if rid is not None else self.jobs.worker.new_request_id()
            progress.running[rid] = index
            self._submit(part, rid)
            return

    def _submit(self, part: Part, rid: int) -> None:
        """Queue ``part`` on the worker as request ``rid`` (its events come back to :meth:`put`)."""
        raise NotImplementedError

    def _complete(self) -> bool:
        """Whether every part the request will have is known (a streamed text's last part may still be coming)."""
        return True

    def _silences(self, index: int) -> None:
        """Put the silences from part ``index`` up to the next sentence."""
        while index < len(self.parts) and self.parts[index].text is None:
            self._relay(self._silence(self.parts[index]))
            index += 1

    def _silence(self, part: Part) -> AudioChunk:
        samples = np.zeros(round(part.seconds * SAMPLE_RATE), np.float32)
        return AudioChunk(samples, SAMPLE_RATE, 0, -1, (0, 0), 0, part.kind, request_id=self.request_id)

    def _relay(self, chunk: AudioChunk) -> None:
        progress = self._progress
        chunk = replace(chunk, index=progress.chunks, request_id=self.request_id)
        progress.chunks += 1
        progress.samples += chunk.samples.size
        self.sink.put(Chunk(self.request_id, chunk))

    def _finish(self) -> None:
        progress = self._progress
        progress.ended = True
        report = RequestReport(
            seed=self.seed,
            text=self._text(),
            speech_tokens=progress.tokens,
            warnings=progress.warnings,
            samples=progress.samples,
        )
        self.sink.put(Finished(self.request_id, report))

    def _text(self) -> str:
        return " ".join(self.sentences)

    def status(self) -> dict[str, Any]:
        """Where the request is, for ``/health``."""
        with self._lock:
            return {
                "request_id": self.request_id,
                "kind": self.kind,
                "state": "running" if self.started else "waiting",
                **self._counts(self._progress.finished),
            }

    def _counts(self, finished: int) -> dict[str, Any]:
        return {"sentences": len(self.sentences), "sentences_done": finished}

    # --- the HTTP side (the event loop) -----------------------------------------------------------------------
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
            if isinstance(event, Chunk):
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
        """End the job; its sentences still queued or running are cancelled on the worker at once."""
        if self.done:
            return
        with self._lock:
            rids = self._stop_parts()
        self._cancel_parts(rids)
        self._end(None)

    def _end(self, record: JobRecord | None) -> None:
        self.done = True
        self.jobs.ended(self, record)


class SpeechJob(Job):
    """``POST /v1/audio/speech``: each sentence a Speak request, seeded as the engine seeds it in one stream."""

    def __init__(
        self,
        queue: JobQueue,
        request_id: int,
        sink: AsyncSink,
        parts: list[Part],
        request: SynthesisRequest,
        runtime: RuntimeOptions | None,
    ):
        super().__init__(queue, request_id, sink, parts, runtime, request.options.seed)
        self.request = request

    def _submit(self, part: Part, rid: int) -> None:
        options = replace(self.request.options, seed=(self.seed + part.piece) % 2**31)
        request = SynthesisRequest(part.text or "", self.request.voice, options, rid)
        self.jobs.worker.speak(request, self.runtime, self, "API request")


class StreamedSpeechJob(SpeechJob):
    """A text that arrives in pieces (Wyoming's ``synthesize-chunk``): sentences are added as they complete
    (:meth:`extend`) and take their turns on the worker as one request's do; it finishes once :meth:`end_text` says
    no more is coming and the last sentence is spoken. Between two additions the request simply has nothing queued."""

    kind = "speech-stream"

    def __init__(
        self,
        queue: JobQueue,
        request_id: int,
        sink: AsyncSink,
        parts: list[Part],
        request: SynthesisRequest,
        runtime: RuntimeOptions | None,
    ):
        super().__init__(queue, request_id, sink, [], request, runtime)
        self._text_ended = False
        self._pieces = 0
        """Pieces of the engine's split so far (the next addition's seeds continue from here)."""
        self._append(parts)

    def extend(self, parts: list[Part]) -> None:
        """Add the :func:`plan` of the next complete sentences: queued at once when the request has nothing queued."""
        with self._lock:
            if self._progress.ended or self._text_ended:
                return
            idle = not self._progress.running and self._progress.submitted == len(self.parts)
            first = len(self.parts)
            self._append(parts)
            if idle and self.started:
                self._silences(first)  # the gap after the last sentence spoken: no Finished event will put it
            self._submit_next()

    def end_text(self) -> None:
        """No more text is coming: the request finishes with its last sentence (at once when that is spoken)."""
        with self._lock:
            self._text_ended = True
            progress = self._progress
            if not progress.ended and not progress.running and progress.submitted == len(self.parts):
                self._finish()

    def _append(self, parts: list[Part]) -> None:
        sentences = len(self.sentences)
        previous = self.parts[-1] if self.parts else None
        if previous is not None and previous.text is not None and parts and parts[0].text is not None:
            self.parts.append(Part(None, SENTENCE_GAP_S, kind="gap"))
        for part in parts:
            if part.text is None:
                self.parts.append(part)
            else:
                self.parts.append(replace(part, sentence=part.sentence + sentences, piece=part.piece + self._pieces))
                self.sentences.append(part.text)
        self._pieces += max((p.piece for p in parts), default=-1) + 1

    def _complete(self) -> bool:
        return self._text_ended and self._progress.submitted == len(self.parts)


PIECE_SECONDS = 20.0
"""A recording to re-voice is converted in pieces of about this long (cut at the first of the engine's own window
cuts past it), each a Convert job of its own: other requests take turns between two pieces, as between two
sentences. Longer pieces cost fewer decoder calls (each piece's first window is short, for a quick start); shorter
ones give shorter turns."""
MIN_LAST_PIECE_SECONDS = 8.0
"""A remainder shorter than this is converted with the piece before it, not alone."""
PIECE_SEED_STRIDE = 1000
"""Piece *k* is converted with the request's seed plus ``k`` times this (the engine adds a window's number to the
seed it is given; a piece has far fewer windows than this), so a seed gives the same audio every time."""


@dataclass(frozen=True)
class SourcePiece:
    """One piece of a recording to re-voice, in samples of its 24 kHz source."""

    start: int
    end: int
    """One past its last sample: the piece shares its last token (:data:`OVERLAP`) with the next piece."""


OVERLAP = SAMPLES_PER_TOKEN
"""Samples two neighbouring pieces share and crossfade, as the engine joins its windows (one token, 40 ms)."""


def plan_pieces(samples: np.ndarray) -> list[SourcePiece]:
    """The pieces of a 24 kHz source: whole windows of the engine's own plan (so each cut falls on the token grid at
    the quietest 40 ms in reach), about :data:`PIECE_SECONDS` each; neighbours share one token."""
    windows = plan_windows(samples)
    total = samples.size
    pieces: list[SourcePiece] = []
    start = 0
    for window in windows[:-1]:
        long_enough = window.keep - start >= PIECE_SECONDS * SAMPLE_RATE
        enough_left = total - window.keep >= MIN_LAST_PIECE_SECONDS * SAMPLE_RATE
        if long_enough and enough_left:
            pieces.append(SourcePiece(start, window.end))
            start = window.keep
    pieces.append(SourcePiece(start, total))
    return pieces


class Seams:
    """Joins the pieces' converted audio as it streams: each piece's last :data:`OVERLAP` samples are held back and
    crossfaded with the next piece's first, so the whole is exactly as long as the source and a seam never clicks."""

    def __init__(self, pieces: int):
        self.pieces = pieces
        self.piece = 0
        self._held = np.zeros(0, np.float32)
        """The current piece's audio not sent yet (its last samples, which may be the next seam's)."""
        self._fade = np.zeros(0, np.float32)
        """The previous piece's last token, waiting for this piece's first to crossfade with."""

    def add(self, piece: int, samples: np.ndarray) -> np.ndarray:
        """The samples of ``piece`` that are final now (its chunks come in order, piece after piece)."""
        if piece != self.piece:
            self.piece, self._fade, self._held = piece, self._held, np.zeros(0, np.float32)
        audio = np.concatenate([self._held, np.asarray(samples, np.float32)])
        if self._fade.size:
            if audio.size < self._fade.size:
                self._held = audio
                return np.zeros(0, np.float32)
            n = self._fade.size
            ramp = np.linspace(0.0, 1.0, n + 2, dtype=np.float32)[1:-1]
            audio[:n] = self._fade + (audio[:n] - self._fade) * ramp
            self._fade = np.zeros(0, np.float32)
        if piece == self.pieces - 1:
            self._held = np.zeros(0, np.float32)
            return audio
        keep = max(0, audio.size - OVERLAP)
        self._held = audio[keep:].copy()
        return audio[:keep]


class ConversionJob(Job):
    """``POST /v1/speech-to-speech/{voice_id}``: the recording re-voiced piece by piece (:func:`plan_pieces`), each
    piece a Convert request on the worker; the pieces' audio is joined here (:class:`Seams`)."""

    kind = "speech-to-speech"

    def __init__(
        self,
        queue: JobQueue,
        request_id: int,
        sink: AsyncSink,
        request: ConversionRequest,
        runtime: RuntimeOptions | None,
    ):
        source = request.source
        if not isinstance(source, SourceRecording):
            raise TypeError("the API converts a recording it has already loaded")
        self.source = source
        self.pieces = plan_pieces(source.samples)
        parts = [Part("", sentence=k, piece=k) for k in range(len(self.pieces))]
        super().__init__(queue, request_id, sink, parts, runtime, request.seed)
        self.request = request
        self._seams = Seams(len(self.pieces))

    def _submit(self, part: Part, rid: int) -> None:
        piece = self.pieces[part.piece]
        samples = self.source.samples[piece.start : piece.end]
        warnings = self.source.warnings if part.piece == 0 else ()
        source = replace(self.source, samples=samples, warnings=warnings)
        seed = (self.seed + part.piece * PIECE_SEED_STRIDE) % 2**32
        request = ConversionRequest(source, self.request.voice, seed, rid)
        self.jobs.worker.convert(request, self.runtime, self, "API re-voice")

    def _relay(self, chunk: AudioChunk) -> None:
        samples = self._seams.add(chunk.sentence, chunk.samples)
        if samples.size:
            super()._relay(replace(chunk, samples=samples))

    def _text(self) -> str:
        return ""

    def _counts(self, finished: int) -> dict[str, Any]:
        return {"pieces": len(self.pieces), "pieces_done": finished, "seconds": round(self.source.seconds, 2)}


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

    def submit(
        self, request: SynthesisRequest, loop: asyncio.AbstractEventLoop, parts: list[Part] | None = None
    ) -> Job:
        """Queue a request on the worker (:class:`QueueFull` when too many wait); the id is set here.

        ``parts``: the request's :func:`plan` when the caller has it (it raises ``text.nothing_to_say``)."""
        parts = plan(request.text) if parts is None else parts
        return self._add(lambda rid: SpeechJob(self, rid, AsyncSink(loop), parts, request, self.runtime))

    def stream(
        self, request: SynthesisRequest, loop: asyncio.AbstractEventLoop, parts: list[Part]
    ) -> StreamedSpeechJob:
        """Queue the first complete sentences of a text that arrives in pieces (``parts``: their :func:`plan`; more
        with :meth:`StreamedSpeechJob.extend`, and :meth:`StreamedSpeechJob.end_text` when it is all there)."""
        job = self._add(lambda rid: StreamedSpeechJob(self, rid, AsyncSink(loop), parts, request, self.runtime))
        assert isinstance(job, StreamedSpeechJob)
        return job

    def convert(self, request: ConversionRequest, loop: asyncio.AbstractEventLoop) -> Job:
        """Queue a recording to re-voice (its ``source`` loaded), as :meth:`submit` queues speech."""
        return self._add(lambda rid: ConversionJob(self, rid, AsyncSink(loop), request, self.runtime))

    def check_room(self) -> None:
        """:class:`QueueFull` when a request submitted now would be refused (a route asks before costly work)."""
        with self._lock:
            self._check_room()

    def _check_room(self) -> None:
        waiting = self._waiting()
        if waiting >= self.max_waiting:
            raise QueueFull(waiting, self._retry_after(waiting))

    def _add(self, make: Callable[[int], Job]) -> Job:
        with self._lock:
            self._check_room()
            rid = self.worker.new_request_id()
            job = make(rid)
            self._active[rid] = job
        job.begin()
        return job

    def ended(self, job: Job, record: JobRecord | None) -> None:
        with self._lock:
            active = self._active.pop(job.request_id, None) is not None
            if record is not None:
                self.served += 1
                self.history.append(record)
                if active:
                    self._seconds.append(time.monotonic() - job.submitted_at)

    def record(self, request_id: int) -> JobRecord | None:
        return next((r for r in self.history if r.request_id == request_id), None)

    @property
    def active(self) -> int:
        """API requests queued or running."""
        with self._lock:
            return len(self._active)

    @property
    def waiting(self) -> int:
        """API requests queued whose audio has not begun."""
        with self._lock:
            return self._waiting()

    def _waiting(self) -> int:
        return sum(not job.started for job in self._active.values())

    def requests(self) -> list[dict[str, Any]]:
        """Each API request under way: running (its audio has begun) or waiting, and its sentences done."""
        with self._lock:
            jobs = list(self._active.values())
        return [job.status() for job in jobs]

    def cancel_all(self) -> None:
        with self._lock:
            jobs = list(self._active.values())
        for job in jobs:
            job.close()

    def _retry_after(self, waiting: int) -> int:
        """Seconds until a place is likely free: the recent median request time (1 s before any)."""
        typical = statistics.median(self._seconds) if self._seconds else 1.0
        return max(1, round(typical))
