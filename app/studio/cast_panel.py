"""The Cast panel (the side tab "Cast" beside the studio): the book's characters in a table — name, how many lines
each says (and how many of them the attribution is unsure of), gender, the voice that reads them (a picker of the
project's voices and the library's, those of the character's gender suggested first) and ▶ to hear that voice.

Find characters reads the book (:func:`core.narration.attribute_project`, on a thread: the window stays responsive)
and keeps what a person set; Merge makes two selected characters one (either way round, chosen from its menu); a
name is renamed in place (F2 or a double-click); Add… adds a character the book did not reveal. Each of these, and
a voice chosen, is one step of the studio's Undo. Double-clicking a character's lines shows only them in the list.

The panel only shows and asks (its signals); the studio does the work (:mod:`app.studio.cast_edits`). A book of
10,000 segments is counted once per change of the cast or of speakers (:func:`count_lines`), never per row painted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.narration import UNSURE, Character, Project, suggest_voices
from core.voices import VoiceLibrary

NAME, LINES, UNSURE_COLUMN, GENDER, VOICE, PLAY = range(6)
HEADERS = ("Character", "Lines", "?", "G", "Voice", "")
HEADER_TIPS = (
    "The character's name (F2 or a double-click renames it; the old name stays an alias)",
    "How many lines the character says (double-click: show only them in the list)",
    f"Unsure: lines the attribution is unsure of (below {UNSURE:.0%}); in the list U goes to the next one and W sets "
    "who says it",
    "Gender, as the book gives it (he, she, Mr., Mrs.): library voices of that gender are suggested",
    "The voice that reads the character's lines (click to choose: the project's voices, then the library's)",
    "Hear the voice that reads the character",
)
GENDER_MARKS = {"m": "♂", "f": "♀", None: ""}
GENDER_WORDS = {"m": "male", "f": "female", None: "not known"}
Index = QModelIndex | QPersistentModelIndex
MUTED = QColor(110, 110, 110)


# --- what the panel shows, counted once -------------------------------------------------------------------------------
@dataclass
class CastCounts:
    """How the book's segments are spoken, counted in one pass (a cast edit or a speaker set counts again)."""

    lines: dict[str, int] = field(default_factory=dict)
    """Per character's name: the lines it says."""
    unsure: dict[str, int] = field(default_factory=dict)
    """Per character's name: its lines the attribution is unsure of."""
    narration: int = 0
    unknown: int = 0
    """Quoted lines whose speaker the attribution could not name (unsure too)."""
    unsure_total: int = 0
    """Every unsure line (the characters' and the unknown ones)."""
    spoken: int = 0
    """Lines a character says."""


def count_lines(project: Project | None) -> CastCounts:
    """The counts of :class:`CastCounts` (about 3 ms for 10,000 segments)."""
    counts = CastCounts()
    if project is None:
        return counts
    lines, unsure = counts.lines, counts.unsure
    for character in project.cast:
        lines[character.name] = unsure[character.name] = 0
    narration = unknown = unsure_total = 0
    for segment in project.segments:
        speaker, confidence = segment.speaker, segment.speaker_confidence
        doubt = not segment.speaker_fixed and confidence is not None and confidence < UNSURE
        if speaker is None:
            if doubt:
                unknown += 1
            else:
                narration += 1
        else:
            lines[speaker] = lines.get(speaker, 0) + 1
            if doubt:
                unsure[speaker] = unsure.get(speaker, 0) + 1
        unsure_total += doubt
    counts.narration, counts.unknown, counts.unsure_total = narration, unknown, unsure_total
    counts.spoken = sum(lines.values())
    return counts


@dataclass(frozen=True)
class VoiceChoice:
    """An entry of the voice picker: ``kind`` "fallback" (no voice of its own: the dialogue voice, else the
    narrator's), "project" (a voice of the project) or "library" (copied into the project when chosen)."""

    kind: str
    name: str | None
    label: str


def fallback_words(project: Project) -> str:
    """What a character without a voice of its own reads in."""
    return f"Dialogue voice ({project.dialogue_voice})" if project.dialogue_voice else "Narrator's voice"


