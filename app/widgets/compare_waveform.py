"""The waveform of a re-voiced recording over its original: the original drawn faint behind, the converted audio
growing over it as it streams (both the same length, on one time axis), the playhead on whichever plays."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Slot
from PySide6.QtGui import QPalette

from .waveform_plot import BUCKET, WaveformPlot

EMPTY_TEXT = "Open, drop or record a recording to see it here"


def peak_pairs(samples: np.ndarray) -> np.ndarray:
    """Min/max per :data:`BUCKET` samples, interleaved (the whole recording at once)."""
    whole = samples.size // BUCKET * BUCKET
    blocks = samples[:whole].reshape(-1, BUCKET)
    pairs = np.empty(2 * blocks.shape[0], dtype=np.float32)
    pairs[0::2], pairs[1::2] = blocks.min(axis=1), blocks.max(axis=1)
    return pairs


class CompareWaveform(WaveformPlot):
    def __init__(self, parent=None, redraw_ms: int = 50):
        super().__init__(parent, redraw_ms=redraw_ms, empty_text=EMPTY_TEXT)
        mid = self.palette().color(QPalette.ColorRole.Mid)
        self.original_curve = pg.PlotDataItem(pen=pg.mkPen(mid, width=1))
        self.original_curve.setZValue(-1)  # behind the converted audio
        self.addItem(self.original_curve)
        self.original_samples = 0
        self._original_pairs = np.zeros(0, np.float32)

    def set_original(self, samples: np.ndarray | None) -> None:
        """The recording being re-voiced (``None``: none); the converted audio is cleared."""
        pairs = peak_pairs(samples) if samples is not None else np.zeros(0, np.float32)
        x = np.repeat(np.arange(pairs.size // 2) * BUCKET / self.sample_rate, 2)
        self.original_curve.setData(x, pairs)
        self._original_pairs = pairs
        self.original_samples = 0 if samples is None else samples.size
        self.clear_audio()
        self._redraw()  # the recording shows at once, not at the next tick

    @Slot()
    def _redraw(self) -> None:
        if not self._dirty:
            return
        super()._redraw()
        self.empty.setVisible(self.samples == 0 and self.original_samples == 0)
        if self._follow and self.original_samples:  # the whole recording, filled in as it converts
            self.setXRange(0, max(self.samples, self.original_samples) / self.sample_rate, padding=0)

    def _describe(self, x: float, y: float):
        """The converted audio's level where there is some, else the original's."""
        found = super()._describe(x, y)
        bucket = int(x * self.sample_rate // BUCKET)
        if found is not None or x < 0 or not 0 <= bucket < self._original_pairs.size // 2:
            return found
        low, high = self._original_pairs[2 * bucket], self._original_pairs[2 * bucket + 1]
        return x, f"{x:.2f} s\noriginal {low:+.2f} … {high:+.2f}"
