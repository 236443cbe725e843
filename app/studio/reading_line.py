"""The line being heard, above the studio's waveform: the segment's text, its word being spoken highlighted (from its
take's word times, :attr:`core.narration.Take.alignment`), each word a link that plays from it.

A take without word times shows its text plain: its sentence is what is highlighted, in the list."""

from __future__ import annotations

import html
from bisect import bisect_right
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from core.narration import place_words as find_in_text


@dataclass(frozen=True)
class SpokenWord:
    """A word of the line: where it is in the text and when it is heard, in seconds into the take."""

    start_char: int
    end_char: int
    start: float
    end: float


def place_words(text: str, words: list[list]) -> list[SpokenWord]:
    """The aligned ``words`` (``[word, start, end]``, in order) found in ``text`` as an export finds them
    (:func:`core.narration.exporting.word_times.place_words`); a word not found is left out."""
    places = find_in_text(text, [str(word) for word, _start, _end in words])
    return [
        SpokenWord(place[0], place[1], float(start), float(end))
        for place, (_word, start, end) in zip(places, words)
        if place is not None
    ]


class ReadingLine(QLabel):
    """``word_clicked(seconds)``: play from that word (seconds into the take being shown)."""

    word_clicked = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Line being heard")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.linkActivated.connect(self._clicked)
        self.number: int | None = None
        self.text_shown = ""
        self.words: list[SpokenWord] = []
        self.current: int | None = None
        self._starts: list[float] = []
        self.setVisible(False)

    def show_line(self, number: int | None, text: str = "", words: list[list] | None = None, why: str = "") -> None:
        """Show segment ``number``'s ``text`` with its ``words`` (``None``: hide the line); ``why`` says why a take
        has none (its alignment failed)."""
        if number is None:
            self.number, self.words, self.current = None, [], None
            self.setVisible(False)
            return
        if number == self.number and text == self.text_shown:
            return
        self.number, self.text_shown = number, text
        self.words = place_words(text, words or [])
        self._starts = [w.start for w in self.words]
        self.current = None
        self._render()
        if self.words:
            self.setToolTip("Click a word to play from it")
        elif why:
            self.setToolTip(f"No word times for this take, so its sentence is highlighted: {why}")
        else:
            self.setToolTip("This take has no word times yet (Takes ▾ → Find word times)")
        self.setVisible(True)

    def at(self, seconds: float) -> None:
        """Highlight the word heard ``seconds`` into the take (the last one started; none before the first)."""
        index = bisect_right(self._starts, seconds) - 1
        current = index if index >= 0 else None
        if current != self.current:
            self.current = current
            self._render()

    def _render(self) -> None:
        text, out, cursor = self.text_shown, [], 0
        palette = self.palette()
        link = palette.color(QPalette.ColorRole.WindowText).name()
        mark = palette.color(QPalette.ColorRole.Highlight).name()
        marked = palette.color(QPalette.ColorRole.HighlightedText).name()
        for index, word in enumerate(self.words):
            out.append(html.escape(text[cursor : word.start_char]))
            style = f"color:{link}; text-decoration:none"
            if index == self.current:
                style = f"color:{marked}; background-color:{mark}; text-decoration:none"
            body = html.escape(text[word.start_char : word.end_char])
            out.append(f'<a href="{index}" style="{style}">{body}</a>')
            cursor = word.end_char
        out.append(html.escape(text[cursor:]))
        self.setText("".join(out))

    def _clicked(self, href: str) -> None:
        if href.isdigit() and int(href) < len(self.words):
            self.word_clicked.emit(self.words[int(href)].start)
