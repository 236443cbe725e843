"""The waveform, growing while audio streams: peak-downsampled (min/max per 10 ms), redrawn on a timer; time in
seconds from 0, amplitude from −1 to 1, the mouse reads the level at a time."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Slot

from core.engine import SAMPLE_RATE

from .plot_axes import fit_axis_labels
from .plot_hover import HoverReadout
from .plot_style import placeholder, style_plot

BUCKET = 240  # samples per min/max pair: 10 ms at 24 kHz
EMPTY_SECONDS = 5.0
"""The time axis an empty waveform shows."""
EMPTY_TEXT = "Speak to see the waveform"


class WaveformPlot(pg.PlotWidget):
    def __init__(self, parent=None, sample_rate: int = SAMPLE_RATE, redraw_ms: int = 50, empty_text: str = EMPTY_TEXT):
        super().__init__(parent)
        self.sample_rate = sample_rate
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a picture: Tab passes it by
        plot = self.getPlotItem()
        style_plot(plot, self)
        plot.hideButtons()
        self.setLabel("bottom", "time (s)")
        self.setLabel("left", "amplitude")
        self.getAxis("left").setTicks([[(-1.0, "−1"), (0.0, "0"), (1.0, "1")], []])  # readable when short
        fit_axis_labels(plot)
        self.setYRange(-1, 1, padding=0.02)
        self.setLimits(xMin=0)
        self.setXRange(0, EMPTY_SECONDS, padding=0)
        self.setMouseEnabled(x=True, y=False)
        self.showGrid(x=True, y=False, alpha=0.2)
        self.setMenuEnabled(False)
        self.curve = self.plot(pen=pg.mkPen("#4aa3df", width=1))
        self.cursor = pg.InfiniteLine(angle=90, pen=pg.mkPen("#f0ad4e", width=1))
        self.addItem(self.cursor, ignoreBounds=True)
        self.empty = placeholder(plot, self, empty_text)
        self.empty.setPos(EMPTY_SECONDS / 2, 0)
        self.hover = HoverReadout(self, self._describe)
        self._follow = True  # the time axis shows all the audio until the user zooms or pans
        plot.vb.sigRangeChangedManually.connect(self._on_user_range)
        self._peaks: list[np.ndarray] = []
        self._tail = np.zeros(0, dtype=np.float32)
        self.samples = 0
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setInterval(redraw_ms)
        self._timer.timeout.connect(self._redraw)
        self._timer.start()

    def clear_audio(self) -> None:
        self._peaks, self._tail, self.samples = [], np.zeros(0, dtype=np.float32), 0
        self.cursor.setValue(0)
        self._follow = True
        self._dirty = True

    def append(self, samples: np.ndarray) -> None:
        data = np.concatenate([self._tail, samples.astype(np.float32, copy=False)])
        whole = data.size // BUCKET * BUCKET
        if whole:
            blocks = data[:whole].reshape(-1, BUCKET)
            pairs = np.empty(2 * blocks.shape[0], dtype=np.float32)
            pairs[0::2], pairs[1::2] = blocks.min(axis=1), blocks.max(axis=1)
            self._peaks.append(pairs)
        self._tail = data[whole:]
        self.samples += samples.size
        self._dirty = True

    def set_playhead(self, samples_played: int) -> None:
        self.cursor.setValue(samples_played / self.sample_rate)

    @property
    def points(self) -> int:
        return int(sum(p.size for p in self._peaks))

    @property
    def seconds(self) -> float:
        return self.samples / self.sample_rate

    def _peak_pairs(self) -> np.ndarray:
        if len(self._peaks) > 1:
            self._peaks = [np.concatenate(self._peaks)]
        return self._peaks[0] if self._peaks else np.zeros(0, dtype=np.float32)

    @Slot()
    def _on_user_range(self, *_args) -> None:
        self._follow = False

    @Slot()
    def _redraw(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        y = self._peak_pairs()
        x = np.repeat(np.arange(y.size // 2) * BUCKET / self.sample_rate, 2)
        self.curve.setData(x, y)  # one setData per tick
        self.empty.setVisible(self.samples == 0)
        if self._follow:
            self.setXRange(0, self.seconds if self.samples else EMPTY_SECONDS, padding=0)

    def _describe(self, x: float, _y: float):
        pairs = self._peak_pairs()
        bucket = int(x * self.sample_rate // BUCKET)
        if x < 0 or not 0 <= bucket < pairs.size // 2:
            return None
        low, high = pairs[2 * bucket], pairs[2 * bucket + 1]
        return x, f"{x:.2f} s\namplitude {low:+.2f} … {high:+.2f}"
