"""Help → Keyboard shortcuts: every key the window answers to, in one table."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

FIXED_SHORTCUTS = (
    ("Ctrl+Return", "Speak the text"),
    ("Esc", "Stop synthesis and playback"),
    (
        "Space",
        "Pause or resume playback; play the last result again when nothing plays (not while typing in the text box)",
    ),
    ("Ctrl+F", "Find in the project's text (in the studio: only the segments that hold the words are shown)"),
    ("F7", "Review the takes that need review, in the studio (again: close the review)"),
    (
        "J / K, N / P",
        "Reviewing: the next / previous segment that needs review; Space plays its take, A chooses and plays the "
        "other take, Y or Enter accepts the take, R regenerates it, E edits its spoken text",
    ),
    (
        "W",
        "In the studio's list: who says this line — type a few letters of a character's name (or Narrator), Enter "
        "sets it (a new name adds a character)",
    ),
    ("U, Shift+U", "In the studio's list: the next / previous line whose speaker is unsure"),
    ("Tab, Shift+Tab", "Next / previous control: text, Insert tag, Speak, Stop, Export, then the side tabs"),
    ("Ctrl+Tab, Ctrl+Shift+Tab", "Next / previous tab of the panel the focus is in"),
    ("Alt+underlined letter", "Press that button, pick that tab or open that menu (Alt+F: the File menu)"),
)
"""Keys the menus do not show; the window adds every menu entry that has a shortcut."""


def native(keys: str) -> str:
    """``Ctrl+Return`` as this platform writes it (``⌘↩`` on macOS); descriptions such as "Alt+underlined letter"
    are left as they are."""
    if "letter" in keys:
        return keys
    names = [k.strip() for k in keys.split(",")]
    return ", ".join(QKeySequence(k).toString(QKeySequence.SequenceFormat.NativeText) or k for k in names)


class ShortcutsDialog(QDialog):
    def __init__(self, shortcuts=FIXED_SHORTCUTS, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.table = QTableWidget(len(shortcuts), 2, self)
        self.table.setHorizontalHeaderLabels(["Keys", "Action"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setWordWrap(True)
        for row, (keys, action) in enumerate(shortcuts):
            self.table.setItem(row, 0, QTableWidgetItem(native(keys)))
            self.table.setItem(row, 1, QTableWidgetItem(action))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.resizeRowsToContents()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(640, 420)

    def rows(self) -> list[tuple[str, str]]:
        return [(self._cell(r, 0), self._cell(r, 1)) for r in range(self.table.rowCount())]

    def _cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""
