"""Subtitles: SRT and WebVTT, one cue per segment, timed on the exported audio. A cue can name who speaks it (a
project's cast, when the export asks for it): WebVTT's own voice span (``<v Emma>…``), which players show or style,
and in SRT, which has none, the name before the words (``Emma: …``).

Both formats are a few lines of text per cue; writing them needs no library (``srt`` and ``webvtt-py`` were
considered: each would cover one format and add a dependency for what :func:`srt` and :func:`webvtt` do here).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.engine import ChatterboxError, write_text_atomic

SUBTITLE_SUFFIXES = (".srt", ".vtt")


@dataclass(frozen=True)
class Cue:
    start: float
    end: float
    text: str
    speaker: str | None = None
    """Who speaks the cue (``None``: the narrator, or not asked for)."""


def _stamp(seconds: float, separator: str) -> str:
    ms = max(0, round(seconds * 1000))
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    secs, ms = divmod(ms, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{separator}{ms:03d}"


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("-->", "->")  # a blank line or an arrow would end the cue


def srt(cues: list[Cue]) -> str:
    def words(c: Cue) -> str:
        return f"{_one_line(c.speaker)}: {_one_line(c.text)}" if c.speaker else _one_line(c.text)

    return "".join(
        f"{i}\n{_stamp(c.start, ',')} --> {_stamp(c.end, ',')}\n{words(c)}\n\n" for i, c in enumerate(cues, 1)
    )


def webvtt(cues: list[Cue]) -> str:
    def escape(text: str) -> str:
        return _one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    def words(c: Cue) -> str:
        return f"<v {escape(c.speaker)}>{escape(c.text)}" if c.speaker else escape(c.text)

    body = "".join(
        f"{i}\n{_stamp(c.start, '.')} --> {_stamp(c.end, '.')}\n{words(c)}\n\n" for i, c in enumerate(cues, 1)
    )
    return "WEBVTT\n\n" + body


def write_subtitles(path: Path, cues: list[Cue]) -> None:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUBTITLE_SUFFIXES:
        raise ChatterboxError("subtitles.bad_suffix", name=path.name)
    try:
        write_text_atomic(path, srt(cues) if suffix == ".srt" else webvtt(cues))
    except OSError as exc:
        raise ChatterboxError("subtitles.write_failed", path=str(path), reason=str(exc.strerror or exc)) from exc
