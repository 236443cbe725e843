"""Exporting a project: the chosen chapters or segments, as one file and/or one file per chapter, streamed.

The timeline is built from the chosen take of every segment, each stretched to its pace and followed by its pause
(:func:`core.narration.exporting.stream.pause_seconds`), so subtitle cues and chapter marks are timed on the exported
audio. Each segment is finished on its own, so changing one segment leaves every other segment's samples unchanged
(the level, being one gain per file, is the exception by design). What to write is planned in :mod:`export_plan`
(and checked before any audio is read), each file is streamed by :mod:`export_stream` and tagged by
:mod:`book_tags`; chapter files that did not change since the last export are kept (:mod:`export_manifest`).
Export never touches the inference worker: it is plain Python a caller may run on any thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import core.narration.exporting.manifest as export_manifest
from core.engine import SAMPLE_RATE, remove_partial_files, write_text_atomic
from core.narration.exporting.book_tags import FileTags, Writer, file_tags, find_cover
from core.narration.exporting.chapter_marks import ChapterMark, supports_chapters
from core.narration.exporting.plan import (
    ExportCancelled,
    ExportEstimate,
    ExportProgress,
    ExportRequest,
    OutputFile,
    ProgressCallback,
    audio_seconds,
    check_request,
    check_space,
    chosen_segments,
    effective_encoding,
    estimate_export,
    file_name,
    mastering_preset,
    output_files,
)
from core.narration.exporting.readalong.check import is_readalong
from core.narration.exporting.readalong.export import export_readalong
from core.narration.exporting.stream import (
    OutputMeter,
    Target,
    Ticker,
    choose_level,
    finish_segments,
    leveled,
    spooled,
)
from core.narration.exporting.subtitles import Cue, CueWord, words_missing, write_subtitles
from core.narration.exporting.word_times import find_words, take_words
from core.narration.projects.project import STALE_PARTIAL_S, Project, ProjectError, Segment, pause_seconds
from core.narration.screening import segment_flagged

__all__ = [
    "ExportCancelled",
    "ExportEstimate",
    "ExportProgress",
    "ExportRequest",
    "ExportResult",
    "Placement",
    "check_request",
    "estimate_export",
    "export_project",
    "preview",
]


@dataclass(frozen=True)
class Placement:
    number: int
    start: float
    end: float
    """Speech of the segment in its file (its pause follows)."""


@dataclass
class ExportResult:
    files: list[dict] = field(default_factory=list)
    timeline: dict[int, Placement] = field(default_factory=dict)
    """Segment number → its place in the whole export's timeline (the ``out`` file's, room tone included)."""
    loudness: list[dict] = field(default_factory=list)
    chapters: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    checks: list[dict] = field(default_factory=list)
    """One store check per audio file written (``FileCheck.to_dict()``), when the request asks for one."""
    flagged: list[int] = field(default_factory=list)
    """The exported segments whose chosen take the take screen flagged and nobody accepted (numbers)."""


def export_project(
    project: Project,
    request: ExportRequest,
    progress: ProgressCallback | None = None,
    cancelled=None,
) -> ExportResult:
    """Write the files ``request`` names; ``progress`` hears how far it is, ``cancelled()`` returning true stops it
    (:class:`ExportCancelled`; nothing is left under the name of the file being written)."""
    flagged = _check_flagged(project, request)
    if is_readalong(request.out):  # a read-along EPUB: its chapter files come back through here
        result = _export_readalong(project, request, progress, cancelled)
        result.flagged = flagged
        return result
    check_request(request)
    segments = chosen_segments(project, request)
    _check_rendered(project, segments)
    check_space(project, request)
    files = output_files(project, request, segments)
    for folder in {f.path.parent for f in files}:
        _make_folder(folder)
        remove_partial_files(folder, older_than_s=STALE_PARTIAL_S)  # spools and files of a killed export
    job = _Job(project, request, progress, cancelled, files)
    result = ExportResult(flagged=flagged)
    lengths: dict[int, int] = {}
    try:
        for file in files:
            lengths.update(job.export_file(file, result))
        if request.out is None and request.subtitles is not None:
            lengths.update(_speech_lengths(project, segments, job.ticker))
    finally:
        job.save_manifest()
    head = job.head if request.out is not None else 0
    whole = _timeline(project, segments, lengths, head)
    result.timeline = {p.number: p for p in whole}
    total = (whole[-1].end * SAMPLE_RATE if whole else 0) + (job.tail if request.out is not None else 0)
    result.seconds = round(total / SAMPLE_RATE, 3)
    result.chapters = [
        {"number": i + 1, "title": project.chapters[m.chapter].title, "start": round(m.start, 3)}
        for i, m in enumerate(_chapter_starts(segments, whole))
    ]
    if request.out is None and request.subtitles is not None:
        result.files.append(_write_cues(request.subtitles, _cues(project, segments, whole, request), request))
    if request.per_chapter is not None:
        _write_playlist(project, request, result)
    return result


class _Job:
    """One export's shared state: settings, progress, the chapter manifest."""

    def __init__(self, project: Project, request: ExportRequest, progress, cancelled, files: list[OutputFile]):
        self.project, self.request, self.files = project, request, files
        self.encoding = effective_encoding(request)
        self.target = _target(request)
        self.head = round(self.target.head_s * SAMPLE_RATE) if self.target else 0
        self.tail = round(self.target.tail_s * SAMPLE_RATE) if self.target else 0
        self.cover = find_cover(project, request.cover)
        total = sum(2 * audio_seconds(project, f.segments) for f in files)
        if request.out is None and request.subtitles is not None:
            total += audio_seconds(project, chosen_segments(project, request))
        self.ticker = Ticker(total, progress, cancelled)
        folder = request.per_chapter
        self.manifest_folder = folder
        self.entries = export_manifest.load(folder) if folder is not None else {}

    def save_manifest(self) -> None:
        if self.manifest_folder is not None and self.manifest_folder.is_dir():
            export_manifest.save(self.manifest_folder, self.entries)

    def export_file(self, file: OutputFile, result: ExportResult) -> dict[int, int]:
        """Write one file (or keep it, unchanged since the last export); the speech length of each segment."""
        project, request = self.project, self.request
        tags = file_tags(project, file, request.book, self.cover)
        wanted = self._digest(file, tags) if file.chapter is not None else None
        extra = (file.subtitles,) if file.subtitles is not None else ()
        entry = export_manifest.kept(self.entries, file.path, wanted, extra) if wanted else None
        kept = entry is not None
        if entry is None:
            entry = self._make(file, tags)
            entry["digest"] = wanted
            entry["size"] = file.path.stat().st_size
            if file.chapter is not None:
                self.entries[file.path.name] = entry
        else:
            self.ticker.tick("finishing", file.path, 2 * entry["seconds"])
        _report_file(file, entry, kept, result)
        return {int(k): v for k, v in entry["speech"].items()}

    def _make(self, file: OutputFile, tags: FileTags) -> dict:
        project, ticker = self.project, self.ticker
        folder = file.path.parent
        with spooled(project, file.segments, folder, file.path.stem, ticker, file.path) as finished:
            level, before, limited = choose_level(finished, self.target)
            speech = {seg_id: size for seg_id, size, _pause in finished.lengths}
            placements = _timeline(project, file.segments, speech, level.head)
            total = level.head + finished.samples + level.tail
            tags.chapters = _marks(project, file.segments, placements, total)
            writer = Writer(file.path, self.encoding, tags)
            meter = OutputMeter(self.target) if self.target else None
            try:
                for block in leveled(finished.spool, level):
                    writer.write(block)
                    if meter is not None:
                        meter.add(block)
                    ticker.tick("encoding", file.path, block.size / SAMPLE_RATE)
                ticker.tick("encoding", file.path)
                writer.close()
            except BaseException:
                writer.abort()
                raise
        entry: dict = {
            "seconds": round(total / SAMPLE_RATE, 3),
            "speech": {str(k): v for k, v in speech.items()},
            "chapter_marks": len(tags.chapters) if supports_chapters(file.path.suffix) else 0,
            "level": {"path": str(file.path), **meter.report(level, before, limited)} if meter else None,
        }
        if file.subtitles is not None:
            written = _write_cues(file.subtitles, _cues(project, file.segments, placements, self.request), self.request)
            if "words_missing" in written:
                entry["words_missing"] = written["words_missing"]
        if self.request.check:
            ticker.tick("checking", file.path)
            entry["check"] = _check(file.path, self.request.check)
        return entry

    def _digest(self, file: OutputFile, tags: FileTags) -> str:
        project = self.project
        parts = {
            "format": file.path.suffix.lower(),
            "encoding": self.encoding,
            "target": self.target,
            "tags": tags.metadata(),
            "cover": export_manifest.digest({"cover": tags.cover.hex()}) if tags.cover else None,
            "titles": [c.title for c in project.chapters],
            "subtitles": file.subtitles.suffix if file.subtitles else None,
            "check": self.request.check,
            **self._word_digest(file),
            "segments": [
                (
                    s.id,
                    project.rendered_take(s).file,
                    project.rendered_take(s).key,
                    project.speed_of(s),
                    pause_seconds(project, s),
                    s.chapter,
                    s.text if file.subtitles else None,
                )
                for s in file.segments
            ],
        }
        return export_manifest.digest(parts)

    def _word_digest(self, file: OutputFile) -> dict:
        """With word-timed subtitles, what they are made of besides the audio: the words of every take (a take
        aligned since the last export writes its subtitles again). Nothing without them, so the digests of other
        exports stay as they were."""
        if file.subtitles is None or self.request.subtitle_words is None:
            return {}
        project = self.project
        return {
            "subtitle_words": self.request.subtitle_words,
            "words": [(project.rendered_take(s).alignment or {}).get("words") for s in file.segments],
        }


