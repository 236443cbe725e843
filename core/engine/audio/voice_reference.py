"""Load and check a reference recording: any soundfile format, mixed to mono, resampled to 24 kHz."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from core.engine.constants import SAMPLE_RATE
from core.engine.errors import Notice, VoiceReferenceError, first_line

log = logging.getLogger(__name__)

MIN_SECONDS = 1.0
RECOMMENDED_SECONDS = 5.0
MAX_SECONDS = 30.0
"""The encoder uses at most the first 15 s (Turbo) / 10 s (decoder prompt); longer recordings are cropped."""
SILENCE_PEAK = 1e-3
CLIP_LEVEL = 0.999
CLIP_SHARE = 0.001
NOISY_SNR_DB = 6.0
NOISE_FLOOR = 10 ** (-40 / 20)


@dataclass(frozen=True)
class VoiceReference:
    samples: np.ndarray = field(repr=False)
    """Mono float32 at 24 kHz (cropped to :data:`MAX_SECONDS`)."""
    source: str
    source_rate: int
    channels: int
    duration_s: float
    """Length of the original recording."""
    warnings: tuple[Notice, ...] = ()
    """What makes this reference a weaker one (short, clipped, noisy…), as codes and data for the front ends."""

    @property
    def digest(self) -> str:
        """Hash of the decoded, resampled audio: the same voice gives the same key whatever the file name."""
        return hashlib.sha256(self.samples.tobytes()).hexdigest()


def load_voice(path: Path | str) -> VoiceReference:
    path = Path(path)
    name = path.name
    if not path.exists():
        raise VoiceReferenceError("voice.missing", path=str(path))
    if path.is_dir():
        raise VoiceReferenceError("voice.is_folder", path=str(path))
    try:
        # Opened by Python first, so a permission problem is reported as one (libsndfile says "System error").
        # Only the part that is used is read: a 1-hour recording must not fill the memory.
        with open(path, "rb") as handle, sf.SoundFile(handle) as f:
            rate, total = f.samplerate, f.frames
            data = f.read(min(total, int(MAX_SECONDS * rate) + 1), dtype="float32", always_2d=True)
    except PermissionError as exc:
        raise VoiceReferenceError("voice.permission_denied", path=str(path), name=name) from exc
    except (sf.LibsndfileError, RuntimeError, OSError, ValueError) as exc:
        raise VoiceReferenceError("voice.unreadable", path=str(path), name=name, reason=short_reason(exc)) from exc
    return voice_from_array(data, rate, source=str(path), total_frames=max(total, data.shape[0]))


def voice_from_array(
    data: np.ndarray, rate: int, source: str = "<array>", total_frames: int | None = None
) -> VoiceReference:
    """Check and convert raw audio (``[n]`` or ``[n, channels]``) into a :class:`VoiceReference`.

    ``total_frames``: the recording's full length when ``data`` holds only its beginning.
    """
    name = Path(source).name
    data = np.asarray(data, dtype=np.float32)
    if data.ndim == 1:
        data = data[:, None]
    channels = data.shape[1]
    if data.shape[0] == 0 or rate <= 0:
        raise VoiceReferenceError("voice.empty", name=name, recommended=RECOMMENDED_SECONDS)
    duration = (total_frames or data.shape[0]) / rate
    keep = int(min(duration, MAX_SECONDS) * rate)
    mono = data[:keep].mean(axis=1)
    if not np.all(np.isfinite(mono)):
        raise VoiceReferenceError("voice.invalid_samples", name=name)
    peak = float(np.max(np.abs(mono)))
    if peak < SILENCE_PEAK:
        raise VoiceReferenceError("voice.silent", name=name)
    if duration < MIN_SECONDS:
        raise VoiceReferenceError(
            "voice.too_short",
            name=name,
            seconds=round(duration, 3),
            minimum=MIN_SECONDS,
            recommended=RECOMMENDED_SECONDS,
        )
    warnings = []
    if duration < RECOMMENDED_SECONDS:
        warnings.append(Notice("voice.short", {"seconds": round(duration, 3), "recommended": RECOMMENDED_SECONDS}))
    if duration > MAX_SECONDS:
        warnings.append(Notice("voice.truncated", {"used": MAX_SECONDS, "seconds": round(duration, 3)}))
    if np.mean(np.abs(mono) >= CLIP_LEVEL) > CLIP_SHARE:
        warnings.append(Notice("voice.clipped"))
    if _is_noisy(mono, rate):
        warnings.append(Notice("voice.noisy"))
    if rate < 16000:
        warnings.append(Notice("voice.low_rate", {"rate": int(rate)}))
    if channels > 1:
        log.info("%s: mixing %d channels to mono", name, channels)
    if rate != SAMPLE_RATE:
        mono = soxr.resample(mono, rate, SAMPLE_RATE, quality="HQ").astype(np.float32)
    return VoiceReference(
        samples=np.ascontiguousarray(mono, dtype=np.float32),
        source=source,
        source_rate=int(rate),
        channels=int(channels),
        duration_s=float(duration),
        warnings=tuple(warnings),
    )


def _is_noisy(mono: np.ndarray, rate: int) -> bool:
    """Speech has quiet gaps: when even the quietest frames are loud and close to the loudest, it is noise."""
    frame = max(1, rate // 50)
    n = mono.size // frame
    if n < 10:
        return False
    rms = np.sqrt(np.mean(mono[: n * frame].reshape(n, frame) ** 2, axis=1)) + 1e-9
    floor, loud = np.percentile(rms, 10), np.percentile(rms, 95)
    return bool(floor > NOISE_FLOOR and 20 * np.log10(loud / floor) < NOISY_SNR_DB)


def short_reason(exc: Exception) -> str:
    text = getattr(exc, "error_string", None) or str(exc)  # libsndfile's reason, without its "Error opening <…>"
    # Without its final full stop: the reason goes in brackets inside a sentence ("(Format not recognised).").
    return first_line(text, 200, default=type(exc).__name__).rstrip(" .") or type(exc).__name__
