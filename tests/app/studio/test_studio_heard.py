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
    segment = SimpleNamespace(takes=[_take("old", 7), _take("new", 9)], chosen=2)
    project = _Project("new")
    assert takes_text(project, segment) == "2"
    tip = takes_tip(project, segment)
    assert "Take 1: 2026-11-25 10:00" in tip and "seed 7, made for an older text" in tip
    assert "▶ Take 2" in tip and "voice Narrator, seed 9, exaggeration 0.5" in tip
    segment.chosen = 1
    assert takes_text(project, segment) == "2 · old text"