def _target(request: ExportRequest) -> Target | None:
    preset = mastering_preset(request.master)
    if preset is not None:
        return Target(
            preset.rms_db,
            preset.peak_db,
            rms=True,
            head_s=preset.head_s,
            tail_s=preset.tail_s,
            room_tone_db=preset.room_tone_db,
        )
    if request.loudness is not None:
        return Target(request.loudness, request.true_peak)
    return None


def _check(path: Path, rules: str) -> dict:
    from core.narration.exporting.store_check import check_file

    return check_file(path, rules).to_dict()


def _report_file(file: OutputFile, entry: dict, kept: bool, result: ExportResult) -> None:
    result.files.append(
        {
            "path": str(file.path),
            "kind": "audio",
            "title": file.title,
            "seconds": entry["seconds"],
            "chapter_marks": entry["chapter_marks"],
            "kept": kept,
        }
    )
    if file.subtitles is not None:
        subtitles: dict = {"path": str(file.subtitles), "kind": "subtitles"}
        if "words_missing" in entry:
            subtitles["words_missing"] = entry["words_missing"]
        result.files.append(subtitles)
    if entry.get("level"):
        result.loudness.append(entry["level"])
    if entry.get("check"):
        result.checks.append(entry["check"])


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
            seconds += project.rendered_take(segment).seconds / project.speed_of(segment)
            seconds += pause_seconds(project, segment)
    blocks, speech = [], {}
    for block, entry in finish_segments(project, segments):
        blocks.append(block)
        if entry is not None:
            speech[entry[0]] = entry[1]
    audio = np.concatenate(blocks) if blocks else np.zeros(0, np.float32)
    return audio, _timeline(project, segments, speech, 0)


