"""The read-along export: an EPUB 3 with Media Overlays, where the reader's app highlights each sentence as it is read.

``export_project`` sends an ``out`` ending in ``.epub`` here. A project imported from an EPUB gives back that book with
narration added (:mod:`core.narration.exporting.readalong.book`); any other project, a book made from scratch
(:mod:`core.narration.exporting.readalong.scratch`). Its author (``dc:creator``) is the one the export asks for, else
the project's (the imported book's). The audio is one file per chapter
(:mod:`core.narration.exporting.readalong.audio`), MP3 unless the chapter format asks for AAC (``.m4a``). Chapters that
are not rendered are refused before any work, naming them; ``chapters`` exports a rendered range and leaves the rest of
the book plain text. ``highlight="word"`` highlights word by word where the takes have words
(:mod:`core.narration.exporting.readalong.words`), each other segment as a sentence. The package is written under a
temporary name beside ``out`` and renamed when complete, so a cancel or an error never leaves a half book.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.engine import atomic_path
from core.narration.exporting.book_tags import find_cover
from core.narration.exporting.plan import ExportCancelled, ExportRequest, ProgressCallback
from core.narration.exporting.readalong.audio import AUDIO_FORMATS, ChapterAudio, chapter_files
from core.narration.exporting.readalong.book import BookReport, write_from_book
from core.narration.exporting.readalong.check import SUFFIX, audio_suffix, check_readalong, is_readalong
from core.narration.exporting.readalong.epub_writer import PackageWriter
from core.narration.exporting.readalong.scratch import write_from_scratch
from core.narration.importing.build import kept_book
from core.narration.projects.project import Project, ProjectError, Segment

ACTIVE_CLASS = "-epub-media-overlay-active"
STYLESHEET = (
    "/* Chatterbox Desk read-along: the sentence being read */\n"
    f".{ACTIVE_CLASS} {{ background-color: #ffe38a; color: #000; border-radius: 0.15em; }}\n"
).encode()


@dataclass
class ReadalongResult:
    path: Path
    seconds: float
    chapters: list[ChapterAudio]
    report: BookReport
    from_book: bool


def chosen_chapters(project: Project, chapters: tuple[int, ...] | None) -> dict[int, list[Segment]]:
    """Chapter index → its audible segments, for the chapters asked for (all by default); chapters not rendered
    are refused, naming them, before any work."""
    if chapters is not None:
        for number in chapters:
            if not 1 <= number <= len(project.chapters):
                raise ProjectError("export.no_chapter", number=number, count=len(project.chapters))
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
    request: ExportRequest,
    progress: ProgressCallback | None = None,
    cancelled: Callable[[], bool] | None = None,
    *,
    export: Callable,
) -> ReadalongResult:
    """Write the read-along book ``request.out`` (chapters: ``request.chapters``; audio: ``request.chapter_format``
    and ``request.encoding``; level: ``request.loudness``); progress and cancel as for every export. ``export``:
    the audiobook export that writes the chapter files (``export_project``, passed in so that neither module
    imports the other)."""
    assert request.out is not None
    out = request.out
    check_readalong(request)
    chosen = chosen_chapters(project, request.chapters)
    suffix = audio_suffix(request.chapter_format)
    book = _book(project)
    audios = chapter_files(project, request, chosen, suffix, export, progress, cancelled)

    def check() -> None:
        if cancelled is not None and cancelled():
            raise ExportCancelled("export.cancelled")

    author = request.book.author or project.author or ""
    try:
        with atomic_path(out) as temporary:
            writer = PackageWriter(temporary)
            try:
                if book is not None:  # the book names its own author; one asked for replaces it
                    report = write_from_book(
                        book,
                        writer,
                        project,
                        audios,
                        suffix,
                        ACTIVE_CLASS,
                        STYLESHEET,
                        check,
                        request.book.author,
                        request.name_speakers,
                        request.highlight == "word",
                    )
                else:
                    cover = find_cover(project, request.cover)
                    report = write_from_scratch(
                        writer,
                        project,
                        audios,
                        suffix,
                        ACTIVE_CLASS,
                        STYLESHEET,
                        check,
                        author,
                        cover,
                        request.name_speakers,
                        request.highlight == "word",
                    )
            except BaseException:
                writer.abandon()
                raise
            writer.close()
    except OSError as exc:
        raise ProjectError("export.write_failed", path=str(out), reason=str(exc.strerror or exc)) from exc
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


__all__ = ["AUDIO_FORMATS", "ReadalongResult", "check_readalong", "export_readalong", "is_readalong"]
