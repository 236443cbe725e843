"""Editing a project's shape (delete, skip, merge, split, chapter boundaries and titles) with undo and redo."""

from __future__ import annotations

import json

import pytest

from core.narration.exporting.export import ExportRequest, export_project
from core.narration.importing.book_import import parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects.editing import (
    History,
    chapter_joins,
    chapter_starts,
    delete,
    edit_text,
    merge,
    rename_chapter,
    revert,
    set_chapter_skipped,
    set_skipped,
    split,
)
from core.narration.projects.opening import open_project
from core.narration.projects.project import ProjectError, Take, create_project
from core.wording import describe_error
from tests.narration_support import BOOK, project_data, write_legacy

# BOOK: chapter 1 "Morning" is segments 1-5 (1 its heading), chapter 2 "Evening" segments 6-10 (6 its heading)


def new_project(tmp_path, text=BOOK):
    project = create_project(tmp_path / "Book.cbproj", "Book")
    import_document(project, parse_text(text, "Book"), None, None, tmp_path, source_identity("b", text, None))
    project.save()
    return project


def fake_render(project):
    """A current take for every segment (no audio: status only), so that kept and lost takes show."""
    for segment in project.segments:
        segment.takes.append(Take(f"takes/{segment.id:05d}-1.flac", 1, [1, 2], 0.5, project.render_key(segment)))
        segment.chosen = 0


def state(project) -> str:
    data = project.to_dict()
    data.pop("next_id")  # ids are never given twice, so undo leaves the counter where it is
    return json.dumps(data, sort_keys=True)


EDITS = {
    "delete": lambda p: delete(p, 3),
    "skip": lambda p: set_skipped(p, 4, True),
    "merge": lambda p: merge(p, 2),
    "split": lambda p: split(p, 2, 12),
    "edit": lambda p: edit_text(p, 5, "He carried nothing."),
    "chapter_starts": lambda p: chapter_starts(p, 4, "Noon"),
    "chapter_joins": lambda p: chapter_joins(p, 6),
    "rename_chapter": lambda p: rename_chapter(p, 2, "Night"),
    "skip_chapter": lambda p: set_chapter_skipped(p, 1, True),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_every_edit_is_undone_and_redone_exactly(tmp_path, name):
    project = new_project(tmp_path)
    fake_render(project)
    before = state(project)
    edit = EDITS[name](project)
    after = state(project)
    assert after != before and edit.op == name
    redo = revert(project, edit)
    assert state(project) == before
    undo = revert(project, redo)
    assert state(project) == after
    revert(project, undo)
    assert state(project) == before


def test_merge_makes_one_pending_segment_and_keeps_every_other_take(tmp_path):
    project = new_project(tmp_path)
    fake_render(project)
    ids = [s.id for s in project.segments]
    merge(project, 2)
    assert len(project.segments) == 9
    merged = project.segments[1]
    assert merged.text == "The sun rose over the hills. Birds began to sing."
    assert merged.id not in ids and project.status(merged) == "pending" and not merged.takes
    others = [s for s in project.segments if s is not merged]
    assert [s.id for s in others] == ids[:1] + ids[3:]
    assert all(project.status(s) == "rendered" for s in others)
    assert project.pending() == [merged]


def test_split_makes_two_pending_segments_at_the_position(tmp_path):
    project = new_project(tmp_path)
    fake_render(project)
    project.segment(4).pause_after = 1.5
    split(project, 4, len("A farmer walked"))
    assert [s.text for s in project.segments[3:5]] == ["A farmer walked", "to the field."]
    assert [project.status(s) for s in project.segments[3:5]] == ["pending", "pending"]
    assert [s.pause_after for s in project.segments[3:5]] == [0.0, 1.5]
    assert all(project.status(s) == "rendered" for s in project.segments[:3] + project.segments[5:])
    assert len(project.segments) == 11 and len({s.id for s in project.segments}) == 11


def test_delete_keeps_the_neighbours_and_undo_brings_back_the_takes(tmp_path):
    project = new_project(tmp_path)
    fake_render(project)
    gone = project.segment(3)
    edit = delete(project, 3)
    assert gone not in project.segments and all(project.status(s) == "rendered" for s in project.segments)
    revert(project, edit)
    back = project.segment(3)
    assert back.id == gone.id and back.takes == gone.takes and project.status(back) == "rendered"


def test_skipped_segments_are_not_rendered_or_exported_and_show_as_skipped(tmp_path):
    project = new_project(tmp_path)
    set_skipped(project, 2, True)
    assert project.status(project.segment(2)) == "skipped"
    assert project.segment(2) not in project.pending() and len(project.pending()) == 9
    assert project.counts() == {"pending": 9, "rendered": 0, "failed": 0, "skipped": 1}
    set_chapter_skipped(project, 2, True)  # a skipped chapter skips its segments
    assert [project.status(s) for s in project.segments[5:]] == ["skipped"] * 5
    assert project.audible() == [project.segment(n) for n in (1, 3, 4, 5)]
    set_skipped(project, 2, False)
    assert project.status(project.segment(2)) == "pending"


def test_an_export_leaves_skipped_segments_out(tmp_path, bundles):
    from core.engine.pipeline import Pipeline
    from core.narration.rendering.render import render_pending

    project = new_project(tmp_path, "One sentence here. Two sentences here. Three sentences here.")
    set_skipped(project, 2, True)
    summary = render_pending(project, Pipeline.from_bundle(bundles["original"]))
    assert summary.rendered == 2 and not project.segment(2).takes
    result = export_project(project, ExportRequest(out=tmp_path / "x.wav"))
    assert sorted(result.timeline) == [1, 3]


def test_moving_a_chapter_boundary_renumbers_the_chapters(tmp_path):
    project = new_project(tmp_path)
    fake_render(project)
    chapter_starts(project, 4)
    assert [c.title for c in project.chapters] == ["Morning", "A farmer walked to the field.", "Evening"]
    assert [s.chapter for s in project.segments] == [0, 0, 0, 1, 1, 2, 2, 2, 2, 2]
    assert all(project.status(s) == "rendered" for s in project.segments)  # no text changed: every take kept
    chapter_joins(project, 6)
    assert [c.title for c in project.chapters] == ["Morning", "A farmer walked to the field."]
    assert [s.chapter for s in project.segments] == [0, 0, 0, 1, 1, 1, 1, 1, 1, 1]
    rename_chapter(project, 2, "  Noon   and night ")
    assert project.chapters[1].title == "Noon and night"


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (lambda p: delete(p, 11), "project.no_segment"),
        (lambda p: merge(p, 10), "project.merge_last"),
        (lambda p: merge(p, 5), "project.merge_chapters"),
        (lambda p: split(p, 2, 0), "project.split_position"),
        (lambda p: split(p, 2, 200), "project.split_position"),
        (lambda p: split(p, 2, 27), "project.split_position"),  # "." alone has nothing to say
        (lambda p: chapter_starts(p, 1), "project.already_starts"),
        (lambda p: chapter_starts(p, 6), "project.already_starts"),
        (lambda p: chapter_joins(p, 1), "project.not_a_start"),
        (lambda p: chapter_joins(p, 7), "project.not_a_start"),
        (lambda p: rename_chapter(p, 3, "X"), "project.no_chapter"),
        (lambda p: rename_chapter(p, 1, "   "), "project.title_empty"),
        (lambda p: edit_text(p, 1, "!!!"), "project.edit_empty"),
    ],
)
def test_impossible_edits_are_refused_with_words_and_change_nothing(tmp_path, edit, code):
    project = new_project(tmp_path)
    before = state(project)
    with pytest.raises(ProjectError) as info:
        edit(project)
    assert info.value.code == code and describe_error(info.value, "cli")
    assert state(project) == before


