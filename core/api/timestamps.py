"""Sentence timestamps (an extension, ``"timestamps": true``): where each sentence starts and ends in the audio sent;
with ``"timestamps": "word"``, where each of its words does too.

Counted on the audio as it leaves (after ``speed``), so they match what the client plays. They come as
``speech.audio.sentence`` events with ``stream_format: "sse"``, and for any response as a JSON companion at
``GET /v1/audio/speech/{request_id}/timestamps`` (the response's ``X-Timestamps-Url``), kept for the last
:data:`KEPT` requests.

Words come from the engine's forced aligner (:func:`core.engine.align`), in a process of its own
(:class:`~core.engine.AlignerProcess`: it holds the GIL while it works): each sentence's audio, once it is
complete, is handed to it from a thread of the request's own (:class:`_Aligning`, one sentence after another), never
on the path the audio streams through. A sentence that cannot be aligned keeps its start and end, with ``"words":
[]`` and ``words_error`` saying why.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from typing import Any

import numpy as np

from core.engine import SAMPLE_RATE, AlignerProcess, ChatterboxError
from core.wording import describe_error

KEPT = 256
WORDS_WAIT_S = 60.0
"""How long a response that shows words waits, after its audio, for the words of its last sentences."""
log = logging.getLogger(__name__)


class Timestamps:
    def __init__(
        self,
        request_id: int,
        texts: list[str],
        words: bool = False,
        language: str | None = None,
        aligner: AlignerProcess | None = None,
    ):
        self.request_id, self.texts = request_id, texts
        self.words = words
        """Whether each sentence's words are found too (``"timestamps": "word"``)."""
        self.language = language or "en"
        self.sentences: list[dict[str, Any]] = []
        """``{"index", "text", "start", "end"}`` in seconds of the audio sent, in order (their words apart: see
        :meth:`sentence`)."""
        self.complete = 0
        """How many of :attr:`sentences` have all their audio sent."""
        self.done = False
        """All the audio is sent."""
        self._samples = 0
        self._starts: list[int] = []
        self._audio: list[np.ndarray] = []
        """The last sentence's audio so far (kept only while words are wanted and it is not complete)."""
        self._found: dict[int, dict[str, Any]] = {}
        self._futures: dict[int, Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._aligner = aligner
        self._aligning = _Aligning()

    def add(self, sentence: int, samples: int, audio: np.ndarray | None = None) -> None:
        """``samples`` more were sent, of ``sentence`` (-1: a silence between sentences); ``audio``: those samples,
        for the words."""
        start = self._samples
        self._samples += samples
        if sentence < 0:
            self._complete(len(self.sentences))
            return
        if sentence >= len(self.sentences):
            self._complete(len(self.sentences))
            text = self.texts[sentence] if sentence < len(self.texts) else ""
            self.sentences.append({"index": sentence, "text": text, "start": _seconds(start), "end": 0.0})
            self._starts.append(start)
        self.sentences[-1]["end"] = _seconds(self._samples)
        if self.words and audio is not None and audio.size:
            self._audio.append(np.array(audio, dtype=np.float32))

    def finish(self) -> None:
        """All the audio is sent: the last sentence is complete."""
        self._complete(len(self.sentences))
        self.done = True

    def _complete(self, upto: int) -> None:
        """Sentences before ``upto`` are complete: align the one that just was, when words are wanted."""
        for index in range(self.complete, upto):
            if self.words:
                self._align(index)
        self.complete = max(self.complete, upto)

    def _align(self, index: int) -> None:
        audio = np.concatenate(self._audio) if self._audio else np.zeros(0, np.float32)
        self._audio = []
        sentence = self.sentences[index]
        start, end = self._starts[index] / SAMPLE_RATE, sentence["end"]
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            self._futures[index] = future
        if self._aligner is None:
            self._aligner = AlignerProcess()
        aligner = self._aligner

        def work() -> None:
            found = sentence_words(aligner, audio, sentence["text"], self.language, start, end)
            with self._lock:
                self._found[index] = found
            future.set_result(found)

        self._aligning.put(work)

    # --- what is told ---------------------------------------------------------------------------------------------
    def sentence(self, index: int) -> dict[str, Any]:
        """Sentence ``index`` as told: with its words (or why it has none) once they are found."""
        with self._lock:
            found = self._found.get(index)
        return {**self.sentences[index], **found} if found is not None else dict(self.sentences[index])

    def ready(self) -> int:
        """How many sentences, from the first, can be told: complete, and with their words when words are wanted."""
        if not self.words:
            return self.complete
        with self._lock:
            return next((i for i in range(self.complete) if i not in self._found), self.complete)

    @property
    def settled(self) -> bool:
        """All the audio is sent, and (when words are wanted) every sentence's words are found or failed."""
        return self.done and (not self.words or self.ready() == len(self.sentences))

    async def rest(self, first: int, timeout: float = WORDS_WAIT_S) -> AsyncIterator[dict[str, Any]]:
        """The sentences from ``first`` on, each once its words are found; after ``timeout`` s in all, the rest
        without them, saying so."""
        deadline = time.monotonic() + timeout
        for index in range(first, len(self.sentences)):
            with self._lock:
                future = self._futures.get(index)
            if future is not None and not future.done():
                try:
                    left = max(deadline - time.monotonic(), 0.0)
                    await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), left)
                except asyncio.TimeoutError:
                    late = {"words": [], "words_error": {"code": "align.timeout", "message": _late(timeout)}}
                    yield {**self.sentences[index], **late}
                    continue
            yield self.sentence(index)

    def all_words(self) -> list[dict[str, Any]]:
        """Every word found, in order (seconds of the whole audio)."""
        with self._lock:
            found = [self._found.get(i, {}) for i in range(len(self.sentences))]
        return [word for sentence in found for word in sentence.get("words", ())]

    def as_json(self) -> dict[str, Any]:
        return {
            "object": "speech.timestamps",
            "id": self.request_id,
            "done": self.settled,
            "duration": _seconds(self._samples),
            "sentences": [self.sentence(i) for i in range(len(self.sentences))],
        }


