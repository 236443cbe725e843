"""The studio edits a project's shape from the segment list's menus, with undo and redo on Qt's undo stack, and an
import shows the chapters (skipped ones marked) without rendering anything."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog

from app.studio.split_dialog import SplitDialog
from core.narration.projects.opening import open_project
from tests.app.studio.support import cell, chapter_rows, segment_rows
from tests.app_support import make_window
from tests.narration_support import make_epub

TEXT = (
    "[chapter: Morning]\nThe first sentence is here. A second one follows!\n\n"
    "[chapter: Evening]\nA new paragraph starts. And it ends."
)
# chapter 1: segments 1 (heading "Morning"), 2, 3; chapter 2: segments 4 (heading "Evening"), 5, 6


@pytest.fixture
def studio(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["original"])
    window.speak_panel.text.set_text(TEXT)
    project = window.project_files.new_from_text(window.speak_panel.text.text, tmp_path / "Story.cbproj")
    assert project is not None and len(project.segments) == 6
    yield window.studio_panel
    window.close()


def state(project) -> str:
    data = project.to_dict()
    data.pop("next_id")
    return json.dumps(data, sort_keys=True)


def rows(studio) -> list[tuple[str, str]]:
    return [row for _n, row in sorted(segment_rows(studio).items())]


def menu_action(menu, text):
    found = [a for a in menu.actions() if a.text() == text]
    assert found, [a.text() for a in menu.actions()]
    return found[0]


EDITS = {
    "delete": lambda s: s.delete_segment(3),
    "skip": lambda s: s.set_skipped(2, True),
    "merge": lambda s: s.merge_next(2),
    "split": lambda s: s.split(2, len("The first")),
    "chapter_starts": lambda s: s.chapter_starts(3, "Noon"),
    "chapter_joins": lambda s: s.chapter_joins(4),
    "rename_chapter": lambda s: s.rename_chapter(2, "Night"),
    "skip_chapter": lambda s: s.set_chapter_skipped(1, True),
    "edit": lambda s: s.edit_text(5, "A changed paragraph starts."),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_every_edit_round_trips_through_the_undo_stack(studio, name):
    project = studio.project
    before, shown = state(project), rows(studio)
    assert not studio.undo_action.isEnabled()
    assert EDITS[name](studio)
    after, edited = state(project), rows(studio)
    assert after != before and studio.dirty and studio.undo_action.isEnabled()
    studio.undo_action.trigger()  # Ctrl+Z
    assert state(project) == before and rows(studio) == shown
    assert studio.redo_action.isEnabled() and not studio.undo_action.isEnabled()
    studio.redo_action.trigger()  # Ctrl+Shift+Z
    assert state(project) == after and rows(studio) == edited
    studio.undo_stack.undo()
    assert state(project) == before


def test_the_segment_menu_edits_the_shape_and_marks_what_is_skipped(studio, monkeypatch):
    lst = studio.segments
    menu_action(lst.menu_for(2), "S&kip this segment").trigger()
    assert cell(studio, 2, 1) == "– skipped" and cell(studio, 2, 0, Qt.ItemDataRole.FontRole).strikeOut()
    assert "1 skipped" in studio.title.text()
    menu_action(lst.menu_for(2), "Narrate this segment a&gain").trigger()
    assert cell(studio, 2, 1) == "○ pending"
    assert not menu_action(lst.menu_for(3), "&Merge with the next segment").isEnabled()  # the next is chapter 2
    menu_action(lst.menu_for(2), "&Merge with the next segment").trigger()
    assert cell(studio, 2) == "The first sentence is here. A second one follows!" and len(segment_rows(studio)) == 5

    monkeypatch.setattr(SplitDialog, "exec", lambda self: (self.set_position(len("The first sentence is here.")), 1)[1])
    menu_action(lst.menu_for(2), "Sp&lit this segment…").trigger()
    assert [cell(studio, n) for n in (2, 3)] == ["The first sentence is here.", "A second one follows!"]

    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Noon", True))
    assert not menu_action(lst.menu_for(4), "Start a &new chapter here…").isEnabled()  # 4 starts chapter 2
    menu_action(lst.menu_for(3), "Start a &new chapter here…").trigger()
    assert [c[0] for c in chapter_rows(studio)] == ["Morning", "Noon", "Evening"]
    assert [c[1] for c in chapter_rows(studio)] == ["2 segments", "1 segment", "3 segments"]  # per chapter
    menu_action(lst.menu_for(4), "&Join this chapter to the previous one").trigger()
    assert [c[0] for c in chapter_rows(studio)] == ["Morning", "Noon"]
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Day", True))
    menu_action(lst.chapter_menu_for(2), "Re&name chapter…").trigger()
    menu_action(lst.chapter_menu_for(1), "S&kip this chapter").trigger()
    assert chapter_rows(studio)[0][1].startswith("– skipped") and cell(studio, 1, 1) == "– skipped"
    menu_action(lst.menu_for(5), "&Delete segment").trigger()
    assert len(segment_rows(studio)) == 5  # six after the merge and the split, one deleted

    for _ in range(studio.undo_stack.count()):
        studio.undo()
    assert [c[0] for c in chapter_rows(studio)] == ["Morning", "Evening"]
    assert [cell(studio, n) for n in range(1, 7)] == [
        "Morning",
        "The first sentence is here.",
        "A second one follows!",
        "Evening",
        "A new paragraph starts.",
        "And it ends.",
    ]


def test_a_skipped_segment_is_not_rendered_and_undo_waits_while_rendering(qtbot, studio):
    studio.set_skipped(3, True)
    with qtbot.waitSignal(studio.bridge.render_done, timeout=60000):
        studio.render_button.click()
        assert not studio.undo_action.isEnabled()
        studio.undo()  # ignored while the render runs
        assert studio.project.segments[2].skipped
    project = open_project(studio.project.folder)
    assert project.counts() == {"pending": 0, "rendered": 5, "failed": 0, "skipped": 1}
    assert not project.segments[2].takes and cell(studio, 3, 1) == "– skipped"
    assert studio.undo_action.isEnabled()


def test_an_import_shows_the_chapters_and_renders_nothing(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["original"])
    try:
        book = make_epub(tmp_path / "b.epub", ["One", "Two", "Three"])
        project = window.project_files.import_file(book, tmp_path / "Book.cbproj")
        assert project is not None
        studio = window.studio_panel
        chapters = chapter_rows(studio)
        assert [c[0] for c in chapters] == ["A Test Book", "One", "Two", "Three"]  # the contents page, kept
        assert chapters[0][1].startswith("– skipped · ")
        assert not any(c[1].startswith("– skipped") for c in chapters[1:])
        assert all(c[1].endswith("segments") and not c[2] for c in chapters)
        assert studio.status.text().startswith("Imported 4 chapter(s) (1 skipped) and ")
        assert studio.rendering is None and project.counts()["rendered"] == 0
        assert not any((project.folder / "takes").iterdir())
    finally:
        window.close()
