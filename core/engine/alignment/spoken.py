"""Which spoken words each written word became: "Dr. Smith paid $5" spoken "Doctor Smith paid five dollars".

The aligner places the words as they are spoken; times are reported on the words as they are written. The two
word lists are matched with :class:`difflib.SequenceMatcher` over lower-cased words: a written word matched to an
equal spoken word covers that one; written words that differ (``Dr`` / ``Doctor``, ``5`` / ``five dollars``) share
the spoken words between their matched neighbours, in order; spoken words with no written word between matched
neighbours (a unit spoken after a number) belong to the written word before them.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

Span = tuple[int, int]
"""The spoken words ``[first, end)`` a written word covers."""


def spoken_spans(written: Sequence[str], spoken: Sequence[str]) -> list[Span | None]:
    """For each written word, the spoken words it covers, ``None`` for a written word that was not spoken."""
    spans: list[Span | None] = [None] * len(written)
    leading: int | None = None  # spoken words before any written one: the first written word spoken takes them
    matcher = difflib.SequenceMatcher(None, [w.lower() for w in written], [w.lower() for w in spoken], autojunk=False)
    for tag, w_first, w_end, s_first, s_end in matcher.get_opcodes():
        if tag == "equal":
            for offset in range(w_end - w_first):
                spans[w_first + offset] = (s_first + offset, s_first + offset + 1)
        elif tag == "replace":
            count, said = w_end - w_first, s_end - s_first
            for offset in range(count):  # in order, as evenly as the counts allow
                first, end = s_first + offset * said // count, s_first + (offset + 1) * said // count
                if end > first:
                    spans[w_first + offset] = (first, end)
        elif tag == "insert":
            before = next((i for i in range(w_first - 1, -1, -1) if spans[i] is not None), None)
            if before is None:
                leading = s_first
            else:
                spans[before] = (spans[before] or (s_first, s_first))[0], s_end
            continue
        if leading is not None:
            first_spoken = next((i for i in range(w_first, w_end) if spans[i] is not None), None)
            if first_spoken is not None:
                spans[first_spoken] = (leading, (spans[first_spoken] or (leading, leading))[1])
                leading = None
    return spans
