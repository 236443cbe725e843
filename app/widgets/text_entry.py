"""The text editor: plain text, paste-friendly, a character count; Ctrl+Enter speaks, Esc stops.

An "Insert tag" menu offers the paralinguistic ``[tags]`` the loaded model speaks (Turbo's ``[laugh]``, ``[sigh]``…),
and a note under the editor names the tags it will skip, while the user types rather than after synthesis. "What the
model reads…" beside it asks for the text's tokens (:attr:`TextEntry.reading_requested`; the Speak tab shows them).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QPlainTextEdit, QToolButton, QVBoxLayout, QWidget

from core.engine import MAX_TEXT_CHARS, unknown_tags

from .message_bar import warning_label_style

TAG_CHECK_MS = 150
"""The unknown-tag note is brought up to date this long after the last keystroke (a long text is not rescanned on
every key)."""
NO_TAGS_TIP = "This model speaks no [tags] (only Turbo does); [pause:0.8s] works with every model."


def count_text(n: int) -> str:
    return f"{n:,} character" + ("" if n == 1 else "s")


class TextEntry(QWidget):
    speak_requested = Signal()
    stop_requested = Signal()
    reading_requested = Signal()
    """The "What the model reads…" button was clicked."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.tags: tuple[str, ...] | None = None
        """The tags the loaded model speaks; ``None`` before a model is loaded (nothing is flagged then)."""
        self._build_ui()
        self._connect_signals()
        self._on_text_changed()
        self.set_tags(None)

    def _build_ui(self) -> None:
        self.editor = QPlainTextEdit(self)
        self.editor.setPlaceholderText(
            "Type or paste the text to narrate…  [pause:0.8s] inserts a pause; Turbo understands [laugh], [sigh]…"
        )
        self.editor.setTabChangesFocus(True)
        self.editor.setAccessibleName("Text to speak")
        self.tag_menu = QMenu(self)
        self.tag_button = QToolButton(self)
        self.tag_button.setText("Insert ta&g")
        self.tag_button.setMenu(self.tag_menu)
        self.tag_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.reading_button = QToolButton(self)
        self.reading_button.setText("&What the model reads…")
        self.reading_button.setToolTip(
            "Each sentence of the text as the model reads it: prepared text, tokens and ids, unknown tokens marked"
        )
        self.tag_note = QLabel(self)
        self.tag_note.setWordWrap(True)
        self.tag_note.setStyleSheet(warning_label_style())
        self.tag_note.hide()
        self.count = QLabel(self)
        self.count.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self._tag_timer = QTimer(self)
        self._tag_timer.setSingleShot(True)
        self._tag_timer.setInterval(TAG_CHECK_MS)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.tag_button)
        row.addWidget(self.reading_button)
        row.addStretch(1)
        row.addWidget(self.count)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.tag_note)
        layout.addLayout(row)

    def _connect_signals(self) -> None:
        self.editor.textChanged.connect(self._on_text_changed)
        self._tag_timer.timeout.connect(self.check_tags)
        self.tag_menu.triggered.connect(lambda action: self.insert_tag(action.data()))
        self.reading_button.clicked.connect(self.reading_requested.emit)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            speak = QShortcut(QKeySequence(keys), self.editor)
            speak.activated.connect(self.speak_requested.emit)
        stop = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        stop.setContext(Qt.ShortcutContext.WindowShortcut)
        stop.activated.connect(self.stop_requested.emit)

    @property
    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)

    # --- tags ----------------------------------------------------------------------------------------------------
    def set_tags(self, tags: tuple[str, ...] | None) -> None:
        """The loaded model's tags (``()``: it speaks none; ``None``: no model yet): the menu, then the note."""
        self.tags = None if tags is None else tuple(tags)
        self.tag_menu.clear()
        for tag in self.tags or ():
            action = self.tag_menu.addAction(tag)
            action.setData(tag)
        self.tag_button.setEnabled(bool(self.tags))
        self.tag_button.setToolTip(
            "Insert a sound or style tag the model speaks, at the cursor" if self.tags else NO_TAGS_TIP
        )
        self.check_tags()

    @Slot(str)
    def insert_tag(self, tag: str) -> None:
        cursor = self.editor.textCursor()
        before = self.editor.toPlainText()[: cursor.position()]
        cursor.insertText(("" if not before or before[-1].isspace() else " ") + tag + " ")
        self.editor.setTextCursor(cursor)
        self.editor.setFocus()

    @Slot()
    def check_tags(self) -> None:
        """Say which ``[tags]`` the loaded model will skip (``[pause]`` tags are always understood)."""
        self._tag_timer.stop()
        unknown = [] if self.tags is None else unknown_tags(self.text, self.tags)
        if not unknown:
            self.tag_note.hide()
            return
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        words = ("Unknown tag", "is") if len(unknown) == 1 else ("Unknown tags", "are")
        hint = (
            "Insert tag lists the ones this model speaks."
            if self.tags
            else ("This model speaks no tags; only [pause] tags work.")
        )
        self.tag_note.setText(f"{words[0]} {shown} {words[1]} not spoken and will be skipped. {hint}")
        self.tag_note.show()

    @Slot()
    def _on_text_changed(self) -> None:
        n = len(self.editor.toPlainText())
        over = n > MAX_TEXT_CHARS
        self.count.setText(count_text(n) + (f" — over the {MAX_TEXT_CHARS:,} limit" if over else ""))
        self.count.setStyleSheet("color: #d9534f;" if over else "")
        if self.tags is not None:
            self._tag_timer.start()
