"""The project's pronunciation lexicon (word → how to say it) and a segment's spoken form, edited in the studio.

The lexicon dialog lists the entries in a table (word, spoken form, match case); OK applies the changes to the
project, and the segments whose spoken form changes become pending (the studio repaints them). "Edit spoken
form…" on a segment shows its written text and what the model will say, and lets the user type their own (empty:
back to the automatic form).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.engine import ChatterboxError
from core.narration import Project
from core.wording import describe_error

WORD, SPOKEN, CASE = 0, 1, 2


class LexiconDialog(QDialog):
    def __init__(self, project: Project, parent: QWidget | None = None):
        super().__init__(parent)
        self.project = project
        self.setWindowTitle("Pronunciation lexicon")
        self.resize(560, 380)
        self.table = QTableWidget(0, 3, self)
        self.table.setHorizontalHeaderLabels(["Word", "Say it as", "Match case"])
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.horizontalHeader().setSectionResizeMode(WORD, self.table.horizontalHeader().ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(SPOKEN, self.table.horizontalHeader().ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        for word, entry in sorted(project.lexicon.items(), key=lambda item: item[0].casefold()):
            self.add_row(word, entry.spoken, entry.match_case)
        self.add_button = QPushButton("&Add", self)
        self.remove_button = QPushButton("&Remove", self)
        self.error = QLabel("", self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        row.addStretch(1)
        column = QVBoxLayout(self)
        hint = QLabel("Whole words are replaced in what the model says; the written text (and subtitles) stay.", self)
        hint.setWordWrap(True)
        column.addWidget(hint)
        column.addWidget(self.table, 1)
        column.addLayout(row)
        column.addWidget(self.error)
        column.addWidget(buttons)
        self.add_button.clicked.connect(lambda: self._add_and_edit())
        self.remove_button.clicked.connect(self._remove_selected)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.changed: list = []
        """The segments whose spoken form the accepted changes changed."""

    def add_row(self, word: str = "", spoken: str = "", match_case: bool = False) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, WORD, QTableWidgetItem(word))
        self.table.setItem(row, SPOKEN, QTableWidgetItem(spoken))
        box = QCheckBox(self.table)
        box.setChecked(match_case)
        self.table.setCellWidget(row, CASE, box)
        return row

    def _add_and_edit(self) -> None:
        row = self.add_row()
        self.table.setCurrentCell(row, WORD)
        item = self.table.item(row, WORD)
        if item is not None:
            self.table.editItem(item)

    def _remove_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        for row in rows:
            self.table.removeRow(row)

    def entries(self) -> dict[str, tuple[str, bool]]:
        """The table's entries (rows without a word are ignored)."""
        out: dict[str, tuple[str, bool]] = {}
        for row in range(self.table.rowCount()):
            word, spoken = self._cell(row, WORD), self._cell(row, SPOKEN)
            box = self.table.cellWidget(row, CASE)
            if word:
                out[word] = (spoken, isinstance(box, QCheckBox) and box.isChecked())
        return out

    def _cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text().strip() if item is not None else ""

    def accept(self) -> None:
        """Apply the table to the project (nothing changes if an entry is refused)."""
        project, wanted = self.project, self.entries()
        before = dict(project.lexicon)
        changed: dict[int, object] = {}
        try:
            for word in [w for w in project.lexicon if w not in wanted]:
                changed |= {s.id: s for s in project.remove_lexicon(word)}
            for word, (spoken, match_case) in wanted.items():
                entry = project.lexicon.get(word)
                if entry is None or (entry.spoken, entry.match_case) != (spoken, match_case):
                    changed |= {s.id: s for s in project.set_lexicon(word, spoken, match_case)}
        except ChatterboxError as exc:
            project.lexicon.clear()
            project.lexicon.update(before)
            self.error.setText(describe_error(exc))
            return
        self.changed = list(changed.values())
        super().accept()


class SpokenDialog(QDialog):
    """The written text of a segment and what the model says for it, the latter editable."""

    def __init__(self, project: Project, number: int, parent: QWidget | None = None):
        super().__init__(parent)
        self.project, self.segment = project, project.segments[number - 1]
        self.setWindowTitle(f"Spoken form of segment {number}")
        self.resize(520, 300)
        written = QLabel(f"Written (subtitles show this):\n{self.segment.text}", self)
        written.setWordWrap(True)
        written.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.editor = QPlainTextEdit(self)
        self.editor.setPlainText(project.spoken_text(self.segment))
        self.automatic = QPushButton("&Automatic", self)
        self.automatic.setToolTip("Forget this segment's own spoken form: numbers and abbreviations read as usual")
        self.error = QLabel("", self)
        self.error.setStyleSheet("color: #b00")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        column = QVBoxLayout(self)
        column.addWidget(written)
        column.addWidget(QLabel("Spoken (what the model says; the lexicon still applies):", self))
        column.addWidget(self.editor, 1)
        column.addWidget(self.automatic)
        column.addWidget(self.error)
        column.addWidget(buttons)
        self.automatic.clicked.connect(self._automatic)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)

    def _automatic(self) -> None:
        self.editor.setPlainText(self.project.automatic_spoken(self.segment))

    def accept(self) -> None:
        text = self.editor.toPlainText().strip()
        try:
            if text == self.project.spoken_text(self.segment):
                pass  # unchanged
            elif text == self.project.automatic_spoken(self.segment) or not text:
                self.project.set_spoken(self.segment, None)
            else:
                self.project.set_spoken(self.segment, text)
        except ChatterboxError as exc:
            self.error.setText(describe_error(exc))
            return
        super().accept()


def open_lexicon(panel) -> LexiconDialog | None:
    """The studio's "Lexicon…": edit the open project's lexicon; repaint and mark it changed."""
    project = panel.project
    if project is None:
        return None
    dialog = LexiconDialog(project, panel)
    if dialog.exec() == QDialog.DialogCode.Accepted:
        _changed(panel, None)
    return dialog


def edit_spoken(panel, number: int) -> None:
    """The segment list's "Edit spoken form…"."""
    project = panel.project
    if project is not None and SpokenDialog(project, number, panel).exec() == QDialog.DialogCode.Accepted:
        _changed(panel, number)


def _changed(panel, number: int | None) -> None:
    panel.controller.dirty = True
    panel._edited(number)
