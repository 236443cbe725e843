"""Latency: per chunk of the current request (LM and decode time, real-time factor), and per request (time to
first audio, per-step LM time, real-time factor), so a setting's effect shows on the next request."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from .plot_style import style_plot


class LatencyPlot(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.view = pg.GraphicsLayoutWidget(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        self.chunks_plot = self._add_plot("this request, per chunk", "chunk")
        self.lm_curve = self.chunks_plot.plot(pen="#4aa3df", symbol="o", symbolSize=5, name="LM")
        self.decode_curve = self.chunks_plot.plot(pen="#5cb85c", symbol="t", symbolSize=5, name="decode")
        self.requests_plot = self._add_plot("per request", "request")
        self.ttfa_curve = self.requests_plot.plot(pen="#f0ad4e", symbol="o", symbolSize=6, name="first audio")
        self.step_curve = self.requests_plot.plot(pen="#4aa3df", symbol="s", symbolSize=6, name="LM step ×10")
        self.rtf_curve = self.requests_plot.plot(pen="#d9534f", symbol="t", symbolSize=6, name="RTF ×100")
        self.chunks: list[tuple[float, float, float]] = []
        self.requests: list[tuple[float, float, float]] = []

    def _add_plot(self, title: str, x_label: str):
        plot = self.view.addPlot(title=title)
        plot.setLabel("bottom", x_label)
        plot.setLabel("left", "ms")
        plot.addLegend(offset=(5, 5))
        plot.setMenuEnabled(False)
        style_plot(plot, self.view)
        return plot

    def start_request(self) -> None:
        self.chunks = []
        self._redraw_chunks()

    def add_chunk(self, lm_ms: float, decode_ms: float, rtf: float) -> None:
        self.chunks.append((lm_ms, decode_ms, rtf))
        self._redraw_chunks()

    def add_request(self, ttfa_ms: float, step_ms: float, rtf: float) -> None:
        self.requests.append((ttfa_ms, step_ms, rtf))
        xs = list(range(1, len(self.requests) + 1))
        self.ttfa_curve.setData(xs, [r[0] for r in self.requests])
        self.step_curve.setData(xs, [10 * r[1] for r in self.requests])
        self.rtf_curve.setData(xs, [100 * r[2] for r in self.requests])

    def _redraw_chunks(self) -> None:
        xs = list(range(len(self.chunks)))
        self.lm_curve.setData(xs, [c[0] for c in self.chunks])
        self.decode_curve.setData(xs, [c[1] for c in self.chunks])

    @property
    def points(self) -> int:
        return 2 * len(self.chunks) + 3 * len(self.requests)
