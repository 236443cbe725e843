"""The word being heard in a text that is spoken as it is generated (the Speak tab): each sentence's audio, once it
is complete, is aligned with its text by the aligner's process (:func:`core.engine.shared_aligner`: pocketsphinx
holds the GIL, which the window and the inference thread need) from a thread of its own — the audio never waits for
it — and each word's place in the text and time in the whole request's audio are kept; :meth:`SpokenWords.at` gives
the word heard at a moment of playback, which the editor shows highlighted (:func:`highlight_word`)."""

from __future__ import annotations

import logging
from bisect import bisect_right
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

from core.engine import AudioChunk, ChatterboxError, clean_text, shared_aligner
from core.narration import place_words

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HeardWord:
    start: float
    """Seconds from the start of the request's audio."""
    end: float
    first: int
    """Where the word is in the text the request spoke (characters), and where it ends."""
    last: int


class SpokenWords(QObject):
    """``changed()`` when more words have their times."""

    changed = Signal()
    _found = Signal(int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spoken-words")
        self._found.connect(self._add)  # queued: delivered on the GUI thread
        self.text = ""
        self.words: list[HeardWord] = []
        self._starts: list[float] = []
        self._serial = 0
        self._language = "en"
        self._cleaned = ""
        self._pending: dict[int, list[np.ndarray]] = {}
        self._offset: dict[int, int] = {}
        self._spans: dict[int, tuple[int, int]] = {}
        self._samples = 0

    def begin(self, text: str, language: str | None) -> None:
        """A new request speaks ``text``: the words of the last one are forgotten (late results are dropped)."""
        self._serial += 1
        self.text, self._language = text, language or "en"
        self._cleaned = clean_text(text)
        self.words, self._starts = [], []
        self._pending, self._offset, self._spans, self._samples = {}, {}, {}, 0
        self.changed.emit()

    def add(self, chunk: AudioChunk) -> None:
        """A chunk of the request's audio, in order; a sentence's last chunk sends the sentence to be aligned."""
        if chunk.kind == "speech":
            sentence = chunk.sentence
            if sentence not in self._pending:
                self._pending[sentence], self._offset[sentence] = [], self._samples
                self._spans[sentence] = chunk.text_span
            self._pending[sentence].append(chunk.samples)
            first, _last = self._spans[sentence]
            self._spans[sentence] = (min(first, chunk.text_span[0]), max(_last, chunk.text_span[1]))
            if chunk.last_in_sentence:
                audio = np.concatenate(self._pending.pop(sentence))
                start, end = self._spans[sentence]
                self._pool.submit(
                    self._align, self._serial, audio, chunk.sample_rate, self._offset[sentence], start, end
                )
        self._samples += chunk.samples.size

    def at(self, seconds: float) -> HeardWord | None:
        """The word heard ``seconds`` into the request's audio (the last one started, until it ends)."""
        index = bisect_right(self._starts, seconds) - 1
        if index < 0:
            return None
        word = self.words[index]
        return word if seconds <= word.end + 0.25 else None

    def close(self) -> None:
        """The window closes: sentences waiting are dropped, the one being aligned is waited for (under a second)."""
        self._serial += 1
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _align(self, serial: int, audio: np.ndarray, rate: int, offset: int, start: int, end: int) -> None:
        sentence = self._cleaned[start:end]
        try:
            found = shared_aligner().align(audio, rate, sentence, self._language)
        except ChatterboxError:
            return  # this sentence keeps no words: nothing is highlighted while it plays
        except Exception:
            log.exception("aligning a sentence failed")
            return
        placed = [
            (word.start + offset / rate, word.end + offset / rate, start + span[0], start + span[1])
            for word, span in zip(found.words, place_words(sentence, [w.word for w in found.words]))
            if span is not None  # found in the sentence as the exports and the studio find a take's words
        ]
        self._found.emit(serial, placed)

    def _add(self, serial: int, placed: list) -> None:
        if serial != self._serial:
            return  # a request that is over
        for start, end, first, last in placed:
            where = self._in_text(first, last)
            if where is not None:
                self.words.append(HeardWord(start, end, *where))
        self.words.sort(key=lambda w: w.start)
        self._starts = [w.start for w in self.words]
        self.changed.emit()

    def _in_text(self, first: int, last: int) -> tuple[int, int] | None:
        """A place in the cleaned text → the same word in the text as typed (the same place when cleaning changed
        nothing before it; else that word, searched for from about there)."""
        if self._cleaned == self.text:
            return first, last
        word = self._cleaned[first:last]
        near = max(0, first - 40)
        at = self.text.find(word, near)
        return (at, at + len(word)) if at >= 0 else None


def highlight_word(editor: QPlainTextEdit, word: HeardWord | None) -> None:
    """Show ``word`` highlighted in ``editor`` (``None``: no highlight), without moving the cursor or the text."""
    if word is None:
        editor.setExtraSelections([])
        return
    selection = QTextEdit.ExtraSelection()
    cursor = QTextCursor(editor.document())
    cursor.setPosition(word.first)
    cursor.setPosition(word.last, QTextCursor.MoveMode.KeepAnchor)
    mark = QTextCharFormat()
    highlight = editor.palette().highlight().color()
    mark.setBackground(QColor(highlight.red(), highlight.green(), highlight.blue(), 90))
    selection.cursor, selection.format = cursor, mark
    editor.setExtraSelections([selection])
