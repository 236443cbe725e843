"""Text front end: clean-up, sentence splitting with a character cap, pause tags, and upstream punctuation rules."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from core.engine.errors import TextInputError
from core.engine.reading.punctuation import punc_norm

MAX_CHARS = 300
"""Longest piece sent to the model at once; upstream quality degrades beyond ~300 characters."""
MAX_TEXT_CHARS = 1_000_000
DEFAULT_PAUSE_S = 0.5
MAX_PAUSE_S = 10.0
SENTENCE_GAP_S = 0.1
"""Silence joined between sentences (short, like a breath); pause tags add exact silences instead."""

_PAUSE = re.compile(r"\[pause(?:\s*:\s*(\d+(?:\.\d+)?)\s*(ms|s)?)?\]", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])[\"')\]»”’]*\s+|\n\s*\n|(?<=[。！？])")
_CLAUSE_END = re.compile(r"(?<=[,;:—–])\s+")
_WORD = re.compile(r"\[[^\[\]\n]{1,40}\]|\S+")
_TAG = re.compile(r"\[([^\[\]\n]{1,40})\]")
_DROP_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "So", "Sk"}


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int
    """Character span of this piece in the cleaned text, for highlighting and reports."""
    end: int


@dataclass(frozen=True)
class Pause:
    seconds: float
    start: int
    end: int


def clean_text(text: str) -> str:
    """Drop control characters, emoji and other unpronounceable symbols; keep line breaks as paragraph marks."""
    if not isinstance(text, str):
        raise TextInputError("text.not_text", kind=type(text).__name__)
    if len(text) > MAX_TEXT_CHARS:
        raise TextInputError("text.too_long", chars=len(text), limit=MAX_TEXT_CHARS)
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\t", " ")
    return "".join(ch for ch in text if ch == "\n" or unicodedata.category(ch) not in _DROP_CATEGORIES)


def is_speakable(text: str) -> bool:
    return any(ch.isalnum() for ch in _TAG.sub(" ", text))


def split_text(text: str, max_chars: int = MAX_CHARS) -> list[Sentence | Pause]:
    """Split cleaned text into sentences (each at most ``max_chars``, never cutting a word) and pauses.

    Raises :class:`TextInputError` when nothing in the text can be spoken.
    """
    text = clean_text(text)
    pieces: list[Sentence | Pause] = []
    cursor = 0
    for match in _PAUSE.finditer(text):
        pieces += _sentences(text, cursor, match.start(), max_chars)
        pieces.append(Pause(_pause_seconds(match), match.start(), match.end()))
        cursor = match.end()
    pieces += _sentences(text, cursor, len(text), max_chars)
    if not any(isinstance(p, Sentence) for p in pieces):
        raise TextInputError("text.nothing_to_say")
    return pieces


def find_pauses(text: str) -> list[Pause]:
    """The ``[pause]`` tags of a text (for text that has nothing else to say)."""
    return [Pause(_pause_seconds(m), m.start(), m.end()) for m in _PAUSE.finditer(text)]


def fit_sentence(text: str, max_chars: int = MAX_CHARS) -> list[str]:
    """One sentence as pieces of at most ``max_chars`` (split at clause punctuation, then between words; a single
    over-long word stays whole): the cap :func:`split_text` applies, for a caller with its own sentence splitter."""
    pieces = (" ".join(text[s:e].split()) for s, e in _cap(text, 0, len(text), max_chars))
    return [piece for piece in pieces if piece]


def _pause_seconds(match: re.Match[str]) -> float:
    if match.group(1) is None:
        return DEFAULT_PAUSE_S
    value = float(match.group(1)) / (1000.0 if (match.group(2) or "s").lower() == "ms" else 1.0)
    return min(value, MAX_PAUSE_S)


def _sentences(text: str, start: int, end: int, max_chars: int) -> list[Sentence]:
    out = []
    for s, e in _spans(text, start, end, _SENTENCE_END):
        for cs, ce in _cap(text, s, e, max_chars):
            piece = " ".join(text[cs:ce].split())
            if is_speakable(piece):
                out.append(Sentence(piece, cs, ce))
    return out


def _spans(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    spans, cursor = [], start
    for m in pattern.finditer(text, start, end):
        if m.end() > cursor and text[cursor : m.start()].strip():
            spans.append((cursor, m.start() if m.start() > cursor else m.end()))
            cursor = m.end()
    if text[cursor:end].strip():
        spans.append((cursor, end))
    return [(s + len(text[s:e]) - len(text[s:e].lstrip()), s + len(text[s:e].rstrip())) for s, e in spans]


def _cap(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Split a long sentence at clause punctuation, then between words, so every piece fits ``max_chars``."""
    if end - start <= max_chars:
        return [(start, end)]
    clauses = _spans(text, start, end, _CLAUSE_END)
    if len(clauses) > 1:
        return _pack([piece for s, e in clauses for piece in _cap(text, s, e, max_chars)], max_chars)
    words = [(start + m.start(), start + m.end()) for m in _WORD.finditer(text[start:end])]
    return _pack(words, max_chars)


def _pack(parts: list[tuple[int, int]], max_chars: int) -> list[tuple[int, int]]:
    """Greedily join adjacent spans while the result fits ``max_chars`` (a single over-long word stays whole)."""
    out: list[tuple[int, int]] = []
    for s, e in parts:
        if out and e - out[-1][0] <= max_chars:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def normalize_sentence(text: str, variant: str = "original") -> str:
    """Upstream Chatterbox punctuation normalisation (``punc_norm`` of ``variant``) of one sentence; a sentence with
    nothing left (only tags that were dropped) stays empty."""
    if not text.strip():
        return ""
    return punc_norm(text.strip(), variant)


def filter_tags(text: str, known: frozenset[str]) -> tuple[str, list[str]]:
    """Keep ``[tags]`` the model knows, drop the others; returns the text and the dropped tags."""
    dropped: list[str] = []

    def replace(m: re.Match[str]) -> str:
        tag = m.group(0)
        if tag in known:
            return tag
        dropped.append(m.group(0))
        return " "

    return " ".join(_TAG.sub(replace, text).split()), dropped


def unknown_tags(text: str, known: frozenset[str] | tuple[str, ...]) -> list[str]:
    """The ``[tags]`` of ``text`` that will be skipped: neither a ``[pause]`` nor one of ``known`` (each once, in
    order), so an editor can say so while the user types, before anything is synthesised."""
    known = frozenset(known)
    seen: dict[str, None] = {}
    for match in _TAG.finditer(text):
        tag = match.group(0)
        if tag not in known and not _PAUSE.fullmatch(tag):
            seen.setdefault(tag)
    return list(seen)
