"""Axes for counted things (chunk 1, 2, 3…; request 1, 2…): whole-number ticks only, never scaled by a prefix; and
a second y axis on the right for a quantity in another unit."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtGui import QFontMetrics

STEPS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
LABEL_PX = 36  # room one tick label needs along the axis


class IntegerAxis(pg.AxisItem):
    def __init__(self, orientation: str = "bottom", **kwargs):
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)

    def tickValues(self, minVal: float, maxVal: float, size: float):
        low, high = math.ceil(min(minVal, maxVal)), math.floor(max(minVal, maxVal))
        if high < low:
            return []
        room = max(1, int(size // LABEL_PX))
        step = next((s for s in STEPS if (high - low) // s + 1 <= room), STEPS[-1])
        first = low if step == 1 else math.ceil(low / step) * step
        return [(step, list(range(first, high + 1, step)))]

    def tickStrings(self, values, scale, spacing):
        return [str(round(v)) for v in values]


def add_right_axis(plot_item, label: str) -> pg.ViewBox:
    """A second ViewBox, drawn over the plot's own and sharing its x axis, whose y is the right axis."""
    view = pg.ViewBox(enableMouse=False)
    view.setMenuEnabled(False)
    plot_item.showAxis("right")
    plot_item.scene().addItem(view)
    axis = plot_item.getAxis("right")
    axis.linkToView(view)
    axis.setLabel(label)
    axis.enableAutoSIPrefix(False)
    view.setXLink(plot_item.vb)

    def follow() -> None:
        view.setGeometry(plot_item.vb.sceneBoundingRect())
        view.linkedViewChanged(plot_item.vb, view.XAxis)

    plot_item.vb.sigResized.connect(follow)
    follow()
    return view


def fit_axis_labels(plot_item):
    """Show a vertical axis's label only while the axis is tall enough for all of it (a short plot on a small screen
    would cut "first audio (ms)" to "first audio (n"); hidden, the label is the axis's tooltip. Returns the refit
    function, for callers that change a label later."""

    def fit() -> None:
        for name in ("left", "right"):
            if name not in plot_item.axes:
                continue
            axis = plot_item.getAxis(name)
            text = axis.labelText + (f" ({axis.labelUnits})" if axis.labelUnits else "")
            if not axis.isVisible() or not text:
                continue
            needed = QFontMetrics(axis.label.font()).horizontalAdvance(text) + 8
            room = axis.boundingRect().height()
            axis.showLabel(room <= 0 or needed <= room)
            axis.setToolTip(text)

    plot_item.vb.sigResized.connect(fit)
    fit()
    return fit
