"""Split a segment: its text with a cursor; the words before the cursor stay, the rest become the next segment."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget


class SplitDialog(QDialog):
    def __init__(self, number: int, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Split segment {number}")
        self.text = QPlainTextEdit(text, self)
        self.text.setReadOnly(True)
        flags = Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        self.text.setTextInteractionFlags(flags)  # read-only, yet the cursor shows and moves
        cursor = self.text.textCursor()
        cursor.setPosition(_middle(text))
        self.text.setTextCursor(cursor)
        self.where = QLabel(self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Split here")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        column = QVBoxLayout(self)
        column.addWidget(QLabel("Put the cursor where the second segment starts:", self))
        column.addWidget(self.text)
        column.addWidget(self.where)
        column.addWidget(buttons)
        self.text.cursorPositionChanged.connect(self._show_where)
        self._show_where()

    def position(self) -> int:
        """Characters of the text before the cursor (what stays in the first segment)."""
        return self.text.textCursor().position()

    def set_position(self, position: int) -> None:
        cursor = self.text.textCursor()
        cursor.setPosition(max(0, min(position, len(self.text.toPlainText()))), QTextCursor.MoveMode.MoveAnchor)
        self.text.setTextCursor(cursor)

    def _show_where(self) -> None:
        text, at = self.text.toPlainText(), self.position()
        self.where.setText(f"…{text[max(0, at - 30) : at]} ┃ {text[at : at + 30]}…")


def _middle(text: str) -> int:
    """A word boundary near the middle (where a split usually goes), or the middle."""
    half = len(text) // 2
    spaces = [i for i, c in enumerate(text) if c == " "]
    return min(spaces, key=lambda i: abs(i - half)) + 1 if spaces else half
