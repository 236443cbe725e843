"""A take's transcript against the words it should say: word error rate, the words missed and the words added.

Both sides are normalised the same way before they are aligned, so that only a difference a listener hears counts:
the text is first given its spoken form in the project's language (:func:`core.narration.text.spoken_form`: numbers,
dates, currency, units and abbreviations in words, as the model was given them, so "3" and "three" agree), then
Unicode NFKC and case folding; punctuation goes (an apostrophe inside a word stays: "don't"), hyphens and dashes split
words, and digits that are left are spelt out with ``num2words`` where it knows the language. Chinese and Japanese,
written without spaces, are compared character by character.

The two word lists are aligned by Levenshtein distance over words with a backtrace, so every difference is a
substitution, a deletion (an expected word not heard) or an insertion (a word heard that is not in the text). Where
two alignments cost the same, the backtrace puts deletions late: a take cut off early loses the end of its text, and
:attr:`WordComparison.end_missing` counts those words.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass
from typing import Any

from core.narration.text import spoken_form
from core.narration.text.sentences import base_language

APOSTROPHES = "'\u2019\u2018\u02bc\u2032"
"""Apostrophes as books and recognisers write them; all read as ``'``."""
DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212/"
"""Hyphens, dashes and the slash: each splits words ("well-known" is two words, as a recogniser may write it)."""
UNSPACED = frozenset({"zh", "ja"})
"""Languages written without spaces between words: compared character by character."""
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class WordComparison:
    """How a transcript differs from its text; the word lists hold normalised words, in text order."""

    wer: float
    """Word error rate: (substitutions + deletions + insertions) / expected words; 0 when both are empty, 1 when only
    the text is empty."""
    missing: list[str]
    """Expected words not heard: deletions, and the expected side of substitutions."""
    extra: list[str]
    """Heard words not expected: insertions, and the heard side of substitutions."""
    expected_words: int
    end_missing: int
    """Expected words after the last one heard correctly: a take cut off before its end (0: the last word was
    heard)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare_words(expected: str, heard: str, language: str = "en") -> WordComparison:
    """``heard`` (a transcript) against ``expected`` (the text the take should say), in ``language`` (``en``,
    ``pt-BR``...)."""
    want, got = words_of(expected, language), words_of(heard, language)
    steps = align(want, got)
    errors = sum(op != "match" for op, _, _ in steps)
    missing = [w for op, w, _ in steps if op in ("sub", "del") and w is not None]
    extra = [h for op, _, h in steps if op in ("sub", "ins") and h is not None]
    end_missing = 0
    for op, word, _ in reversed(steps):
        if op == "match":
            break
        if word is not None:
            end_missing += 1
    wer = errors / len(want) if want else float(bool(got))
    return WordComparison(wer, missing, extra, len(want), end_missing)


def words_of(text: str, language: str = "en") -> list[str]:
    """The normalised words of ``text``: spoken form, NFKC, case-folded, without punctuation, numbers in words."""
    lang = base_language(language)
    spoken = spoken_form(text, lang) if text.strip() else text
    out = unicodedata.normalize("NFKC", spoken).casefold()
    out = _DIGITS.sub(lambda m: f" {_number_words(m.group(0), lang)} ", out)
    out = "".join(_keep(ch) for ch in out)
    words = [w.strip("'") for w in out.split()]
    words = [w for w in words if w]
    if lang in UNSPACED:
        return [ch for w in words for ch in w]
    return words


def _keep(ch: str) -> str:
    if ch in APOSTROPHES:
        return "'"
    if ch in DASHES:
        return " "
    return ch if unicodedata.category(ch)[0] in "LMN" else " "


def _number_words(digits: str, language: str) -> str:
    """Digits that the spoken form left (in a word, or too long for it) in words; the digits when ``num2words`` does
    not know the language."""
    from num2words import num2words

    try:
        return str(num2words(int(digits), lang=language))
    except (NotImplementedError, OverflowError, ValueError, TypeError, KeyError, IndexError):
        return digits


def align(expected: list[str], heard: list[str]) -> list[tuple[str, str | None, str | None]]:
    """The cheapest edit from ``expected`` to ``heard`` as steps ``(op, expected word, heard word)``, ``op`` one of
    ``match``, ``sub``, ``del`` (expected word not heard) and ``ins`` (heard word not expected), in text order.

    A (len(expected)+1) × (len(heard)+1) table of distances, then a walk back from its corner; on a tie the walk takes
    a deletion first, then the diagonal, then an insertion, which puts deletions as late in the text as the cost
    allows."""
    n, m = len(expected), len(heard)
    cost = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        cost[i][0] = i
    for j in range(m + 1):
        cost[0][j] = j
    for i in range(1, n + 1):
        row, above, word = cost[i], cost[i - 1], expected[i - 1]
        for j in range(1, m + 1):
            diagonal = above[j - 1] + (word != heard[j - 1])
            row[j] = min(diagonal, above[j] + 1, row[j - 1] + 1)
    steps: list[tuple[str, str | None, str | None]] = []
    i, j = n, m
    while i or j:
        if i and cost[i][j] == cost[i - 1][j] + 1:
            steps.append(("del", expected[i - 1], None))
            i -= 1
        elif i and j and cost[i][j] == cost[i - 1][j - 1] + (expected[i - 1] != heard[j - 1]):
            same = expected[i - 1] == heard[j - 1]
            steps.append(("match" if same else "sub", expected[i - 1], heard[j - 1]))
            i, j = i - 1, j - 1
        else:
            steps.append(("ins", None, heard[j - 1]))
            j -= 1
    steps.reverse()
    return steps
