"""Audio of the local speech API: what ``response_format`` asks for, as bytes, streamed as it is generated.

Every format is streamed by :class:`core.engine.StreamEncoder` (PyAV's encoders for ``mp3``, ``aac`` as ADTS, ``opus``
in Ogg, ``flac`` frames; ``wav`` with 0xFFFFFFFF sizes as OpenAI's own streamed WAV; raw ``pcm``): the bytes of the
first sentence leave while the next one is generated. ``Pace`` applies the request's ``speed`` (pitch-preserving,
:func:`core.engine.stretch`) one sentence at a time. A text with nothing to say becomes :func:`silence`.
ElevenLabs' ``output_format`` (``mp3_44100_128``: codec, rate, kbps) is read by :func:`parse_output_format` into an
:class:`Output`, whose encoder resamples to the asked rate.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class Output:
    """A response's audio: its format, and the rate and bitrate ElevenLabs' ``output_format`` may ask for."""

    format: str = "mp3"
    sample_rate: int | None = None
    """``None``: the model's 24 kHz."""
    bitrate: int | None = None
    """Bits per second (``None``: the format's default); only for the lossy formats."""

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES[self.format]

    def encoder(self) -> StreamEncoder:
        """Raises :class:`core.engine.EncodeError` (``encode.bad_rate``) for a rate the codec cannot write."""
        return StreamEncoder(self.format, self.sample_rate, self.bitrate)


LOSSY = ("mp3", "opus", "aac")
KBPS = (8, 320)


def parse_output_format(value: str) -> Output:
    """ElevenLabs' ``codec_rate[_kbps]`` (``mp3_44100_128``, ``pcm_16000``, ``wav_24000``, ``opus_48000_64``) or one of
    :data:`FORMATS`; :class:`ValueError` with a sentence for anything else (``ulaw_8000``: no μ-law here)."""
    codec, *numbers = value.strip().lower().split("_")
    known = ", ".join(FORMATS)
    if codec not in FORMATS:
        raise ValueError(
            f"output_format {value!r} is not offered here: use mp3, opus, aac, flac, wav or pcm, "
            f"optionally with a rate and a bitrate as ElevenLabs writes them (mp3_44100_128, pcm_16000)."
        )
    if len(numbers) > 2 or not all(n.isdigit() for n in numbers):
        raise ValueError(
            f"output_format {value!r} is not codec_rate or codec_rate_kbps (mp3_44100_128); codecs: {known}."
        )
    rate = int(numbers[0]) if numbers else None
    kbps = int(numbers[1]) if len(numbers) > 1 else None
    if kbps is not None and codec not in LOSSY:
        raise ValueError(f"output_format {value!r}: {codec} has no bitrate; write {codec}_{rate}.")
    if kbps is not None and not KBPS[0] <= kbps <= KBPS[1]:
        raise ValueError(f"output_format {value!r}: the bitrate must be {KBPS[0]}–{KBPS[1]} kbps.")
    return Output(codec, rate, kbps * 1000 if kbps is not None else None)


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
