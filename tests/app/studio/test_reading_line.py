"""The line being heard above the studio's waveform: each word of the take's text placed from its word times (a
word not found or not aligned left plain), the word being spoken highlighted as playback goes (through the pace's
stretch), and a click on a word playing from it."""

from __future__ import annotations

from app.studio.reading_line import ReadingLine, place_words
from tests.app.studio.support import new_project, render
from tests.app_support import make_window


def test_the_aligned_words_are_found_in_the_written_text_in_order():
    text = "“Well,” said Dr. Smith, “it’s twenty-one o’clock—isn’t it?”"
    words = [["Well", 0.1, 0.3], ["said", 0.35, 0.5], ["Dr", 0.5, 0.7], ["Smith", 0.7, 1.0], ["it’s", 1.1, 1.3]]
    words += [["twenty-one", 1.3, 1.9], ["o’clock", 1.9, 2.3], ["nowhere", 2.3, 2.4], ["isn’t", 2.4, 2.6]]
    placed = place_words(text, words)
    assert [text[w.start_char : w.end_char] for w in placed] == [
        "Well", "said", "Dr", "Smith", "it’s", "twenty-one", "o’clock", "isn’t",
    ]  # fmt: skip
    assert [w.start for w in placed][-1] == 2.4  # "nowhere" is not in the text: left out, the rest found after it
    assert place_words("the cat and the hat", [["the", 0, 1], ["the", 2, 3]])[1].start_char == 12  # the next "the"


def test_the_word_being_heard_is_highlighted_and_a_click_gives_its_time(qtbot):
    line = ReadingLine()
    qtbot.addWidget(line)
    line.show_line(3, "One two, three.", [["One", 0.0, 0.4], ["two", 0.5, 0.9], ["three", 1.0, 1.5]])
    assert not line.isHidden() and line.current is None
    line.at(0.6)
    assert line.current == 1 and "background-color" in line.text().split("two")[0].rsplit("<a", 1)[1]
    line.at(1.2)
    assert line.current == 2
    clicked = []
    line.word_clicked.connect(clicked.append)
    line.linkActivated.emit("0")
    assert clicked == [0.0]
    line.show_line(4, "No words yet.", None)
    assert line.words == [] and "No words yet." in line.text() and "no word times" in line.toolTip()
    line.show_line(5, "Failed.", [], "The aligner failed on this take.")
    assert line.toolTip().startswith("No word times for this take") and "aligner failed" in line.toolTip()
    line.show_line(None)
    assert line.isHidden()


def test_playback_highlights_each_word_as_it_is_heard_and_a_click_plays_from_it(qtbot, tmp_path, bundles):
    from app.audio.virtual_device import VirtualSoundDevice

    window = make_window(qtbot, tmp_path, bundles["original"], sd=VirtualSoundDevice(speed=1))
    project = new_project(window, tmp_path)
    render(qtbot, window)
    studio = window.studio_panel
    first = project.segments[0]
    take = project.chosen_take(first)
    third = take.seconds / 3
    words = [["The", 0.0, third * 0.9], ["first", third, 2 * third * 0.95], ["sentence", 2 * third, take.seconds]]
    take.alignment = {"words": words, "placed": 0.75, "aligner": "test", "error": None}
    studio.pace.setValue(125)  # the pace stretches the take: the words' times follow it
    studio.play_segment(1)
    assert studio.reading.isVisibleTo(studio) and studio.reading.number == 1
    qtbot.waitUntil(lambda: studio.reading.current == 1, timeout=10000)  # "first", a third into the take
    placement = studio._placements[0]
    scale = (placement.end - placement.start) / take.seconds
    assert studio.position() >= placement.start + third * scale - 0.15
    studio.reading.linkActivated.emit("2")  # a click on "sentence": play from it
    assert abs(studio._offset - (placement.start + 2 * third * scale)) < 1e-6
    qtbot.waitUntil(lambda: studio.reading.current == 2, timeout=5000)
    studio.stop()
    second = project.chosen_take(project.segments[1])
    second.alignment = {"words": [], "placed": 0.0, "aligner": "", "error": "align.internal"}
    studio.play_segment(2)  # a take whose alignment failed: its text, nothing highlighted, and why
    qtbot.waitUntil(lambda: studio.reading.number == 2, timeout=5000)
    assert studio.reading.words == [] and studio.reading.current is None
    assert "aligner failed" in studio.reading.toolTip()
    window.close()
