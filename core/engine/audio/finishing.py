"""Finishing applied at export time (the stored takes stay untouched): pace, loudness and a true-peak ceiling.

- Pace: pitch-preserving time-stretch by Rubber Band (``pedalboard.time_stretch``), 0.5–2.0×.
- Loudness: integrated loudness per ITU-R BS.1770-4 (libebur128 through ``pyebur128``, which measures block by block:
  :class:`LoudnessMeter`), a gain to the target, then pedalboard's look-ahead ``BrickwallLimiter`` (true-peak
  detection, 4× oversampled) where the gain pushes peaks over the ceiling; the result is measured again (loudness,
  and true peak on a 4× oversampled copy with ``soxr``).
- Streaming (an export of hours): :class:`LoudnessMeter` takes blocks and also sums the RMS and the sample peak;
  :class:`StreamingLimiter` keeps the limiter's state between blocks and hands back exactly as many samples as it
  was given, in order, once :meth:`StreamingLimiter.flush` has run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.engine.constants import SAMPLE_RATE

LOUDNESS_PRESETS = {"podcast": -16.0, "audiobook": -19.0, "broadcast": -23.0}
LOUDNESS_RANGE = (-40.0, -5.0)
DEFAULT_TRUE_PEAK = -1.0
_LIMITER_MARGIN_DB = 0.3
"""The limiter's ceiling sits this far under the target: its 4× detector can miss the last fraction of a dB."""


@dataclass(frozen=True)
class LoudnessReport:
    target_lufs: float
    before_lufs: float | None
    after_lufs: float | None
    gain_db: float
    true_peak_db: float | None
    limited: bool

    def to_dict(self) -> dict[str, object]:
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def stretch(audio: np.ndarray, speed: float) -> np.ndarray:
    """``audio`` played ``speed`` times faster at the same pitch (``speed`` 1 returns it unchanged)."""
    if abs(speed - 1.0) < 1e-6 or audio.size == 0:
        return audio
    import pedalboard

    out = pedalboard.time_stretch(audio.astype(np.float32)[None, :], SAMPLE_RATE, stretch_factor=float(speed))
    return np.ascontiguousarray(out[0], dtype=np.float32)


class LoudnessMeter:
    """BS.1770 integrated loudness of a programme given block by block (memory stays flat), with its RMS level and
    sample peak (what audiobook stores measure)."""

    def __init__(self, sample_rate: int = SAMPLE_RATE) -> None:
        import pyebur128

        self.sample_rate = sample_rate
        self._state = pyebur128.R128State(1, sample_rate, pyebur128.MeasurementMode.MODE_I)
        self.samples = 0
        self._squares = 0.0
        self.peak = 0.0

    def add(self, block: np.ndarray) -> None:
        block = np.ascontiguousarray(block, dtype=np.float64).reshape(-1)
        if block.size == 0:
            return
        self._state.add_frames(block, block.size)
        self.samples += block.size
        self._squares += float(np.dot(block, block))
        self.peak = max(self.peak, float(np.max(np.abs(block))))

    def integrated(self) -> float | None:
        """LUFS so far; ``None`` for silence or less than one 400 ms block."""
        import pyebur128

        if self.samples < int(0.4 * self.sample_rate) + 1 or self.peak == 0.0:
            return None
        value = pyebur128.get_loudness_global(self._state)
        return float(value) if np.isfinite(value) else None

    def rms_db(self) -> float | None:
        """RMS level of everything added, in dBFS (``None`` for silence)."""
        if not self.samples or self._squares <= 0.0:
            return None
        return 10 * math.log10(self._squares / self.samples)

    def peak_db(self) -> float | None:
        return 20 * math.log10(self.peak) if self.peak > 0 else None


def integrated_loudness(audio: np.ndarray) -> float | None:
    """LUFS of the whole programme; ``None`` for silence or audio shorter than one 400 ms block."""
    meter = LoudnessMeter()
    meter.add(audio)
    return meter.integrated()


class TruePeakMeter:
    """The highest true peak (4× oversampled with ``soxr``, as :func:`true_peak_db`) of audio given block by block."""

    def __init__(self, sample_rate: int = SAMPLE_RATE) -> None:
        import soxr

        self._stream = soxr.ResampleStream(sample_rate, 4 * sample_rate, 1, dtype="float32")
        self.peak = 0.0

    def add(self, block: np.ndarray, last: bool = False) -> None:
        block = np.ascontiguousarray(block, dtype=np.float32).reshape(-1)
        out = self._stream.resample_chunk(block, last=last)
        if out.size:
            self.peak = max(self.peak, float(np.max(np.abs(out))))

    def peak_db(self) -> float | None:
        """dBTP of everything added (call :meth:`add` with ``last=True`` once at the end first)."""
        return 20 * math.log10(self.peak) if self.peak > 0 else None


