"""Load and check a recording to re-voice: any soundfile format, any rate and channel count, up to 30 minutes.

A source is read as a reference recording is (:mod:`core.engine.audio.voice_reference`), with the same error codes
for the same faults (missing, a folder, unreadable, empty, silent, invalid samples), but read whole, in blocks: each
block mixed to mono and resampled to 24 kHz as it is read (``soxr``'s streaming resampler), so a long 48 kHz stereo
file never sits in memory at its own rate and width.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from core.engine.audio.voice_reference import SILENCE_PEAK, short_reason
from core.engine.constants import SAMPLE_RATE
from core.engine.errors import Notice, VoiceReferenceError

log = logging.getLogger(__name__)

MIN_SOURCE_SECONDS = 0.5
MAX_SOURCE_SECONDS = 30 * 60.0
"""A chapter's worth; a longer recording is refused with words (split it), before any of it is read."""
BLOCK_FRAMES = 1 << 18


@dataclass(frozen=True)
class SourceRecording:
    samples: np.ndarray = field(repr=False)
    """Mono float32 at 24 kHz, the whole recording."""
    source: str
    source_rate: int
    channels: int
    warnings: tuple[Notice, ...] = ()

    @property
    def seconds(self) -> float:
        return self.samples.size / SAMPLE_RATE


def load_source(path: Path | str) -> SourceRecording:
    path = Path(path)
    name = path.name
    if not path.exists():
        raise VoiceReferenceError("source.missing", path=str(path))
    if path.is_dir():
        raise VoiceReferenceError("voice.is_folder", path=str(path))
    try:
        with open(path, "rb") as handle, sf.SoundFile(handle) as f:
            rate, channels, frames = f.samplerate, f.channels, f.frames
            if rate > 0 and frames / rate > MAX_SOURCE_SECONDS:
                raise _too_long(name, frames / rate)
            resampler = soxr.ResampleStream(rate, SAMPLE_RATE, 1, dtype="float32", quality="HQ") if rate > 0 else None
            parts: list[np.ndarray] = []
            while True:
                block = f.read(BLOCK_FRAMES, dtype="float32", always_2d=True)
                last = block.shape[0] < BLOCK_FRAMES
                mono = block.mean(axis=1) if block.size else np.zeros(0, np.float32)
                if not np.all(np.isfinite(mono)):
                    raise VoiceReferenceError("voice.invalid_samples", name=name)
                parts.append(resampler.resample_chunk(mono, last=last) if resampler and rate != SAMPLE_RATE else mono)
                if last:
                    break
    except VoiceReferenceError:
        raise
    except PermissionError as exc:
        raise VoiceReferenceError("voice.permission_denied", path=str(path), name=name) from exc
    except (sf.LibsndfileError, RuntimeError, OSError, ValueError) as exc:
        raise VoiceReferenceError("voice.unreadable", path=str(path), name=name, reason=short_reason(exc)) from exc
    samples = np.concatenate(parts) if parts else np.zeros(0, np.float32)
    return _checked(samples, rate, channels, str(path))


def source_from_array(data: np.ndarray, rate: int, source: str = "<recording>") -> SourceRecording:
    """A recording already in memory (``[n]`` or ``[n, channels]``, any rate): checked and made mono 24 kHz."""
    data = np.asarray(data, dtype=np.float32)
    if data.ndim == 1:
        data = data[:, None]
    name = Path(source).name
    if rate > 0 and data.shape[0] / rate > MAX_SOURCE_SECONDS:
        raise _too_long(name, data.shape[0] / rate)
    mono = data.mean(axis=1) if data.size else np.zeros(0, np.float32)
    if mono.size and not np.all(np.isfinite(mono)):
        raise VoiceReferenceError("voice.invalid_samples", name=name)
    if rate > 0 and rate != SAMPLE_RATE and mono.size:
        mono = soxr.resample(mono, rate, SAMPLE_RATE, quality="HQ").astype(np.float32)
    return _checked(mono, rate, data.shape[1], source)


def _too_long(name: str, seconds: float) -> VoiceReferenceError:
    return VoiceReferenceError(
        "source.too_long",
        name=name,
        seconds=round(seconds, 1),
        minutes=int(-(-seconds // 60)),
        maximum_minutes=int(MAX_SOURCE_SECONDS // 60),
    )


def _checked(samples: np.ndarray, rate: int, channels: int, source: str) -> SourceRecording:
    name = Path(source).name
    if samples.size == 0 or rate <= 0:
        raise VoiceReferenceError("voice.empty", name=name, recommended=1)
    if float(np.max(np.abs(samples))) < SILENCE_PEAK:
        raise VoiceReferenceError("voice.silent", name=name)
    seconds = samples.size / SAMPLE_RATE
    if seconds < MIN_SOURCE_SECONDS:
        raise VoiceReferenceError("source.too_short", name=name, seconds=round(seconds, 3), minimum=MIN_SOURCE_SECONDS)
    warnings = []
    if rate < 16000:
        warnings.append(Notice("voice.low_rate", {"rate": int(rate)}))
    if channels > 1:
        log.info("%s: mixing %d channels to mono", name, channels)
    return SourceRecording(
        samples=np.ascontiguousarray(samples, dtype=np.float32),
        source=source,
        source_rate=int(rate),
        channels=int(channels),
        warnings=tuple(warnings),
    )
