"""Subtitles: SRT and WebVTT, one cue per segment, timed on the exported audio. A cue can name who speaks it (a
project's cast, when the export asks for it): WebVTT's own voice span (``<v Emma>…``), which players show or style,
and in SRT, which has none, the name before the words (``Emma: …``).

With word timing (a cue carrying its words' times), WebVTT keeps one cue per segment and writes a timestamp before
each word after the first (``Hello <00:00:01.200>world``: the karaoke-style cue WebVTT defines, whose players show
the words said so far, or style them with ``::cue(:past)``/``::cue(:future)``); SRT, which has no such thing, gets a
cue per word, or per group of words (``words_per_cue``), each from its first word's start to the next group's (the
first from the segment's start, the last to its end), the text between two words cut at its last space (a comma
stays with the word before, an opening quote goes with the word after). A timestamp must lie strictly inside its
cue and after the one before it (in whole milliseconds, as written); a segment whose words cannot be so keeps its one
cue, as does a segment without words.

Both formats are a few lines of text per cue; writing them needs no library (``srt`` and ``webvtt-py`` were
considered: each would cover one format and add a dependency for what :func:`srt` and :func:`webvtt` do here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.engine import ChatterboxError, write_text_atomic

SUBTITLE_SUFFIXES = (".srt", ".vtt")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class CueWord:
    start: int
    end: int
    """Where the word stands in its cue's text."""
    time: float
    """Seconds in the exported audio where it is said."""


@dataclass(frozen=True)
class Cue:
    start: float
    end: float
    text: str
    speaker: str | None = None
    """Who speaks the cue (``None``: the narrator, or not asked for)."""
    words: tuple[CueWord, ...] = ()
    """Its words' places and times, in order (empty: no word timing)."""


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def _stamp(seconds: float, separator: str) -> str:
    ms = _ms(seconds)
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    secs, ms = divmod(ms, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{separator}{ms:03d}"


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("-->", "->")  # a blank line or an arrow would end the cue


def _inline(text: str) -> str:
    """A part of a cue's line: its white space collapsed, but kept at its edges (a word follows)."""
    return _SPACES.sub(" ", text).replace("-->", "->")


def timed(cue: Cue) -> bool:
    """The cue's words can be written with their times: every word after the first said strictly after the one
    before it and strictly inside the cue, in whole milliseconds."""
    if not cue.words:
        return False
    stamps = [_ms(cue.start), *(_ms(w.time) for w in cue.words[1:]), _ms(cue.end)]
    return all(later > earlier for earlier, later in zip(stamps, stamps[1:]))


def words_missing(cues: list[Cue]) -> int:
    """Cues that keep their sentence's timing in a word-timed file."""
    return sum(1 for c in cues if not timed(c))


def _cuts(cue: Cue) -> list[int]:
    """Where the text of each word after the first begins: after the last space before it, so that punctuation
    before a word (an opening quote) goes with it and punctuation after one (a comma) with the word before."""
    out = []
    for before, word in zip(cue.words, cue.words[1:]):
        between = cue.text[before.end : word.start]
        spaces = [k for k, ch in enumerate(between) if ch.isspace()]
        out.append(before.end + spaces[-1] + 1 if spaces else word.start)
    return out


def srt(cues: list[Cue], words_per_cue: int | None = None) -> str:
    def line(text: str, speaker: str | None) -> str:
        return f"{_one_line(speaker)}: {_one_line(text)}" if speaker else _one_line(text)

    entries: list[tuple[float, float, str]] = []
    for c in cues:
        if words_per_cue is None or not timed(c):
            entries.append((c.start, c.end, line(c.text, c.speaker)))
            continue
        firsts = list(range(0, len(c.words), words_per_cue))
        cuts = [0, *_cuts(c)]
        for index, first in enumerate(firsts):
            last = index == len(firsts) - 1
            begin = c.start if index == 0 else c.words[first].time
            end = c.end if last else c.words[firsts[index + 1]].time
            text = c.text[cuts[first] : len(c.text) if last else cuts[firsts[index + 1]]]
            entries.append((begin, end, line(text, c.speaker if index == 0 else None)))
    return "".join(
        f"{i}\n{_stamp(start, ',')} --> {_stamp(end, ',')}\n{text}\n\n"
        for i, (start, end, text) in enumerate(entries, 1)
    )


def webvtt(cues: list[Cue], words: bool = False) -> str:
    def escape(text: str, inline: bool = False) -> str:
        text = _inline(text) if inline else _one_line(text)
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    def payload(c: Cue) -> str:
        if words and timed(c):
            parts, at = [], 0
            for word, cut in zip(c.words[1:], _cuts(c)):
                parts += [escape(c.text[at:cut], inline=True), f"<{_stamp(word.time, '.')}>"]
                at = cut
            parts.append(escape(c.text[at:], inline=True))
            text = "".join(parts).strip()
        else:
            text = escape(c.text)
        return f"<v {escape(c.speaker)}>{text}" if c.speaker else text

    body = "".join(
        f"{i}\n{_stamp(c.start, '.')} --> {_stamp(c.end, '.')}\n{payload(c)}\n\n" for i, c in enumerate(cues, 1)
    )
    return "WEBVTT\n\n" + body


def write_subtitles(path: Path, cues: list[Cue], words_per_cue: int | None = None) -> None:
    """Write ``cues`` to ``path`` (``.srt`` or ``.vtt``); ``words_per_cue``: word timing (WebVTT: a timestamp
    before each word; SRT: a cue per this many words), ``None``: a cue per segment."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUBTITLE_SUFFIXES:
        raise ChatterboxError("subtitles.bad_suffix", name=path.name)
    text = srt(cues, words_per_cue) if suffix == ".srt" else webvtt(cues, words_per_cue is not None)
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise ChatterboxError("subtitles.write_failed", path=str(path), reason=str(exc.strerror or exc)) from exc
