"""The project's text as its segments: chapters (with their segment counts) with their sentences, each marked
pending, rendered, failed or skipped; a view of :class:`~app.studio.segment_model.SegmentModel`, which reads the
project, so that a book of 10,000 segments opens, scrolls and searches at once.

The list is told what changed: :meth:`SegmentList.segments_changed` (the rows of segments whose take, status, text
or settings changed: only they are read again) and :meth:`SegmentList.shape_changed` (segments or chapters added,
removed or moved: the rows are read again, the selection follows the same segments and the list stays where it
was scrolled). :meth:`SegmentList.search` shows only the segments whose text holds some words, and
:meth:`SegmentList.set_review_only` only those whose take needs review (the model leaves the others out: nothing is
hidden row by row). A flagged segment is marked in the Status column ("needs review", with a mark), its tooltip
saying why in words. A project with a cast shows who says each line in a Speaker column beside the text ("?" on a
tinted cell where the attribution is unsure); :meth:`SegmentList.set_speaker_filter` shows one character's lines,
the narration or the unsure lines.

The segment being heard is highlighted and scrolled into view. A context menu and keys act on one segment: play
from here (Enter), regenerate (R), edit the text (F2), who says it (W: a character's name, typed), the next or
previous line whose speaker is unsure (U, Shift+U), perform it (a recording chosen or made with the microphone,
re-voiced into the segment's voice; a recording file dropped on a segment's row does the same), see what the model
reads of it (its spoken text's tokens), choose a take, change the voice, the pause after it and its pace; and on the
project's shape: delete (Del), skip or narrate again (S), merge with the next, split, start or remove a chapter
boundary there. A chapter's menu renames it or skips it. The list only shows and asks; the studio panel does the
work (and keeps the undo stack).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QMimeData, QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QBrush, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QMenu, QTreeView

from core.narration import Project
from core.voices import AUDIO_SUFFIXES

from .segment_model import SPEAKER, STATUS, TAKES, TEXT, TIMING, SegmentModel, SpeakerFilter

REGENERATE_TIP = (
    "Render a new take of this segment with a new seed, on this computer (also when Settings → Render on is a Ray "
    "cluster: one take is quicker here than starting the cluster's actors)"
)
PERFORM_TIP = (
    "Say this line yourself: your recording, with its words, timing and intonation, re-voiced into the segment's "
    "voice, becomes its take (dropping a recording file on the row does the same)"
)
Selection = QItemSelectionModel.SelectionFlag
NO_MODIFIER = Qt.KeyboardModifier.NoModifier


class SegmentList(QTreeView):
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
    perform_file = Signal(int, str)
    """A recording file dropped on a segment's row: its number, the file."""
    perform_choose = Signal(int)
    perform_record = Signal(int)
    perform_again = Signal(int)
    show_reading = Signal(int)
    """What the model reads of a segment (its spoken text, in the project's language)."""
    ask_speaker = Signal(int)
    """W: who says this segment (the studio asks for a name)."""
    next_unsure = Signal(bool)
    """U (``True``: forward) or Shift+U (back): the next line whose speaker is unsure."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.segment_model = SegmentModel(self)
        """What the list shows, read from the project."""
        self.setModel(self.segment_model)
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)  # no row is measured: 10,000 rows lay out at once
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.doubleClicked.connect(self._double_clicked)
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(TEXT, self.header().ResizeMode.Stretch)
        self.header().resizeSection(STATUS, 116)  # "needs review" with its mark
        self.header().resizeSection(TAKES, 64)
        self.header().resizeSection(TIMING, 96)
        self.header().resizeSection(SPEAKER, 104)
        self.header().moveSection(self.header().visualIndex(SPEAKER), 1)  # who says it, beside what is said
        self.setColumnHidden(SPEAKER, True)  # until the project has a cast
        self.segment_model.current_brush = QBrush(self.palette().highlight().color().lighter(170))
        self.voices: list[str] = []
        self.editable = True
        """False while the project renders: only playing is offered."""
        self.setAcceptDrops(True)  # a recording dropped on a segment performs it
        self.setDragDropMode(QAbstractItemView.DragDropMode.DropOnly)

    @property
    def project(self) -> Project | None:
        return self.segment_model.project

    @property
    def current(self) -> int | None:
        """The segment highlighted as being heard (or rendered)."""
        return self.segment_model.current

    # --- content -----------------------------------------------------------------------------------------------
    def set_project(self, project: Project | None) -> None:
        """Show another project (or none) whole: nothing selected, searched or filtered, scrolled to the top."""
        self.segment_model.words = ""
        self.segment_model.review_only = False
        self.segment_model.speaker_filter = None
        self.segment_model.current = None
        self.segment_model.reset(project)
        self._expand()
        self.scrollToTop()

    def segments_changed(self, numbers: Iterable[int] | None = None) -> None:
        """These segments (1-based numbers; ``None``: every one) changed but not the book's shape: a take arrived,
        a status, a text, a voice, a pause or a pace changed. Only their rows are read again; the selection and
        the scroll position stay."""
        model = self.segment_model
        if model.segments_changed(model.all_segments() if numbers is None else numbers):
            self._keeping_selection(model.relayout)  # "Needs review" shows a segment flagged or cleared since

    def shape_changed(self) -> None:
        """Segments or chapters were added, removed, merged, split or moved (an edit, an undo): every row is read
        again; the same segments stay selected (by their ids) and the list stays where it was scrolled."""
        scroll = self.verticalScrollBar().value(), self.horizontalScrollBar().value()
        self._keeping_selection(lambda: self.segment_model.reset(self.segment_model.project))
        self.verticalScrollBar().setValue(scroll[0])
        self.horizontalScrollBar().setValue(scroll[1])

    def highlight(self, number: int | None) -> None:
        """Mark the segment being heard (or rendered) and, when it changes, scroll it into view."""
        if self.segment_model.set_current(number) and number is not None:
            index = self.segment_model.index_of(number)
            if index.isValid():
                self.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)

    def _expand(self) -> None:
        """Every chapter open. Asked right after a reset, while Qt's layout of the rows waits: each chapter is only
        noted, and the rows are laid out once (``expandAll`` would note every segment row too)."""
        for index in self.segment_model.chapter_rows():
            self.setExpanded(index, True)

    # --- search ------------------------------------------------------------------------------------------------
    def search(self, words: str) -> int:
        """Show only the segments whose text holds ``words`` (any case; empty: every segment), with their chapters;
        the selected segments that are shown stay selected, and the current one in view. Returns how many segments
        are shown."""
        self._keeping_selection(lambda: self.segment_model.search(words))
        current = self.currentIndex()
        if current.isValid():
            self.scrollTo(current, QAbstractItemView.ScrollHint.PositionAtCenter)
        return self.shown()

    def set_review_only(self, on: bool) -> int:
        """Show only the segments whose take needs review (with the search), or all again; as :meth:`search`."""
        self._keeping_selection(lambda: self.segment_model.set_review_only(on))
        current = self.currentIndex()
        if current.isValid():
            self.scrollTo(current, QAbstractItemView.ScrollHint.PositionAtCenter)
        return self.shown()

    def set_speaker_filter(self, wanted: SpeakerFilter) -> int:
        """Show only one character's lines, the narration or the unsure lines (``None``: all); as :meth:`search`."""
        self._keeping_selection(lambda: self.segment_model.set_speaker_filter(wanted))
        current = self.currentIndex()
        if current.isValid():
            self.scrollTo(current, QAbstractItemView.ScrollHint.PositionAtCenter)
        return self.shown()

    def show_speakers(self, on: bool) -> None:
        """The Speaker column shown (a project with a cast) or hidden."""
        if self.isColumnHidden(SPEAKER) == on:
            self.setColumnHidden(SPEAKER, not on)

    def unsure(self) -> list[int]:
        """The numbers of the lines whose speaker is unsure, in reading order."""
        return self.segment_model.unsure()

    def flagged(self) -> list[int]:
        """The numbers of the segments whose take needs review, in reading order."""
        return self.segment_model.flagged()

    def shown(self) -> int:
        """How many segment rows the search (and the "Needs review" filter) leave."""
        return self.segment_model.shown_count()

    def first_shown(self) -> int | None:
        """The number of the first segment the search leaves (``None``: none)."""
        return self.segment_model.first_shown()

    # --- selection ---------------------------------------------------------------------------------------------
    def selected_number(self) -> int | None:
        """The segment of the current row (``None``: a chapter row, or none)."""
        return self.segment_model.number_at(self.currentIndex())

    def selected_chapter(self) -> int | None:
        """The chapter (1-based) of the current row: a chapter row's own, a segment's chapter; ``None``: no row."""
        index = self.currentIndex()
        chapter = self.segment_model.chapter_at(index)
        if chapter is not None:
            return chapter
        project, number = self.project, self.segment_model.number_at(index)
        return project.segments[number - 1].chapter + 1 if project is not None and number is not None else None

    def selected_numbers(self) -> tuple[int, ...]:
        """The selected segments, in order; a selected chapter row stands for all of its segments (also those the
        search hides)."""
        model, numbers = self.segment_model, set()
        for index in self.selectionModel().selectedRows(TEXT):
            chapter, number = model.chapter_at(index), model.number_at(index)
            if chapter is not None:
                numbers.update(model.chapter_segments(chapter))
            elif number is not None:
                numbers.add(number)
        return tuple(sorted(numbers))

    def select(self, number: int) -> None:
        """Make segment ``number`` (or the last one) the selected row."""
        count = self.segment_model.segment_count()
        if count:
            index = self.segment_model.index_of(min(max(number, 1), count))
            if index.isValid():
                self.setCurrentIndex(index)

    def segment_index(self, number: int, column: int = TEXT) -> QModelIndex:
        """The index of segment ``number``'s cell (invalid when there is none, or the search hides it)."""
        return self.segment_model.index_of(number, column)

    def chapter_index(self, chapter: int, column: int = TEXT) -> QModelIndex:
        """The index of chapter ``chapter``'s cell (1-based; invalid when there is none, or the search hides it)."""
        return self.segment_model.chapter_index(chapter, column)

    def _keeping_selection(self, change: Callable[[], None]) -> None:
        """Reset the model with ``change`` and select the same segments (by id) and chapters again."""
        model = self.segment_model
        rows = self.selectionModel().selectedRows(TEXT)
        ids = [model.id_of(n) for i in rows if (n := model.number_at(i)) is not None]
        chapters = [self._chapter_key(c) for c in self._chapters(rows)]
        current = model.number_at(self.currentIndex())
        current_id = model.id_of(current) if current is not None else None
        current_chapter = [self._chapter_key(c) for c in self._chapters([self.currentIndex()])]
        change()  # the rows show the shape before the edit until now: their ids are the model's
        self._expand()
        project = model.project
        if project is None:
            return
        numbers = {s.id: n for n, s in enumerate(project.segments, 1)}
        indexes = [model.index_of(numbers[i]) for i in ids if i in numbers]
        indexes += [model.chapter_index(self._chapter_now(c, numbers)) for c in chapters]
        self._select_rows([i for i in indexes if i.isValid()])
        if current_id in numbers:
            self.selectionModel().setCurrentIndex(model.index_of(numbers[current_id]), Selection.NoUpdate)
        elif current_chapter:
            self.selectionModel().setCurrentIndex(
                model.chapter_index(self._chapter_now(current_chapter[0], numbers)), Selection.NoUpdate
            )

    def _chapters(self, rows: list[QModelIndex]) -> list[int]:
        return [c for i in rows if (c := self.segment_model.chapter_at(i)) is not None]

    def _chapter_key(self, chapter: int) -> tuple[int, int | None]:
        """What finds a chapter again after a change of shape: its number and the id of its first segment."""
        segments = self.segment_model.chapter_segments(chapter)
        return chapter, self.segment_model.id_of(segments[0]) if segments else None

    def _chapter_now(self, chapter: tuple[int, int | None], numbers: dict[int, int]) -> int:
        """The number of a chapter after a change of shape: the chapter of its first segment (if it is still
        there), else the same number."""
        project, first = self.project, chapter[1]
        if project is None or first is None or first not in numbers:
            return chapter[0]
        return project.segments[numbers[first] - 1].chapter + 1

    def _select_rows(self, rows: list[QModelIndex]) -> None:
        """Select these rows, neighbours as one range each."""
        selection = QItemSelection()
        rows.sort(key=lambda i: (i.internalId(), i.row()))
        first = last = None
        for index in rows:
            if last is not None and index.internalId() == last.internalId() and index.row() == last.row() + 1:
                last = index
                continue
            if first is not None and last is not None:
                selection.select(first, last)
            first = last = index
        if first is not None and last is not None:
            selection.select(first, last)
        self.selectionModel().select(selection, Selection.ClearAndSelect | Selection.Rows)

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
        elif number is not None and self.editable and key == Qt.Key.Key_W and not event.modifiers():
            self.ask_speaker.emit(number)
        elif key == Qt.Key.Key_U and event.modifiers() in (NO_MODIFIER, Qt.KeyboardModifier.ShiftModifier):
            self.next_unsure.emit(event.modifiers() == NO_MODIFIER)
        else:
            super().keyPressEvent(event)

    # --- a recording dropped on a segment's row: perform this line ---------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if self.editable and self.project is not None and dropped_recording(event.mimeData()) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        if self._drop_target(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:
        number = self._drop_target(event)
        path = dropped_recording(event.mimeData())
        if number is None or path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.perform_file.emit(number, str(path))

    def _drop_target(self, event) -> int | None:
        """The segment a recording is dragged over (``None``: a chapter row, no row, or not a recording)."""
        if not self.editable or dropped_recording(event.mimeData()) is None:
            return None
        return self.segment_model.number_at(self.indexAt(event.position().toPoint()))

    def _double_clicked(self, index: QModelIndex) -> None:
        number = self.segment_model.number_at(index)
        if number is not None:
            self.play_from.emit(number)

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
        reading = _action(menu, "&What the model reads…", lambda: self.show_reading.emit(number))
        reading.setToolTip("The segment's spoken text as the model reads it: prepared text, tokens and ids")
        menu.addAction(reading)  # also while rendering or read-only: it changes nothing
        self._perform_actions(menu, number)
        takes = menu.addMenu("Choose &take")
        takes.setEnabled(self.editable and len(segment.takes) > 1)
        key = project.render_key(segment)
        for index, take in enumerate(segment.takes, 1):
            made = "performed" if take.is_performed else f"seed {take.seed}"
            label = f"Take {index} · {made} · {take.seconds:.1f} s"
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
        who = _action(menu, "W&ho says it…", lambda: self.ask_speaker.emit(number), "W")
        who.setToolTip(
            "Type a character's name (or Narrator): the line is theirs, kept when characters are found again"
        )
        who.setEnabled(self.editable)
        menu.addAction(who)
        for text, signal in (("Pa&use after…", self.set_pause), ("Pa&ce of this segment…", self.set_speed)):
            action = _action(menu, text, lambda s=signal: s.emit(number))
            action.setEnabled(self.editable)
            menu.addAction(action)
        menu.addSeparator()
        self._shape_actions(menu, number)
        return menu

    def _perform_actions(self, menu: QMenu, number: int) -> None:
        """Perform this line ▸ a recording chosen, the microphone, or the kept recording again."""
        project = self.project
        assert project is not None
        segment = project.segments[number - 1]
        perform = menu.addMenu("&Perform this line…")
        perform.setToolTipsVisible(True)
        perform.menuAction().setToolTip(PERFORM_TIP)
        perform.setEnabled(self.editable)
        kept = any(take.is_performed for take in segment.takes)
        for text, signal, possible, tip in (
            ("&Choose a recording…", self.perform_choose, True, "A file of your own reading of this line"),
            ("&Record it…", self.perform_record, True, "Say the line into the microphone"),
            (
                "&Again from my recording",
                self.perform_again,
                kept,
                "Your last recording of this line, re-voiced into the segment's voice now (after a change of voice)",
            ),
        ):
            action = _action(perform, text, lambda s=signal: s.emit(number))
            action.setEnabled(possible)
            action.setToolTip(tip)
            perform.addAction(action)

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
        index = self.indexAt(position)
        if not index.isValid() or self.project is None:
            return
        number, chapter = self.segment_model.number_at(index), self.segment_model.chapter_at(index)
        if number is not None:
            self.menu_for(number).exec(self.viewport().mapToGlobal(position))
        elif chapter is not None:
            self.chapter_menu_for(chapter).exec(self.viewport().mapToGlobal(position))


def dropped_recording(mime: QMimeData) -> Path | None:
    """The one local recording file in a drag (``None``: none, several, or not a recording)."""
    if not mime.hasUrls():
        return None
    paths = [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]
    if len(paths) != 1 or paths[0].suffix.lower() not in AUDIO_SUFFIXES:
        return None
    return paths[0]


def _action(parent, text: str, slot, shortcut: str | None = None) -> QAction:
    action = QAction(text, parent)
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
    action.triggered.connect(lambda _checked=False: slot())  # triggered(bool) must not reach the slot's defaults
    return action
