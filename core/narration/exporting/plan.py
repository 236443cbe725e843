"""What an export writes: the request, the chosen chapters and segments, the files, their estimated size, and the
checks made before any audio is read (names, formats, folders, permission, free space)."""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from core.engine import DEFAULT_TRUE_PEAK, SAMPLE_RATE, EncodeSettings, check_settings, encoding_for
from core.narration.exporting.readalong.check import check_readalong
from core.narration.exporting.subtitles import SUBTITLE_SUFFIXES
from core.narration.projects.project import Project, ProjectError, Segment, pause_seconds

CHECK_RULES = ("acx",)
EXPORT_SUFFIXES = (".wav", ".flac", ".ogg", ".opus", ".mp3", ".m4b", ".m4a")
"""What an export writes: FFmpeg's encoders (:class:`core.engine.AudioEncoder`), OGG Vorbis through libsndfile."""
SPOOL_BYTES_PER_SECOND = 4 * SAMPLE_RATE
"""The finished float audio of one file waits on disk between measuring and encoding (pass 1 → pass 2)."""
_BYTES_PER_SECOND = {".wav": 2 * SAMPLE_RATE, ".flac": 1.4 * SAMPLE_RATE}
_DEFAULT_BITRATE = {".mp3": 128_000, ".m4b": 96_000, ".m4a": 96_000, ".opus": 64_000, ".ogg": 112_000}
_SIZE_MARGIN = 1.1


@dataclass(frozen=True)
class BookInfo:
    """Metadata for the exported files (``None``: left out; ``title`` overrides the project's title, ``author`` the
    book's author the project keeps from its EPUB)."""

    title: str | None = None
    author: str | None = None
    narrator: str | None = None
    year: str | None = None


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
    chapters: tuple[int, ...] | None = None
    """1-based chapter numbers (as ``project --list`` shows them) to export; ``None``: every chapter."""
    segments: tuple[int, ...] | None = None
    """Segment numbers to export; ``None``: every segment (of the chosen chapters)."""
    encoding: EncodeSettings = field(default_factory=lambda: EncodeSettings(None, None))
    cover: Path | None = None
    """A cover image (JPEG or PNG) for M4B and MP3 (``None``: the book's own cover, if the project keeps one)."""
    book: BookInfo = field(default_factory=BookInfo)
    check: str | None = None
    """``"acx"``: check every written audio file against the store's rules (:attr:`ExportResult.checks`)."""
    master: str | None = None
    """``"acx"``: master for the store (its level, peak ceiling, room tone, sample rate and bitrate)."""
    strict: bool = False
    """Refuse (``export.flagged``) while a segment to export has a flagged take (:mod:`core.narration.screening`)."""
    name_speakers: bool = False
    """Name who speaks each line (a project with a cast): in the subtitles WebVTT's ``<v Name>`` and SRT's
    ``Name: ``; in the read-along book the ``title`` of the line's span (readers show it when pointed at)."""
    highlight: str = "sentence"
    """What a read-along book highlights as it is read: ``sentence``, or ``word`` (word by word where the takes
    have word times, :attr:`~core.narration.projects.project.Take.alignment`; the other segments as sentences)."""
    subtitle_words: int | None = None
    """Word timing in the subtitles (``None``: one cue per segment): WebVTT keeps a cue per segment with a timestamp
    before each word after the first (``<00:00:01.200>``, karaoke-style cues); SRT gets a cue per this many words.
    Segments whose takes have no word times keep their sentence's cue."""


@dataclass(frozen=True)
class ExportProgress:
    stage: str
    """``finishing`` (reading, pace, pauses, measuring), ``encoding``, ``checking``."""
    done: float
    total: float
    """Seconds of audio worked through, of all the work (each file's audio counts once per pass)."""
    file: str
    elapsed: float

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total > 0 else 0.0

    @property
    def seconds_left(self) -> float | None:
        if self.done <= 0 or self.elapsed <= 0:
            return None
        return max(0.0, self.elapsed * (self.total - self.done) / self.done)


ProgressCallback = Callable[[ExportProgress], None]


@dataclass(frozen=True)
class ExportEstimate:
    seconds_of_audio: float
    bytes: int
    """The files written, plus the largest temporary spool needed on the way."""


class ExportCancelled(ProjectError):
    """The export was cancelled (code ``export.cancelled``): no file was left half written under a final name, the
    project is unchanged."""


@dataclass
class OutputFile:
    path: Path
    title: str
    segments: list[Segment]
    track: int | None = None
    subtitles: Path | None = None
    chapter: int | None = None
    """Index of the project chapter the file holds (one file per chapter)."""


