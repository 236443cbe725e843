"""One look for every plot: the window palette's colours, so light and dark mode both read well."""

from __future__ import annotations

from PySide6.QtGui import QPalette


def style_plot(plot_item, widget) -> None:
    """Match ``plot_item`` (inside ``widget``) to the window's palette (light or dark, as the system says)."""
    palette = widget.palette()
    widget.setBackground(palette.color(QPalette.ColorRole.Base))
    text = palette.color(QPalette.ColorRole.Text)
    for axis in ("left", "bottom"):
        plot_item.getAxis(axis).setPen(text)
        plot_item.getAxis(axis).setTextPen(text)
    if plot_item.titleLabel.text:
        plot_item.titleLabel.setText(plot_item.titleLabel.text, color=text.name())