def _export_readalong(project: Project, request: ExportRequest, progress, cancelled) -> ExportResult:
    """A read-along EPUB (:mod:`core.narration.exporting.readalong.export`); the timeline is each segment's place in
    its chapter's audio file, and ``chapters`` the chapters narrated."""
    done = export_readalong(project, request, progress, cancelled, export=export_project)
    result = ExportResult(seconds=round(done.seconds, 3))
    numbers = {s.id: n for n, s in enumerate(project.segments, 1)}
    for audio in done.chapters:
        for clip in audio.clips:
            number = numbers[clip.segment]
            result.timeline[number] = Placement(number, clip.start / SAMPLE_RATE, clip.speech_end / SAMPLE_RATE)
        result.chapters.append(
            {"number": audio.chapter + 1, "title": project.chapters[audio.chapter].title, "start": 0.0}
        )
    result.files.append(
        {
            "path": str(done.path),
            "kind": "read-along",
            "seconds": round(done.seconds, 3),
            "overlays": len(done.report.overlays),
            "chapters_encoded": sum(1 for a in done.chapters if not a.reused),
            "chapters_kept": sum(1 for a in done.chapters if a.reused),
            "from_book": done.from_book,
            "not_highlighted": done.report.lost,
            "highlight": request.highlight,
            "words_missing": len(done.report.words_missing) if request.highlight == "word" else None,
            "words_missing_segments": done.report.words_missing,
        }
    )
    return result


def _check_flagged(project: Project, request: ExportRequest) -> list[int]:
    """The segments to export whose takes are flagged; with ``strict``, ``export.flagged`` when there are any."""
    flagged = [project.number(s) for s in chosen_segments(project, request) if segment_flagged(project, s)]
    if flagged and request.strict:
        raise ProjectError("export.flagged", flagged=flagged[:20], count=len(flagged))
    return flagged