def fallback_cell(project: Project) -> str:
    """The voice cell of a character without a voice of its own (short: the column is narrow)."""
    return f"dialogue: {project.dialogue_voice}" if project.dialogue_voice else "narrator's"


def voice_choices(project: Project, character: Character, library: VoiceLibrary | None) -> list[VoiceChoice]:
    """The picker's entries for ``character``: its fallback, the project's voices, then the library's voices that
    the project does not have; the voices suggested for its gender are marked (★) and come first among theirs."""
    suggested = suggest_voices(project, character, library)
    first = {name: rank for rank, name in enumerate(suggested)}

    def ordered(names) -> list[str]:
        return sorted(names, key=lambda n: (first.get(n, len(first)), n.casefold()))

    def label(name: str, where: str = "") -> str:
        return f"{'★ ' if name in first else ''}{name}{where}"

    choices = [VoiceChoice("fallback", None, fallback_words(project))]
    choices += [VoiceChoice("project", n, label(n)) for n in ordered(project.voices)]
    if library is not None:
        extra = [v.name for v in library.voices() if v.name not in project.voices]
        choices += [VoiceChoice("library", n, label(n, " · library")) for n in ordered(extra)]
    return choices


# --- the table --------------------------------------------------------------------------------------------------------
class CastTableModel(QAbstractTableModel):
    """The cast's rows, read from the project and the counts handed in (nothing is counted per cell)."""

    rename_requested = Signal(str, str)
    """A name edited in place: the character's name, the new name."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project: Project | None = None
        self.counts = CastCounts()
        self.library: VoiceLibrary | None = None
        self.editable = True

    def show(self, project: Project | None, counts: CastCounts, library: VoiceLibrary | None) -> None:
        self.beginResetModel()
        self.project, self.counts, self.library = project, counts, library
        self.endResetModel()

    def character(self, row: int) -> Character | None:
        cast = self.project.cast if self.project is not None else []
        return cast[row] if 0 <= row < len(cast) else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.project is None else len(self.project.cast)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(HEADERS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if self.editable and index.column() in (NAME, VOICE):
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        character = self.character(index.row()) if index.isValid() else None
        project = self.project
        if character is None or project is None:
            return None
        column, name = index.column(), character.name
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if column == NAME:
                return name
            if column == LINES:
                return self.counts.lines.get(name, 0)
            if column == UNSURE_COLUMN:
                unsure = self.counts.unsure.get(name, 0)
                return unsure if unsure or role == Qt.ItemDataRole.EditRole else ""
            if column == GENDER:
                return GENDER_MARKS.get(character.gender, "")
            if column == VOICE:
                return character.voice or fallback_cell(project)
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (LINES, UNSURE_COLUMN):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.TextAlignmentRole and column == GENDER:
            return int(Qt.AlignmentFlag.AlignCenter)
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == VOICE and character.voice is None:
                return QBrush(MUTED)
            if column == UNSURE_COLUMN:
                return QBrush(QColor(166, 94, 0))
        if role == Qt.ItemDataRole.DecorationRole and column == PLAY:
            return _play_icon()
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(project, character, column)
        return None

    def _tip(self, project: Project, character: Character, column: int) -> str:
        if column == NAME:
            also = f"\nAlso called: {', '.join(character.aliases)}" if character.aliases else ""
            return f"{character.name}{also}\nF2 or a double-click renames the character."
        if column == VOICE:
            suggested = [] if character.voice else suggest_voices(project, character, self.library)
            hint = f"\nSuggested for the character's gender: {', '.join(suggested)}" if suggested else ""
            return f"{character.name} reads in {character.voice or fallback_words(project)}.{hint}"
        if column == PLAY:
            return f"Hear the voice that reads {character.name}"
        if column == LINES:
            return (
                f"{character.name} says {self.counts.lines.get(character.name, 0)} line(s): double-click to show them"
            )
        if column == UNSURE_COLUMN:
            unsure = self.counts.unsure.get(character.name, 0)
            return f"{unsure} of {character.name}'s lines are unsure: U in the list goes to the next unsure line"
        if column == GENDER:
            return f"Gender: {GENDER_WORDS.get(character.gender, 'not known')}"
        return HEADER_TIPS[column]

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        character = self.character(index.row()) if index.isValid() else None
        if character is None or role != Qt.ItemDataRole.EditRole or index.column() != NAME:
            return False
        new, old = " ".join(str(value).split()), character.name
        if new and new != old:  # the studio renames it and shows the cast again, once the editor has closed
            QTimer.singleShot(0, self, lambda: self.rename_requested.emit(old, new))
        return False


class VoiceDelegate(QStyledItemDelegate):
    """The voice column's picker: a drop-down of :func:`voice_choices`, open at once; choosing one asks the panel."""

    def __init__(self, panel: CastPanel) -> None:
        super().__init__(panel.table)
        self.panel = panel

    def createEditor(self, parent: QWidget, option, index: Index) -> QWidget:
        combo = QComboBox(parent)
        combo.setAccessibleName("Voice")
        character = self.panel.model.character(index.row())
        project = self.panel.model.project
        if character is None or project is None:
            return combo
        kind = "fallback"
        for choice in voice_choices(project, character, self.panel.model.library):
            if choice.kind != kind:  # the project's voices, then the library's, apart
                combo.insertSeparator(combo.count())
                kind = choice.kind
            combo.addItem(choice.label, choice)
        current = next(
            (i for i in range(combo.count()) if (d := combo.itemData(i)) is not None and d.name == character.voice), 0
        )
        combo.setCurrentIndex(current)
        combo.view().setMinimumWidth(combo.view().sizeHintForColumn(0) + 24)  # the column is narrow: names whole
        combo.activated.connect(lambda row, c=combo, name=character.name: self._chosen(c, name, row))
        QTimer.singleShot(0, combo, combo.showPopup)  # one click opens the choices
        return combo

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        pass  # chosen in createEditor: a refresh of the row must not move the drop-down's choice

    def setModelData(self, editor: QWidget, model, index: Index) -> None:
        pass  # the panel's voice_requested does it (an undoable edit), not the model

    def _chosen(self, combo: QComboBox, name: str, row: int) -> None:
        choice = combo.itemData(row)
        self.commitData.emit(combo)
        self.closeEditor.emit(combo, QStyledItemDelegate.EndEditHint.NoHint)
        if isinstance(choice, VoiceChoice):  # once the editor has closed: the edit shows the cast again
            QTimer.singleShot(0, self.panel, lambda: self.panel.voice_requested.emit(name, choice))


