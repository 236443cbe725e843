"""The read-along export: an EPUB 3 with Media Overlays, where the reader's app highlights each sentence as it is read.

``export_project`` sends an ``out`` ending in ``.epub`` here. A project imported from an EPUB gives back that book with
narration added (:mod:`core.narration.readalong_book`); any other project, a book made from scratch
(:mod:`core.narration.readalong_scratch`). The audio is one file per chapter (:mod:`core.narration.readalong_audio`),
MP3 unless the chapter format asks for AAC (``.m4a``). Chapters that are not rendered are refused before any work,
naming them; ``chapters`` exports a rendered range and leaves the rest of the book plain text. The package is written
under a temporary name beside ``out`` and renamed when complete, so a cancel or an error never leaves a half book.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.engine import EncodeSettings, atomic_path
from core.narration.build import kept_book
from core.narration.epub_writer import PackageWriter
from core.narration.project import Project, ProjectError, Segment
from core.narration.readalong_audio import AUDIO_FORMATS, DEFAULT_BITRATE, ChapterAudio, chapter_audio
from core.narration.readalong_book import BookReport, write_from_book
from core.narration.readalong_scratch import write_from_scratch

SUFFIX = ".epub"
ACTIVE_CLASS = "-epub-media-overlay-active"
STYLESHEET = (
    "/* Chatterbox Desk read-along: the sentence being read */\n"
    f".{ACTIVE_CLASS} {{ background-color: #ffe38a; color: #000; border-radius: 0.15em; }}\n"
).encode()


@dataclass(frozen=True)
class ReadalongProgress:
    stage: str
    """``encoding`` (the chapters' audio) or ``packaging`` (the book)."""
    done: float
    total: float
    """Seconds of audio worked through, of all of it."""
    file: str
    elapsed: float

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total > 0 else 0.0


@dataclass
class ReadalongResult:
    path: Path
    seconds: float
    chapters: list[ChapterAudio]
    report: BookReport
    from_book: bool


def is_readalong(path: Path | None) -> bool:
    return path is not None and Path(path).suffix.lower() == SUFFIX


def audio_suffix(chapter_format: str | None) -> str:
    """The audio of a read-along book: AAC when the chapter format asks for ``.m4a``/``.m4b``/``.aac``, else MP3."""
    return ".m4a" if (chapter_format or "").lower() in (".m4a", ".m4b", ".aac") else ".mp3"


def chosen_chapters(project: Project, chapters: tuple[int, ...] | None) -> dict[int, list[Segment]]:
    """Chapter index → its audible segments, for the chapters asked for (all by default); chapters not rendered
    are refused, naming them, before any work."""
    if chapters is not None:
        for number in chapters:
            if not 1 <= number <= len(project.chapters):
                raise ProjectError("readalong.no_chapter", number=number, count=len(project.chapters))
    wanted = None if chapters is None else {n - 1 for n in chapters}
    out: dict[int, list[Segment]] = {}
    for segment in project.audible():
        if wanted is None or segment.chapter in wanted:
            out.setdefault(segment.chapter, []).append(segment)
    pending = [i for i, segments in out.items() if any(project.status(s) != "rendered" for s in segments)]
    if pending:
        raise ProjectError(
            "readalong.not_rendered",
            chapters=[i + 1 for i in pending],
            titles=[project.chapters[i].title for i in pending],
            segments=sum(1 for i in pending for s in out[i] if project.status(s) != "rendered"),
        )
    if not out:
        raise ProjectError("readalong.nothing")
    return out


def export_readalong(
    project: Project,
    out: Path,
    chapters: tuple[int, ...] | None = None,
    chapter_format: str | None = None,
    encoding: EncodeSettings | None = None,
    progress: Callable[[ReadalongProgress], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    author: str = "",
    cover: Path | None = None,
) -> ReadalongResult:
    started = time.monotonic()
    chosen = chosen_chapters(project, chapters)
    suffix = audio_suffix(chapter_format)
    settings = encoding or EncodeSettings()
    if settings.bitrate is None:
        settings = EncodeSettings(settings.sample_rate, DEFAULT_BITRATE, settings.vbr)
    book = _book(project)
    total = sum(project.rendered_take(s).seconds / project.speed_of(s) for ss in chosen.values() for s in ss)
    done = 0.0

    def check() -> None:
        if cancelled is not None and cancelled():
            raise ProjectError("readalong.cancelled")

    def step(stage: str, name: str) -> Callable[[float], None]:
        def advance(seconds: float) -> None:
            nonlocal done
            done += seconds
            if progress is not None:
                progress(ReadalongProgress(stage, done, total, name, time.monotonic() - started))
            check()

        return advance

    audios = []
    for index, segments in chosen.items():
        check()
        audios.append(chapter_audio(project, index, segments, suffix, settings, step("encoding", str(out))))
    try:
        with atomic_path(out) as temporary:
            writer = PackageWriter(temporary)
            try:
                if book is not None:
                    report = write_from_book(book, writer, project, audios, suffix, ACTIVE_CLASS, STYLESHEET, check)
                else:
                    report = write_from_scratch(
                        writer, project, audios, suffix, ACTIVE_CLASS, STYLESHEET, check, author, cover
                    )
            except BaseException:
                writer.abandon()
                raise
            writer.close()
    except OSError as exc:
        raise ProjectError("export.write_failed", path=str(out), reason=str(exc.strerror or exc)) from exc
    if progress is not None:
        progress(ReadalongProgress("packaging", total, total, str(out), time.monotonic() - started))
    seconds = sum(a.seconds for a in audios)
    return ReadalongResult(Path(out), seconds, audios, report, book is not None)


def _book(project: Project) -> Path | None:
    """The project's copy of its EPUB, checked against the import (``None``: a text or Markdown project)."""
    name = str(project.source.get("name", ""))
    if not name.lower().endswith(SUFFIX):
        return None
    book = kept_book(project)
    if book is None or not any(s.source for s in project.segments):
        raise ProjectError("readalong.no_book", name=name)
    digest = hashlib.sha256()
    with book.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    if project.source.get("sha256") and digest.hexdigest() != project.source["sha256"]:
        raise ProjectError("readalong.no_book", name=name)
    return book


__all__ = ["AUDIO_FORMATS", "ReadalongProgress", "ReadalongResult", "export_readalong", "is_readalong"]
