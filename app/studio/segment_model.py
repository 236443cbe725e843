"""The studio's segment list as a Qt item model, read from the open :class:`~core.narration.Project`.

Chapters are the top-level rows, their segments the rows under them (a segment outside every chapter of the
project is a top-level row after the chapters). Five columns: the text, the status, the takes, the pause and pace, and
who says it (the speaker: a character's name, empty for narration; a line whose speaker the attribution is unsure of
is marked "?" on a tinted cell; the view shows it beside the text, and only for a project with a cast).
Nothing is copied: every cell is read from the project when the view asks for it, and what costs (a segment's
status and its takes' words need its render key) is kept per row until :meth:`SegmentModel.segments_changed` says
the row changed. A change of the book's shape (segments or chapters added, removed or moved) is
:meth:`SegmentModel.reset`. The search (:meth:`SegmentModel.search`) is the model's too: only the segments whose
text holds the words are rows, under their chapters; and so is the "Needs review" filter
(:meth:`SegmentModel.set_review_only`): only the segments whose chosen take the take screen flagged, which the model
keeps as a set of numbers (read whole with the shape, then per changed row); and so is the filter by speaker
(:meth:`SegmentModel.set_speaker_filter`: one character's lines, the narration, or the lines whose speaker is unsure).
A speaker cell reads its segment's own fields: nothing scans the cast per row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPixmap

from core.narration import UNSURE, Project, reasons_of, segment_flagged
from core.wording import describe_failure, describe_reason

NUMBER_ROLE = Qt.ItemDataRole.UserRole
"""A segment row's number (1-based), in the text column; ``None`` on a chapter row."""
CHAPTER_ROLE = Qt.ItemDataRole.UserRole + 1
"""A chapter row's number (1-based), in the text column; ``None`` on a segment row."""
STATUS_MARK = {"pending": "○ pending", "rendered": "● rendered", "failed": "✕ failed", "skipped": "– skipped"}
PERFORMED_MARK = "● performed"
"""The status column of a rendered segment whose chosen take a person performed (their recording, re-voiced)."""
PERFORMED_TIP = "Performed: your recording of the line, re-voiced into {voice}"
TEXT, STATUS, TAKES, TIMING, SPEAKER = 0, 1, 2, 3, 4
COLUMNS = 5
HEADERS = ("Text", "Status", "Takes", "Pause · pace", "Speaker")
"""The speaker is the model's last column (the view shows it beside the text): what reads the others by position
stays as it was."""
STATUS_TIP = {
    "pending": "Pending: not rendered with its current text, voice and settings",
    "rendered": "Rendered",
    "failed": "Failed",
    "skipped": "Skipped: not rendered and not exported (skipped by you, or a cover or table of contents)",
}
STATUS_COLOUR = {"pending": QColor(120, 120, 120), "failed": QColor(190, 30, 30), "skipped": QColor(160, 160, 160)}
REVIEW_MARK = "needs review"
"""The status column of a rendered segment whose chosen take is flagged (with :func:`review_icon` before it)."""
REVIEW_COLOUR = QColor(166, 94, 0)
"""Dark amber: readable on a light row, and not the red of a failed segment."""
UNSURE_TINT = QColor(255, 226, 160)
"""The speaker cell of a line whose speaker is unsure: a light amber, the review's colour, under dark text."""
UNSURE_MARK = "?"
ROOT = 0
"""The internal id of a top-level row; a segment row under the top-level row ``r`` has ``r + 1``."""
Index = QModelIndex | QPersistentModelIndex
NO_FLAGS = Qt.ItemFlag.NoItemFlags
CHAPTER_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
SEGMENT_FLAGS = CHAPTER_FLAGS | Qt.ItemFlag.ItemNeverHasChildren
"""Made once: Qt asks every row's flags while it lays the rows out (and a segment row never has rows under it)."""
BULK_ROWS = 512
"""More changed rows than this (the end of a render, characters found in a whole book) are told to the view as one
change per chapter rather than one per run of neighbouring rows (thousands of signals)."""
SpeakerFilter = tuple[str, str | None] | None
"""Which lines the list shows by speaker: ``("character", name)``, ``("narration", None)``, ``("unsure", None)``;
``None``: every line."""
NARRATION: SpeakerFilter = ("narration", None)
UNSURE_LINES: SpeakerFilter = ("unsure", None)