def chosen_segments(project: Project, request: ExportRequest) -> list[Segment]:
    """The audible segments the request chooses, in order (:class:`ProjectError` for a chapter or segment number
    that does not exist, or a choice that holds nothing to hear)."""
    chapters = None
    if request.chapters is not None:
        for number in request.chapters:
            if not 1 <= number <= len(project.chapters):
                raise ProjectError("export.no_chapter", number=number, count=len(project.chapters))
        chapters = {n - 1 for n in request.chapters}
    numbers = None
    if request.segments is not None:
        for number in request.segments:
            project.segment(number)  # project.no_segment for a number out of range
        numbers = set(request.segments)
    chosen = [
        s
        for s in project.audible()
        if (chapters is None or s.chapter in chapters) and (numbers is None or project.number(s) in numbers)
    ]
    if not chosen:
        raise ProjectError("export.nothing_chosen")
    return chosen


def spoken_chapters(project: Project) -> list[tuple[int, int]]:
    """(track number, chapter index) of every chapter that is not skipped: chapter files are numbered so whatever
    range is exported (a re-export of chapter 3 alone gives it the name it had in the whole book)."""
    return [(track, index) for track, index in enumerate(i for i, c in enumerate(project.chapters) if not c.skipped)]


def output_files(project: Project, request: ExportRequest, segments: list[Segment]) -> list[OutputFile]:
    files = []
    if request.out is not None:
        files.append(OutputFile(request.out, _book_title(project, request), segments, subtitles=request.subtitles))
    if request.per_chapter is not None:
        for track, index in spoken_chapters(project):
            inside = [s for s in segments if s.chapter == index]
            if not inside:
                continue
            title = project.chapters[index].title
            name = f"{track + 1:02d} - {file_name(title)}"
            subtitles = None
            if request.chapter_subtitles:
                subtitles = request.per_chapter / f"{name}{request.chapter_subtitles}"
            path = request.per_chapter / f"{name}{request.chapter_format}"
            files.append(OutputFile(path, title, inside, track + 1, subtitles, index))
    return files


def _book_title(project: Project, request: ExportRequest) -> str:
    return request.book.title or project.title


def audio_seconds(project: Project, segments: list[Segment]) -> float:
    """The exported length of ``segments`` from what the project records (no audio is read)."""
    total = 0.0
    for index, segment in enumerate(segments):
        take = project.chosen_take(segment)
        total += (take.seconds if take else 0.0) / project.speed_of(segment)
        if index < len(segments) - 1:
            total += pause_seconds(project, segment)
    return total


def estimate_export(project: Project, request: ExportRequest) -> ExportEstimate:
    """Seconds of audio and bytes the export will need (files written plus the largest temporary spool)."""
    segments = chosen_segments(project, request)
    seconds = audio_seconds(project, segments)
    encoding = effective_encoding(request)
    written, spool = 0.0, 0.0
    for file in output_files(project, request, segments):
        length = audio_seconds(project, file.segments) + _room_tone_seconds(request)
        written += length * _bytes_per_second(file.path.suffix.lower(), encoding)
        spool = max(spool, length * SPOOL_BYTES_PER_SECOND)
    if request.cover is not None and request.cover.is_file():
        written += request.cover.stat().st_size * (1 + (request.per_chapter is not None))
    return ExportEstimate(round(seconds, 3), math.ceil((written + spool) * _SIZE_MARGIN))


def effective_encoding(request: ExportRequest) -> EncodeSettings:
    """The request's encoding, with the mastering preset's where the request leaves them open."""
    preset = mastering_preset(request.master)
    if preset is None:
        return request.encoding
    given = request.encoding
    return EncodeSettings(
        sample_rate=given.sample_rate or preset.sample_rate,
        bitrate=given.bitrate or preset.bitrate,
        vbr=given.vbr if given.sample_rate or given.bitrate else preset.vbr,
    )


def mastering_preset(name: str | None):
    if name is None:
        return None
    from core.narration.exporting.store_check import MASTERING

    return MASTERING[name]


def _room_tone_seconds(request: ExportRequest) -> float:
    preset = mastering_preset(request.master)
    return preset.head_s + preset.tail_s if preset else 0.0


def _bytes_per_second(suffix: str, encoding: EncodeSettings) -> float:
    rate = (encoding.sample_rate or SAMPLE_RATE) / SAMPLE_RATE
    if suffix in _BYTES_PER_SECOND:
        return _BYTES_PER_SECOND[suffix] * rate
    return (encoding.bitrate or _DEFAULT_BITRATE.get(suffix, 128_000)) / 8


