"""A one-line label that elides its text (…) instead of widening its window; the whole text is its tooltip."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy


class ElidedLabel(QLabel):
    MIN_CHARS = 6
    """It can shrink to this many characters' width (and never below its own text when that is shorter)."""

    def __init__(self, text: str = "", parent=None) -> None:
        super().__init__("", parent)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self._own_tooltip = ""
        self.setText(text)

    def setText(self, text: str) -> None:
        super().setText(text)
        if not self._own_tooltip:
            super().setToolTip(text)
        self.updateGeometry()

    def setToolTip(self, text: str) -> None:
        self._own_tooltip = text
        super().setToolTip(text)

    @property
    def elided(self) -> bool:
        margins = self.contentsMargins()
        room = self.width() - margins.left() - margins.right()
        return self.fontMetrics().horizontalAdvance(self.text()) > room

    def minimumSizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        hint = super().minimumSizeHint()
        width = min(metrics.horizontalAdvance(self.text()), metrics.averageCharWidth() * self.MIN_CHARS)
        margins = self.contentsMargins()
        return QSize(width + margins.left() + margins.right(), hint.height())

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(rect, int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), text)
