"""Trimming a reference recording: find where the speech starts and ends, cut a span, keep a little margin."""

from __future__ import annotations

import numpy as np

from core.engine import SAMPLE_RATE

SILENCE_DB = -40.0
MARGIN_S = 0.1
FRAME_S = 0.02


def speech_span(samples: np.ndarray, rate: int = SAMPLE_RATE, silence_db: float = SILENCE_DB) -> tuple[float, float]:
    """Seconds where the sound first and last rises above ``silence_db`` relative to its loudest 20 ms frame
    (with :data:`MARGIN_S` kept on both sides); the whole recording when it is silent."""
    frame = max(1, int(FRAME_S * rate))
    count = samples.size // frame
    if count == 0:
        return 0.0, samples.size / rate
    rms = np.sqrt(np.mean(samples[: count * frame].reshape(count, frame).astype(np.float64) ** 2, axis=1))
    peak = rms.max()
    if peak <= 0:
        return 0.0, samples.size / rate
    loud = np.nonzero(rms >= peak * 10 ** (silence_db / 20))[0]
    start = max(0.0, loud[0] * frame / rate - MARGIN_S)
    end = min(samples.size / rate, (loud[-1] + 1) * frame / rate + MARGIN_S)
    return start, end


def cut(samples: np.ndarray, start_s: float, end_s: float, rate: int = SAMPLE_RATE) -> np.ndarray:
    """The samples between ``start_s`` and ``end_s`` with 10 ms fades, so the cut makes no click."""
    out = samples[max(0, round(start_s * rate)) : max(0, round(end_s * rate))].astype(np.float32, copy=True)
    fade = min(out.size // 2, int(0.01 * rate))
    if fade:
        ramp = np.linspace(0.0, 1.0, fade, dtype=np.float32)
        out[:fade] *= ramp
        out[-fade:] *= ramp[::-1]
    return out