def _check_rendered(project: Project, segments: list[Segment]) -> None:
    pending = [project.number(s) for s in segments if project.status(s) != "rendered"]
    if pending:
        raise ProjectError("export.not_rendered", pending=pending, total=len(project.segments))


def _speech_lengths(project: Project, segments: list[Segment], ticker: Ticker) -> dict[int, int]:
    return {entry[0]: entry[1] for _block, entry in finish_segments(project, segments, ticker) if entry is not None}


def _timeline(project: Project, segments: list[Segment], speech: dict[int, int], head: int) -> list[Placement]:
    """Where each segment's speech lies, given the speech lengths in samples (pauses from the project)."""
    out, cursor = [], head
    for index, segment in enumerate(segments):
        size = speech[segment.id]
        out.append(Placement(project.number(segment), cursor / SAMPLE_RATE, (cursor + size) / SAMPLE_RATE))
        cursor += size
        if index < len(segments) - 1:
            cursor += round(pause_seconds(project, segment) * SAMPLE_RATE)
    return out


@dataclass(frozen=True)
class _ChapterStart:
    chapter: int
    start: float


def _chapter_starts(segments: list[Segment], placements: list[Placement]) -> list[_ChapterStart]:
    """Where each chapter begins; the first at 0 (the room tone before the first word belongs to it)."""
    starts: list[_ChapterStart] = []
    for segment, place in zip(segments, placements):
        if not starts or starts[-1].chapter != segment.chapter:
            starts.append(_ChapterStart(segment.chapter, 0.0 if not starts else place.start))
    return starts


def _marks(project: Project, segments: list[Segment], placements: list[Placement], total: int) -> list[ChapterMark]:
    starts = _chapter_starts(segments, placements)
    ends = [s.start for s in starts[1:]] + [total / SAMPLE_RATE]
    return [ChapterMark(project.chapters[s.chapter].title, s.start, end) for s, end in zip(starts, ends)]


def _cues(project: Project, segments: list[Segment], placements: list[Placement], request: ExportRequest) -> list[Cue]:
    speakers = request.name_speakers
    return [
        Cue(
            p.start,
            p.end,
            s.text,
            s.speaker if speakers else None,
            _cue_words(project, s, p) if request.subtitle_words is not None else (),
        )
        for s, p in zip(segments, placements)
    ]


def _cue_words(project: Project, segment: Segment, place: Placement) -> tuple[CueWord, ...]:
    """The segment's words in its cue: where each stands in its text, and its start in the exported audio (the
    take's time scaled by the segment's exported speech over its take, as the sentence's own place is measured;
    empty: the take has no usable words)."""
    take = project.rendered_take(segment)
    words = take_words(take)
    if not words or take.seconds <= 0:
        return ()
    places = find_words(segment.text, [w.word for w in words])
    if places is None:
        return ()
    scale = (place.end - place.start) / take.seconds
    return tuple(CueWord(a, b, place.start + w.start * scale) for (a, b), w in zip(places, words))


def _write_cues(path: Path, cues: list[Cue], request: ExportRequest) -> dict:
    """Write a subtitle file; what the export reports of it (with word timing: how many segments kept their
    sentence's cue)."""
    write_subtitles(path, cues, request.subtitle_words)
    written: dict = {"path": str(path), "kind": "subtitles"}
    if request.subtitle_words is not None:
        written["words_missing"] = words_missing(cues)
    return written


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProjectError("export.folder_failed", folder=str(folder), reason=str(exc.strerror or exc)) from exc


def _write_playlist(project: Project, request: ExportRequest, result: ExportResult) -> None:
    folder = request.per_chapter
    assert folder is not None
    playlist = ["#EXTM3U", f"#PLAYLIST:{_one_line(request.book.title or project.title)}"]
    for file in result.files:
        path = Path(file["path"])
        if file["kind"] == "audio" and path.parent == folder:
            playlist += [f"#EXTINF:{round(file['seconds'])},{_one_line(file['title'])}", path.name]
    list_path = folder / f"{file_name(project.title)}.m3u8"
    try:
        write_text_atomic(list_path, "\n".join(playlist) + "\n")
    except OSError as exc:
        raise ProjectError("export.write_failed", path=str(list_path), reason=str(exc.strerror or exc)) from exc
    result.files.append({"path": str(list_path), "kind": "chapter list"})


def _one_line(text: str) -> str:
    return " ".join(text.split())
