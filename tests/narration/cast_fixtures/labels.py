"""Loader for the labelled quote-attribution fixtures in this folder.

``load(path)`` returns ``(clean_text, cast, labels)``:

* ``clean_text`` -- the file text with the ``#`` header lines (and the one
  blank line that follows them) removed and every ``{Speaker|cue}`` label
  deleted.  Nothing else is touched (line breaks, spaces, quote marks).
* ``cast`` -- ``{canonical_name: {"gender": "f", "aliases": [...]}}`` from
  the ``# cast:`` header line.
* ``labels`` -- list of ``(offset, speaker, cue)`` in file order, where
  ``offset`` indexes ``clean_text`` at the point the label was removed:
  right after a closing quote mark, or at the end of a paragraph for the
  unclosed paragraphs of a multi-paragraph speech.

``load_full(path)`` returns a :class:`Fixture` that also carries the
``# cues:`` header list; ``validate(path)`` returns a list of problems.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

LABEL_RE = re.compile(r"\{([^{}|\n]+)\|([a-z_]+)\}")
CUES = frozenset({"explicit", "pronoun", "continuation", "beat", "implicit", "first_person", "other"})
# Every mark that can close a quotation in the fixtures:
# English ” ’ ", German “ ‘ « ‹ (for „…“ ‚…‘ »…« ›…‹), French ».
CLOSING_MARKS = '”’"“‘»«›‹'

FIXTURE_DIR = Path(__file__).resolve().parent


class Fixture(NamedTuple):
    path: Path
    text: str
    cast: dict
    cues: list
    labels: list


def _split_top_level(s: str) -> list[str]:
    parts, buf, depth = [], "", 0
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(buf.strip())
            buf = ""
        else:
            buf += ch
    if buf.strip():
        parts.append(buf.strip())
    return parts


def parse_cast(value: str) -> dict:
    cast = {}
    for entry in _split_top_level(value):
        m = re.fullmatch(r"(.+?)\s*\(([^;()]+)(?:;\s*aliases:\s*([^()]*))?\)", entry)
        if not m:
            raise ValueError(f"bad cast entry: {entry!r}")
        name, gender, aliases = m.group(1).strip(), m.group(2).strip(), m.group(3)
        cast[name] = {
            "gender": gender,
            "aliases": [a.strip() for a in aliases.split(",") if a.strip()] if aliases else [],
        }
    return cast


def _split_header(raw: str) -> tuple[list[str], str]:
    lines = raw.split("\n")
    header = []
    while lines and lines[0].startswith("#"):
        header.append(lines.pop(0))
    if header and lines and lines[0] == "":
        lines.pop(0)  # the single blank line separating header and text
    return header, "\n".join(lines)


def load_full(path) -> Fixture:
    path = Path(path)
    raw = path.read_text(encoding="utf-8")
    header, body = _split_header(raw)
    cast, cues = {}, []
    for line in header:
        key, _, value = line.lstrip("#").strip().partition(":")
        if key.strip() == "cast":
            cast = parse_cast(value)
        elif key.strip() == "cues":
            cues = [c.strip() for c in value.split(",") if c.strip()]
    out, labels, pos = [], [], 0
    clean_len = 0
    for m in LABEL_RE.finditer(body):
        chunk = body[pos : m.start()]
        out.append(chunk)
        clean_len += len(chunk)
        labels.append((clean_len, m.group(1).strip(), m.group(2)))
        pos = m.end()
    out.append(body[pos:])
    return Fixture(path, "".join(out), cast, cues, labels)


def load(path):
    fx = load_full(path)
    return fx.text, fx.cast, fx.labels


def validate(path) -> list[str]:
    """Problems with a fixture file (empty list when it is well formed)."""
    fx = load_full(path)
    problems = []
    text = fx.text
    if "{" in text or "}" in text:
        problems.append("stray brace left in clean text (malformed label?)")
    if not fx.cast:
        problems.append("no # cast: header")
    used = set()
    for off, speaker, cue in fx.labels:
        where = f"offset {off} ({text[max(0, off - 30) : off]!r})"
        used.add(cue)
        if speaker not in fx.cast:
            problems.append(f"{where}: speaker {speaker!r} not in cast")
        if cue not in CUES:
            problems.append(f"{where}: unknown cue {cue!r}")
        after_mark = off > 0 and text[off - 1] in CLOSING_MARKS
        at_par_end = text[off : off + 2] == "\n\n" or text[off:].strip() == ""
        if not (after_mark or at_par_end):
            problems.append(f"{where}: label neither after a closing mark nor at paragraph end")
    if set(fx.cues) != used:
        problems.append(f"# cues header {sorted(fx.cues)} != cues used {sorted(used)}")
    return problems


def fixture_paths():
    return sorted(FIXTURE_DIR.glob("*.txt"))


if __name__ == "__main__":  # quick summary: python labels.py
    from collections import Counter

    total = Counter()
    for p in fixture_paths():
        fx = load_full(p)
        counts = Counter(cue for _, _, cue in fx.labels)
        total.update(counts)
        paragraphs = len([x for x in fx.text.split("\n\n") if x.strip()])
        bad = validate(p)
        print(
            f"{p.name:32} paras={paragraphs:3} labels={len(fx.labels):3} "
            + " ".join(f"{k}={v}" for k, v in sorted(counts.items()))
            + ("" if not bad else f"  PROBLEMS: {bad}")
        )
    print(f"{'TOTAL':32} labels={sum(total.values())} " + " ".join(f"{k}={v}" for k, v in sorted(total.items())))
