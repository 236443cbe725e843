"""``python -m core bench-cast --annotated DIR [DIR ...]``: how often the attribution names the right speaker, on
novels whose every quotation a person annotated — the Project Dialogism Novel Corpus's layout (Vishnubhotla et al.,
LREC 2022; ``git clone https://github.com/Priya22/project-dialogism-novel-corpus``, then pass ``data/*``).

Each folder holds ``novel_text.txt``, ``quotation_info.csv`` (``quoteByteSpans`` — character offsets into the text,
``speaker``, ``quoteType``: Explicit, Anaphoric or Implicit) and ``character_info.csv`` (``Main Name``, ``Aliases``
as a Python set or list literal). The text is split into paragraphs at blank lines, as :mod:`core.narration`
imports a text book, and attributed as a project would be; each annotated quotation is matched to the quote of
ours that covers its first character. It is right when the character we name is the annotated speaker: our name or
one of our aliases is among the annotation's names for that person (a first-person narrator, our ``I``, is PDNC's
``_narr``). A quotation we find no speaker for, or do not find at all, is wrong.

Also reported, for scale: always naming the book's most frequent speaker, and the speaker two quotations back.
"""

from __future__ import annotations

import ast
import csv
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from core.narration.attribution import Attribution, attribute

TYPES = ("Explicit", "Anaphoric", "Implicit")
_PARAGRAPH = re.compile(r"(?:(?!\n[ \t]*\n).)+", re.S)


@dataclass(frozen=True)
class Annotated:
    start: int
    speaker: str
    kind: str


def read_novel(folder: Path) -> tuple[str, list[Annotated], dict[str, set[str]]]:
    """The text, its annotated quotations (in order) and each speaker's names, from a PDNC novel folder."""
    folder = Path(folder)
    text = (folder / "novel_text.txt").read_text("utf-8")
    csv.field_size_limit(1 << 24)
    quotes: list[Annotated] = []
    with open(folder / "quotation_info.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            spans = ast.literal_eval(row["quoteByteSpans"])
            if spans:
                quotes.append(Annotated(min(int(s) for s, _e in spans), row["speaker"], row.get("quoteType") or ""))
    names: dict[str, set[str]] = {}
    with open(folder / "character_info.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            try:
                aliases = set(ast.literal_eval(row.get("Aliases") or "[]"))
            except (ValueError, SyntaxError):
                aliases = set()
            main = row["Main Name"]
            names[main] = {_plain(name) for name in aliases | {main}}
    quotes.sort(key=lambda q: q.start)
    return text, quotes, names


def score_novel(folder: Path) -> dict:
    """Our accuracy on one annotated novel: overall and per quotation type, with the two baselines."""
    text, annotated, names = read_novel(folder)
    paragraphs, offsets = [], []
    for match in _PARAGRAPH.finditer(text):
        if match.group(0).strip():
            paragraphs.append(match.group(0).replace("\n", " "))  # same length: offsets stay valid
            offsets.append(match.start())
    started = time.perf_counter()
    found = attribute(paragraphs, "en")
    seconds = time.perf_counter() - started
    ours = _our_quotes(found, offsets)
    right: dict[str, list[bool]] = defaultdict(list)
    speakers = [q.speaker for q in annotated]
    frequent = Counter(speakers).most_common(1)[0][0] if speakers else ""
    for quote in annotated:
        speaker = _speaker_at(ours, quote.start)
        theirs = names.get(quote.speaker, {_plain(quote.speaker)})
        ok = speaker is not None and bool(_our_names(found, speaker) & theirs)
        right[quote.kind].append(ok)
        right["all"].append(ok)
    count = len(annotated)
    back_two = sum(speakers[i] == speakers[i - 2] for i in range(2, count))
    return {
        "novel": Path(folder).name,
        "quotations": count,
        "accuracy": _share(right["all"]),
        "by_type": {kind: {"quotations": len(right[kind]), "accuracy": _share(right[kind])} for kind in TYPES},
        "most_frequent_speaker": round(speakers.count(frequent) / count, 3) if count else 0.0,
        "two_quotes_back": round(back_two / count, 3) if count else 0.0,
        "seconds": round(seconds, 3),
    }


def score_novels(folders: list[Path]) -> dict:
    """Each novel's score and the totals over all their quotations."""
    novels = [score_novel(folder) for folder in folders]
    total = sum(n["quotations"] for n in novels)

    def pooled(get) -> float:
        return round(sum(get(n) * n["quotations"] for n in novels) / total, 3) if total else 0.0

    by_type = {}
    for kind in TYPES:
        quotes = sum(n["by_type"][kind]["quotations"] for n in novels)
        hits = sum(n["by_type"][kind]["accuracy"] * n["by_type"][kind]["quotations"] for n in novels)
        by_type[kind] = {"quotations": quotes, "accuracy": round(hits / quotes, 3) if quotes else 0.0}
    return {
        "novels": novels,
        "quotations": total,
        "accuracy": pooled(lambda n: n["accuracy"]),
        "by_type": by_type,
        "most_frequent_speaker": pooled(lambda n: n["most_frequent_speaker"]),
        "two_quotes_back": pooled(lambda n: n["two_quotes_back"]),
    }


def _our_quotes(found: Attribution, offsets: list[int]) -> list[tuple[int, int, int | None]]:
    """Our quotes as (start, end, speaker) in the text's offsets, in order."""
    return sorted((offsets[q.paragraph] + q.start, offsets[q.paragraph] + q.end, q.speaker) for q in found.quotes)


def _speaker_at(ours: list[tuple[int, int, int | None]], position: int) -> int | None:
    low, high = 0, len(ours)
    while low < high:  # the last quote that starts at or before the position
        middle = (low + high) // 2
        if ours[middle][0] <= position:
            low = middle + 1
        else:
            high = middle
    if low and ours[low - 1][0] <= position < ours[low - 1][1]:
        return ours[low - 1][2]
    return None


def _our_names(found: Attribution, speaker: int) -> set[str]:
    character = found.characters[speaker]
    names = {_plain(character.name)} | {_plain(alias) for alias in character.aliases}
    if character.name == "I" or "I" in character.aliases:
        names.add("narr")  # PDNC names a first-person narrator "_narr"
    return names


def _plain(name: str) -> str:
    return re.sub(r"[^a-z ]", "", " ".join(name.lower().replace("_", " ").split())).strip()


def _share(values: list[bool]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0
