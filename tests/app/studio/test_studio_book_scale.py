"""The studio at a novel's size (10,000 segments in 100 chapters, made in memory): a take arriving changes only its
own row, the selection and the scroll position stay while takes arrive and after a change of the book's shape, the
search finds a word near the end, and opening and scrolling read only the rows that are seen. Mechanisms, not
timings."""

from __future__ import annotations

import random

import pytest
from PySide6.QtCore import QItemSelectionModel

from app.studio.segment_model import COLUMNS, STATUS
from core.narration.projects.project import Chapter, Segment, Take, create_project
from core.narration.rendering.render import RenderProgress
from tests.app.studio.support import cell, chapter_rows, segment_rows
from tests.app_support import make_window

SEGMENTS, PER_CHAPTER = 10_000, 100
WORDS = ("the", "whale", "sea", "ship", "captain", "harpoon", "deck", "sailor", "ocean", "wind", "rope", "boat")


def book(folder):
    """A project of 10,000 segments, one chapter per 100; segments 5, 15, 25 … have a take (it is rendered)."""
    project = create_project(folder, "Moby")
    project.chapters = [Chapter(f"Chapter {c + 1}") for c in range(SEGMENTS // PER_CHAPTER)]
    pick = random.Random(7)
    for number in range(1, SEGMENTS + 1):
        words = [pick.choice(WORDS) for _ in range(pick.randint(5, 12))]
        if number == 9_990:
            words.insert(2, "Queequeg")
        text = " ".join(words)
        text = text[0].upper() + text[1:] + "."
        project.segments.append(Segment(id=number, text=text, chapter=(number - 1) // PER_CHAPTER, paragraph=number))
    project.next_id = SEGMENTS + 1
    for segment in project.segments[4::10]:
        take(project, segment)
    return project


def take(project, segment) -> None:
    """A take (no audio file: nothing here plays it) made for the segment as it is now, and chosen."""
    file = f"takes/{segment.id:05d}-{len(segment.takes) + 1}.flac"
    segment.takes.append(Take(file, 1, [], 2.0, project.render_key(segment)))
    segment.chosen = len(segment.takes) - 1


@pytest.fixture
def studio(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, None, load=False)
    window.modes.setCurrentWidget(window.studio_panel)
    studio = window.studio_panel
    studio.set_project(book(tmp_path / "Moby.cbproj"))
    yield studio
    window.close()


class Signals:
    """What the segment model told the view: each dataChanged as the segment numbers of its first and last row,
    and how many resets and moves of rows."""

    def __init__(self, model):
        self.model, self.changed, self.resets, self.moves = model, [], 0, 0
        model.dataChanged.connect(self._changed)
        model.modelReset.connect(self._reset)
        for signal in (model.layoutChanged, model.rowsInserted, model.rowsRemoved, model.rowsMoved):
            signal.connect(self._moved)

    def _changed(self, first, last, _roles=()):
        assert first.parent() == last.parent() and first.column() == 0 and last.column() == COLUMNS - 1
        self.changed.append((self.model.number_at(first), self.model.number_at(last)))

    def _reset(self):
        self.resets += 1

    def _moved(self, *_args):
        self.moves += 1


def scroll_to_middle(studio, number: int) -> int:
    lst = studio.segments
    lst.select(number)
    lst.scrollTo(lst.segment_index(number), lst.ScrollHint.PositionAtCenter)
    value = lst.verticalScrollBar().value()
    assert value > 0
    return value


def test_a_take_arriving_changes_only_its_row_and_keeps_the_selection_and_the_scroll(qtbot, studio):
    lst = studio.segments
    assert lst.segment_model.segment_count() == SEGMENTS and len(chapter_rows(studio)) == 100
    scrolled = scroll_to_middle(studio, 5_000)
    signals = Signals(lst.segment_model)
    project = studio.project
    studio.controller.started(1)  # what the render's progress events find: a render of this panel runs
    for done, number in enumerate((9_990, 5_001, 17), 1):
        assert cell(studio, number, STATUS) == "○ pending"
        take(project, project.segments[number - 1])
        studio._on_step(RenderProgress("segment", number, done, 3, 2.0 * done, 1.0, 0, 10))
        assert signals.changed[-1] == (number, number)  # that row, every column, and nothing else
        assert cell(studio, number, STATUS) == "● rendered" and cell(studio, number, 2) == "1"
    lst.segments_changed([42, 43, 44, 300])  # what the live poller says: neighbours as one range
    assert signals.changed[3:] == [(42, 44), (300, 300)]
    studio.controller.ended()
    assert signals.resets == signals.moves == 0
    assert lst.selected_numbers() == (5_000,) and lst.verticalScrollBar().value() == scrolled
    assert "1003 rendered" in studio.title.text()


def test_a_change_of_shape_keeps_the_selected_segments_and_the_scroll_position(qtbot, studio):
    lst = studio.segments
    project = studio.project
    scrolled = scroll_to_middle(studio, 6_000)
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    lst.selectionModel().select(lst.segment_index(6_002), flags)
    chosen = [project.segments[n - 1].id for n in lst.selected_numbers()]
    signals = Signals(lst.segment_model)
    assert studio.delete_segment(10)  # above the rows in view: every number after it moves up by one
    assert signals.resets == 1
    assert lst.selected_numbers() == (5_999, 6_001) and lst.selected_number() == 5_999
    assert [project.segments[n - 1].id for n in lst.selected_numbers()] == chosen
    assert lst.verticalScrollBar().value() == scrolled
    assert studio.merge_next(7_000) and studio.set_chapter_skipped(3, True)
    studio.undo_action.trigger()
    studio.undo_action.trigger()
    studio.undo_action.trigger()  # the deleted segment is back
    assert signals.resets == 6 and len(segment_rows(studio)) == SEGMENTS
    assert lst.selected_numbers() == (6_000, 6_002) and lst.verticalScrollBar().value() == scrolled
    assert [project.segments[n - 1].id for n in lst.selected_numbers()] == chosen


def test_a_deleted_selected_segment_leaves_its_place_selected(qtbot, studio):
    lst = studio.segments
    scroll_to_middle(studio, 4_000)
    assert studio.delete_segment(4_000)
    assert lst.selected_numbers() == (4_000,)  # the segment after it, now number 4,000
    assert cell(studio, 4_000) == studio.project.segments[3_999].text


def test_the_search_finds_a_word_near_the_end_and_gives_the_whole_book_back(qtbot, studio):
    lst = studio.segments
    studio.search.setText("queequeg")  # any case
    qtbot.waitUntil(lambda: studio.found.text() == "1 found", timeout=5000)  # once typing rests
    assert list(segment_rows(studio)) == [9_990]
    assert [c[0] for c in chapter_rows(studio)] == ["Chapter 100"]  # its chapter, no other
    assert "Queequeg" in cell(studio, 9_990)
    project = studio.project
    take(project, project.segments[9_989])
    lst.segments_changed([9_990])  # a take arriving while searching: the row stays, with its new status
    assert list(segment_rows(studio)) == [9_990] and cell(studio, 9_990, STATUS) == "● rendered"
    studio.search.returnPressed.emit()  # Enter: the first one found is selected
    assert lst.selected_numbers() == (9_990,)
    studio.search.setText("")
    studio.apply_search()
    assert len(segment_rows(studio)) == SEGMENTS and studio.found.text() == ""
    assert lst.selected_numbers() == (9_990,)
    rect = lst.visualRect(lst.segment_index(9_990))
    assert lst.viewport().rect().contains(rect.center())  # the whole book again, the segment found in view
    studio.search.setText("no such word at all")
    studio.apply_search()
    assert segment_rows(studio) == {} and studio.found.text() == "0 found"


def test_opening_and_scrolling_to_the_end_read_only_the_rows_seen(qtbot, studio, monkeypatch):
    """A row's status and takes need its render key: the list asks them of the rows on screen, not of the book."""
    from app.studio import segment_model

    read = []
    takes_text = segment_model.takes_text
    monkeypatch.setattr(segment_model, "takes_text", lambda p, s: read.append(s.id) or takes_text(p, s))
    studio.set_project(studio.project)
    lst = studio.segments
    lst.viewport().repaint()
    assert 0 < len(read) < 200 and max(read) < 200
    read.clear()
    lst.scrollToBottom()
    lst.viewport().repaint()
    assert cell(studio, SEGMENTS, STATUS) == "○ pending"
    assert 0 < len(read) < 200 and min(read) > SEGMENTS - 200
    assert lst.verticalScrollBar().value() == lst.verticalScrollBar().maximum() > 0


def test_a_selected_chapter_stays_selected_when_a_chapter_starts_before_it(qtbot, studio):
    lst = studio.segments
    lst.setCurrentIndex(lst.chapter_index(50))
    assert lst.selected_chapter() == 50 and len(lst.selected_numbers()) == PER_CHAPTER
    assert studio.chapter_starts(10, "Inserted")
    assert lst.selected_chapter() == 51 and cell_of_chapter(studio, 51) == "Chapter 50"
    assert lst.selected_numbers() == tuple(range(4_901, 5_001))  # the chapter row stands for its segments


def cell_of_chapter(studio, chapter):
    return studio.segments.chapter_index(chapter).data()
