"""The project's text as its segments: chapters (with their segment counts) with their sentences, each marked
pending, rendered, failed or skipped.

The segment being heard is highlighted and scrolled into view. A context menu and keys act on one segment: play
from here (Enter), regenerate (R), edit the text (F2), choose a take, change the voice, the pause after it and its
pace; and on the project's shape: delete (Del), skip or narrate again (S), merge with the next, split, start or
remove a chapter boundary there. A chapter's menu renames it or skips it. The list only shows and asks; the studio
panel does the work (and keeps the undo stack).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QFont, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QMenu, QTreeWidget, QTreeWidgetItem

from core.narration import Project
from core.wording import describe_failure

NUMBER_ROLE = Qt.ItemDataRole.UserRole
CHAPTER_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_MARK = {"pending": "○ pending", "rendered": "● rendered", "failed": "✕ failed", "skipped": "– skipped"}
TEXT, STATUS, TAKES, TIMING = 0, 1, 2, 3
COLUMNS = 4
REGENERATE_TIP = (
    "Render a new take of this segment with a new seed, on this computer (also when Settings → Render on is a Ray "
    "cluster: one take is quicker here than starting the cluster's actors)"
)
STATUS_TIP = {
    "pending": "Pending: not rendered with its current text, voice and settings",
    "rendered": "Rendered",
    "failed": "Failed",
    "skipped": "Skipped: not rendered and not exported (skipped by you, or a cover or table of contents)",
}


class SegmentList(QTreeWidget):
    play_from = Signal(int)
    regenerate = Signal(int)
    edit_text = Signal(int)
    choose_take = Signal(int, int)
    set_voice = Signal(int, object)  # number, voice name or None (the model's voice)
    set_pause = Signal(int)
    set_speed = Signal(int)
    delete_segment = Signal(int)
    set_skipped = Signal(int, bool)
    merge_next = Signal(int)
    split_segment = Signal(int)
    chapter_starts = Signal(int)
    chapter_joins = Signal(int)
    rename_chapter = Signal(int)
    """A chapter number."""
    set_chapter_skipped = Signal(int, bool)
    edit_spoken = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setColumnCount(COLUMNS)
        self.setHeaderLabels(["Text", "Status", "Takes", "Pause · pace"])
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.itemDoubleClicked.connect(lambda item, _col: self._emit(self.play_from, item))
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(TEXT, self.header().ResizeMode.Stretch)
        self.header().resizeSection(STATUS, 96)
        self.header().resizeSection(TAKES, 64)
        self.header().resizeSection(TIMING, 96)
        self.project: Project | None = None
        self.items: dict[int, QTreeWidgetItem] = {}
        self.chapter_items: list[QTreeWidgetItem] = []
        self.current: int | None = None
        self.voices: list[str] = []
        self.editable = True
        """False while the project renders: only playing is offered."""

    # --- content -----------------------------------------------------------------------------------------------
    def set_project(self, project: Project | None) -> None:
        self.clear()
        self.items, self.current, self.project = {}, None, project
        self.chapter_items = []
        if project is None:
            return
        chapters = self.chapter_items
        sizes = [0] * len(project.chapters)
        for segment in project.segments:
            if segment.chapter < len(sizes):
                sizes[segment.chapter] += 1
        for number, chapter in enumerate(project.chapters, 1):
            size = sizes[number - 1]
            state = f"{size} segment{'' if size == 1 else 's'}"  # in the status column: the last one counts takes
            state = f"– skipped · {state}" if chapter.skipped else state
            item = QTreeWidgetItem(self, [chapter.title, state, ""])
            item.setData(TEXT, CHAPTER_ROLE, number)
            item.setToolTip(
                TEXT,
                f"Chapter {number}: {size} segment(s)" + (" · skipped: not narrated" if chapter.skipped else ""),
            )
            font = item.font(TEXT)
            font.setBold(True)
            font.setStrikeOut(chapter.skipped)
            item.setFont(TEXT, font)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            chapters.append(item)
        for number, segment in enumerate(project.segments, 1):
            parent = chapters[segment.chapter] if segment.chapter < len(chapters) else self.invisibleRootItem()
            item = QTreeWidgetItem(parent)
            item.setData(TEXT, NUMBER_ROLE, number)
            self.items[number] = item
            self.refresh(number)
        self.expandAll()

    def refresh(self, number: int | None = None) -> None:
        """Update one segment's row (or all) from the project."""
        if self.project is None:
            return
        numbers = [number] if number is not None else list(self.items)
        for n in numbers:
            item, segment = self.items.get(n), self.project.segments[n - 1]
            if item is None:
                continue
            status = self.project.status(segment)
            item.setText(STATUS, STATUS_MARK[status])
            item.setText(TEXT, segment.text)
            item.setText(TAKES, takes_text(self.project, segment))
            item.setToolTip(TAKES, takes_tip(self.project, segment))
            item.setText(TIMING, timing_text(segment))
            failed = status == "failed" and segment.error
            tip = STATUS_TIP[status] + (f": {describe_failure(segment)}" if failed else "")
            voice = self.project.voice_of(segment) or "the model's voice"
            spoken = self.project.spoken_text(segment)
            says = f"\nSays: {spoken}" if spoken != segment.text else ""
            item.setToolTip(
                TEXT,
                f"{segment.text}{says}\n\nSegment {n} · {tip} · voice: {voice} · pause after "
                f"{segment.pause_after:g} s" + (f" · pace {segment.speed:g}×" if segment.speed else ""),
            )
            item.setToolTip(STATUS, tip)
            colour = {
                "pending": QColor(120, 120, 120),
                "failed": QColor(190, 30, 30),
                "skipped": QColor(160, 160, 160),
            }.get(status)
            brush = QBrush(colour) if colour is not None else QBrush()
            for column in range(COLUMNS):
                item.setForeground(column, brush)
            font = item.font(TEXT)
            font.setItalic(status == "pending")
            font.setStrikeOut(status == "skipped")
            item.setFont(TEXT, font)
            self._paint_current(n)

    def highlight(self, number: int | None) -> None:
        """Mark the segment being heard (or rendered) and scroll it into view."""
        previous, self.current = self.current, number
        if previous is not None:
            self._paint_current(previous)
        if number is not None and number in self.items:
            self._paint_current(number)
            self.scrollToItem(self.items[number], QAbstractItemView.ScrollHint.EnsureVisible)

    def _paint_current(self, number: int) -> None:
        item = self.items.get(number)
        if item is None:
            return
        brush = QBrush(self.palette().highlight().color().lighter(170)) if number == self.current else QBrush()
        for column in range(COLUMNS):
            item.setBackground(column, brush)
        font: QFont = item.font(TEXT)
        font.setBold(number == self.current)
        item.setFont(TEXT, font)

    def selected_number(self) -> int | None:
        item = self.currentItem()
        return item.data(TEXT, NUMBER_ROLE) if item is not None else None

    def select(self, number: int) -> None:
        """Make segment ``number`` (or the last one) the selected row."""
        if self.items:
            self.setCurrentItem(self.items[min(max(number, 1), len(self.items))])

    # --- actions ----------------------------------------------------------------------------------------------
    def keyPressEvent(self, event) -> None:
        number = self.selected_number()
        key = event.key()
        if number is not None and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.play_from.emit(number)
        elif number is not None and self.editable and key == Qt.Key.Key_R and not event.modifiers():
            self.regenerate.emit(number)
        elif number is not None and self.editable and key == Qt.Key.Key_F2:
            self.edit_text.emit(number)
        elif number is not None and self.editable and key == Qt.Key.Key_Delete:
            self.delete_segment.emit(number)
        elif number is not None and self.editable and key == Qt.Key.Key_S and not event.modifiers():
            project = self.project
            if project is not None:
                self.set_skipped.emit(number, not project.segments[number - 1].skipped)
        else:
            super().keyPressEvent(event)

    def _emit(self, signal, item) -> None:
        number = item.data(TEXT, NUMBER_ROLE) if item is not None else None
        if number is not None:
            signal.emit(number)

    def menu_for(self, number: int) -> QMenu:
        """The context menu of one segment (built on demand; tests trigger its actions directly)."""
        menu = QMenu(self)
        project = self.project
        if project is None:
            return menu
        segment = project.segments[number - 1]
        menu.addAction(_action(menu, "&Play from here", lambda: self.play_from.emit(number), "Return"))
        menu.addSeparator()
        for text, signal, key in (
            ("&Regenerate (new take)", self.regenerate, "R"),
            ("&Edit text…", self.edit_text, "F2"),
            ("Edit &spoken form…", self.edit_spoken, None),
        ):
            action = _action(menu, text, lambda s=signal: s.emit(number), key)
            action.setEnabled(self.editable)
            menu.addAction(action)
            if signal is self.regenerate:
                action.setToolTip(REGENERATE_TIP)
        menu.setToolTipsVisible(True)
        takes = menu.addMenu("Choose &take")
        takes.setEnabled(self.editable and len(segment.takes) > 1)
        key = project.render_key(segment)
        for index, take in enumerate(segment.takes, 1):
            label = f"Take {index} · seed {take.seed} · {take.seconds:.1f} s"
            action = _action(
                takes,
                label + ("" if take.key == key else " (outdated)"),
                lambda i=index: self.choose_take.emit(number, i),
            )
            action.setCheckable(True)
            action.setChecked(segment.chosen == index - 1)
            action.setEnabled(take.key == key)
            takes.addAction(action)
        voices = menu.addMenu("&Voice")
        voices.setEnabled(self.editable)
        for name in [None, *self.voices]:
            action = _action(voices, name or "The model's voice", lambda n=name: self.set_voice.emit(number, n))
            action.setCheckable(True)
            action.setChecked(segment.voice == name)
            voices.addAction(action)
        for text, signal in (("Pa&use after…", self.set_pause), ("Pa&ce of this segment…", self.set_speed)):
            action = _action(menu, text, lambda s=signal: s.emit(number))
            action.setEnabled(self.editable)
            menu.addAction(action)
        menu.addSeparator()
        self._shape_actions(menu, number)
        return menu

    def _shape_actions(self, menu: QMenu, number: int) -> None:
        """Delete, skip, merge, split and the chapter boundary (each undoable in the studio)."""
        project = self.project
        assert project is not None
        segment = project.segments[number - 1]
        following = project.segments[number] if number < len(project.segments) else None
        starts = number == 1 or project.segments[number - 2].chapter != segment.chapter
        skip = (
            ("Narrate this segment a&gain", lambda: self.set_skipped.emit(number, False))
            if segment.skipped
            else ("S&kip this segment", lambda: self.set_skipped.emit(number, True))
        )
        entries = [
            ("&Delete segment", lambda: self.delete_segment.emit(number), "Del", len(project.segments) > 1),
            (skip[0], skip[1], "S", True),
            (
                "&Merge with the next segment",
                lambda: self.merge_next.emit(number),
                None,
                following is not None and following.chapter == segment.chapter,
            ),
            ("Sp&lit this segment…", lambda: self.split_segment.emit(number), None, True),
            ("Start a &new chapter here…", lambda: self.chapter_starts.emit(number), None, not starts),
            (
                "&Join this chapter to the previous one",
                lambda: self.chapter_joins.emit(number),
                None,
                starts and segment.chapter > 0,
            ),
            ("Re&name this chapter…", lambda: self.rename_chapter.emit(segment.chapter + 1), None, True),
        ]
        for text, slot, key, possible in entries:
            action = _action(menu, text, slot, key)
            action.setEnabled(self.editable and possible)
            menu.addAction(action)

    def chapter_menu_for(self, chapter: int) -> QMenu:
        """The context menu of chapter ``chapter`` (1-based): rename it, skip it or narrate it again."""
        menu = QMenu(self)
        project = self.project
        if project is None:
            return menu
        skipped = project.chapters[chapter - 1].skipped
        entries = [
            ("Re&name chapter…", lambda: self.rename_chapter.emit(chapter)),
            (
                "Narrate this chapter a&gain" if skipped else "S&kip this chapter",
                lambda: self.set_chapter_skipped.emit(chapter, not skipped),
            ),
        ]
        for text, slot in entries:
            action = _action(menu, text, slot)
            action.setEnabled(self.editable)
            menu.addAction(action)
        return menu

    def _menu(self, position) -> None:
        item = self.itemAt(position)
        if item is None or self.project is None:
            return
        number, chapter = item.data(TEXT, NUMBER_ROLE), item.data(TEXT, CHAPTER_ROLE)
        if number is not None:
            self.menu_for(number).exec(self.viewport().mapToGlobal(position))
        elif chapter is not None:
            self.chapter_menu_for(chapter).exec(self.viewport().mapToGlobal(position))


