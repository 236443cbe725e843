"""The text editor: plain text, paste-friendly, a character count; Ctrl+Enter speaks, Esc stops."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from core.text import MAX_TEXT_CHARS


class TextEntry(QWidget):
    speak_requested = Signal()
    stop_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._build_ui()
        self._connect_signals()
        self._on_text_changed()

    def _build_ui(self) -> None:
        self.editor = QPlainTextEdit(self)
        self.editor.setPlaceholderText(
            "Type or paste the text to narrate…  [pause:0.8s] inserts a pause; Turbo understands [laugh], [sigh]…"
        )
        self.editor.setTabChangesFocus(True)
        self.count = QLabel(self)
        self.count.setAlignment(Qt.AlignmentFlag.AlignRight)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.count)

    def _connect_signals(self) -> None:
        self.editor.textChanged.connect(self._on_text_changed)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self.editor, activated=self.speak_requested.emit)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.stop_requested.emit,
                  context=Qt.ShortcutContext.WindowShortcut)  # fmt: skip

    @property
    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)

    @Slot()
    def _on_text_changed(self) -> None:
        n = len(self.editor.toPlainText())
        over = n > MAX_TEXT_CHARS
        self.count.setText(f"{n:,} characters" + (f" — over the {MAX_TEXT_CHARS:,} limit" if over else ""))
        self.count.setStyleSheet("color: #d9534f;" if over else "")
