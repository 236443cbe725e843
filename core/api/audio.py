"""Audio of the local speech API: what ``response_format`` asks for, as bytes, streamed as it is generated.

Every format is streamed by :class:`core.engine.StreamEncoder` (PyAV's encoders for ``mp3``, ``aac`` as ADTS, ``opus``
in Ogg, ``flac`` frames; ``wav`` with 0xFFFFFFFF sizes as OpenAI's own streamed WAV; raw ``pcm``): the bytes of the
first sentence leave while the next one is generated. ``Pace`` applies the request's ``speed`` (pitch-preserving,
:func:`core.engine.stretch`) one sentence at a time. A text with nothing to say becomes :func:`silence`.
"""

from __future__ import annotations

import numpy as np

from core.engine import SAMPLE_RATE, AudioChunk, StreamEncoder, stretch

FORMATS = ("mp3", "opus", "aac", "flac", "wav", "pcm")
MEDIA_TYPES = {
    "wav": "audio/wav",
    "pcm": "audio/pcm",
    "flac": "audio/flac",
    "mp3": "audio/mpeg",
    "opus": "audio/ogg",
    "aac": "audio/aac",
}
SILENCE_S = 0.25
"""What a text with nothing to say (Home Assistant's connection test sends ".") is answered with."""


def encoder(response_format: str) -> StreamEncoder:
    return StreamEncoder(response_format, SAMPLE_RATE)


def silence(seconds: float = SILENCE_S) -> np.ndarray:
    return np.zeros(round(seconds * SAMPLE_RATE), np.float32)


def pcm16(samples: np.ndarray) -> bytes:
    """Float samples in [-1, 1] as 16-bit little-endian PCM."""
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    return np.round(clipped * 32767.0).astype("<i2").tobytes()


class Pace:
    """Applies ``speed`` to the chunks of one request: unchanged at 1.0, else stretched per sentence."""

    def __init__(self, speed: float):
        self.speed = float(speed)
        self._held: list[np.ndarray] = []

    def add(self, chunk: AudioChunk) -> np.ndarray | None:
        """Samples ready to send, or ``None`` while a sentence is still being collected."""
        if abs(self.speed - 1.0) < 1e-6:
            return chunk.samples
        self._held.append(chunk.samples)
        if not chunk.last_in_sentence:
            return None
        return self.flush()

    def flush(self) -> np.ndarray | None:
        if not self._held:
            return None
        audio = np.concatenate(self._held) if len(self._held) > 1 else self._held[0]
        self._held = []
        return stretch(audio, self.speed)
