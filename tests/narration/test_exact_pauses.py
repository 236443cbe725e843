"""Exact pauses: a pause set by the user or by a ``[pause]`` tag keeps its length when the pace changes; the default
gaps between sentences scale with the pace, as the speech does."""

from __future__ import annotations

import json

import pytest

from core.engine.pipeline import Pipeline
from core.narration import editing, pause_seconds
from core.narration.exporting.export import ExportRequest, export_project, preview
from core.narration.importing.book_import import PAUSE_PARAGRAPH_S, PAUSE_SENTENCE_S, parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects.opening import open_project
from core.narration.projects.project import create_project
from core.narration.rendering.render import render_pending
from tests.narration_support import project_data, write_legacy

TEXT = """
The sun rose. [pause:2s] Birds began to sing. The farmer woke.

He walked out. [pause:0.5s]

A dog barked loudly.
"""


def imported(tmp_path, text=TEXT):
    project = create_project(tmp_path / "P.cbproj", "P")
    import_document(project, parse_text(text, "P"), None, None, tmp_path, source_identity("p", text, None))
    project.save()
    return project


@pytest.fixture(scope="module")
def pipe(bundles):
    return Pipeline.from_bundle(bundles["original"])


def test_a_pause_tag_is_exact_and_the_default_gaps_are_not(tmp_path):
    project = imported(tmp_path)
    texts = [s.text for s in project.segments]
    assert texts[:3] == ["The sun rose.", "Birds began to sing.", "The farmer woke."]
    rose, birds, woke, walked, dog = project.segments
    assert (rose.pause_after, rose.pause_exact) == (2.0, True)
    assert (birds.pause_after, birds.pause_exact) == (PAUSE_SENTENCE_S, False)
    assert (woke.pause_after, woke.pause_exact) == (PAUSE_PARAGRAPH_S, False)
    # a tag shorter than a paragraph's gap gives way to the paragraph's (default) gap
    assert (walked.pause_after, walked.pause_exact) == (PAUSE_PARAGRAPH_S, False)
    assert (dog.pause_after, dog.pause_exact) == (0.0, False)


def test_pause_seconds_scales_only_the_default_gaps_with_the_pace(tmp_path):
    project = imported(tmp_path)
    rose, birds = project.segments[:2]
    project.set_speed(None, 2.0)
    assert pause_seconds(project, rose) == 2.0
    assert pause_seconds(project, birds) == pytest.approx(PAUSE_SENTENCE_S / 2)
    project.set_speed(birds, 0.5)  # segment pace × project pace = 1
    assert pause_seconds(project, birds) == pytest.approx(PAUSE_SENTENCE_S)
    project.set_pause(birds, 1.25)  # the user's own pause: exact from now on
    assert birds.pause_exact and pause_seconds(project, birds) == 1.25


def test_the_export_keeps_an_exact_pause_at_any_pace(tmp_path, pipe):
    project = imported(tmp_path)
    render_pending(project, pipe)
    project.set_pause(project.segments[2], 1.5)

    def gaps():
        timeline = export_project(project, ExportRequest(out=tmp_path / "book.wav")).timeline
        return [timeline[n + 1].start - timeline[n].end for n in range(1, len(project.segments))]

    normal = gaps()
    project.set_speed(None, 2.0)
    fast = gaps()
    assert fast[0] == pytest.approx(normal[0], abs=0.001) == pytest.approx(2.0, abs=0.001)  # [pause:2s]
    assert fast[2] == pytest.approx(normal[2], abs=0.001) == pytest.approx(1.5, abs=0.001)  # set by the user
    assert fast[1] == pytest.approx(normal[1] / 2, abs=0.001)  # a default gap
    assert fast[3] == pytest.approx(normal[3] / 2, abs=0.001)
    _audio, placements = preview(project)  # what the studio plays: the same timeline
    assert placements[1].start - placements[0].end == pytest.approx(2.0, abs=0.001)


def test_older_projects_load_with_scaled_pauses_and_the_flag_survives_saving(tmp_path):
    project = imported(tmp_path)
    data = project_data(project.folder)
    for segment in data["segments"]:
        segment.pop("pause_exact")
    write_legacy(project.folder, json.dumps(data))
    old = open_project(project.folder)
    assert not any(s.pause_exact for s in old.segments)
    old.set_speed(None, 2.0)
    assert pause_seconds(old, old.segments[0]) == pytest.approx(1.0)  # as before this field existed
    old.set_pause(old.segments[1], 3.0)
    old.save()
    again = open_project(project.folder)
    assert [s.pause_exact for s in again.segments] == [False, True, False, False, False]


def test_a_hand_edited_flag_that_is_not_true_or_false_is_refused(tmp_path):
    project = imported(tmp_path)
    data = project_data(project.folder)
    data["segments"][0]["pause_exact"] = "yes"
    write_legacy(project.folder, json.dumps(data))
    with pytest.raises(Exception) as caught:
        open_project(project.folder)
    assert caught.value.code == "project.invalid" and "pause_exact" in caught.value.data["problem"]


def test_merge_split_and_undo_keep_whether_a_pause_is_exact(tmp_path):
    project = imported(tmp_path)
    project.set_pause(project.segments[1], 1.5)
    merge = editing.merge(project, 1)  # "The sun rose." + "Birds began to sing.": the second one's pause
    merged = project.segments[0]
    assert (merged.pause_after, merged.pause_exact) == (1.5, True)
    split = editing.split(project, 1, len("The sun rose. "))
    first, second = project.segments[:2]
    assert (first.pause_after, first.pause_exact) == (0.0, False)
    assert (second.pause_after, second.pause_exact) == (1.5, True)
    editing.revert(project, split)
    editing.revert(project, merge)
    assert (project.segments[0].pause_after, project.segments[0].pause_exact) == (2.0, True)  # the tag's
    assert (project.segments[1].pause_after, project.segments[1].pause_exact) == (1.5, True)