def _action(parent, text: str, slot, shortcut: str | None = None) -> QAction:
    action = QAction(text, parent)
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
    action.triggered.connect(lambda _checked=False: slot())  # triggered(bool) must not reach the slot's defaults
    return action


def timing_text(segment) -> str:
    """The segment's pause after it and its own pace ("0.4 s · 1.2×"); the project's pace is not repeated."""
    pause = f"{segment.pause_after:g} s" if segment.pause_after else "–"
    return pause + (f" · {segment.speed:g}×" if segment.speed else "")


def takes_text(project, segment) -> str:
    """How many takes, and "old text" when the chosen take was made for an earlier text, voice or setting."""
    if not segment.takes:
        return ""
    chosen = segment.takes[segment.chosen - 1] if segment.chosen else None
    outdated = chosen is not None and chosen.key != project.render_key(segment)
    return f"{len(segment.takes)}{' · old text' if outdated else ''}"


def takes_tip(project, segment) -> str:
    """Each take: when it was made, with which voice, seed and settings, and whether it is for an older text."""
    if not segment.takes:
        return "No take yet"
    current = project.render_key(segment)
    voice = project.voice_of(segment) or "the model's voice"
    settings = ", ".join(
        f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in project.audio_settings(segment).items()
    )
    lines = []
    for number, take in enumerate(segment.takes, 1):
        made = take.created.replace("T", " ")[:16] if take.created else "date unknown"
        mark = "▶ " if number == segment.chosen else "  "
        if take.key == current:
            about = f"voice {voice}, seed {take.seed}" + (f", {settings}" if settings else "")
        else:
            about = f"seed {take.seed}, made for an older text, voice or settings"
        lines.append(f"{mark}Take {number}: {made} · {take.seconds:.1f} s · {about}")
    return "\n".join(lines)
