"""Word times for the exports that show words (a read-along book highlighting word by word, word-timed subtitles).

A take's words (:attr:`~core.narration.projects.project.Take.alignment`) are read here and nowhere else: the placed
words in the text's order, each with its start and end in seconds of the take's own audio. Each is found in the
text the reader sees, in order, case aside and punctuation at its edges aside (:func:`find_words`), and its time is
carried into the exported audio the way the sentence's own place is: from where the segment's speech starts,
scaled by the segment's exported speech length over its take's length (:func:`export_scale`), so a pace the export
applies moves the words exactly as it moves the sentence. A take without usable words (not aligned, an aligner
error, times that go backwards, a word not found in the text) gives ``None``: the export shows that segment as a
sentence and counts it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_NO_SPACES = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
"""Scripts written without spaces between words (Thai, Lao, Myanmar, Khmer, CJK): a word there needs no edge."""
_NO_SPACE = re.compile(f"[{_NO_SPACES}]")
_APOSTROPHES = "'\u2019\u02bc"
"""A plain and a typographic apostrophe are the same letter of a word ("don't", "don’t")."""


@dataclass(frozen=True)
class TakeWord:
    word: str
    start: float
    end: float
    """Seconds from the start of the take's audio."""


def take_words(take: Any) -> list[TakeWord] | None:
    """The placed words of ``take`` in the text's order (``None``: not aligned, an aligner error, no word placed,
    or times that make no sense: negative, not finite, a word ending before it starts, starts going backwards)."""
    alignment = getattr(take, "alignment", None)
    if not isinstance(alignment, dict) or alignment.get("error"):
        return None
    raw = alignment.get("words")
    if not isinstance(raw, list) or not raw:
        return None
    out: list[TakeWord] = []
    for entry in raw:
        try:
            word, start, end = entry
            start, end = float(start), float(end)
        except (TypeError, ValueError):
            return None
        if not isinstance(word, str) or not _core(word):
            return None
        if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end < start:
            return None
        if out and start < out[-1].start:
            return None
        out.append(TakeWord(word, start, end))
    return out


def find_words(text: str, words: Sequence[str]) -> list[tuple[int, int]] | None:
    """Where each of ``words`` stands in ``text``, in order: the first place after the previous word where it is
    written as a word of its own (letters and digits not running on before or after it, except in scripts written
    without spaces), upper or lower case, without the punctuation at its edges; ``None`` when one is not found."""
    places = place_words(text, words)
    return None if any(place is None for place in places) else [place for place in places if place is not None]


def place_words(text: str, words: Sequence[str]) -> list[tuple[int, int] | None]:
    """As :func:`find_words`, each word found or ``None``: a word not found is passed over, the next one searched
    for from where the last one found ends (the studio's line being heard shows what it can)."""
    out: list[tuple[int, int] | None] = []
    at = 0
    for word in words:
        core = _core(word)
        found = None
        if core:
            pattern = "".join(f"[{_APOSTROPHES}]" if ch in _APOSTROPHES else re.escape(ch) for ch in core)
            for match in re.finditer(pattern, text[at:], re.IGNORECASE):
                start, end = at + match.start(), at + match.end()
                if _bounded(text, start, end):
                    found = (start, end)
                    break
        out.append(found)
        if found is not None:
            at = found[1]
    return out


def export_scale(take: Any, speech_samples: int) -> float | None:
    """Samples of the exported speech per second of the take: the segment's exported speech length (its pace
    applied) over the take's own length, as the sentence's own clip measures it (``None``: no length to scale)."""
    seconds = float(getattr(take, "seconds", 0.0) or 0.0)
    if seconds <= 0 or speech_samples <= 0:
        return None
    return speech_samples / seconds


def _core(word: str) -> str:
    """The word without punctuation (or spaces) at its edges."""
    start, end = 0, len(word)
    while start < end and not _is_word_char(word[start]):
        start += 1
    while end > start and not _is_word_char(word[end - 1]):
        end -= 1
    return word[start:end]


def _is_word_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LNM"


def _bounded(text: str, start: int, end: int) -> bool:
    """The match is a word of its own: nothing of a word runs on at either edge (in a script with spaces)."""
    return _apart(text, start - 1, start) and _apart(text, end, end - 1)


def _apart(text: str, outside: int, inside: int) -> bool:
    """The character just outside a match (at ``outside``) does not run a word on into it (at ``inside``)."""
    if not 0 <= outside < len(text) or not _is_word_char(text[outside]):
        return True
    return bool(_NO_SPACE.match(text[outside]) or _NO_SPACE.match(text[inside]))
