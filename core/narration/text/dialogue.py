"""Quoted speech in a paragraph: where it starts and ends, so that a dialogue voice can read it.

Quotes are “…”, "…" (straight quotes alternate), «…» (and »…« as German prints them), „…“ and 「…」/『…』. Inside a
quote only its own closing mark ends it; a quote still open at the end of the paragraph runs to the end (the next
paragraph of a long speech opens again with its own mark). A quoted run counts as speech when it has sentence
punctuation inside it or at least :data:`MIN_SPEECH_WORDS` words, so scare quotes and titles ("the so-called
“experts”", “The Raven”) stay with the narrator.
"""

from __future__ import annotations

import re

PAIRS = {"“": "”", "«": "»", "»": "«", "„": "“", "「": "」", "『": "』", '"': '"'}
"""Opening mark → its closing mark."""
MIN_SPEECH_WORDS = 4
PART_PAUSE_S = 0.1
"""The pause between the parts of a sentence cut at its quotes (speech, then its tag)."""
_LEADING_PUNCTUATION = re.compile(r"^\s*[,;:.!?…、，]+\s*")
_SPEECH_PUNCTUATION = re.compile(r"[.,!?…;:—。、！？，．؟]")


def quote_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every quoted run that reads as speech, marks included."""
    spans: list[tuple[int, int]] = []
    start, closer = -1, ""
    for index, char in enumerate(text):
        if start < 0:
            if char in PAIRS and (char != "»" or "«" in text[index:]):  # » opens only where a « closes it later
                start, closer = index, PAIRS[char]
        elif char == closer:
            spans.append((start, index + 1))
            start = -1
    if start >= 0:
        spans.append((start, len(text)))
    return [(s, e) for s, e in spans if _is_speech(text[s:e])]


def _is_speech(run: str) -> bool:
    inner = run[1:-1] if len(run) > 1 else run
    return bool(_SPEECH_PUNCTUATION.search(inner)) or len(inner.split()) >= MIN_SPEECH_WORDS


def split_quoted(text: str, spans: list[tuple[int, int]]) -> list[tuple[str, bool]]:
    """``text`` cut at the edges of ``spans``: ``(part, inside a quote)`` in order (parts without letters or digits
    join their neighbour, so a lone "—" or ", " is never a segment)."""
    parts: list[tuple[str, bool]] = []
    cursor = 0
    for start, end in spans:
        if start > cursor:
            parts.append((text[cursor:start], False))
        parts.append((text[start:end], True))
        cursor = end
    if cursor < len(text):
        parts.append((text[cursor:], False))
    out: list[tuple[str, bool]] = []
    for part, quoted in parts:
        if not any(ch.isalnum() for ch in part):
            if out:
                out[-1] = (out[-1][0] + part, out[-1][1])
            elif parts:
                out.append((part, quoted))
            continue
        if out and not any(ch.isalnum() for ch in out[-1][0]):
            part = out.pop()[0] + part
        out.append((part, quoted))
    tidy: list[tuple[str, bool]] = []
    for part, quoted in out:
        lead = _LEADING_PUNCTUATION.match(part)
        if tidy and lead and lead.end() < len(part):  # ", dit-il." → the comma ends the quote before it
            tidy[-1] = (tidy[-1][0] + lead.group(0).strip(), tidy[-1][1])
            part = part[lead.end() :]
        tidy.append((part, quoted))
    return [(" ".join(p.split()), q) for p, q in tidy if p.strip()]


def sentence_parts(paragraph: str, sentences: list[str]) -> list[list[tuple[str, bool]]]:
    """For each sentence of ``paragraph`` (in order, as the splitter gave them, whitespace folded), its parts inside
    and outside quotes. The quotes are found on the whole paragraph, so a speech of several sentences is quoted in
    each of them."""
    paragraph = " ".join(paragraph.split())
    spans = quote_spans(paragraph)
    out: list[list[tuple[str, bool]]] = []
    cursor = 0
    for sentence in sentences:
        start = paragraph.find(sentence, cursor)
        if start < 0:  # the splitter changed the text: no quote information for this one
            out.append([(sentence, False)])
            continue
        end = cursor = start + len(sentence)
        local = [(max(s, start) - start, min(e, end) - start) for s, e in spans if max(s, start) < min(e, end)]
        out.append(split_quoted(sentence, local) if local else [(sentence, False)])
    return out
