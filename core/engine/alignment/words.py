"""What an alignment is (:class:`WordTime`, :class:`Alignment`) and what counts as a word of a text
(:func:`split_words`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

_SPLIT = re.compile(r"[\s\u2012\u2013\u2014\u2015/]+")
"""Words are apart at white space, at dashes (en, em, figure and quotation dashes: "well—maybe" is two words) and at
slashes; a hyphen keeps them together ("well-known")."""
_CJK = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")
"""Kana and Han characters: texts in them have no spaces, so each character is a word of its own."""


@dataclass(frozen=True)
class WordTime:
    """A word of the text and where it is heard in the audio."""

    word: str
    """The word as written in the text, without punctuation at its edges."""
    start: float
    """Seconds from the start of the audio."""
    end: float

    def to_dict(self) -> dict[str, Any]:
        return {"word": self.word, "start": round(self.start, 3), "end": round(self.end, 3)}


@dataclass(frozen=True)
class Alignment:
    """The words of a text placed in its recording."""

    words: list[WordTime] = field(default_factory=list)
    """In the text's order; only the words that were placed (a word not heard has no time rather than a guess)."""
    duration: float = 0.0
    """Seconds of audio."""
    language: str = "en"
    aligner: str = "pocketsphinx"
    """``"pocketsphinx"`` or ``"faster-whisper"``."""
    total_words: int = 0
    """Words in the text (:func:`split_words`)."""

    @property
    def placed_share(self) -> float:
        """The share of the text's words that were placed (1.0 for a text without words)."""
        return len(self.words) / self.total_words if self.total_words else 1.0

    def to_dict(self) -> dict[str, Any]:
        """``{"words": [{"word", "start", "end"}], "duration", "language", "aligner", "placed"}``: times in seconds
        (to the millisecond), ``placed`` the share of the text's words placed."""
        return {
            "words": [word.to_dict() for word in self.words],
            "duration": round(self.duration, 3),
            "language": self.language,
            "aligner": self.aligner,
            "placed": round(self.placed_share, 4),
        }


@dataclass(frozen=True)
class Placed:
    """Where an aligner put a word, and how well it fits there."""

    start: float
    """Seconds from the start of the audio."""
    end: float
    cost: float
    """How badly the word fits there, in the aligner's own measure (lower is better)."""


class Aligner(Protocol):
    """Places words in audio: pocketsphinx (:class:`~core.engine.alignment.sphinx_aligner.SphinxAligner`) or
    faster-whisper (:class:`~core.engine.alignment.whisper_aligner.WhisperAligner`)."""

    name: str

    def place(
        self, audio: np.ndarray, sample_rate: int, words: Sequence[str], language: str = "en"
    ) -> list[Placed | None]:
        """Each word's place in ``audio`` (mono float32 at ``sample_rate``), ``None`` for a word not heard."""
        ...


def split_words(text: str) -> list[str]:
    """The words of ``text`` in order, as written, without punctuation at their edges ("Dr. Smith's $5!" →
    ``["Dr", "Smith's", "5"]``); a token with no letter or digit ("—", "...") is no word."""
    words: list[str] = []
    for token in _SPLIT.split(unicodedata.normalize("NFC", text)):
        for part in _CJK.split(token):
            word = _strip_edges(part)
            if word:
                words.append(word)
    return words


def _strip_edges(token: str) -> str:
    start, end = 0, len(token)
    while start < end and not _is_word_char(token[start]):
        start += 1
    while end > start and not _is_word_char(token[end - 1]):
        end -= 1
    return token[start:end]


def _is_word_char(char: str) -> bool:
    return unicodedata.category(char)[0] in "LN"


def word_key(word: str) -> str:
    """How a word is looked up in a pronouncing dictionary: lower case, typographic apostrophes made plain."""
    return word.lower().replace("\u2019", "'").replace("\u02bc", "'")
