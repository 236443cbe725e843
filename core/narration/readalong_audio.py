"""The audio of a read-along book: one MP3 or AAC (``.m4a``) file per chapter, streamed, and where each sentence is.

A chapter's file is its segments' chosen takes at their pace, each followed by its pause (none after the chapter's
last), encoded block by block as they are read (memory flat in the chapter's length) through the engine's
:class:`~core.engine.AudioEncoder`. Each file is kept in the project's ``cache/readalong/`` under a key of
everything that makes its audio (take files and keys, pace, pauses, format, bitrate): exporting again after one
sentence was fixed re-encodes only that sentence's chapter. Positions are counted in samples of the audio written,
so they hold in the decoded file (FFmpeg writes the encoder's delay into the MP3's LAME header and the MP4's edit
list, and decoders remove it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import soundfile as sf

from core.engine import SAMPLE_RATE, AudioEncoder, EncodeSettings, stretch
from core.narration.project import Project, ProjectError, Segment

CACHE_DIR = "cache/readalong"
AUDIO_FORMATS = {".mp3": "audio/mpeg", ".m4a": "audio/mp4"}
"""Audio a read-along book may hold (EPUB's core media types), suffix → media type."""
DEFAULT_BITRATE = 64_000
"""Mono speech at 64 kb/s: about 29 MB per narrated hour."""


@dataclass(frozen=True)
class Clip:
    segment: int
    """The segment's id (its number may change with edits elsewhere; the audio does not)."""
    start: int
    speech_end: int
    end: int
    """Samples: where its speech starts and ends in the chapter file, and where the next segment starts (its
    pause included; the file's end for the chapter's last)."""


@dataclass
class ChapterAudio:
    chapter: int
    path: Path
    """The encoded file in the project's cache."""
    clips: list[Clip]
    samples: int
    reused: bool
    """Taken from the cache (nothing was encoded)."""

    @property
    def seconds(self) -> float:
        return self.samples / SAMPLE_RATE


def chapter_audio(
    project: Project,
    chapter: int,
    segments: list[Segment],
    suffix: str,
    settings: EncodeSettings,
    step: Callable[[float], None] | None = None,
) -> ChapterAudio:
    """Chapter ``chapter``'s file (encoded now, or the cached one when nothing in it changed); ``step(seconds)``
    after each segment written (it may raise to cancel: nothing is left under the cache's final name)."""
    key = _key(project, segments, suffix, settings)
    folder = project.folder / CACHE_DIR
    path = folder / f"ch{chapter + 1:04d}-{key}{suffix}"
    index = path.with_suffix(".json")
    cached = _cached(path, index)
    if cached is not None:
        if step is not None:
            step(cached.samples / SAMPLE_RATE)
        cached.chapter = chapter
        return cached
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProjectError("export.folder_failed", folder=str(folder), reason=str(exc.strerror or exc)) from exc
    clips: list[Clip] = []
    cursor = 0
    with AudioEncoder(path, settings, {"title": project.chapters[chapter].title, "album": project.title}) as encoder:
        for position, segment in enumerate(segments):
            speech = _speech(project, segment)
            encoder.write(speech)
            start, cursor = cursor, cursor + speech.size
            speech_end = cursor
            if position < len(segments) - 1:
                pause = round(segment.pause_after / project.speed_of(segment) * SAMPLE_RATE)
                if pause:
                    encoder.write(_silence(pause))
                cursor += pause
            clips.append(Clip(segment.id, start, speech_end, cursor))
            if step is not None:
                step(speech.size / SAMPLE_RATE)
    _write_index(index, clips, cursor)
    for old in folder.glob(f"ch{chapter + 1:04d}-*"):  # this chapter's earlier versions
        if old not in (path, index):
            old.unlink(missing_ok=True)
    return ChapterAudio(chapter, path, clips, cursor, reused=False)


def _speech(project: Project, segment: Segment):
    take = project.rendered_take(segment)
    try:
        audio, rate = sf.read(project.path(take.file), dtype="float32", always_2d=False)
    except (OSError, sf.LibsndfileError) as exc:
        raise ProjectError(
            "export.take_unreadable", segment=project.number(segment), file=take.file, reason=str(exc)
        ) from exc
    if rate != SAMPLE_RATE or audio.ndim != 1:
        raise ProjectError("export.take_foreign", segment=project.number(segment), file=take.file)
    return stretch(audio, project.speed_of(segment))


def _silence(samples: int):
    import numpy as np

    return np.zeros(samples, np.float32)


def _key(project: Project, segments: list[Segment], suffix: str, settings: EncodeSettings) -> str:
    parts = []
    for position, segment in enumerate(segments):
        take = project.rendered_take(segment)
        pause = segment.pause_after if position < len(segments) - 1 else 0.0
        parts.append([segment.id, take.file, take.key, project.speed_of(segment), pause])
    identity = {"segments": parts, "format": suffix, "rate": settings.sample_rate, "bitrate": settings.bitrate}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def _cached(path: Path, index: Path) -> ChapterAudio | None:
    if not path.is_file() or not index.is_file():
        return None
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
        clips = [Clip(*c) for c in data["clips"]]
        return ChapterAudio(-1, path, clips, int(data["samples"]), reused=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_index(index: Path, clips: list[Clip], samples: int) -> None:
    from core.engine import write_json_atomic

    try:
        write_json_atomic(
            index, {"samples": samples, "clips": [[c.segment, c.start, c.speech_end, c.end] for c in clips]}
        )
    except OSError as exc:
        raise ProjectError("export.write_failed", path=str(index), reason=str(exc.strerror or exc)) from exc
