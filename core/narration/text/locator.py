"""Where each segment's words stand in the text of the block it came from (character offsets).

A segment's text is its block's text cut into sentences, cleaned for speech on the way (NFC, symbols and emoji
dropped, brackets made parentheses), so it is usually found as it is; otherwise it is found by its letters and digits
alone, and its range is widened over the punctuation around it (quotes, the full stop), up to the next space.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence


def locate(text: str, parts: Sequence[str], cursor: int = 0) -> list[tuple[int, int] | None]:
    """``(start, end)`` in ``text`` of each of ``parts`` (in order, each after the one before), ``None`` for a part
    not found there."""
    out: list[tuple[int, int] | None] = []
    keys: tuple[str, list[int]] | None = None
    for part in parts:
        at = text.find(part, cursor) if part else -1
        if at >= 0:
            out.append((at, at + len(part)))
            cursor = at + len(part)
            continue
        if keys is None:
            keys = _letters(text)
        found = _by_letters(text, keys, part, cursor)
        out.append(found)
        if found is not None:
            cursor = found[1]
    return out


def _letters(text: str) -> tuple[str, list[int]]:
    """``text``'s letters and digits, case-folded one by one, with the position of each in ``text``."""
    chars, where = [], []
    for index, ch in enumerate(text):
        if ch.isalnum():
            folded = ch.casefold()
            chars.append(folded if len(folded) == 1 else ch)
            where.append(index)
    return "".join(chars), where


def _by_letters(text: str, keys: tuple[str, list[int]], part: str, cursor: int) -> tuple[int, int] | None:
    key, where = keys
    needle = _letters(part)[0]
    if not needle:
        return None
    first = bisect_left(where, cursor)
    at = key.find(needle, first)
    if at < 0:
        return None
    start, end = where[at], where[at + len(needle) - 1] + 1
    while start > cursor and not text[start - 1].isspace() and not text[start - 1].isalnum():
        start -= 1
    while end < len(text) and not text[end].isspace() and not text[end].isalnum():
        end += 1
    return start, end


def split_place(source: dict | None, text: str, at: int) -> tuple[dict | None, dict | None]:
    """The places of a segment's two parts when it is split after ``at`` characters of its ``text`` (each part
    keeps its share of the range; a range that no longer matches the text's length is shared as it is)."""
    if source is None:
        return None, None
    start, end = source["start"], source["end"]
    if end - start != len(text):
        return dict(source), dict(source)
    head = len(text[:at].rstrip())
    tail = at + len(text[at:]) - len(text[at:].lstrip())
    return {**source, "end": start + head}, {**source, "start": start + tail}


def merged_place(first: dict | None, second: dict | None) -> dict | None:
    """The place of two segments merged: their joint range when they stand in the same block."""
    if first is None or second is None:
        return first or second
    same = all(first.get(k) == second.get(k) for k in ("file", "block"))
    return {**first, "end": second["end"]} if same else dict(first)
