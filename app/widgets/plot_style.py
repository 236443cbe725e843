"""One look for every plot: the window palette's colours (light and dark mode both read well), legends on a
semi-opaque background, and a placeholder text for an empty plot."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette

AXES = ("left", "bottom", "right")
ZERO_MARGIN_PX = 8
"""A y range from 0 starts this many pixels below 0, so the 0 tick's label fits (no negative tick shows)."""


def text_color(widget) -> QColor:
    return widget.palette().color(QPalette.ColorRole.Text)


def style_plot(plot_item, widget) -> None:
    """Match ``plot_item`` (inside ``widget``) to the window's palette (light or dark, as the system says).

    No axis scales its numbers by an SI prefix ("x0.001", "(ms)" from seconds): every axis says its unit itself."""
    widget.setBackground(widget.palette().color(QPalette.ColorRole.Base))
    text = text_color(widget)
    for name in AXES:
        axis = plot_item.getAxis(name)
        axis.setPen(text)
        axis.setTextPen(text)
        axis.enableAutoSIPrefix(False)
    if plot_item.titleLabel.text:
        plot_item.titleLabel.setText(plot_item.titleLabel.text, color=text.name())


def add_legend(plot_item, widget, offset=(8, 8), columns: int = 1) -> pg.LegendItem:
    """A legend in a corner of the data area, on the window's base colour (semi-opaque) with a thin frame."""
    palette = widget.palette()
    base = QColor(palette.color(QPalette.ColorRole.Base))
    base.setAlpha(225)
    legend = plot_item.addLegend(
        offset=offset,
        brush=base,
        pen=palette.color(QPalette.ColorRole.Mid),
        labelTextColor=text_color(widget),
        verSpacing=-4,
    )
    legend.setColumnCount(columns)
    legend.setZValue(50)  # above the curves

    def fit() -> None:
        """In ``columns`` columns where they fit, else in one; not shown where even that would be cut off."""
        view = plot_item.vb
        room_w, room_h = view.width() - 2 * abs(offset[0]), view.height() - 2 * abs(offset[1])
        for count in (columns, 1) if columns > 1 else (1,):
            legend.setColumnCount(count)
            rect = legend.boundingRect()
            if rect.width() <= room_w and rect.height() <= room_h:
                legend.setOpacity(1.0)
                return
        legend.setOpacity(0.0 if room_w > 0 and room_h > 0 else 1.0)

    plot_item.vb.sigResized.connect(fit)
    legend.fit = fit  # type: ignore[attr-defined]  # for plots that add entries later
    return legend


def placeholder(plot_item, widget, text: str) -> pg.TextItem:
    """A hint shown in the middle of an empty plot (placed by the caller, which knows the empty range)."""
    color = widget.palette().color(QPalette.ColorRole.PlaceholderText)
    item = pg.TextItem(text, color=color, anchor=(0.5, 0.5))
    plot_item.addItem(item, ignoreBounds=True)
    natural = item.textItem.boundingRect().width()

    def wrap() -> None:  # a narrow plot (a small screen) wraps the hint instead of cutting it at both sides
        room = plot_item.vb.width() - 8
        item.setTextWidth(room if 0 < room < natural else -1)
        # Still too tall for the plot: not shown rather than cut (the plot's own axes say what it is).
        item.setOpacity(0.0 if item.textItem.boundingRect().height() > plot_item.vb.height() - 4 else 1.0)

    plot_item.vb.sigResized.connect(wrap)
    return item


def legend_headroom(plot_item, legend: pg.LegendItem, margin_px: float = 12) -> float:
    """The factor to stretch a y range starting at 0 so the data stays below a legend in the top corner."""
    height = plot_item.vb.height()
    if not legend.isVisible() or legend.opacity() == 0.0 or height <= 0:
        return 1.1
    reserved = min(0.6, (legend.height() + abs(legend.opts["offset"][1]) + margin_px) / height)
    return 1.0 / (1.0 - reserved)


def set_y_from_zero(view: pg.ViewBox, top: float) -> None:
    """Show 0…``top`` on ``view``, with the 0 tick's label inside the axis."""
    height = view.height()
    below = top * ZERO_MARGIN_PX / (height - ZERO_MARGIN_PX) if height > 2 * ZERO_MARGIN_PX else 0.0
    view.setYRange(-below, top, padding=0)


def still_plot(widget: pg.PlotWidget, x_label: str):
    """A plot that is a picture of numbers: no focus (Tab passes it by), no menu or mouse zoom, a y grid, and
    ``x_label`` under its whole-number x axis. Returns its PlotItem."""
    widget.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    plot = widget.getPlotItem()
    plot.setMenuEnabled(False)
    plot.hideButtons()
    widget.setMouseEnabled(x=False, y=False)
    plot.setLabel("bottom", x_label)
    plot.showGrid(x=False, y=True, alpha=0.15)
    return plot