def sentence_words(
    aligner: AlignerProcess, audio: np.ndarray, text: str, language: str, start: float, end: float
) -> dict[str, Any]:
    """The words of a sentence heard in ``audio`` (which starts at ``start`` s of the response and ends at ``end``):
    ``{"words": [{"word", "start", "end"}], "words_placed": share}``, or ``{"words": [], "words_error": {"code",
    "message"}}`` when they cannot be found. Never raises."""
    try:
        found = aligner.align(audio, SAMPLE_RATE, text, language)
    except ChatterboxError as exc:
        return {"words": [], "words_error": {"code": exc.code, "message": describe_error(exc, "api")}}
    except Exception as exc:  # a sentence without words, never a failed request
        log.exception("aligning a sentence of %.1f s failed", audio.size / SAMPLE_RATE)
        message = f"The words of this sentence could not be found ({type(exc).__name__})."
        return {"words": [], "words_error": {"code": "align.internal", "message": message}}
    words = []
    for word in found.words:
        first = min(max(start + word.start, start), end)
        last = min(max(start + word.end, first), end)
        words.append({"word": word.word, "start": round(first, 3), "end": round(last, 3)})
    return {"words": words, "words_placed": round(found.placed_share, 4)}


def _late(timeout: float) -> str:
    return f"The words of this sentence were not found within {timeout:g} s."


class _Aligning:
    """One request's sentences to align, in order, on a thread of its own that lives while there are any."""

    def __init__(self) -> None:
        self._todo: deque[Callable[[], None]] = deque()
        self._lock = threading.Lock()
        self._running = False

    def put(self, work: Callable[[], None]) -> None:
        with self._lock:
            self._todo.append(work)
            if self._running:
                return
            self._running = True
        threading.Thread(target=self._run, name="api-words", daemon=True).start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._todo:
                    self._running = False
                    return
                work = self._todo.popleft()
            work()


class TimestampStore:
    """The timestamps of the last :data:`KEPT` requests that asked for them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[int, Timestamps] = OrderedDict()
        self.aligner = AlignerProcess()
        """Where the words of this server's requests are found (its process starts at the first sentence)."""

    def new(self, request_id: int, texts: list[str], words: bool = False, language: str | None = None) -> Timestamps:
        marks = Timestamps(request_id, texts, words, language, self.aligner)
        with self._lock:
            self._kept[request_id] = marks
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        return marks

    def get(self, request_id: int) -> Timestamps | None:
        with self._lock:
            return self._kept.get(request_id)

    def close(self) -> None:
        """End the aligner's process (a later request with words starts it again)."""
        self.aligner.close()


def _seconds(samples: int) -> float:
    return round(samples / SAMPLE_RATE, 3)