def is_unsure(segment) -> bool:
    """The attribution is not sure who says this line (below :data:`~core.narration.UNSURE`, or a quote whose
    speaker it could not name), and no person set it."""
    confidence = segment.speaker_confidence
    return not segment.speaker_fixed and confidence is not None and confidence < UNSURE


def speaks(segment, wanted: SpeakerFilter) -> bool:
    """The segment is one of the lines ``wanted`` shows (``None``: every line)."""
    if wanted is None:
        return True
    kind, name = wanted
    if kind == "unsure":
        return is_unsure(segment)
    if kind == "narration":
        return segment.speaker is None and not is_unsure(segment)
    return segment.speaker == name


class SegmentModel(QAbstractItemModel):
    """The rows are plain lists of segment numbers, made once per shape (or search): Qt asks for an index, a parent
    or a row count thousands of times while it lays 10,000 rows out, and each answer is a list look-up."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.project: Project | None = None
        self.current: int | None = None
        """The segment being heard (or rendered): its row is painted with :attr:`current_brush`, its text bold."""
        self.current_brush = QBrush()
        self.words = ""
        """The search: only segments whose text holds these words are rows (empty: every segment)."""
        self._members: list[list[int]] = []
        """Per chapter of the project (0-based), the numbers of its segments, searched or not."""
        self._loose: list[int] = []
        """The segments in no chapter of the project (top-level rows after the chapters)."""
        self._ids: list[int] = []
        """Per segment (number - 1): its id when the shape was read (the project may have changed since)."""
        self._top: list[int] = []
        """Per top-level row: the chapter it shows (0-based), or ``-number`` for a segment in no chapter."""
        self._children: list[list[int]] = []
        """Per top-level row: the numbers of the segment rows under it (none under a segment)."""
        self._place: dict[int, tuple[int, int]] = {}
        """Per segment shown: its parent's internal id and its row under that parent."""
        self._rows: dict[int, tuple[str, str, bool]] = {}
        """Per segment number: its status, its takes' words and whether its chosen take was performed, until the row
        changes."""
        self.review_only = False
        """The "Needs review" filter: only flagged segments are rows (with the search, both must hold)."""
        self._flagged: set[int] = set()
        """The numbers of the segments whose chosen take is flagged (read with the shape, then per changed row)."""
        self._flagged_order: list[int] | None = None
        """:attr:`_flagged` in reading order, made when asked after a change."""
        self.speaker_filter: SpeakerFilter = None
        """The filter by speaker: only these lines are rows (with the search and "Needs review", all must hold)."""
        self._speaking: set[int] = set()
        """With a filter by speaker: the numbers of the lines it shows (read with the rows, then per changed row)."""
        self._unsure: set[int] = set()
        """The numbers of the lines whose speaker is unsure (read with the shape, then per changed row)."""
        self._unsure_order: list[int] | None = None
        self._statuses: list[str] = []
        """Per segment (number - 1): its status (read with the shape, then per changed row), so that the studio's
        counts of rendered and pending segments cost no render key per segment at every edit or rendered take."""

    # --- the project -------------------------------------------------------------------------------------------
    def reset(self, project: Project | None) -> None:
        """Read the book's shape again (a new project, or segments and chapters added, removed or moved)."""
        self.beginResetModel()
        self.project, self._rows = project, {}
        segments = project.segments if project is not None else []
        self._ids = [segment.id for segment in segments]
        members: list[list[int]] = [[] for _ in (project.chapters if project is not None else ())]
        loose: list[int] = []
        for number, segment in enumerate(segments, 1):
            if 0 <= segment.chapter < len(members):
                members[segment.chapter].append(number)
            else:
                loose.append(number)
        self._members, self._loose = members, loose
        self._flagged = {n for n, s in enumerate(segments, 1) if segment_flagged(project, s)} if project else set()
        self._flagged_order = None
        self._unsure = {n for n, s in enumerate(segments, 1) if is_unsure(s)}
        self._unsure_order = None
        self._statuses = [project.status(s) for s in segments] if project is not None else []
        if self.current is not None and not 1 <= self.current <= len(segments):
            self.current = None
        self._lay_out()
        self.endResetModel()

    def search(self, words: str) -> None:
        """Show only the segments whose written text holds ``words`` (any case), under their chapters; a chapter
        without one is not shown. Empty: every segment."""
        self.beginResetModel()
        self.words = " ".join(words.split())
        self._lay_out()
        self.endResetModel()

    def set_review_only(self, on: bool) -> None:
        """Show only the flagged segments (under their chapters), or every segment the search leaves."""
        self.review_only = on
        self.relayout()

    def set_speaker_filter(self, wanted: SpeakerFilter) -> None:
        """Show only one character's lines, the narration, or the unsure lines (``None``: every line)."""
        self.speaker_filter = wanted
        self.relayout()

    def relayout(self) -> None:
        """The rows again from the search and the filter (a segment was flagged or cleared while filtering)."""
        self.beginResetModel()
        self._lay_out()
        self.endResetModel()

    def _lay_out(self) -> None:
        """The rows from the chapters' members and the search."""
        shown = self._matches()
        self._top, self._children, self._place = [], [], {}
        for chapter, numbers in enumerate(self._members):
            rows = numbers if shown is None else [n for n in numbers if n in shown]
            if rows or shown is None:
                self._add_top(chapter, rows)
        for number in self._loose:
            if shown is None or number in shown:
                self._place[number] = (ROOT, len(self._top))
                self._add_top(-number, [])

    def _add_top(self, chapter: int, rows: list[int]) -> None:
        parent = len(self._top) + 1
        for row, number in enumerate(rows):
            self._place[number] = (parent, row)
        self._top.append(chapter)
        self._children.append(rows)

    def _matches(self) -> set[int] | None:
        project, wanted = self.project, self.speaker_filter
        if project is None or not (self.words or self.review_only or wanted is not None):
            return None
        segments = project.segments
        if wanted is not None:
            self._speaking = {n for n, s in enumerate(segments, 1) if speaks(s, wanted)}
        if not self.words and not self.review_only:
            return set(self._speaking)
        if not self.words:
            return set(self._flagged) if wanted is None else self._flagged & self._speaking
        words = self.words.casefold()
        among: Iterable[int] = sorted(self._flagged) if self.review_only else range(1, len(segments) + 1)
        if wanted is not None:
            among = [n for n in among if n in self._speaking]
        return {n for n in among if words in segments[n - 1].text.casefold()}

    def segments_changed(self, numbers: Iterable[int]) -> bool:
        """These segments changed (a take, a status, a text, a voice, a pause): their rows, and only they, are read
        again (one ``dataChanged`` per run of neighbouring rows; a row the search hides is read when shown).
        ``True`` when a filter is on and a segment joined or left what it shows ("Needs review": flagged or cleared;
        by speaker: its speaker changed): the rows must be laid out again (:meth:`relayout`)."""
        run: list[int] = []
        place = self._place
        project = self.project
        moved = spoken = False
        wanted = self.speaker_filter
        changed = sorted(set(numbers))
        bulk = len(changed) > BULK_ROWS
        for number in changed:
            self._rows.pop(number, None)
            if project is not None and 1 <= number <= len(project.segments):
                segment = project.segments[number - 1]
                if number <= len(self._statuses):
                    self._statuses[number - 1] = project.status(segment)
                flagged = segment_flagged(project, segment)
                if flagged and number not in self._flagged:
                    self._flagged.add(number)
                    self._flagged_order, moved = None, True
                elif not flagged and number in self._flagged:
                    self._flagged.discard(number)
                    self._flagged_order, moved = None, True
                if is_unsure(segment) != (number in self._unsure):
                    self._unsure.symmetric_difference_update((number,))
                    self._unsure_order = None
                if wanted is not None and speaks(segment, wanted) != (number in self._speaking):
                    self._speaking.symmetric_difference_update((number,))
                    spoken = True
            if bulk or number not in place:
                continue
            if run and (place[number][0] != place[run[-1]][0] or place[number][1] != place[run[-1]][1] + 1):
                self._emit_changed(run)
                run = []
            run.append(number)
        if run:
            self._emit_changed(run)
        if bulk:
            self._emit_all()
        return (moved and self.review_only) or spoken

    def flagged(self) -> list[int]:
        """The numbers of the flagged segments, in reading order (the search and the filter notwithstanding)."""
        if self._flagged_order is None:
            self._flagged_order = sorted(self._flagged)
        return self._flagged_order

    def is_flagged(self, number: int) -> bool:
        return number in self._flagged

    def status_counts(self) -> dict[str, int]:
        """How many segments are rendered, pending, failed and skipped (as the rows were last read)."""
        counts = dict.fromkeys(STATUS_MARK, 0)
        counts.update(Counter(self._statuses))
        return counts

    def unsure(self) -> list[int]:
        """The numbers of the lines whose speaker is unsure, in reading order (whatever the filters show)."""
        if self._unsure_order is None:
            self._unsure_order = sorted(self._unsure)
        return self._unsure_order

    def is_unsure(self, number: int) -> bool:
        return number in self._unsure

    def shown_numbers(self) -> list[int]:
        """The segments shown (the search and the filters leave them), in reading order."""
        return sorted(self._place)

    def all_segments(self) -> range:
        return range(1, len(self._ids) + 1)

    def set_current(self, number: int | None) -> bool:
        """Mark the segment being heard; ``False`` when it was marked already."""
        if number is not None and not 1 <= number <= len(self._ids):
            number = None
        if number == self.current:
            return False
        previous, self.current = self.current, number
        for n in (previous, number):
            if n is not None and n in self._place:
                self._emit_changed([n])
        return True

    def _emit_all(self) -> None:
        """Every row changed: one ``dataChanged`` per parent (the view reads again only the rows it shows)."""
        if self._top:
            self.dataChanged.emit(
                self.createIndex(0, TEXT, ROOT), self.createIndex(len(self._top) - 1, COLUMNS - 1, ROOT)
            )
        for row, children in enumerate(self._children):
            if children:
                first, last = (
                    self.createIndex(0, TEXT, row + 1),
                    self.createIndex(len(children) - 1, COLUMNS - 1, row + 1),
                )
                self.dataChanged.emit(first, last)

    def _emit_changed(self, run: list[int]) -> None:
        self.dataChanged.emit(self.index_of(run[0], TEXT), self.index_of(run[-1], COLUMNS - 1))

    # --- where things are --------------------------------------------------------------------------------------
    def segment_count(self) -> int:
        """The project's segments (shown or not)."""
        return len(self._ids)

    def shown_count(self) -> int:
        """The segment rows the search (and the "Needs review" filter) leave."""
        return len(self._place)

    def chapter_count(self) -> int:
        return len(self._members)

    def id_of(self, number: int) -> int:
        """The id of the segment that row ``number`` shows (as the shape was last read: before :meth:`reset`, a
        segment's row is still the one it had when the project was edited)."""
        return self._ids[number - 1]

    def chapter_segments(self, chapter: int) -> list[int]:
        """The numbers of chapter ``chapter``'s segments (1-based), in order, the search notwithstanding."""
        return list(self._members[chapter - 1]) if 1 <= chapter <= len(self._members) else []

    def chapter_rows(self) -> list[QModelIndex]:
        """The indexes of the chapter rows shown (those that can be expanded)."""
        return [self.createIndex(row, TEXT, ROOT) for row, chapter in enumerate(self._top) if chapter >= 0]

    def first_shown(self) -> int | None:
        """The first segment the search leaves (``None``: none)."""
        return min(self._place) if self._place else None

    def index_of(self, number: int, column: int = TEXT) -> QModelIndex:
        """The index of segment ``number``'s row (invalid when there is no such segment, or the search hides it)."""
        place = self._place.get(number)
        if place is None:
            return QModelIndex()
        return self.createIndex(place[1], column, place[0])

    def chapter_index(self, chapter: int, column: int = TEXT) -> QModelIndex:
        """The index of chapter ``chapter``'s row (1-based; invalid when there is none, or the search hides it)."""
        try:
            row = self._top.index(chapter - 1)
        except ValueError:
            return QModelIndex()
        return self.createIndex(row, column, ROOT)

    def number_at(self, index: Index) -> int | None:
        """The segment number of a row of this model (``None``: a chapter row, or no row)."""
        if not index.isValid():
            return None
        parent, row = index.internalId(), index.row()
        if parent == ROOT:
            top = self._top[row] if row < len(self._top) else 0
            return -top if top < 0 else None
        children = self._children[parent - 1] if parent <= len(self._children) else []
        return children[row] if row < len(children) else None

    def chapter_at(self, index: Index) -> int | None:
        """The chapter number (1-based) of a chapter row of this model (``None``: a segment row, or no row)."""
        if index.isValid() and index.internalId() == ROOT and index.row() < len(self._top):
            top = self._top[index.row()]
            return top + 1 if top >= 0 else None
        return None

    # --- QAbstractItemModel (asked for every row while Qt lays them out: kept to a look-up) ----------------------
    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if parent.isValid():
            if parent.internalId() != ROOT:
                return QModelIndex()
            top = parent.row()
            children = self._children[top] if top < len(self._children) else ()
            return self.createIndex(row, column, top + 1) if 0 <= row < len(children) else QModelIndex()
        return self.createIndex(row, column, ROOT) if 0 <= row < len(self._top) else QModelIndex()

    def parent(self, child: Index | None = None) -> Any:  # type: ignore[override]  # QObject.parent() too
        if child is None:
            return super().parent()
        parent = child.internalId() if child.isValid() else ROOT
        return self.createIndex(parent - 1, 0, ROOT) if parent != ROOT else QModelIndex()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self._top)
        if parent.internalId() != ROOT or parent.column() != 0:
            return 0
        top = parent.row()
        return len(self._children[top]) if top < len(self._children) else 0

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return self.rowCount(parent) > 0

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return COLUMNS

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return NO_FLAGS
        if index.internalId() != ROOT:
            return SEGMENT_FLAGS
        row = index.row()
        return CHAPTER_FLAGS if row < len(self._top) and self._top[row] >= 0 else SEGMENT_FLAGS

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < COLUMNS:
            return HEADERS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        project = self.project
        if project is None or not index.isValid():
            return None
        number = self.number_at(index)
        if number is not None:
            return self._segment_data(project, number, index.column(), role)
        chapter = self.chapter_at(index)
        return self._chapter_data(project, chapter, index.column(), role) if chapter is not None else None

    # --- the cells ---------------------------------------------------------------------------------------------
    def _row(self, project: Project, number: int) -> tuple[str, str, bool]:
        row = self._rows.get(number)
        if row is None:
            segment = project.segments[number - 1]
            take = project.chosen_take(segment)
            performed = take is not None and take.is_performed
            status = self._statuses[number - 1] if number <= len(self._statuses) else project.status(segment)
            row = self._rows[number] = (status, takes_text(project, segment), performed)
        return row

    def _segment_data(self, project: Project, number: int, column: int, role: int) -> Any:
        segment = project.segments[number - 1]
        if role == Qt.ItemDataRole.DisplayRole:
            if column == TEXT:
                return segment.text
            if column == STATUS:
                status, _takes, performed = self._row(project, number)
                if status == "rendered" and number in self._flagged:
                    return REVIEW_MARK
                return PERFORMED_MARK if status == "rendered" and performed else STATUS_MARK[status]
            if column == TAKES:
                return self._row(project, number)[1]
            if column == SPEAKER:
                return speaker_text(segment, number in self._unsure)
            return timing_text(segment)
        if role == NUMBER_ROLE:
            return number if column == TEXT else None
        if column == SPEAKER:
            return self._speaker_data(segment, number, role)
        if role == Qt.ItemDataRole.DecorationRole:
            return review_icon() if column == STATUS and number in self._flagged else None
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == STATUS and number in self._flagged:
                return QBrush(REVIEW_COLOUR)
            colour = STATUS_COLOUR.get(self._row(project, number)[0])
            return QBrush(colour) if colour is not None else None
        if role == Qt.ItemDataRole.BackgroundRole:
            return self.current_brush if number == self.current else None
        if role == Qt.ItemDataRole.FontRole and column == TEXT:
            status = self._row(project, number)[0]
            font = QFont()
            font.setItalic(status == "pending")
            font.setStrikeOut(status == "skipped")
            font.setBold(number == self.current)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == TEXT:
                return segment_tip(project, number)
            if column == STATUS:
                review = review_tip(project, segment) if number in self._flagged else ""
                return status_tip(project, segment) + (f"\n\n{review}" if review else "")
            if column == TAKES:
                return takes_tip(project, segment)
        return None

    def _speaker_data(self, segment, number: int, role: int) -> Any:
        """The speaker cell's colours and tooltip (its text is :func:`speaker_text`)."""
        if role == Qt.ItemDataRole.BackgroundRole:
            if number == self.current:
                return self.current_brush
            return QBrush(UNSURE_TINT) if number in self._unsure else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(QColor(20, 20, 20)) if number in self._unsure else None  # readable on the tint
        if role == Qt.ItemDataRole.ToolTipRole:
            return speaker_tip(segment)
        return None

    def _chapter_data(self, project: Project, chapter: int, column: int, role: int) -> Any:
        skipped = project.chapters[chapter - 1].skipped
        size = len(self._members[chapter - 1])
        if role == Qt.ItemDataRole.DisplayRole:
            if column == TEXT:
                return project.chapters[chapter - 1].title
            if column == STATUS:  # in the status column: the last one counts takes
                state = f"{size} segment{'' if size == 1 else 's'}"
                return f"– skipped · {state}" if skipped else state
            return "" if column == TAKES else None
        if role == CHAPTER_ROLE:
            return chapter if column == TEXT else None
        if role == Qt.ItemDataRole.FontRole and column == TEXT:
            font = QFont()
            font.setBold(True)
            font.setStrikeOut(skipped)
            return font
        if role == Qt.ItemDataRole.ToolTipRole and column == TEXT:
            return f"Chapter {chapter}: {size} segment(s)" + (" · skipped: not narrated" if skipped else "")
        return None


