"""The values under the mouse: a small box that follows the pointer over a plot, and a line at the point it reads."""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF
from PySide6.QtGui import QColor, QPalette

Describe = Callable[[float, float], "tuple[float, str] | None"]
"""``(x, y)`` in data coordinates → ``(x of the point read, text)``, or ``None`` where there is nothing to read."""
GAP = 10  # pixels between the pointer and the box


class HoverReadout(QObject):
    def __init__(self, plot_widget: pg.PlotWidget, describe: Describe):
        super().__init__(plot_widget)
        self.widget, self.plot, self.describe = plot_widget, plot_widget.getPlotItem(), describe
        palette = plot_widget.palette()
        fill = QColor(palette.color(QPalette.ColorRole.ToolTipBase))
        fill.setAlpha(235)
        self.label = pg.TextItem(
            "",
            color=palette.color(QPalette.ColorRole.ToolTipText),
            fill=fill,
            border=pg.mkPen(palette.color(QPalette.ColorRole.Mid)),
        )
        self.line = pg.InfiniteLine(angle=90, pen=pg.mkPen(palette.color(QPalette.ColorRole.Mid), width=1))
        self.line.hide()
        self.plot.addItem(self.line, ignoreBounds=True)
        self.label.hide()
        self.label.setZValue(1000)  # in the scene itself, above the legend and a second axis's view
        self.plot.scene().addItem(self.label)
        self.plot.scene().sigMouseMoved.connect(self._on_moved)
        plot_widget.installEventFilter(self)

    @property
    def text(self) -> str:
        """What the readout shows now ("" when hidden)."""
        return self.label.toPlainText() if self.label.isVisible() else ""

    def hide(self) -> None:
        self.label.hide()
        self.line.hide()

    def eventFilter(self, _obj, event) -> bool:
        if event.type() == QEvent.Type.Leave:
            self.hide()
        return False

    def _top_left(self, pointer: QPointF, area) -> QPointF:
        """Right of and above the pointer, or left / below where the box would leave the plot; inside it always."""
        box = self.label.boundingRect()
        left = pointer.x() + GAP if pointer.x() + GAP + box.width() <= area.right() else pointer.x() - GAP - box.width()
        top = pointer.y() - GAP - box.height() if pointer.y() - GAP - box.height() >= area.top() else pointer.y() + GAP
        left = max(area.left(), min(left, area.right() - box.width()))
        top = max(area.top(), min(top, area.bottom() - box.height()))
        return QPointF(left, top)

    def _on_moved(self, scene_pos) -> None:
        view = self.plot.vb
        if not view.sceneBoundingRect().contains(scene_pos):
            self.hide()
            return
        point = view.mapSceneToView(scene_pos)
        found = self.describe(point.x(), point.y())
        if found is None:
            self.hide()
            return
        x, text = found
        self.label.setText(text)
        self.label.setAnchor((0.0, 0.0))
        self.label.setPos(self._top_left(scene_pos, view.sceneBoundingRect()))
        self.line.setValue(x)
        self.label.show()
        self.line.show()
