"""A read-along EPUB 3 made from a project that has no book of its own (text or Markdown): a content document per
chapter (its headings and paragraphs, each sentence a span), a navigation document, the cover if one was chosen,
title, author and language from the project; narrated chapters get their overlay, the others are plain text.
Highlighted word by word, each placed word of a segment is a span inside its sentence's, with a par of its own."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from html import escape as _escape

from core.narration.exporting.readalong.audio import AUDIO_FORMATS, ChapterAudio
from core.narration.exporting.readalong.book import BookReport, Placed
from core.narration.exporting.readalong.epub_writer import PackageWriter
from core.narration.exporting.readalong.smil import SMIL_TYPE, Par, clock, duration_ms, overlay, quoteattr
from core.narration.exporting.readalong.words import WordPlan, clip_ms, plan_words, word_pars
from core.narration.exporting.readalong.xhtml_spans import ID_PREFIX, WORD_PREFIX
from core.narration.exporting.word_times import find_words
from core.narration.projects.project import Project, Segment


def escape_text(text: str) -> str:
    return _escape(text, quote=False)


_COVERS = {"image/jpeg": ".jpg", "image/png": ".png"}
_CONTAINER = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>'
    "</container>\n"
)


def write_from_scratch(
    writer: PackageWriter,
    project: Project,
    audios: list[ChapterAudio],
    suffix: str,
    active_class: str,
    css: bytes,
    check: Callable[[], None],
    author: str = "",
    cover: bytes | None = None,
    speakers: bool = False,
    words: bool = False,
) -> BookReport:
    """The book (``words``: highlighted word by word where the takes have words)."""
    report = BookReport()
    language = project.language or "en"
    clips = {clip.segment: (audio, clip) for audio in audios for clip in audio.clips}
    by_chapter: dict[int, list[Segment]] = {}
    for segment in project.segments:
        if not project.is_skipped(segment):
            by_chapter.setdefault(segment.chapter, []).append(segment)
    manifest, spine, nav, metas = [], [], [], []
    members: dict[str, bytes] = {}
    total = 0
    for index, segments in sorted(by_chapter.items()):
        check()
        name = f"text/chapter-{index + 1:03d}.xhtml"
        title = project.chapters[index].title
        places = _word_places(project, segments, clips) if words else {}
        members[name] = _document(project, title, segments, language, speakers, places)
        ident = f"ch{index + 1}"
        pars: list[Par] = []
        sentences = word_count = 0
        for s in segments:
            if s.id not in clips:
                continue
            number = project.number(s)
            audio, clip = clips[s.id]
            audio_href = f"../audio/chapter-{audio.chapter + 1:03d}{suffix}"
            sentences += 1
            if s.id in places:
                plan = places[s.id][0]
                ids = [f"{WORD_PREFIX}{number}-{k}" for k in range(1, len(plan.words) + 1)]
                said = word_pars(plan, ids, f"../{name}", audio_href)
                pars += said
                word_count += len(said)
                continue
            if words:
                report.words_missing.append(number)
            pars.append(Par(f"../{name}#{ID_PREFIX}{number}", audio_href, clip_ms(clip.start), clip_ms(clip.end)))
        attrs = ""
        if pars:
            smil = f"smil/chapter-{index + 1:03d}.smil"
            members[smil] = overlay(pars, f"../{name}")
            manifest.append(f'<item id="mo-{ident}" href="{smil}" media-type="{SMIL_TYPE}"/>')
            duration = duration_ms(pars)
            total += duration
            metas.append(f'<meta property="media:duration" refines="#mo-{ident}">{clock(duration)}</meta>')
            attrs = f' media-overlay="mo-{ident}"'
            report.overlays.append(Placed(name, smil, duration, sentences, word_count))
        manifest.append(f'<item id="{ident}" href="{name}" media-type="application/xhtml+xml"{attrs}/>')
        spine.append(f'<itemref idref="{ident}"/>')
        nav.append(f"<li><a href={quoteattr(name)}>{escape_text(title)}</a></li>")
    for audio in audios:
        manifest.append(
            f'<item id="audio-{audio.chapter + 1}" href="audio/chapter-{audio.chapter + 1:03d}{suffix}" '
            f'media-type="{AUDIO_FORMATS[suffix]}"/>'
        )
    cover_name = None
    kind = _image_type(cover)
    if kind is not None:
        cover_name = f"images/cover{_COVERS[kind]}"
        manifest.append(f'<item id="cover" href="{cover_name}" media-type="{kind}" properties="cover-image"/>')
    manifest.append('<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>')
    manifest.append('<item id="css" href="readalong.css" media-type="text/css"/>')
    metas.append(f'<meta property="media:duration">{clock(total)}</meta>')
    metas.append(f'<meta property="media:active-class">{escape_text(active_class)}</meta>')
    members["nav.xhtml"] = _nav(project.title, nav, language)
    members["content.opf"] = _package(project, author, language, manifest, spine, metas)
    writer.add_bytes("META-INF/container.xml", _CONTAINER.encode())
    for name, data in members.items():
        writer.add_bytes(f"OEBPS/{name}", data)
    writer.add_bytes("OEBPS/readalong.css", css)
    if cover_name is not None and cover is not None:
        writer.add_bytes(f"OEBPS/{cover_name}", cover, compress=False)
    for audio in audios:
        check()
        writer.add_file(f"OEBPS/audio/chapter-{audio.chapter + 1:03d}{suffix}", audio.path)
    return report


def _image_type(data: bytes | None) -> str | None:
    if data is None:
        return None
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    return None


def _word_places(
    project: Project, segments: list[Segment], clips: dict
) -> dict[int, tuple[WordPlan, list[tuple[int, int]]]]:
    """Segment id → its word clips and where each word stands in its text (the segments that have both)."""
    out = {}
    for segment in segments:
        if segment.id not in clips:
            continue
        plan = plan_words(project, segment, clips[segment.id][1])
        places = find_words(segment.text, plan.words) if plan is not None else None
        if plan is not None and places is not None:
            out[segment.id] = (plan, places)
    return out


def _worded(text: str, number: int, places: list[tuple[int, int]]) -> str:
    """``text`` escaped, each placed word in a span of its own; the characters between them as they were."""
    parts, at = [], 0
    for k, (start, end) in enumerate(places, 1):
        parts.append(escape_text(text[at:start]))
        parts.append(f'<span id="{WORD_PREFIX}{number}-{k}">{escape_text(text[start:end])}</span>')
        at = end
    parts.append(escape_text(text[at:]))
    return "".join(parts)


def _document(
    project: Project,
    title: str,
    segments: list[Segment],
    language: str,
    speakers: bool = False,
    places: dict[int, tuple[WordPlan, list[tuple[int, int]]]] | None = None,
) -> bytes:
    body: list[str] = []
    paragraph: list[str] = []
    current = None

    def flush() -> None:
        if paragraph:
            body.append("<p>" + " ".join(paragraph) + "</p>")
            paragraph.clear()

    for segment in segments:
        said = f" title={quoteattr(segment.speaker)}" if speakers and segment.speaker else ""
        number = project.number(segment)
        worded = (places or {}).get(segment.id)
        inner = _worded(segment.text, number, worded[1]) if worded else escape_text(segment.text)
        span = f'<span id="{ID_PREFIX}{number}"{said}>{inner}</span>'
        if segment.kind == "heading":
            flush()
            body.append(f"<h{1 if not body else 2}>{span}</h{1 if not body else 2}>")
            continue
        if segment.paragraph != current:
            flush()
            current = segment.paragraph
        paragraph.append(span)
    flush()
    return _xhtml(title, "\n".join(body), language)


def _xhtml(title: str, body: str, language: str, css: bool = True) -> bytes:
    link = '<link rel="stylesheet" type="text/css" href="../readalong.css"/>' if css else ""
    lang = quoteattr(language)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
        f'<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang={lang} '
        f'xml:lang={lang}>\n<head><meta charset="utf-8"/><title>{escape_text(title)}</title>{link}</head>\n'
        f"<body>\n{body}\n</body>\n</html>\n"
    ).encode()


def _nav(title: str, entries: list[str], language: str) -> bytes:
    body = f'<nav epub:type="toc" id="toc"><h1>{escape_text(title)}</h1><ol>{"".join(entries)}</ol></nav>'
    return _xhtml(title, body, language, css=False)


def _package(project: Project, author: str, language: str, manifest, spine, metas) -> bytes:
    seed = hashlib.sha256(f"{project.title}\n{project.source.get('sha256', '')}".encode()).hexdigest()
    identifier = uuid.UUID(seed[:32])
    modified = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    creator = f"<dc:creator>{escape_text(author)}</dc:creator>" if author else ""
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid" xml:lang='
        f"{quoteattr(language)}>\n"
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:identifier id="uid">urn:uuid:{identifier}</dc:identifier>'
        f"<dc:title>{escape_text(project.title or 'Untitled')}</dc:title>{creator}"
        f"<dc:language>{escape_text(language)}</dc:language>"
        f'<meta property="dcterms:modified">{modified}</meta>' + "".join(metas) + "</metadata>\n"
        f"<manifest>{''.join(manifest)}</manifest>\n"
        f"<spine>{''.join(spine)}</spine>\n</package>\n"
    ).encode("utf-8")
