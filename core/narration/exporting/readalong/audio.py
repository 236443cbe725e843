"""The audio of a read-along book: one MP3 or AAC (``.m4a``) file per chapter, and where each sentence is in it.

The files are the audiobook export's chapter files (:func:`core.narration.exporting.export.export_project` with
``per_chapter``): the same streaming (memory flat in the book's length), pauses, level, progress and cancel, written
into the project's ``cache/readalong/`` folder, whose manifest keeps every chapter file that did not change (exporting
again after one sentence was fixed encodes only that sentence's chapter). Each sentence's place is counted in samples
from the speech lengths that export records, so it holds in the decoded file (FFmpeg writes the encoder's delay into
the MP3's LAME header and the MP4's edit list, and decoders remove it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import core.narration.exporting.manifest as export_manifest
from core.engine import SAMPLE_RATE, EncodeSettings
from core.narration.exporting.plan import ExportRequest, output_files
from core.narration.projects.project import Project, Segment, pause_seconds

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
    """Kept from an earlier export (nothing was encoded)."""

    @property
    def seconds(self) -> float:
        return self.samples / SAMPLE_RATE


def chapter_files(
    project: Project,
    request: ExportRequest,
    chosen: dict[int, list[Segment]],
    suffix: str,
    export: Callable,
    progress: Callable | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[ChapterAudio]:
    """The chapter files of ``chosen`` (chapter index → its segments), made or kept by the audiobook export, each
    with the place of every segment in it."""
    folder = project.folder / CACHE_DIR
    encoding = request.encoding
    if encoding.bitrate is None:
        encoding = EncodeSettings(encoding.sample_rate, DEFAULT_BITRATE, encoding.vbr)
    audio_request = replace(
        request,
        out=None,
        subtitles=None,
        per_chapter=folder,
        chapter_format=suffix,
        chapter_subtitles=None,
        chapters=tuple(sorted(i + 1 for i in chosen)),
        segments=None,
        encoding=encoding,
        check=None,
        master=None,
        highlight="sentence",
        subtitle_words=None,
    )
    result = export(project, audio_request, progress, cancelled)
    kept = {f["path"]: bool(f.get("kept")) for f in result.files if f.get("kind") == "audio"}
    entries = export_manifest.load(folder)
    out = []
    for file in output_files(project, audio_request, [s for segments in chosen.values() for s in segments]):
        entry = entries[file.path.name]
        speech = {int(k): int(v) for k, v in entry["speech"].items()}
        samples = round(float(entry["seconds"]) * SAMPLE_RATE)
        out.append(
            ChapterAudio(
                int(file.chapter or 0),
                file.path,
                _clips(project, file.segments, speech, samples),
                samples,
                kept.get(str(file.path), False),
            )
        )
    return out


def _clips(project: Project, segments: list[Segment], speech: dict[int, int], samples: int) -> list[Clip]:
    clips, cursor = [], 0
    for index, segment in enumerate(segments):
        start = cursor
        cursor += speech[segment.id]
        speech_end = cursor
        if index < len(segments) - 1:
            cursor += round(pause_seconds(project, segment) * SAMPLE_RATE)
        clips.append(Clip(segment.id, start, speech_end, cursor if index < len(segments) - 1 else samples))
    return clips
