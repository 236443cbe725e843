"""Creating a project from a document, or bringing an existing one up to date with a changed document.

Importing into a project that already has segments keeps every segment whose text, kind and voice are unchanged
(with its takes, choices, pace and pause); only new or changed sentences become pending, so fixing a typo in the book
and narrating again re-renders that one sentence.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
from dataclasses import dataclass
from pathlib import Path

from core.engine import atomic_path, copy_file_atomic
from core.narration.importing.book_import import Document, build_script
from core.narration.projects.project import Project, ProjectError
from core.narration.projects.voices import resolve_voices
from core.voices import VoiceLibrary


@dataclass(frozen=True)
class ImportReport:
    segments: int
    kept: int
    """Segments carried over unchanged from the project (with their takes)."""
    new: int
    chapters: int


def source_identity(name: str, text_or_bytes: bytes | str, voice: str | None) -> dict:
    data = text_or_bytes.encode() if isinstance(text_or_bytes, str) else text_or_bytes
    return {"name": name, "sha256": hashlib.sha256(data).hexdigest(), "voice": voice}


BOOK_FILE = "book/source.epub"
"""The project's copy of the EPUB it was imported from (the read-along export adds narration to it)."""


def needs_import(project: Project, source: dict) -> bool:
    """The document is new or changed, or an EPUB whose copy (and the segments' places in it, recorded since the
    read-along export) the project lacks: importing it again keeps every unchanged segment with its takes."""
    if not project.segments or project.source != source:
        return True
    epub = str(source.get("name", "")).lower().endswith(".epub")
    return epub and not (project.folder / BOOK_FILE).is_file()


def kept_book(project: Project) -> Path | None:
    """The project's copy of its EPUB (``None``: not imported from an EPUB, or before copies were kept)."""
    path = project.folder / BOOK_FILE
    return path if path.is_file() else None


def import_document(
    project: Project,
    doc: Document,
    voice: str | None,
    library: VoiceLibrary | None,
    base: Path | None,
    source: dict,
    dialogue_voice: str | None = None,
    cast: bool = False,
) -> ImportReport:
    """Segments from ``doc`` into ``project`` (voices resolved and copied in first; nothing changes on an error).

    Sentences are split in the project's language; with a ``dialogue_voice`` (or one the project already has)
    sentences are also cut at their quotes and the quoted speech is read in that voice; so they are for a book read
    by a ``cast`` of voices (or one whose project has a cast), where each character reads only their speech."""
    if doc.language and not project.segments:
        with contextlib.suppress(ProjectError):  # a book that names no real language code: the project's
            project.set_language(doc.language)
    dialogue = dialogue_voice is not None or project.dialogue_voice is not None or cast or bool(project.cast)
    script = build_script(doc, voice, project.language, dialogue)
    extra = [dialogue_voice] if dialogue_voice is not None else []
    mapping = resolve_voices(project, [voice, *script.voices, *extra], library, base)
    if dialogue_voice is not None:
        project.set_dialogue_voice(mapping[dialogue_voice])
    for segment in script.segments:
        segment.voice = mapping[segment.voice]
    old = project.segments
    kept = 0
    if old:
        matcher = difflib.SequenceMatcher(
            None, [_identity(s) for s in old], [_identity(s) for s in script.segments], autojunk=False
        )
        carried = {}
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                carried[block.b + k] = old[block.a + k]
        for index, segment in enumerate(script.segments):
            previous = carried.get(index)
            if previous is not None:
                previous.chapter, previous.paragraph = segment.chapter, segment.paragraph
                previous.source = segment.source
                script.segments[index] = previous
                kept += 1
            else:
                segment.id = project.next_id
                project.next_id += 1
    else:
        project.next_id = len(script.segments) + 1
        if not project.title:
            project.title = doc.title
    if doc.author or not old:
        project.author = doc.author or None  # the book's (an EPUB's); a first import of text or Markdown: unknown
    for index, chapter in enumerate(script.chapters):  # a chapter's voice stays with the chapter of that title
        if index < len(project.chapters) and project.chapters[index].title == chapter.title:
            chapter.voice = project.chapters[index].voice
    if doc.book is not None:
        _keep_book(project, doc.book)
    project.segments = script.segments
    project.chapters = script.chapters
    project.source = source
    if doc.cover:
        _keep_cover(project, doc.cover)
    return ImportReport(len(script.segments), kept, len(script.segments) - kept, len(script.chapters))


def _keep_book(project: Project, book: Path) -> None:
    target = project.folder / BOOK_FILE
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        copy_file_atomic(book, target)
    except OSError as exc:
        raise ProjectError("project.save_failed", folder=str(project.folder), reason=str(exc.strerror or exc)) from exc


def _keep_cover(project: Project, image: bytes) -> None:
    """The book's cover beside ``project.json`` (``cover.jpg`` or ``cover.png``), where exports look for it."""
    name = "cover.png" if image.startswith(b"\x89PNG") else "cover.jpg"
    try:
        project.folder.mkdir(parents=True, exist_ok=True)
        for other in ("cover.png", "cover.jpg"):
            if other != name:
                (project.folder / other).unlink(missing_ok=True)
        with atomic_path(project.folder / name) as tmp:
            tmp.write_bytes(image)
    except OSError as exc:
        raise ProjectError("project.save_failed", folder=str(project.folder), reason=str(exc.strerror or exc)) from exc


def _identity(segment) -> tuple:
    return segment.text, segment.kind, segment.voice
