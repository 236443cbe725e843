"""A recording to re-voice, cut into windows the speech encoder takes whole, and the decoded windows joined again.

The speech encoder gives the decoder's tokens only for the first 10 s of what it is fed, so a source is converted
window by window. Cuts fall on the token grid (960 samples, 40 ms) at the quietest 40 ms in reach, so each window
is whole tokens and a join lands where there is little to blend. Neighbouring windows share one token
(:data:`OVERLAP`): the later window's first 40 ms are crossfaded with the earlier one's last 40 ms, so the joined
audio is exactly as long as the source and a join never clicks.

The first window is short (about :data:`FIRST_SECONDS`) so the first converted audio comes quickly; the others are
as long as the encoder allows (fewer decoder calls: each pays the voice prompt's fixed cost).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.engine.constants import SAMPLES_PER_TOKEN

OVERLAP = SAMPLES_PER_TOKEN
"""Samples two neighbouring windows share and crossfade (one token, 40 ms)."""
MAX_TOKENS = 250
"""The most a window may hold, with its overlap: 10 s, what the encoder turns into tokens."""
FIRST_SECONDS = (1.2, 3.0)
"""Where the first cut may fall: soon enough for a quick first audio, late enough for a whole phrase."""
LATER_SECONDS = (6.0, MAX_TOKENS * SAMPLES_PER_TOKEN / 24000 - OVERLAP / 24000)
MIN_LAST_SECONDS = 1.0
"""A cut never leaves less than this for the last window (a sliver would be decoded with no context at all)."""


@dataclass(frozen=True)
class Window:
    start: int
    """First sample of the source in this window."""
    end: int
    """One past its last sample, the overlap with the next window included; may pass the source's end (the last
    window is padded to whole tokens with silence)."""
    keep: int
    """One past the last sample this window alone gives; the next window's crossfade runs from here to ``end``."""

    @property
    def tokens(self) -> int:
        return (self.end - self.start) // SAMPLES_PER_TOKEN


def plan_windows(samples: np.ndarray, rate: int = 24000) -> list[Window]:
    """The windows of a 24 kHz mono source, in order; the last one's ``keep`` is the source's length."""
    total = samples.size
    frames = -(-total // SAMPLES_PER_TOKEN)
    padded = np.zeros(frames * SAMPLES_PER_TOKEN, np.float32)
    padded[:total] = samples
    level = np.sqrt(np.mean(padded.reshape(frames, SAMPLES_PER_TOKEN).astype(np.float64) ** 2, axis=1))
    windows: list[Window] = []
    start = 0  # in tokens

    def tokens(seconds: float) -> int:
        return int(seconds * rate) // SAMPLES_PER_TOKEN

    while True:
        low, high = FIRST_SECONDS if not windows else LATER_SECONDS
        lo, hi = start + tokens(low), min(start + tokens(high), frames - tokens(MIN_LAST_SECONDS) - 1)
        fits = frames - start <= (tokens(high) + 1 if not windows else MAX_TOKENS)
        if fits or hi < lo:
            windows.append(Window(start * SAMPLES_PER_TOKEN, frames * SAMPLES_PER_TOKEN, total))
            return windows
        # The cut: the token whose 40 ms the two windows share, the quietest in reach (of equal ones the latest,
        # for the longest window).
        reach = level[lo : hi + 1]
        cut = lo + int(np.flatnonzero(reach <= reach.min() + 1e-12)[-1])
        windows.append(Window(start * SAMPLES_PER_TOKEN, (cut + 1) * SAMPLES_PER_TOKEN, cut * SAMPLES_PER_TOKEN))
        start = cut


def window_audio(samples: np.ndarray, window: Window) -> np.ndarray:
    """The source's samples of ``window``, padded with silence to whole tokens."""
    part = samples[window.start : window.end]
    if part.size < window.end - window.start:
        part = np.concatenate([part, np.zeros(window.end - window.start - part.size, np.float32)])
    return np.ascontiguousarray(part, dtype=np.float32)


class WindowJoin:
    """Joins decoded windows in order: :meth:`add` returns the samples that are final (up to the next crossfade)."""

    def __init__(self) -> None:
        self._tail = np.zeros(0, np.float32)
        """The last window's overlap, waiting for the next window to crossfade with."""

    def add(self, window: Window, decoded: np.ndarray, last: bool) -> np.ndarray:
        """``decoded``: the window's output, any length; fitted to the window (cut, or padded with silence)."""
        span = window.end - window.start
        audio = decoded[:span].astype(np.float32, copy=True)
        if audio.size < span:
            audio = np.concatenate([audio, np.zeros(span - audio.size, np.float32)])
        if self._tail.size:
            n = self._tail.size
            ramp = np.linspace(0.0, 1.0, n + 2, dtype=np.float32)[1:-1]
            audio[:n] = self._tail + (audio[:n] - self._tail) * ramp
        keep = window.keep - window.start
        ready, self._tail = audio[:keep], (np.zeros(0, np.float32) if last else audio[keep:].copy())
        return ready