# --- the words of a row ---------------------------------------------------------------------------------------------
def segment_tip(project: Project, number: int) -> str:
    """The text column's tooltip: the text, what is said when it differs, the status, voice, pause and pace."""
    segment = project.segments[number - 1]
    voice = project.voice_of(segment) or "the model's voice"
    spoken = project.spoken_text(segment)
    says = f"\nSays: {spoken}" if spoken != segment.text else ""
    review = review_tip(project, segment) if segment_flagged(project, segment) else ""
    return (
        f"{segment.text}{says}\n\nSegment {number} · {status_tip(project, segment)} · voice: {voice} · pause after "
        f"{segment.pause_after:g} s"
        + (f" · pace {segment.speed:g}×" if segment.speed else "")
        + (f"\n\n{review}" if review else "")
    )


def review_tip(project: Project, segment) -> str:
    """Why the chosen take needs review, in words: "Needs review (take 2, score 70 of 100):" and a line a reason."""
    take = project.chosen_take(segment)
    reasons = reasons_of(take)
    if take is None or not reasons:
        return ""
    score = (take.screen or {}).get("score")
    about = f"take {(segment.chosen or 0) + 1}"
    if isinstance(score, (int, float)):
        about += f", score {score:g} of 100"
    return f"Needs review ({about}):\n" + "\n".join(f"• {describe_reason(r)}" for r in reasons)


