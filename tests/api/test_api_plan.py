"""How a request is cut into turns (sentences for the worker, silences made here) and how its timestamps add up:
no model needed."""

from __future__ import annotations

import pytest

from core.api.jobs import Part, plan
from core.api.timestamps import Timestamps, TimestampStore
from core.engine import SENTENCE_GAP_S, TextInputError, split_text


def test_plan_follows_the_engines_split_with_its_gaps_pauses_and_seed_offsets():
    text = "[pause:1s] First one. Second one! [pause] Third?"
    parts = plan(text)
    assert parts == [
        Part(None, 1.0, kind="pause"),
        Part("First one.", sentence=0, piece=1),
        Part(None, SENTENCE_GAP_S, kind="gap"),
        Part("Second one!", sentence=1, piece=2),
        Part(None, 0.5, kind="pause"),
        Part("Third?", sentence=2, piece=4),
    ]
    pieces = split_text(text)  # the piece numbers are the engine's own (they offset the seed per sentence)
    assert [pieces[p.piece].text for p in parts if p.text] == ["First one.", "Second one!", "Third?"]


@pytest.mark.parametrize("text", [".", "?!... ---", "[pause:2s]", "   \n "])
def test_nothing_to_say_is_said_by_the_plan(text):
    with pytest.raises(TextInputError) as caught:
        plan(text)
    assert caught.value.code == "text.nothing_to_say"


def test_timestamps_count_the_audio_sent_silences_included():
    marks = Timestamps(7, ["One.", "Two."])
    marks.add(-1, 12_000)  # a leading pause
    marks.add(0, 24_000)
    marks.add(0, 12_000)
    assert marks.complete == 0  # the first sentence may still grow
    marks.add(-1, 2_400)  # the gap: the first sentence is complete
    assert marks.complete == 1
    marks.add(1, 24_000)
    marks.done = True
    found = marks.as_json()
    assert found["sentences"] == [
        {"index": 0, "text": "One.", "start": 0.5, "end": 2.0},
        {"index": 1, "text": "Two.", "start": 2.1, "end": 3.1},
    ]
    assert found["done"] and found["duration"] == 3.1 and found["id"] == 7


def test_the_store_keeps_the_latest_requests_only():
    store = TimestampStore()
    for rid in range(300):
        store.new(rid, [])
    assert store.get(0) is None and store.get(299) is not None and store.get(44) is not None
