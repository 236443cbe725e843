from __future__ import annotations

import pytest

from core.engine.errors import TextInputError
from core.engine.text import (
    MAX_CHARS,
    MAX_TEXT_CHARS,
    Pause,
    Sentence,
    clean_text,
    filter_tags,
    normalize_sentence,
    split_text,
)
from core.wording import describe_error


def sentences(pieces):
    return [p.text for p in pieces if isinstance(p, Sentence)]


def test_splits_sentences_and_keeps_spans():
    text = "Hello there. How are you?  Fine, thanks!\n\nNew paragraph"
    pieces = split_text(text)
    assert sentences(pieces) == ["Hello there.", "How are you?", "Fine, thanks!", "New paragraph"]
    for p in pieces:
        assert clean_text(text)[p.start : p.end].split() == p.text.split()


def test_long_sentences_are_capped_without_cutting_words():
    words = [f"word{i}" for i in range(400)]
    text = " ".join(words[:150]) + ", " + " ".join(words[150:]) + "."
    pieces = sentences(split_text(text))
    assert all(len(p) <= MAX_CHARS for p in pieces)
    assert " ".join(pieces).replace(",", "").replace(".", "").split() == words
    assert len(pieces) > 3


def test_a_single_overlong_word_stays_whole():
    word = "x" * (MAX_CHARS + 50)
    assert sentences(split_text(f"Start. {word} end.")) == ["Start.", word, "end."]


def test_tags_with_spaces_are_never_split():
    text = ("blah " * 70) + "[clear throat] " + ("more " * 30)
    joined = " ".join(sentences(split_text(text)))
    assert "[clear throat]" in joined


@pytest.mark.parametrize(
    ("tag", "seconds"), [("[pause]", 0.5), ("[pause:0.8s]", 0.8), ("[PAUSE: 250ms]", 0.25), ("[pause:2]", 2.0)]
)
def test_pause_tags(tag, seconds):
    pieces = split_text(f"One. {tag} Two.")
    assert [type(p) for p in pieces] == [Sentence, Pause, Sentence]
    assert pieces[1].seconds == pytest.approx(seconds)


def test_pauses_are_capped():
    assert split_text("A [pause:99s] b")[1].seconds == 10.0


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "...!?", "🙂🙂", "\x00\x01", "[pause]", "[laugh]"])
def test_nothing_speakable_is_an_error(text):
    with pytest.raises(TextInputError) as caught:
        split_text(text)
    assert caught.value.code == "text.nothing_to_say"
    assert "nothing to say" in describe_error(caught.value)


def test_clean_text_drops_controls_and_emoji_but_keeps_scripts():
    assert clean_text("Hi\x07 🎉 Ça — Привет 你好\u200b") == "Hi  Ça — Привет 你好"


def test_huge_text_is_refused_with_a_message():
    with pytest.raises(TextInputError) as caught:
        split_text("a" * 2_000_000)
    assert caught.value.code == "text.too_long" and caught.value.data == {"chars": 2_000_000, "limit": MAX_TEXT_CHARS}
    assert "the limit is" in describe_error(caught.value)


def test_upstream_punctuation_normalisation():
    assert normalize_sentence("hello   world") == "Hello world."
    # upstream keeps the two spaces a replacement leaves ("… " -> ",  "): the model was trained on what it sends
    assert normalize_sentence("wait… what; ok: “quoted”") == 'Wait,  what,  ok, "quoted".'
    assert normalize_sentence("Really?") == "Really?"


def test_filter_tags_keeps_known_ones():
    text, dropped = filter_tags("Ha [laugh] well [foo] ok", frozenset({"[laugh]"}))
    assert text == "Ha [laugh] well ok" and dropped == ["[foo]"]
