"""The quotations of a book's paragraphs, as attribution sees them: each quoted run with its paragraph and span, and
whether it stays open at the paragraph's end (a speech that goes on in the next paragraph, each opening a new quote).

The marks are those :mod:`core.narration.text.dialogue` knows (“…”, "…", «…», »…«, „…“, 「…」, 『…』); a book printed
with single quotes as its speech marks (‘…’, British printing) is recognised by its paragraphs opening with ‘, and
then ‘…’ is speech too: a ’ closes it only where no letter follows (the apostrophe of "don’t" does not).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from core.narration.text.dialogue import PAIRS, quote_spans

_SINGLE_OPEN = re.compile(r"(?:^|(?<=[\s(—–-]))‘")
_SINGLE_CLOSE = re.compile(r"’(?![A-Za-zÀ-ÿ])")


@dataclass(frozen=True)
class Quote:
    paragraph: int
    start: int
    end: int
    """Span in the paragraph's text, marks included."""
    open_end: bool
    """The quote runs to the paragraph's end without its closing mark (the speech goes on)."""
    text: str


def uses_single_quotes(paragraphs: list[str]) -> bool:
    """Whether speech is printed in single quotes: more paragraphs open with ‘ than with a double mark."""
    single = sum(1 for p in paragraphs if p.lstrip().startswith("‘"))
    double = sum(1 for p in paragraphs if p.lstrip()[:1] in ("“", '"', "«", "„", "»", "「"))
    return single > max(3, double)


def single_quote_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    position = 0
    while (match := _SINGLE_OPEN.search(text, position)) is not None:
        start = match.start() + match.group(0).index("‘")
        close = _SINGLE_CLOSE.search(text, start + 1)
        end = close.end() if close is not None else len(text)
        spans.append((start, end))
        position = end
    return spans


def all_quote_spans(text: str) -> list[tuple[int, int]]:
    """Every quoted run, speech or not (:func:`quote_spans`'s scan without its test for speech)."""
    spans: list[tuple[int, int]] = []
    start, closer = -1, ""
    for index, char in enumerate(text):
        if start < 0:
            if char in PAIRS and (char != "»" or "«" in text[index:]):
                start, closer = index, PAIRS[char]
        elif char == closer:
            spans.append((start, index + 1))
            start = -1
    if start >= 0:
        spans.append((start, len(text)))
    return spans


Tagged = Callable[[str, str], bool]
"""Whether the narration after a quote (first argument) or before it (second) tags it as speech."""


def find_quotes(paragraphs: list[str], tagged: Tagged | None = None) -> list[Quote]:
    """The speech of every paragraph. A short quoted run that does not read as speech by itself (``»Karl«``,
    ``„Der Chef“``) still is when a speech verb tags it (``»Karl«, sagte Anna``)."""
    single = uses_single_quotes(paragraphs)
    quotes = []
    for index, text in enumerate(paragraphs):
        if single:
            spans = single_quote_spans(text)
        else:
            speech = set(quote_spans(text))
            spans = [
                (s, e)
                for s, e in all_quote_spans(text)
                if (s, e) in speech or (tagged is not None and tagged(text[e : e + 60], text[max(0, s - 60) : s]))
            ]
        for start, end in spans:
            run = text[start:end]
            closed = end < len(text) or (len(run) > 1 and run[-1] in '”"»«“’」』')
            quotes.append(Quote(index, start, end, not closed, run))
    return quotes
