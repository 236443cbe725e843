"""Audio encoders of the local speech API: what ``response_format`` asks for, as bytes.

- ``pcm``: raw 16-bit little-endian mono samples at 24 kHz, streamed chunk by chunk.
- ``wav``: a WAV header whose RIFF and data sizes are 0xFFFFFFFF (the length is not known yet, as OpenAI's own
  streamed WAV), then the same PCM16, streamed from the first chunk.
- ``flac``, ``mp3``, ``opus`` (in Ogg): encoded by libsndfile when the audio is complete (their encoders seek back to
  finish the header), then sent in one response.

``Pace`` applies the request's ``speed`` (pitch-preserving, :func:`core.engine.stretch`) one sentence at a time.
"""

from __future__ import annotations

import io
import struct

import numpy as np
import soundfile as sf

from core.engine import SAMPLE_RATE, AudioChunk, stretch

STREAMED = ("wav", "pcm")
ENCODED = {"flac": ("FLAC", "PCM_16"), "mp3": ("MP3", "MPEG_LAYER_III"), "opus": ("OGG", "OPUS")}
FORMATS = (*STREAMED, *ENCODED)
MEDIA_TYPES = {
    "wav": "audio/wav",
    "pcm": "audio/pcm",
    "flac": "audio/flac",
    "mp3": "audio/mpeg",
    "opus": "audio/ogg",
}
UNKNOWN_SIZE = 0xFFFFFFFF


def pcm16(samples: np.ndarray) -> bytes:
    """Float samples in [-1, 1] as 16-bit little-endian PCM."""
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    return np.round(clipped * 32767.0).astype("<i2").tobytes()


def wav_stream_header(sample_rate: int = SAMPLE_RATE) -> bytes:
    """A 44-byte PCM16 mono WAV header for audio of unknown length (RIFF and data sizes 0xFFFFFFFF)."""
    fmt = struct.pack("<HHIIHH", 1, 1, sample_rate, sample_rate * 2, 2, 16)
    return (
        b"RIFF"
        + struct.pack("<I", UNKNOWN_SIZE)
        + b"WAVEfmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + b"data"
        + (struct.pack("<I", UNKNOWN_SIZE))
    )


def encode(samples: np.ndarray, response_format: str, sample_rate: int = SAMPLE_RATE) -> bytes:
    """The complete audio in one of the :data:`ENCODED` formats."""
    container, subtype = ENCODED[response_format]
    out = io.BytesIO()
    audio = np.asarray(samples, dtype=np.float32).reshape(-1)
    if audio.size == 0:  # some encoders refuse an empty stream: a few milliseconds of silence instead
        audio = np.zeros(sample_rate // 100, np.float32)
    sf.write(out, audio, sample_rate, format=container, subtype=subtype)
    return out.getvalue()


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
