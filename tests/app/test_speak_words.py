"""The Speak tab marks the word being heard: each sentence is aligned on a thread once its audio is complete (the
audio never waits), and the word playing is highlighted in the text as typed; a replay or a changed text shows
none. The aligner answers with known times here (tests/engine/test_alignment.py tests the real one)."""

from __future__ import annotations

from core.engine.alignment.words import Alignment, WordTime
from tests import aligner_fakes as fakes
from tests.app_support import speak_and_wait

TEXT = "Hello there, my friend. The second sentence follows."


def fake_align(audio, rate, text, language="en", spoken=None, whisper_model=None):
    """Each word of ``text`` a share of the sentence's audio, in order."""
    words = [w.strip(".,") for w in text.split()]
    step = audio.size / rate / max(1, len(words))
    return Alignment([WordTime(w, i * step, (i + 0.9) * step) for i, w in enumerate(words)], audio.size / rate)


def test_the_word_being_heard_is_highlighted_in_the_text(qtbot, window, monkeypatch):
    fakes.share(monkeypatch, fake_align)
    speak = window.speak_panel
    marked = []
    editor = speak.text.editor

    def look() -> None:
        for selection in editor.extraSelections():
            marked.append(selection.cursor.selectedText())

    speak._play_timer.timeout.connect(look)
    speak_and_wait(qtbot, window, TEXT)
    qtbot.waitUntil(lambda: len(speak.spoken_words.words) == 8, timeout=10000)
    words = speak.spoken_words.words
    assert [TEXT[w.first : w.last] for w in words] == [
        "Hello",
        "there",
        "my",
        "friend",
        "The",
        "second",
        "sentence",
        "follows",
    ]
    assert all(a.start < b.start for a, b in zip(words, words[1:]))  # the second sentence after the first's audio
    assert marked and set(marked) <= set(TEXT.replace(",", "").replace(".", "").split())
    assert speak.spoken_words.at(words[5].start + 0.01) == words[5]
    speak.text.set_text("Another text.")  # the text shown is not the one spoken: nothing is marked
    speak._on_play_tick()
    assert speak.text.editor.extraSelections() == []


def test_a_word_is_found_whole_in_its_sentence_never_inside_another(qtbot, monkeypatch):
    """The aligner placed only "a": it is the word "a", not the "a" inside "cat" (words are found as the exports and
    the studio find them, core.narration.place_words)."""
    import numpy as np

    from app.widgets.spoken_words import SpokenWords
    from core.engine.alignment.words import Alignment, WordTime

    text = "The cat sat on a mat."
    fakes.share(monkeypatch, lambda audio, rate, *_a: Alignment([WordTime("a", 0.5, 0.6)], audio.size / rate))
    words = SpokenWords()
    words.begin(text, "en")
    words._align(words._serial, np.zeros(24000, np.float32), 24000, 0, 0, len(text))
    assert [(text[w.first : w.last], w.first) for w in words.words] == [("a", text.index(" a ") + 1)]
    words.close()