def test_the_history_survives_between_sessions_and_undoes_in_order(tmp_path):
    project = new_project(tmp_path)
    original = state(project)
    history = History.load(project)
    history.record(merge(project, 2))
    history.record(set_skipped(project, 5, True))
    project.save()
    history.save(project)
    after = state(project)

    project = open_project(project.folder)
    history = History.load(project)
    assert [e.op for e in history.undo_records] == ["merge", "skip"]  # the latest last
    assert history.undo(project).op == "skip"
    assert history.undo(project).op == "merge"
    assert state(project) == original
    with pytest.raises(ProjectError, match="nothing_to_undo"):
        history.undo(project)
    project.save()
    history.save(project)

    project = open_project(project.folder)
    history = History.load(project)
    history.redo(project)
    history.redo(project)
    assert state(project) == after
    history.undo(project)
    history.record(delete(project, 1))  # a new edit forgets what could be redone
    assert not history.redo_records


def test_a_record_of_a_project_changed_since_is_refused(tmp_path):
    project = new_project(tmp_path)
    edit = merge(project, 2)
    import_document(project, parse_text(BOOK, "Book"), None, None, tmp_path, source_identity("c", BOOK, None))
    before = state(project)
    with pytest.raises(ProjectError) as info:
        revert(project, edit)
    assert info.value.code == "project.history_stale"
    assert state(project) == before


def test_a_damaged_history_is_an_empty_history(tmp_path):
    project = new_project(tmp_path)
    project.history_records = {"undo": [{"not": "a record"}], "redo": "junk"}
    assert not History.load(project).undo_records


def test_skipped_flags_and_the_model_folder_are_saved_and_old_files_still_open(tmp_path):
    project = new_project(tmp_path)
    set_skipped(project, 3, True)
    project.chapters[1].skipped = True
    project.bundle = str(tmp_path / "model")
    project.save()
    again = open_project(project.folder)
    assert again.segment(3).skipped and again.chapters[1].skipped and again.bundle == str(tmp_path / "model")
    data = project_data(project.folder)
    data.pop("bundle")
    for item in data["segments"] + data["chapters"]:
        item.pop("skipped")
    write_legacy(project.folder, json.dumps(data))
    old = open_project(project.folder)
    assert old.bundle is None and not any(s.skipped for s in old.segments) and not old.chapters[1].skipped
