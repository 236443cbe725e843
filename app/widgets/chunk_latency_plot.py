"""One request, chunk by chunk: language-model (or, for a re-voiced recording, speech-encoder) and decoder time in ms
(left axis) and the real-time factor (right axis, with the real-time line at 1); the mouse reads a chunk's values."""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt

from .plot_axes import IntegerAxis, add_right_axis, fit_axis_labels
from .plot_hover import HoverReadout
from .plot_style import add_legend, legend_headroom, placeholder, set_y_from_zero, still_plot, style_plot

LM_COLOR, DECODE_COLOR, RTF_COLOR = "#4aa3df", "#5cb85c", "#d9534f"
EMPTY_TEXT = "Speak to see\nlatency per chunk"
MIN_SLOTS = 5
"""The x axis shows at least this many chunks, so one chunk is a point, not the whole width."""
MIN_MS, MIN_RTF = 100.0, 1.25


@dataclass(frozen=True)
class ChunkPoint:
    lm_ms: float
    decode_ms: float
    rtf: float
    at_ms: float | None = None
    """When the chunk was ready, from the start of the request."""

    def row(self) -> list[float | None]:
        """As the history keeps it."""
        at = None if self.at_ms is None else round(self.at_ms, 1)
        return [round(self.lm_ms, 2), round(self.decode_ms, 2), round(self.rtf, 4), at]

    @classmethod
    def from_row(cls, row) -> ChunkPoint | None:
        try:
            lm, decode, rtf = (float(v) for v in row[:3])
            at = float(row[3]) if len(row) > 3 and row[3] is not None else None
        except (TypeError, ValueError, IndexError):
            return None
        return cls(lm, decode, rtf, at)


class ChunkLatencyPlot(pg.PlotWidget):
    def __init__(self, parent=None, stage: str = "LM", empty_text: str = EMPTY_TEXT, unit: str = "chunk"):
        """``stage``: what makes a chunk's tokens ("LM"; "encoder" for a re-voiced recording, whose chunks are its
        ``unit`` "window")."""
        super().__init__(parent, axisItems={"bottom": IntegerAxis("bottom")})
        self.stage, self.empty_text, self.unit = stage, empty_text, unit
        plot = still_plot(self, unit)
        plot.setLabel("left", "time (ms)")
        self.rtf_view = add_right_axis(plot, "RTF")
        fit_axis_labels(plot)
        style_plot(plot, self)
        self.legend = add_legend(plot, self, columns=3)
        self.lm_curve = plot.plot(
            pen=pg.mkPen(LM_COLOR, width=2), symbol="o", symbolSize=6, symbolPen=None, symbolBrush=LM_COLOR, name=stage
        )
        self.decode_curve = plot.plot(
            pen=pg.mkPen(DECODE_COLOR, width=2),
            symbol="s",
            symbolSize=6,
            symbolPen=None,
            symbolBrush=DECODE_COLOR,
            name="decode",
        )
        self.rtf_curve = pg.PlotDataItem(
            pen=pg.mkPen(RTF_COLOR, width=2, style=Qt.PenStyle.DashLine),
            symbol="t",
            symbolSize=7,
            symbolPen=None,
            symbolBrush=RTF_COLOR,
        )
        self.rtf_view.addItem(self.rtf_curve)
        self.legend.addItem(self.rtf_curve, "RTF (right)")
        self.realtime = pg.InfiniteLine(1.0, angle=0, pen=pg.mkPen(RTF_COLOR, width=1, style=Qt.PenStyle.DotLine))
        self.rtf_view.addItem(self.realtime, ignoreBounds=True)
        self.empty = placeholder(plot, self, empty_text)
        self.hover = HoverReadout(self, self._describe)
        self.chunks: list[ChunkPoint] = []
        plot.vb.sigResized.connect(self._fit)
        self.show_chunks([])

    def show_chunks(self, chunks: list[ChunkPoint], empty_text: str | None = None) -> None:
        self.chunks = list(chunks)
        xs = list(range(1, len(self.chunks) + 1))
        self.lm_curve.setData(xs, [c.lm_ms for c in self.chunks])
        self.decode_curve.setData(xs, [c.decode_ms for c in self.chunks])
        self.rtf_curve.setData(xs, [c.rtf for c in self.chunks])
        self.empty.setText(self.empty_text if empty_text is None else empty_text)
        self.empty.setVisible(not self.chunks)
        self.legend.setVisible(bool(self.chunks))  # an empty plot shows its hint, not a legend over it
        self.legend.fit()
        self.hover.hide()
        self._fit()

    def _fit(self) -> None:
        """Whole chunks from 1, times and RTF from 0, room above the data for the legend."""
        plot, headroom = self.getPlotItem(), legend_headroom(self.getPlotItem(), self.legend)
        top_ms = max([MIN_MS] + [max(c.lm_ms, c.decode_ms) for c in self.chunks]) * headroom
        top_rtf = max([MIN_RTF] + [c.rtf for c in self.chunks]) * headroom
        slots = max(MIN_SLOTS, len(self.chunks))
        plot.setXRange(0.5, slots + 0.5, padding=0)
        set_y_from_zero(plot.vb, top_ms)
        set_y_from_zero(self.rtf_view, top_rtf)
        self.empty.setPos((slots + 1) / 2, top_ms / 2)

    def _describe(self, x: float, _y: float):
        index = round(x) - 1
        if not 0 <= index < len(self.chunks):
            return None
        c = self.chunks[index]
        times = f"{self.stage} {c.lm_ms:.0f} ms · decode {c.decode_ms:.0f} ms"
        lines = [f"{self.unit} {index + 1}", times, f"RTF {c.rtf:.2f}"]
        if c.at_ms is not None:
            lines.append(f"ready at {c.at_ms:.0f} ms")
        return index + 1, "\n".join(lines)
