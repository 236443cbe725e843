"""Request after request: one measure at a time (first audio, LM step or real-time factor, each on its own unit),
points coloured by the engine settings that produced them, so switching an optimisation on or off shows; the mouse
reads a request's values and settings."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette

from ..settings_summary import distinguishing_labels, summary_text
from .chunk_latency_plot import ChunkPoint
from .plot_axes import IntegerAxis, fit_axis_labels
from .plot_hover import HoverReadout
from .plot_style import add_legend, legend_headroom, placeholder, set_y_from_zero, still_plot, style_plot

GROUP_COLORS = ("#4aa3df", "#f0ad4e", "#5cb85c", "#d9534f", "#9b59b6", "#1abc9c", "#e67e22", "#7f8c8d")
EMPTY_TEXT = "Each request\nadds a point here"
MIN_SLOTS = 5


@dataclass
class RequestPoint:
    ttfa_ms: float
    step_ms: float
    rtf: float
    settings: tuple[str, ...] = ()
    """:func:`app.settings_summary.describe_settings` of the settings the request ran with."""
    chunks: list[ChunkPoint] = field(default_factory=list)
    key: str = ""
    """The history entry the request became ("" when it did not)."""


@dataclass(frozen=True)
class Metric:
    name: str
    axis_label: str
    attribute: str
    unit: str
    least_top: float
    """The y axis reaches at least this far (an empty plot or tiny values keep a readable scale)."""
    reading: str = "{name} {value:.0f} {unit}"
    """How the mouse reads a request's value."""

    def read(self, point: RequestPoint) -> str:
        return self.reading.format(name=self.name, value=getattr(point, self.attribute), unit=self.unit).strip()


METRICS = (
    Metric("first audio", "first audio (ms)", "ttfa_ms", "ms", 100.0),
    Metric("LM step", "LM step (ms)", "step_ms", "ms", 10.0, "{name} {value:.1f} {unit}"),
    Metric("real-time factor", "RTF (1 = real time)", "rtf", "", 1.25, "RTF {value:.2f}"),
)
CONVERSION_METRICS = (
    METRICS[0],
    Metric("encoder", "encoder per window (ms)", "step_ms", "ms", 10.0, "encoder {value:.1f} ms per window"),
    METRICS[2],
)
"""A re-voiced recording has no language model: its second measure is the speech encoder's time per window."""


class RequestLatencyPlot(pg.PlotWidget):
    def __init__(self, parent=None, metrics: tuple[Metric, ...] = METRICS):
        super().__init__(parent, axisItems={"bottom": IntegerAxis("bottom")})
        plot = still_plot(self, "request")
        style_plot(plot, self)
        self.legend = add_legend(plot, self)
        mid = self.palette().color(QPalette.ColorRole.Mid)
        self.trend = plot.plot(pen=pg.mkPen(mid, width=1))
        self.highlight = pg.ScatterPlotItem(
            size=16, pen=pg.mkPen(self.palette().color(QPalette.ColorRole.Text), width=2), brush=None
        )
        plot.addItem(self.highlight)
        self.realtime = pg.InfiniteLine(1.0, angle=0, pen=pg.mkPen(mid, width=1, style=Qt.PenStyle.DotLine))
        plot.addItem(self.realtime, ignoreBounds=True)
        self.empty = placeholder(plot, self, EMPTY_TEXT)
        self.hover = HoverReadout(self, self._describe)
        self.groups: list[tuple[str, ...]] = []
        self.group_items: list[pg.ScatterPlotItem] = []
        self.requests: list[RequestPoint] = []
        self.highlighted: int | None = None
        self.metrics = metrics
        self.metric = metrics[0]
        plot.vb.sigResized.connect(self._fit)
        plot.setLabel("left", self.metric.axis_label)
        self._fit_labels = fit_axis_labels(plot)
        self._redraw()

    def add(self, point: RequestPoint) -> None:
        self.requests.append(point)
        self.highlighted = None
        self._redraw()

    def set_metric(self, name: str) -> None:
        self.metric = next(m for m in self.metrics if m.name == name)
        self._redraw()

    def set_highlight(self, index: int | None) -> None:
        self.highlighted = index
        self._redraw()

    def group_labels(self) -> list[str]:
        return distinguishing_labels(self.groups)

    def _value(self, point: RequestPoint) -> float:
        return getattr(point, self.metric.attribute)

    def _redraw(self) -> None:
        plot = self.getPlotItem()
        plot.setLabel("left", self.metric.axis_label)
        self._fit_labels()
        for point in self.requests:
            if point.settings not in self.groups:
                self.groups.append(point.settings)
        while len(self.group_items) < len(self.groups):
            color = GROUP_COLORS[len(self.group_items) % len(GROUP_COLORS)]
            item = pg.ScatterPlotItem(size=9, pen=None, brush=pg.mkBrush(color), symbol="o")
            plot.addItem(item)
            self.group_items.append(item)
        xs = list(range(1, len(self.requests) + 1))
        ys = [self._value(r) for r in self.requests]
        self.trend.setData(xs, ys)
        for group, item in zip(self.groups, self.group_items, strict=True):
            pairs = [(x, y) for x, y, r in zip(xs, ys, self.requests, strict=True) if r.settings == group]
            item.setData([p[0] for p in pairs], [p[1] for p in pairs])
        if self.highlighted is not None and 0 <= self.highlighted < len(self.requests):
            self.highlight.setData([self.highlighted + 1], [ys[self.highlighted]])
        else:
            self.highlight.setData([], [])
        self.legend.clear()
        for item, label in zip(self.group_items, self.group_labels(), strict=True):
            self.legend.addItem(item, label)
        self.legend.setVisible(bool(self.groups))
        self.legend.fit()
        self.realtime.setVisible(self.metric.attribute == "rtf")
        self.empty.setVisible(not self.requests)
        self.hover.hide()
        self._fit()

    def _fit(self) -> None:
        plot = self.getPlotItem()
        top = max([self.metric.least_top] + [self._value(r) for r in self.requests])
        top *= legend_headroom(plot, self.legend)
        slots = max(MIN_SLOTS, len(self.requests))
        plot.setXRange(0.5, slots + 0.5, padding=0)
        set_y_from_zero(plot.vb, top)
        self.empty.setPos((slots + 1) / 2, top / 2)

    def _describe(self, x: float, _y: float):
        index = round(x) - 1
        if not 0 <= index < len(self.requests):
            return None
        r = self.requests[index]
        lines = [f"request {index + 1}", *(m.read(r) for m in self.metrics)]
        if r.settings:
            lines.append(summary_text(r.settings, per_line=3))
        return index + 1, "\n".join(lines)
