"""Sentence timestamps (an extension, ``"timestamps": true``): where each sentence starts and ends in the audio sent.

Counted on the audio as it leaves (after ``speed``), so they match what the client plays. They come as
``speech.audio.sentence`` events with ``stream_format: "sse"``, and for any response as a JSON companion at
``GET /v1/audio/speech/{request_id}/timestamps`` (the response's ``X-Timestamps-Url``), kept for the last
:data:`KEPT` requests.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from core.engine import SAMPLE_RATE

KEPT = 256


class Timestamps:
    def __init__(self, request_id: int, texts: list[str]):
        self.request_id, self.texts = request_id, texts
        self.sentences: list[dict[str, Any]] = []
        """``{"index", "text", "start", "end"}`` in seconds of the audio sent, in order."""
        self.complete = 0
        """How many of :attr:`sentences` have all their audio sent."""
        self.done = False
        self._samples = 0

    def add(self, sentence: int, samples: int) -> None:
        """``samples`` more were sent, of ``sentence`` (-1: a silence between sentences)."""
        start = self._samples
        self._samples += samples
        if sentence < 0:
            self.complete = len(self.sentences)
            return
        if sentence >= len(self.sentences):
            self.complete = len(self.sentences)
            text = self.texts[sentence] if sentence < len(self.texts) else ""
            self.sentences.append({"index": sentence, "text": text, "start": _seconds(start), "end": 0.0})
        self.sentences[-1]["end"] = _seconds(self._samples)

    def as_json(self) -> dict[str, Any]:
        return {
            "object": "speech.timestamps",
            "id": self.request_id,
            "done": self.done,
            "duration": _seconds(self._samples),
            "sentences": self.sentences,
        }


class TimestampStore:
    """The timestamps of the last :data:`KEPT` requests that asked for them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[int, Timestamps] = OrderedDict()

    def new(self, request_id: int, texts: list[str]) -> Timestamps:
        marks = Timestamps(request_id, texts)
        with self._lock:
            self._kept[request_id] = marks
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        return marks

    def get(self, request_id: int) -> Timestamps | None:
        with self._lock:
            return self._kept.get(request_id)


def _seconds(samples: int) -> float:
    return round(samples / SAMPLE_RATE, 3)
