"""Chapter markers inside an exported file (``mutagen``): ID3 ``CHAP``/``CTOC`` frames in MP3, ``CHAPTERnnn`` Vorbis
comments (the Ogg chapter convention players read) in FLAC, OGG Vorbis and Opus. MP4/M4B chapters are written by the
encoder with the file's index (:meth:`core.engine.AudioEncoder.set_chapters`) and read here. WAV has no chapter
standard that players read; its chapters are in the exported chapter list instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ChapterMark:
    title: str
    start: float
    end: float


_VORBIS = (".flac", ".ogg", ".opus")
_MP4 = (".m4b", ".m4a")


def supports_chapters(suffix: str) -> bool:
    return suffix.lower() in (".mp3", *_VORBIS, *_MP4)


def write_chapter_marks(path: Path, marks: list[ChapterMark], tags: dict[str, str]) -> None:
    """Add chapters (and, for MP3, the text tags again in UTF-8: libsndfile writes ID3 text as Latin-1)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".mp3":
        _id3(path, marks, tags)
    elif suffix in _VORBIS and marks:
        _vorbis(path, marks)


def _id3(path: Path, marks: list[ChapterMark], tags: dict[str, str]) -> None:
    from mutagen.id3 import CHAP, CTOC, ID3, TALB, TIT2, TPE1, TRCK, CTOCFlags, ID3NoHeaderError

    try:
        id3 = ID3(path)
    except ID3NoHeaderError:
        id3 = ID3()
    for frame, name in ((TIT2, "title"), (TALB, "album"), (TPE1, "artist"), (TRCK, "tracknumber")):
        if tags.get(name):
            id3.setall(frame.__name__, [frame(encoding=3, text=[tags[name]])])
    if marks:
        ids = [f"ch{i}" for i in range(len(marks))]
        id3.add(
            CTOC(
                element_id="toc",
                flags=CTOCFlags.TOP_LEVEL | CTOCFlags.ORDERED,
                child_element_ids=ids,
                sub_frames=[TIT2(encoding=3, text=[tags.get("album") or "Chapters"])],
            )
        )
        for element, mark in zip(ids, marks):
            id3.add(
                CHAP(
                    element_id=element,
                    start_time=round(mark.start * 1000),
                    end_time=round(mark.end * 1000),
                    sub_frames=[TIT2(encoding=3, text=[mark.title])],
                )
            )
    id3.save(path)


def _vorbis(path: Path, marks: list[ChapterMark]) -> None:
    import mutagen

    audio = mutagen.File(path)
    for number, mark in enumerate(marks, 1):
        audio[f"CHAPTER{number:03d}"] = _clock(mark.start)
        audio[f"CHAPTER{number:03d}NAME"] = mark.title
    audio.save()


def _clock(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def read_chapter_marks(path: Path) -> list[tuple[str, float]]:
    """The chapters a file holds as (title, start seconds): what a player would list (used by the tests too)."""
    import mutagen

    audio = mutagen.File(path)
    if audio is None or audio.tags is None:
        return []
    if Path(path).suffix.lower() in _MP4:
        return [(str(c.title), float(c.start)) for c in (getattr(audio, "chapters", None) or [])]
    if Path(path).suffix.lower() == ".mp3":
        chaps = sorted(audio.tags.getall("CHAP"), key=lambda c: c.start_time)
        return [(str(c.sub_frames["TIT2"].text[0]), c.start_time / 1000) for c in chaps]
    out = []
    number = 1
    while f"CHAPTER{number:03d}" in audio.tags:
        h, m, s = audio.tags[f"CHAPTER{number:03d}"][0].split(":")
        out.append((audio.tags[f"CHAPTER{number:03d}NAME"][0], int(h) * 3600 + int(m) * 60 + float(s)))
        number += 1
    return out