class StreamingLimiter:
    """pedalboard's true-peak ``BrickwallLimiter`` over a stream of blocks: its look-ahead state carries from block to
    block (``reset=False``), and its delay is taken out, so the samples out line up with the samples in."""

    def __init__(self, ceiling_db: float, sample_rate: int = SAMPLE_RATE) -> None:
        import pedalboard

        self.sample_rate = sample_rate
        self._limiter = pedalboard.BrickwallLimiter(ceiling_db=ceiling_db, true_peak=True)
        self._given = 0
        self._returned = 0

    def process(self, block: np.ndarray) -> np.ndarray:
        block = np.ascontiguousarray(block, dtype=np.float32).reshape(-1)
        if block.size == 0:
            return block
        self._given += block.size
        out = self._limiter.process(block[None, :], self.sample_rate, reset=False)[0]
        self._returned += out.size
        return np.ascontiguousarray(out, dtype=np.float32)

    def flush(self) -> np.ndarray:
        """The samples still held in the look-ahead (after the last block)."""
        missing = self._given - self._returned
        if missing <= 0:
            return np.zeros(0, np.float32)
        tail = self._limiter.process(np.zeros((1, missing + 4096), np.float32), self.sample_rate, reset=False)[0]
        self._returned = self._given
        return np.ascontiguousarray(tail[:missing], dtype=np.float32)


def true_peak_db(audio: np.ndarray) -> float | None:
    """Peak of the 4× oversampled signal in dBTP (BS.1770 Annex 2 style); ``None`` for silence."""
    import soxr

    if audio.size == 0:
        return None
    peak = float(np.max(np.abs(soxr.resample(audio.astype(np.float32), SAMPLE_RATE, 4 * SAMPLE_RATE))))
    return 20 * math.log10(peak) if peak > 0 else None


def normalize_loudness(
    audio: np.ndarray, target_lufs: float, ceiling_db: float = DEFAULT_TRUE_PEAK
) -> tuple[np.ndarray, LoudnessReport]:
    """Gain to ``target_lufs`` with true peaks held under ``ceiling_db``; silence is returned unchanged."""
    before = integrated_loudness(audio)
    if before is None:
        return audio, LoudnessReport(target_lufs, None, None, 0.0, true_peak_db(audio), False)
    out, gain, limited = audio, 0.0, False
    current: float | None = before
    for _ in range(3):  # limiting lowers the loudness a little: correct the gain and limit again
        step = target_lufs - current if current is not None else 0.0
        if abs(step) < 0.05:
            break
        gain += step
        out = (audio * np.float32(10 ** (gain / 20))).astype(np.float32)
        peak = true_peak_db(out)
        if peak is not None and peak > ceiling_db:
            out = _limit(out, ceiling_db - _LIMITER_MARGIN_DB)
            limited = True
        current = integrated_loudness(out)  # each whole-programme measurement is made once
    peak = true_peak_db(out)
    if peak is not None and peak > ceiling_db:  # what the limiter let through: a last static trim
        out = (out * np.float32(10 ** ((ceiling_db - peak) / 20))).astype(np.float32)
        peak = true_peak_db(out)
        current = integrated_loudness(out)
    return out, LoudnessReport(target_lufs, before, current, gain, peak, limited)


def _limit(audio: np.ndarray, ceiling_db: float) -> np.ndarray:
    import pedalboard

    limiter = pedalboard.BrickwallLimiter(ceiling_db=ceiling_db, true_peak=True)
    return np.ascontiguousarray(limiter(audio[None, :], SAMPLE_RATE)[0], dtype=np.float32)


def parse_loudness(value: str | float | None) -> float | None:
    """A LUFS target from a number or a preset name (``podcast`` −16, ``audiobook`` −19, ``broadcast`` −23)."""
    from core.engine.errors import InvalidOptions

    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().lower() in LOUDNESS_PRESETS:
        return LOUDNESS_PRESETS[value.strip().lower()]
    try:
        lufs = float(value)
    except (TypeError, ValueError):
        raise InvalidOptions("options.loudness_unknown", value=value, presets=dict(LOUDNESS_PRESETS)) from None
    if not LOUDNESS_RANGE[0] <= lufs <= LOUDNESS_RANGE[1]:
        raise InvalidOptions("options.loudness_range", value=lufs, low=LOUDNESS_RANGE[0], high=LOUDNESS_RANGE[1])
    return lufs
