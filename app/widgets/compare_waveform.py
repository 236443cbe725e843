"""The waveform of a recording and its re-voiced audio, mirrored on one time axis: the original (A) above the line,
the re-voiced audio (B) below it, each as its peak level per 10 ms. B grows while it streams under the whole of A
(both are the same length), so where the two differ in timing or loudness shows at a glance; the playhead runs
across both, whichever plays."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Slot
from PySide6.QtGui import QColor, QPalette

from .plot_axes import fit_axis_labels
from .waveform_plot import BUCKET, WaveformPlot

EMPTY_TEXT = "Open, drop or record a recording to see it here"
CONVERTED_COLOR = "#4aa3df"
"""The re-voiced audio in Speak's waveform colour."""


def peaks(samples: np.ndarray) -> np.ndarray:
    """The peak level of each :data:`BUCKET` samples (a trailing part bucket included)."""
    if not samples.size:
        return np.zeros(0, np.float32)
    padded = np.zeros(-(-samples.size // BUCKET) * BUCKET, np.float32)
    padded[: samples.size] = np.abs(samples)
    return padded.reshape(-1, BUCKET).max(axis=1)


class CompareWaveform(WaveformPlot):
    def __init__(self, parent=None, redraw_ms: int = 50):
        super().__init__(parent, redraw_ms=redraw_ms, empty_text=EMPTY_TEXT)
        self.setLabel("left", "B ⇩ · level · ⇧ A")
        self.getAxis("left").setTicks([[(1.0, "1"), (0.0, "0"), (-1.0, "1")], []])
        fit_axis_labels(self.getPlotItem())
        mid = self.palette().color(QPalette.ColorRole.Mid)
        fill = QColor(CONVERTED_COLOR)
        fill.setAlpha(170)
        self.curve.setPen(pg.mkPen(CONVERTED_COLOR, width=1))
        self.curve.setFillLevel(0.0)
        self.curve.setBrush(pg.mkBrush(fill))
        shade = QColor(mid)
        shade.setAlpha(170)
        self.original_curve = pg.PlotDataItem(pen=pg.mkPen(mid, width=1), fillLevel=0.0, brush=pg.mkBrush(shade))
        self.addItem(self.original_curve)
        self.original_samples = 0
        self._original_peaks = np.zeros(0, np.float32)

    def set_original(self, samples: np.ndarray | None) -> None:
        """The recording being re-voiced (``None``: none); the re-voiced audio is cleared."""
        self._original_peaks = peaks(samples) if samples is not None else np.zeros(0, np.float32)
        x = np.arange(self._original_peaks.size) * BUCKET / self.sample_rate
        self.original_curve.setData(x, self._original_peaks)
        self.original_samples = 0 if samples is None else samples.size
        self.clear_audio()
        self._redraw()  # the recording shows at once, not at the next tick

    def converted_peaks(self) -> np.ndarray:
        """The re-voiced audio's peak level per bucket, from the min/max pairs kept as it streams."""
        pairs = self._peak_pairs()
        return np.maximum(np.abs(pairs[0::2]), np.abs(pairs[1::2]))

    @Slot()
    def _redraw(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        level = self.converted_peaks()
        self.curve.setData(np.arange(level.size) * BUCKET / self.sample_rate, -level)  # one setData per tick
        self.empty.setVisible(self.samples == 0 and self.original_samples == 0)
        if self._follow:  # the whole recording, filled in as it converts
            seconds = max(self.samples, self.original_samples) / self.sample_rate
            self.setXRange(0, seconds or 5.0, padding=0)

    def _describe(self, x: float, y: float):
        bucket = int(x * self.sample_rate // BUCKET)
        if x < 0 or bucket < 0:
            return None
        lines = [f"{x:.2f} s"]
        if bucket < self._original_peaks.size:
            lines.append(f"A original {self._original_peaks[bucket]:.2f}")
        level = self.converted_peaks()
        if bucket < level.size:
            lines.append(f"B re-voiced {level[bucket]:.2f}")
        return (x, "\n".join(lines)) if len(lines) > 1 else None