class AddCharacterDialog(QDialog):
    """A name and, if the book gives it, a gender."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add a character")
        self.name = QLineEdit(self)
        self.name.setPlaceholderText("Their name, as the book writes it")
        self.gender = QComboBox(self)
        for words, value in (("Not known", None), ("Male", "m"), ("Female", "f")):
            self.gender.addItem(words, value)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("&Name:", self.name)
        form.addRow("&Gender:", self.gender)
        form.addRow(buttons)

    def values(self) -> tuple[str, str | None]:
        return " ".join(self.name.text().split()), self.gender.currentData()


class CastPanel(QWidget):
    find_requested = Signal()
    merge_requested = Signal(str, str)
    """A character's name, and the name of the one it merges into (which keeps its name)."""
    rename_requested = Signal(str, str)
    add_requested = Signal(str, object)
    """A new character's name and gender (``m``, ``f`` or ``None``)."""
    voice_requested = Signal(str, object)
    """A character's name and the :class:`VoiceChoice` picked for it."""
    play_requested = Signal(str)
    """Hear the voice that reads this character."""
    show_lines = Signal(str)
    """Show only this character's lines in the list."""
    cut_requested = Signal()
    """Cut the sentences that hold speech and narration together at their quotes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Cast")
        self.model = CastTableModel(self)
        self.find_button = QPushButton("Find c&haracters", self)
        self.find_button.setToolTip(
            "Read the book: find its characters and who says each quoted line (what you set is kept; Undo takes it "
            "back)"
        )
        self.merge_button = QPushButton("Mer&ge…", self)
        self.merge_button.setToolTip("Select two characters that are one person: one takes the other's lines")
        self.add_button = QPushButton("A&dd…", self)
        self.add_button.setToolTip("Add a character the book's text did not reveal")
        for button in (self.find_button, self.merge_button, self.add_button):
            button.setMinimumWidth(button.fontMetrics().horizontalAdvance(button.text().replace("&", "")) + 16)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setAccessibleName("Characters")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        self.table.setWordWrap(False)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.voice_delegate = VoiceDelegate(self)
        self.table.setItemDelegateForColumn(VOICE, self.voice_delegate)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(24)
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(VOICE, QHeaderView.ResizeMode.ResizeToContents)  # short: a name gets the room
        digits = self.fontMetrics().horizontalAdvance("Lines") + 14
        narrow = self.fontMetrics().horizontalAdvance("000") + 10
        for column, width in ((LINES, digits), (UNSURE_COLUMN, narrow), (GENDER, 26), (PLAY, 28)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(column, width)
        self.summary = QLabel("", self)  # how the book is spoken; what to do next
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.note = QLabel("", self)  # a hint when it matters (lines that mix speech and narration)
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setStyleSheet("color: palette(placeholder-text);")
        self.note.setVisible(False)
        self.cut_button = QPushButton("Cut at &quotes", self)
        self.cut_button.setToolTip(
            "Make the speech in these sentences lines of their own, read by whoever says them, and the narration "
            "around it the narrator's (their takes are rendered again; Undo takes it back)"
        )
        self.cut_button.setVisible(False)
        noted = QHBoxLayout()
        noted.addWidget(self.note, 1)
        noted.addWidget(self.cut_button, 0, Qt.AlignmentFlag.AlignTop)
        buttons = QHBoxLayout()
        buttons.setSpacing(4)
        buttons.addWidget(self.find_button)
        buttons.addWidget(self.merge_button)
        buttons.addWidget(self.add_button)
        buttons.addStretch(1)
        page = QVBoxLayout(self)
        page.addLayout(buttons)
        page.addWidget(self.table, 1)
        page.addWidget(self.summary)
        page.addLayout(noted)
        self.find_button.clicked.connect(self.find_requested)
        self.cut_button.clicked.connect(self.cut_requested)
        self.merge_button.clicked.connect(self._merge_menu_at_button)
        self.add_button.clicked.connect(self.ask_new_character)
        self.model.rename_requested.connect(self.rename_requested)
        self.table.clicked.connect(self._clicked)
        self.table.doubleClicked.connect(self._double_clicked)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self._writable = False
        self._finding = False
        self.show_cast(None, CastCounts(), None)

    # --- showing ---------------------------------------------------------------------------------------------------
    def show_cast(self, project: Project | None, counts: CastCounts, library: VoiceLibrary | None) -> None:
        """The cast again (after an edit, an undo, a project opened): the selected characters stay selected."""
        selected = set(self.selected_names())
        self.model.show(project, counts, library)
        if project is not None and selected:
            rows = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
            for row, character in enumerate(project.cast):
                if character.name in selected:
                    self.table.selectionModel().select(self.model.index(row, NAME), rows)
        self.summary.setText(summary_words(project, counts))
        self._update_buttons()

    def set_note(self, text: str, cut: bool = False) -> None:
        """A hint under the cast (none: ``""``), with the Cut at quotes button when ``cut``."""
        self.note.setText(text)
        self.note.setVisible(bool(text))
        self.cut_button.setVisible(bool(text) and cut)

    def set_state(self, writable: bool, finding: bool) -> None:
        """What can be done now: edits while the project can be edited; Find shows that it runs."""
        self._writable, self._finding = writable, finding
        self.model.editable = writable and not finding
        self.find_button.setText("Finding…" if finding else "Find c&haracters")
        self._update_buttons()

    def _update_buttons(self) -> None:
        has = self.model.project is not None
        editable = has and self._writable and not self._finding
        self.find_button.setEnabled(editable)
        self.cut_button.setEnabled(editable)
        self.add_button.setEnabled(editable)
        self.merge_button.setEnabled(editable and len(self.selected_names()) == 2)

    def selected_names(self) -> list[str]:
        """The selected characters' names, in the cast's order."""
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows(NAME)})
        return [c.name for r in rows if (c := self.model.character(r)) is not None]

    def select(self, name: str) -> None:
        project = self.model.project
        row = next((r for r, c in enumerate(project.cast) if c.name == name), -1) if project else -1
        if row >= 0:
            self.table.selectRow(row)

    # --- asking ----------------------------------------------------------------------------------------------------
    def merge_menu(self) -> QMenu:
        """Merge ▸ either of the two selected characters into the other (the one merged into keeps its name)."""
        menu = QMenu(self)
        names = self.selected_names()
        if len(names) == 2:
            counts = self.model.counts.lines
            pairs = [(names[1], names[0]), (names[0], names[1])]
            pairs.sort(key=lambda p: -counts.get(p[1], 0))  # the one with more lines kept first
            for gone, kept in pairs:
                action = QAction(f"“{gone}” into “{kept}” (the name {kept} stays)", menu)
                action.triggered.connect(lambda _c=False, g=gone, k=kept: self.merge_requested.emit(g, k))
                menu.addAction(action)
        return menu

    def _merge_menu_at_button(self) -> None:
        menu = self.merge_menu()
        if menu.actions():
            menu.exec(self.merge_button.mapToGlobal(self.merge_button.rect().bottomLeft()))

    def ask_new_character(self) -> None:
        dialog = AddCharacterDialog(self)
        if dialog.exec():
            name, gender = dialog.values()
            if name:
                self.add_requested.emit(name, gender)

    def _clicked(self, index: QModelIndex) -> None:
        character = self.model.character(index.row())
        if character is not None and index.column() == PLAY:
            self.play_requested.emit(character.name)

    def _double_clicked(self, index: QModelIndex) -> None:
        character = self.model.character(index.row())
        if character is not None and index.column() in (LINES, UNSURE_COLUMN, GENDER):
            self.show_lines.emit(character.name)

    def context_menu_for(self, row: int) -> QMenu:
        menu = QMenu(self)
        character = self.model.character(row)
        if character is None:
            return menu
        name = character.name
        editable = self._writable and not self._finding
        entries = [
            ("&Show their lines", lambda: self.show_lines.emit(name), True),
            ("&Hear their voice", lambda: self.play_requested.emit(name), True),
            ("&Rename…", lambda: self.table.edit(self.model.index(row, NAME)), editable),
        ]
        for words, slot, enabled in entries:
            action = QAction(words, menu)
            action.triggered.connect(lambda _c=False, s=slot: s())
            action.setEnabled(enabled)
            menu.addAction(action)
        others = [c.name for c in (self.model.project.cast if self.model.project else []) if c.name != name]
        into = menu.addMenu("&Merge into")
        into.setEnabled(editable and bool(others))
        for other in others:
            action = QAction(other, into)
            action.triggered.connect(lambda _c=False, o=other: self.merge_requested.emit(name, o))
            into.addAction(action)
        return menu

    def _context_menu(self, position) -> None:
        index = self.table.indexAt(position)
        if index.isValid():
            self.context_menu_for(index.row()).exec(self.table.viewport().mapToGlobal(position))


def summary_words(project: Project | None, counts: CastCounts) -> str:
    """The line under the table: how the book is spoken, or what Find characters does."""
    if project is None:
        return "Open a project (the Project tab) to see who says its lines."
    if not project.cast:
        return (
            "No characters yet. Find characters reads the book: who says each quoted line. Each character can then "
            "read in a voice of its own."
        )
    unsure = counts.unsure_total
    doubt = f"{unsure} unsure (in the list: U goes to the next, W sets who says it)" if unsure else "none unsure"
    return (
        f"{len(project.cast)} character(s) say {counts.spoken} line(s), {doubt}; {counts.narration} narration"
        + (f"; {counts.unknown} quoted line(s) with no speaker found" if counts.unknown else "")
        + "."
    )


_PLAY: list[Any] = []


def _play_icon() -> Any:
    if not _PLAY:
        from PySide6.QtWidgets import QApplication

        _PLAY.append(QApplication.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay))
    return _PLAY[0]
