"""Exporting a project: the chosen takes with pace and pauses, loudness, tags, chapters and subtitles.

The timeline is built from the chosen take of every segment, each stretched to its pace (project pace × segment
pace) and followed by its pause (scaled by the same pace), so subtitle cues are timed on the exported audio. Each
segment is finished on its own, so changing one segment leaves every other segment's samples unchanged (loudness
normalisation, being one gain for the whole file, is the exception by design). Files are written atomically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf

from core.engine import (
    DEFAULT_TRUE_PEAK,
    SAMPLE_RATE,
    audio_format,
    normalize_loudness,
    stretch,
    write_audio_stream,
    write_text_atomic,
)
from core.narration.chapter_marks import ChapterMark, supports_chapters, write_chapter_marks
from core.narration.project import Project, ProjectError, Segment, pause_seconds
from core.narration.subtitles import SUBTITLE_SUFFIXES, Cue, write_subtitles

APP = "Chatterbox Desk"


@dataclass(frozen=True)
class Placement:
    number: int
    start: float
    end: float
    """Speech of the segment in its file (its pause follows)."""


@dataclass
class Part:
    title: str
    segments: list[Segment]
    chapters: list[int] = field(default_factory=list)
    audio: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32), repr=False)
    placements: list[Placement] = field(default_factory=list)
    chapter_starts: list[float] = field(default_factory=list)


@dataclass
class ExportResult:
    files: list[dict] = field(default_factory=list)
    timeline: dict[int, Placement] = field(default_factory=dict)
    """Segment number → its place in the whole-project timeline."""
    loudness: list[dict] = field(default_factory=list)
    chapters: list[dict] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class ExportRequest:
    out: Path | None = None
    subtitles: Path | None = None
    per_chapter: Path | None = None
    chapter_format: str = ".flac"
    chapter_subtitles: str | None = None
    """``.srt`` or ``.vtt``: a subtitle file beside each chapter file."""
    loudness: float | None = None
    true_peak: float = DEFAULT_TRUE_PEAK


def export_project(project: Project, request: ExportRequest) -> ExportResult:
    check_request(request)
    _check_rendered(project)
    finished = _finished_segments(project)
    result = ExportResult()
    whole = _assemble(project, Part(project.title, project.audible()), finished)
    result.timeline = {p.number: p for p in whole.placements}
    result.seconds = whole.audio.size / SAMPLE_RATE
    result.chapters = [
        {"number": i + 1, "title": project.chapters[c].title, "start": round(s, 3)}
        for i, (c, s) in enumerate(zip(whole.chapters, whole.chapter_starts))
    ]
    if request.out is not None or request.subtitles is not None:
        if request.out is not None:
            _write_part(project, whole, request.out, request, result, track=None)
        if request.subtitles is not None:
            write_subtitles(request.subtitles, _cues(project, whole))
            result.files.append({"path": str(request.subtitles), "kind": "subtitles"})
    if request.per_chapter is not None:
        _export_chapters(project, finished, request, request.per_chapter, result)
    return result


def preview(project: Project, first: int = 1, max_seconds: float | None = None) -> tuple[np.ndarray, list[Placement]]:
    """The rendered segments from number ``first`` on, finished as an export would be (pace and pauses, no
    loudness): what the studio plays. Segments not rendered yet are left out. ``max_seconds``: stop after the
    segment that reaches about that much audio (the studio plays a long book a window at a time)."""
    segments, seconds = [], 0.0
    for segment in project.segments[first - 1 :]:
        if max_seconds is not None and seconds >= max_seconds:
            break
        if project.status(segment) == "rendered":
            segments.append(segment)
            speed = project.speed_of(segment)
            seconds += project.rendered_take(segment).seconds / speed + pause_seconds(project, segment)
    part = _assemble(project, Part(project.title, segments), _finished_segments(project, segments))
    return part.audio, part.placements


def check_request(request: ExportRequest) -> None:
    """Refuse a request whose file names or formats cannot be written (before any rendering or reading)."""
    if request.out is None and request.per_chapter is None and request.subtitles is None:
        raise ProjectError("export.nothing")
    if request.out is not None:
        audio_format(request.out)
    audio_format(Path("chapter" + request.chapter_format))
    if request.subtitles is not None and request.subtitles.suffix.lower() not in SUBTITLE_SUFFIXES:
        raise ProjectError("subtitles.bad_suffix", name=request.subtitles.name)
    if request.chapter_subtitles not in (None, *SUBTITLE_SUFFIXES):
        raise ProjectError("export.chapter_subtitles", value=request.chapter_subtitles)


def _check_rendered(project: Project) -> None:
    pending = [project.number(s) for s in project.audible() if project.status(s) != "rendered"]
    if pending:
        raise ProjectError("export.not_rendered", pending=pending, total=len(project.segments))


def _finished_segments(project: Project, segments: list[Segment] | None = None) -> dict[int, np.ndarray]:
    """Segment id → its chosen take at its pace (read and stretched once per export)."""
    out = {}
    for segment in project.audible() if segments is None else segments:
        take = project.rendered_take(segment)
        path = project.path(take.file)
        try:
            audio, rate = sf.read(path, dtype="float32", always_2d=False)
        except (OSError, sf.LibsndfileError) as exc:
            raise ProjectError(
                "export.take_unreadable", segment=project.number(segment), file=take.file, reason=str(exc)
            ) from exc
        if rate != SAMPLE_RATE or audio.ndim != 1:
            raise ProjectError("export.take_foreign", segment=project.number(segment), file=take.file)
        out[segment.id] = stretch(audio, project.speed_of(segment))
    return out


def _assemble(project: Project, part: Part, finished: dict[int, np.ndarray]) -> Part:
    blocks: list[np.ndarray] = []
    cursor = 0
    for index, segment in enumerate(part.segments):
        if not part.chapters or part.chapters[-1] != segment.chapter:
            part.chapters.append(segment.chapter)
            part.chapter_starts.append(cursor / SAMPLE_RATE)
        speech = finished[segment.id]
        part.placements.append(
            Placement(project.number(segment), cursor / SAMPLE_RATE, (cursor + speech.size) / SAMPLE_RATE)
        )
        blocks.append(speech)
        cursor += speech.size
        if index < len(part.segments) - 1:
            pause = np.zeros(round(pause_seconds(project, segment) * SAMPLE_RATE), np.float32)
            blocks.append(pause)
            cursor += pause.size
    part.audio = np.concatenate(blocks) if blocks else np.zeros(0, np.float32)
    return part


def _write_part(project: Project, part: Part, path: Path, request: ExportRequest, result: ExportResult, track):
    audio = part.audio
    if request.loudness is not None:
        audio, report = normalize_loudness(audio, request.loudness, request.true_peak)
        result.loudness.append({"path": str(path), **report.to_dict()})
    voices = sorted({part_voice or "model voice" for part_voice in map(project.voice_of, part.segments)})
    tags = {
        "title": part.title,
        "album": project.title,
        "artist": ", ".join(voices),
        "comment": f"Narrated by {APP} in the voice{'s' if len(voices) > 1 else ''} {', '.join(voices)}",
        "tracknumber": str(track) if track else "",
        "software": APP,
    }
    ends = part.chapter_starts[1:] + [audio.size / SAMPLE_RATE]
    marks = [ChapterMark(project.chapters[c].title, s, e) for c, s, e in zip(part.chapters, part.chapter_starts, ends)]
    write_audio_stream(path, [audio], SAMPLE_RATE, tags, finish=lambda tmp: write_chapter_marks(tmp, marks, tags))
    result.files.append(
        {
            "path": str(path),
            "kind": "audio",
            "seconds": round(audio.size / SAMPLE_RATE, 3),
            "chapter_marks": len(marks) if supports_chapters(path.suffix) else 0,
        }
    )
    return audio


def _cues(project: Project, part: Part) -> list[Cue]:
    by_number = {project.number(s): s for s in part.segments}
    return [Cue(p.start, p.end, by_number[p.number].text) for p in part.placements]


def _export_chapters(
    project: Project, finished: dict[int, np.ndarray], request: ExportRequest, folder: Path, result: ExportResult
) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProjectError("export.folder_failed", folder=str(folder), reason=str(exc.strerror or exc)) from exc
    playlist = ["#EXTM3U", f"#PLAYLIST:{_one_line(project.title)}"]
    spoken = [(i, c) for i, c in enumerate(project.chapters) if not c.skipped]
    for number, (index, chapter) in enumerate(spoken, 1):  # skipped chapters take no track number
        segments = [s for s in project.audible() if s.chapter == index]
        if not segments:
            continue
        part = _assemble(project, Part(chapter.title, segments), finished)
        name = f"{number:02d} - {_file_name(chapter.title)}"
        audio = _write_part(project, part, folder / f"{name}{request.chapter_format}", request, result, track=number)
        if request.chapter_subtitles:
            subtitles = folder / f"{name}{request.chapter_subtitles}"
            write_subtitles(subtitles, _cues(project, part))
            result.files.append({"path": str(subtitles), "kind": "subtitles"})
        playlist += [
            f"#EXTINF:{round(audio.size / SAMPLE_RATE)},{_one_line(chapter.title)}",
            f"{name}{request.chapter_format}",
        ]
    list_path = folder / f"{_file_name(project.title)}.m3u8"
    try:
        write_text_atomic(list_path, "\n".join(playlist) + "\n")
    except OSError as exc:
        raise ProjectError("export.write_failed", path=str(list_path), reason=str(exc.strerror or exc)) from exc
    result.files.append({"path": str(list_path), "kind": "chapter list"})


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _file_name(title: str) -> str:
    name = re.sub(r'[\\/:*?"<>|\x00-\x1f]+', " ", title)
    name = " ".join(name.split()).strip(" .")[:80]
    return name or "Untitled"
