"""The playback forecast of one request, chunk by chunk, in seconds from the request's start: when each chunk was
predicted to arrive, when playback needs it (the deadline: the planned start plus the audio before it) and when it
really arrived. A chunk above its deadline is a stall; "play smoothly" starts late enough that none is."""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt

from .plot_axes import IntegerAxis, fit_axis_labels
from .plot_hover import HoverReadout
from .plot_style import add_legend, legend_headroom, placeholder, set_y_from_zero, still_plot, style_plot

PREDICTED_COLOR, DEADLINE_COLOR, MEASURED_COLOR = "#8e6fd8", "#e08a2c", "#4aa3df"
EMPTY_TEXT = "Speak with “Play smoothly”\nto see the forecast"
MIN_SLOTS = 5
MIN_S = 2.0


@dataclass(frozen=True)
class ForecastChunk:
    arrive_s: float
    """Predicted arrival, seconds from the request's start."""
    play_s: float
    """When playback needs it (the deadline)."""


def forecast_chunks(forecast: dict | None) -> tuple[float | None, list[ForecastChunk]]:
    """The planned start and the predicted chunks of a forecast as the core reports it (``RequestReport.forecast``);
    malformed parts are left out."""
    if not isinstance(forecast, dict):
        return None, []
    start = forecast.get("start_ms")
    chunks = []
    for c in forecast.get("chunks") or []:
        try:
            chunks.append(ForecastChunk(float(c["arrive_ms"]) / 1000, float(c["play_ms"]) / 1000))
        except (KeyError, TypeError, ValueError):
            continue
    return (float(start) / 1000 if isinstance(start, int | float) else None), chunks


class ForecastPlot(pg.PlotWidget):
    def __init__(self, parent=None):
        super().__init__(parent, axisItems={"bottom": IntegerAxis("bottom")})
        plot = still_plot(self, "chunk")
        plot.setLabel("left", "from request start (s)")
        fit_axis_labels(plot)
        style_plot(plot, self)
        self.legend = add_legend(plot, self, columns=3)
        self.predicted_curve = plot.plot(
            pen=pg.mkPen(PREDICTED_COLOR, width=2),
            symbol="d",
            symbolSize=7,
            symbolPen=None,
            symbolBrush=PREDICTED_COLOR,
            name="predicted",
        )
        self.deadline_curve = plot.plot(
            pen=pg.mkPen(DEADLINE_COLOR, width=2, style=Qt.PenStyle.DashLine), name="deadline"
        )
        self.measured_curve = plot.plot(
            pen=None, symbol="o", symbolSize=7, symbolPen=None, symbolBrush=MEASURED_COLOR, name="arrived"
        )
        self.start_line = pg.InfiniteLine(
            0.0, angle=0, pen=pg.mkPen(DEADLINE_COLOR, width=1, style=Qt.PenStyle.DotLine)
        )
        plot.addItem(self.start_line, ignoreBounds=True)
        self.empty = placeholder(plot, self, EMPTY_TEXT)
        self.hover = HoverReadout(self, self._describe)
        self.start_s: float | None = None
        self.predicted: list[ForecastChunk] = []
        self.measured: list[float] = []
        plot.vb.sigResized.connect(self._fit)
        self.show_forecast(None, [], [])

    def show_forecast(self, start_s: float | None, predicted: list[ForecastChunk], measured: list[float]) -> None:
        """``measured``: when each speech chunk really arrived (s from the request's start)."""
        self.start_s, self.predicted, self.measured = start_s, list(predicted), list(measured)
        xs = list(range(1, len(self.predicted) + 1))
        self.predicted_curve.setData(xs, [c.arrive_s for c in self.predicted])
        self.deadline_curve.setData(xs, [c.play_s for c in self.predicted])
        self.measured_curve.setData(list(range(1, len(self.measured) + 1)), self.measured)
        self.start_line.setValue(start_s or 0.0)
        self.start_line.setVisible(start_s is not None)
        shown = bool(self.predicted)
        self.empty.setVisible(not shown)
        self.legend.setVisible(shown)
        self.legend.fit()
        self.hover.hide()
        self._fit()

    def _fit(self) -> None:
        plot = self.getPlotItem()
        headroom = legend_headroom(plot, self.legend) if self.predicted else 1.1
        values = [MIN_S] + [max(c.arrive_s, c.play_s) for c in self.predicted] + self.measured
        top = max(values) * headroom
        slots = max(MIN_SLOTS, len(self.predicted), len(self.measured))
        plot.setXRange(0.5, slots + 0.5, padding=0)
        set_y_from_zero(plot.vb, top)
        self.empty.setPos((slots + 1) / 2, top / 2)

    def _describe(self, x: float, _y: float):
        index = round(x) - 1
        lines = [f"chunk {index + 1}"]
        if 0 <= index < len(self.predicted):
            c = self.predicted[index]
            lines.append(f"predicted {c.arrive_s:.2f} s · deadline {c.play_s:.2f} s")
        if 0 <= index < len(self.measured):
            lines.append(f"arrived {self.measured[index]:.2f} s")
        if len(lines) == 1:
            return None
        if index == 0 and self.start_s is not None:
            lines.append(f"playback planned from {self.start_s:.2f} s")
        return index + 1, "\n".join(lines)
