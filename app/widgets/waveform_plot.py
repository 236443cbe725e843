"""The waveform, growing while audio streams: peak-downsampled (min/max per 10 ms), redrawn on a timer."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Slot

from core.constants import SAMPLE_RATE

from .plot_style import style_plot

BUCKET = 240  # samples per min/max pair: 10 ms at 24 kHz


class WaveformPlot(pg.PlotWidget):
    def __init__(self, parent=None, sample_rate: int = SAMPLE_RATE, redraw_ms: int = 50):
        super().__init__(parent)
        self.sample_rate = sample_rate
        style_plot(self.getPlotItem(), self)
        self.setLabel("bottom", "time", units="s")
        self.setYRange(-1, 1)
        self.setMouseEnabled(x=True, y=False)
        self.showGrid(x=True, y=False, alpha=0.2)
        self.setMenuEnabled(False)
        self.curve = self.plot(pen=pg.mkPen("#4aa3df", width=1))
        self.cursor = pg.InfiniteLine(angle=90, pen=pg.mkPen("#f0ad4e", width=1))
        self.addItem(self.cursor)
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

    @Slot()
    def _redraw(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        y = np.concatenate(self._peaks) if self._peaks else np.zeros(0, dtype=np.float32)
        x = np.repeat(np.arange(y.size // 2) * BUCKET / self.sample_rate, 2)
        self.curve.setData(x, y)  # one setData per tick
