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
