"""Who says a line, in one keystroke and a name: a small popup over the segment's row (W in the list) with a field
and the cast's names under it (and Narrator). Typing narrows the names (those that start with the letters first,
then those that hold them, aliases too); Up and Down move; Enter or a click sets the highlighted one; a name the cast
does not have is offered as a new character. Esc closes it. It only asks: the studio sets the speaker
(:mod:`app.studio.cast_edits`)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QLabel, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

NARRATOR = "Narrator"
"""The choice that makes a line narration (the narrator's voice)."""
CHOICE_ROLE = Qt.ItemDataRole.UserRole
ROWS_SHOWN = 8


@dataclass(frozen=True)
class SpeakerChoice:
    """What was picked: a character's name, the narrator (``name`` ``None``), or a name to add as a character."""

    name: str | None
    new: bool = False


class SpeakerPicker(QFrame):
    chosen = Signal(object)
    """A :class:`SpeakerChoice` (the popup closes itself)."""

    def __init__(
        self, names: list[tuple[str, list[str]]], current: SpeakerChoice | None, parent: QWidget | None = None
    ) -> None:
        """``names``: each character's name and aliases, in the cast's order; ``current``: who says the line now
        (``None``: not known, the attribution is unsure)."""
        super().__init__(parent, Qt.WindowType.Popup)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Who says it")
        self._names = names
        self._current = current
        self.title = QLabel("Who says it?", self)
        self.field = QLineEdit(self)
        self.field.setPlaceholderText("Type a name · Enter sets it · Esc closes")
        self.field.setAccessibleName("Speaker's name")
        self.choices = QListWidget(self)
        self.choices.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the field keeps the keys; Up and Down move the list
        self.choices.setUniformItemSizes(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.field)
        layout.addWidget(self.choices)
        self.field.textChanged.connect(self._narrow)
        self.field.installEventFilter(self)
        self.choices.itemClicked.connect(self._pick)
        self._narrow("")

    # --- showing ---------------------------------------------------------------------------------------------------
    def popup(self, where: QPoint, width: int) -> None:
        """Show under ``where`` (global), at least ``width`` wide, the field taking the keys."""
        rows = min(max(self.choices.count(), 3), ROWS_SHOWN)
        row = self.choices.sizeHintForRow(0) if self.choices.count() else self.fontMetrics().height() + 4
        self.choices.setFixedHeight(rows * row + 2 * self.choices.frameWidth() + 2)
        self.resize(max(width, 240), self.sizeHint().height())
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        x, y = where.x(), where.y()
        if screen is not None:  # kept on the screen: above the row when there is no room under it
            x = max(screen.left(), min(x, screen.right() - self.width()))
            if y + self.height() > screen.bottom():
                y = max(screen.top(), y - self.height())
        self.move(x, y)
        self.show()
        self.field.setFocus()

    # --- choosing --------------------------------------------------------------------------------------------------
    def _narrow(self, text: str) -> None:
        """The names that fit what is typed: those starting with it first, then those holding it."""
        wanted = " ".join(text.split()).casefold()
        starts: list[tuple[str, str | None]] = []
        holds: list[tuple[str, str | None]] = []
        for label, name, words in [(NARRATOR, None, [NARRATOR]), *((n, n, [n, *a]) for n, a in self._names)]:
            folded = [w.casefold() for w in words]
            if not wanted or any(w.startswith(wanted) for w in folded):
                starts.append((label, name))
            elif any(wanted in w for w in folded):
                holds.append((label, name))
        self.choices.clear()
        for label, name in starts + holds:
            mark = " ✓" if self._current is not None and name == self._current.name else ""
            item = QListWidgetItem(label + mark)
            item.setData(CHOICE_ROLE, SpeakerChoice(name))
            self.choices.addItem(item)
        typed = " ".join(text.split())
        if typed and not starts:  # a name the cast does not have (a few letters of one are that one)
            item = QListWidgetItem(f"Add “{typed}” as a character")
            item.setData(CHOICE_ROLE, SpeakerChoice(typed, new=True))
            self.choices.addItem(item)
        if self.choices.count():
            self.choices.setCurrentRow(self._first_row(wanted))

    def _first_row(self, wanted: str) -> int:
        """The row highlighted: the line's own speaker while nothing is typed, else the best fit."""
        if wanted or self._current is None:
            return 0
        for row in range(self.choices.count()):
            if self.choices.item(row).data(CHOICE_ROLE).name == self._current.name:
                return row
        return 0

    def _pick(self, item: QListWidgetItem | None) -> None:
        if item is None:
            return
        choice = item.data(CHOICE_ROLE)
        self.close()
        self.chosen.emit(choice)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.field and isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress:
            key = event.key()
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self._pick(self.choices.currentItem())
                return True
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up, Qt.Key.Key_PageDown, Qt.Key.Key_PageUp):
                count = self.choices.count()
                if count:
                    step = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1}.get(Qt.Key(key), ROWS_SHOWN)
                    if key == Qt.Key.Key_PageUp:
                        step = -ROWS_SHOWN
                    row = min(max(self.choices.currentRow() + step, 0), count - 1)
                    self.choices.setCurrentRow(row)
                return True
            if key == Qt.Key.Key_Escape:
                self.close()
                return True
        return super().eventFilter(watched, event)