_ICON: list[QIcon] = []


def review_icon() -> QIcon:
    """The mark of a flagged segment: an amber disc with an exclamation mark (made once, after the application)."""
    if not _ICON:
        pixmap = QPixmap(32, 32)
        pixmap.fill(QColor(0, 0, 0, 0))
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QColor(0, 0, 0, 0))
        painter.setBrush(QColor(230, 145, 0))
        painter.drawEllipse(2, 2, 28, 28)
        painter.setBrush(QColor(255, 255, 255))
        painter.drawRoundedRect(13, 7, 6, 13, 3, 3)
        painter.drawEllipse(13, 22, 6, 6)
        painter.end()
        icon = QIcon(pixmap)
        icon.addPixmap(pixmap, QIcon.Mode.Selected)  # as strong on a selected row (not tinted by the highlight)
        _ICON.append(icon)
    return _ICON[0]


def status_tip(project: Project, segment) -> str:
    status = project.status(segment)
    failed = status == "failed" and segment.error
    take = project.chosen_take(segment)
    if status == "rendered" and take is not None and take.is_performed:
        return PERFORMED_TIP.format(voice=project.voice_of(segment) or "the model's voice")
    return STATUS_TIP[status] + (f": {describe_failure(segment)}" if failed else "")


def speaker_text(segment, unsure: bool) -> str:
    """The speaker column: the character's name ("Emma"), "Emma ?" when unsure, "?" for a quote whose speaker the
    attribution could not name, nothing for narration."""
    name = segment.speaker or ""
    if not unsure:
        return name
    return f"{name} {UNSURE_MARK}" if name else UNSURE_MARK