def check_request(request: ExportRequest) -> None:
    """Refuse a request whose names, formats, choices or folders cannot be written, before any rendering or reading:
    a missing folder, or one this user may not write to."""
    if request.out is None and request.per_chapter is None and request.subtitles is None:
        raise ProjectError("export.nothing")
    if request.out is not None and request.out.suffix.lower() == ".epub":  # a read-along book
        return check_readalong(request)
    if request.highlight != "sentence":
        raise ProjectError("export.highlight_needs_book", highlight=request.highlight)
    if request.subtitle_words is not None:
        if request.subtitles is None and request.chapter_subtitles is None:
            raise ProjectError("export.subtitle_words_alone")
        if request.subtitle_words < 1:
            raise ProjectError("export.subtitle_words", words=request.subtitle_words)
    encoding = request.encoding if request.master is None else None
    if request.out is not None:
        check_format(request.out, encoding)
    check_format(Path("chapter" + request.chapter_format), encoding)
    if request.subtitles is not None and request.subtitles.suffix.lower() not in SUBTITLE_SUFFIXES:
        raise ProjectError("subtitles.bad_suffix", name=request.subtitles.name)
    if request.chapter_subtitles not in (None, *SUBTITLE_SUFFIXES):
        raise ProjectError("export.chapter_subtitles", value=request.chapter_subtitles)
    for rules in (request.check, request.master):
        if rules is not None and rules not in CHECK_RULES:
            raise ProjectError("export.unknown_rules", rules=rules, known=list(CHECK_RULES))
    if request.cover is not None:
        _check_cover(request.cover)
    for path in (request.out, request.subtitles):
        if path is not None:
            _check_folder(_folder_of(path), create=False)
    if request.per_chapter is not None:
        _check_folder(request.per_chapter, create=True)


def check_format(path: Path, encoding: EncodeSettings | None = None) -> None:
    """Refuse a file name no export format has, or a sample rate its codec cannot write."""
    suffix = path.suffix.lower()
    if suffix not in EXPORT_SUFFIXES:
        raise ProjectError("audio.bad_suffix", name=path.name, suffixes=list(EXPORT_SUFFIXES))
    if encoding is not None and suffix != ".ogg":
        check_settings(encoding_for(path), encoding)


def check_space(project: Project, request: ExportRequest) -> ExportEstimate:
    """Refuse an export the destination has no room for (the estimate against ``shutil.disk_usage``)."""
    estimate = estimate_export(project, request)
    folder = request.per_chapter if request.per_chapter is not None else _folder_of(request.out or request.subtitles)
    existing = _existing(folder)
    try:
        free = shutil.disk_usage(existing).free
    except OSError:
        return estimate  # a file system that does not say: the write itself will tell
    if free < estimate.bytes:
        raise ProjectError("export.no_space", folder=str(existing), needed=estimate.bytes, free=free)
    return estimate


def _folder_of(path: Path | None) -> Path:
    return path.parent if path is not None and str(path.parent) else Path(".")


def _existing(folder: Path) -> Path:
    """``folder`` or the nearest folder above it that exists (where a new folder would be made)."""
    folder = folder.absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _check_folder(folder: Path, create: bool) -> None:
    if folder.is_dir():
        target = folder
    elif create:
        target = _existing(folder)
        if not target.is_dir():
            raise ProjectError("export.folder_failed", folder=str(folder), reason=f"{target} is not a folder")
    else:
        raise ProjectError("export.folder_missing", folder=str(folder))
    if not os.access(target, os.W_OK | os.X_OK):
        raise ProjectError("export.no_permission", folder=str(target))


def _check_cover(path: Path) -> None:
    try:
        head = path.read_bytes()[:8]
    except OSError as exc:
        raise ProjectError("export.cover_unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    if not (head.startswith(b"\xff\xd8") or head.startswith(b"\x89PNG")):
        raise ProjectError("export.cover_format", path=str(path))


def file_name(title: str) -> str:
    import re

    name = re.sub(r'[\\/:*?"<>|\x00-\x1f]+', " ", title)
    name = " ".join(name.split()).strip(" .")[:80]
    return name or "Untitled"


def parse_numbers(text: str, what: str = "chapters") -> tuple[int, ...]:
    """``"2-4"``, ``"3"``, ``"1,3,5-7"`` → the numbers, in order (:class:`ProjectError` ``export.bad_range``)."""
    numbers: list[int] = []
    for part in text.replace(" ", "").split(","):
        try:
            if "-" in part:
                low, high = (int(x) for x in part.split("-", 1))
                if low > high or low < 1:
                    raise ValueError
                numbers.extend(range(low, high + 1))
            else:
                numbers.append(int(part))
                if numbers[-1] < 1:
                    raise ValueError
        except ValueError:
            raise ProjectError("export.bad_range", text=text, what=what) from None
    return tuple(dict.fromkeys(numbers))
