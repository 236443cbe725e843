"""The studio highlights the segment being heard (not the one being generated) and shows pause, pace and takes."""

from __future__ import annotations

from types import SimpleNamespace

from app.studio.segment_model import takes_text, takes_tip, timing_text
from app.studio.segment_playback import heard_segment


def test_the_highlight_follows_the_audio_being_played():
    marks = [(0, 1), (48_000, 2), (96_000, 3)]  # segment 3 is generated while segment 1 is still heard
    assert heard_segment(marks, 0) == 1
    assert heard_segment(marks, 47_999) == 1
    assert heard_segment(marks, 48_000) == 2
    assert heard_segment(marks, 200_000) == 3
    assert heard_segment([], 10) is None


def test_pause_and_pace_are_shown():
    assert timing_text(SimpleNamespace(pause_after=0.4, speed=1.2)) == "0.4 s · 1.2×"
    assert timing_text(SimpleNamespace(pause_after=0.0, speed=None)) == "–"


class _Project:
    def __init__(self, key):
        self.key = key

    def render_key(self, _segment):
        return self.key

    def voice_of(self, _segment):
        return "Narrator"

    def audio_settings(self, _segment):
        return {"exaggeration": 0.5}


def _take(key, seed):
    return SimpleNamespace(key=key, seed=seed, seconds=2.5, created="2026-11-25T10:00:00")


def test_takes_say_when_and_how_they_were_made_and_an_old_text_is_marked():
    segment = SimpleNamespace(takes=[_take("old", 7), _take("new", 9)], chosen=1)  # the second take (from 0)
    project = _Project("new")
    assert takes_text(project, segment) == "2"
    tip = takes_tip(project, segment)
    assert "Take 1: 2026-11-25 10:00" in tip and "seed 7, made for an older text" in tip
    assert "▶ Take 2" in tip and "voice Narrator, seed 9, exaggeration 0.5" in tip and "▶ Take 1" not in tip
    segment.chosen = 0
    assert takes_text(project, segment) == "2 · old text"
    assert "▶ Take 1" in takes_tip(project, segment)


def test_the_takes_column_reads_the_chosen_take_as_the_project_counts_it(tmp_path):
    """``Segment.chosen`` counts from 0 (``Project.choose(segment, 1)`` chooses the first take)."""
    from core.narration.projects.project import Chapter, Segment, Take, create_project

    project = create_project(tmp_path / "P", "P")
    project.chapters = [Chapter("One")]
    segment = Segment(id=1, text="A sentence.", chapter=0, paragraph=0)
    project.segments = [segment]
    key = project.render_key(segment)
    segment.takes = [Take("takes/00001-1.flac", 1, [], 1.0, key), Take("takes/00001-2.flac", 2, [], 1.0, key)]
    project.choose(segment, 1)
    assert takes_text(project, segment) == "2" and takes_tip(project, segment).startswith("▶ Take 1")
    segment.takes[0].key = "an older text"
    assert takes_text(project, segment) == "2 · old text"