def speaker_tip(segment) -> str:
    """Who says the line, how sure the attribution is, and how to change it."""
    name, confidence = segment.speaker, segment.speaker_confidence
    change = "W: say who says it"
    if segment.speaker_fixed:
        said = f"{name} says this line" if name else "The narrator reads this line"
        return f"{said} (set by you: finding characters again keeps it). {change}."
    if confidence is None:
        return f"Narration (no quote). {change}."
    if is_unsure(segment):
        who = f"Perhaps {name}" if name else "A quote whose speaker was not found"
        return f"{who}: unsure ({confidence:.0%}, below {UNSURE:.0%}). {change}."
    return f"{name} ({confidence:.0%} sure). {change}." if name else f"Narration. {change}."


def timing_text(segment) -> str:
    """The segment's pause after it and its own pace ("0.4 s · 1.2×"); the project's pace is not repeated."""
    pause = f"{segment.pause_after:g} s" if segment.pause_after else "–"
    return pause + (f" · {segment.speed:g}×" if segment.speed else "")


def takes_text(project, segment) -> str:
    """How many takes, and "old text" when the chosen take was made for an earlier text, voice or setting."""
    if not segment.takes:
        return ""
    chosen = segment.takes[segment.chosen] if segment.chosen is not None else None  # ``chosen`` counts from 0
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
        mark = "▶ " if number - 1 == segment.chosen else "  "
        performed = getattr(take, "performed", None)  # a take of any shape that has a key, seed and length
        if performed is not None:
            made_from = f"performed from {performed.get('name') or 'your recording'}"
            about = f"{made_from}, in {voice}" if take.key == current else f"{made_from}, for an older text or voice"
        elif take.key == current:
            about = f"voice {voice}, seed {take.seed}" + (f", {settings}" if settings else "")
        else:
            about = f"seed {take.seed}, made for an older text, voice or settings"
        lines.append(f"{mark}Take {number}: {made} · {take.seconds:.1f} s · {about}")
    return "\n".join(lines)
