"""The reader's own EPUB 3 with narration added: every member copied byte for byte, except the package document
(overlays, audio and the stylesheet listed; durations; the modification date) and the narrated content documents
(sentences in spans, a link to the stylesheet). A book that already has Media Overlays loses its own (their SMIL and
audio are left out of the package, and their properties, with whatever refines what was removed, out of the package
document: :mod:`core.narration.exporting.readalong.refines`): ours replace them. Highlighted word by word, a segment
whose take has words gets a par per word (:mod:`core.narration.exporting.readalong.words`), any other its sentence's.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote, unquote

from lxml import etree

from core.narration.exporting.readalong.audio import AUDIO_FORMATS, ChapterAudio
from core.narration.exporting.readalong.epub_writer import PackageWriter
from core.narration.exporting.readalong.refines import drop_refinements
from core.narration.exporting.readalong.smil import SMIL_TYPE, Par, clock, duration_ms, overlay
from core.narration.exporting.readalong.words import WordPlan, clip_ms, plan_words, word_pars
from core.narration.exporting.readalong.xhtml_spans import Wanted, mark
from core.narration.importing.authors import author_line, replace_authors
from core.narration.importing.epub import chapter_anchors
from core.narration.projects.project import Project, ProjectError, Segment

OPF_NS = "http://www.idpf.org/2007/opf"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=False)
_MEDIA_PROPERTIES = ("media:duration", "media:active-class", "media:playback-active-class", "media:narrator")
FOLDER = "readalong"
"""Our members go in this folder beside the package document."""


@dataclass
class Placed:
    """What the export reports of one overlay."""

    document: str
    overlay: str
    duration_ms: int
    sentences: int
    """Segments highlighted (each as a sentence or word by word)."""
    words: int = 0
    """Pars of single words."""


@dataclass
class BookReport:
    overlays: list[Placed] = field(default_factory=list)
    lost: list[int] = field(default_factory=list)
    """Segment numbers exported as audio but not found in the book (no highlight for them)."""
    replaced: list[str] = field(default_factory=list)
    """Members of the book's own overlays left out."""
    words_missing: list[int] = field(default_factory=list)
    """In a book highlighted word by word: the segments highlighted as sentences (their takes have no words, or
    their words were not found in the text)."""


def write_from_book(
    book: Path,
    writer: PackageWriter,
    project: Project,
    audios: list[ChapterAudio],
    suffix: str,
    active_class: str,
    css: bytes,
    check: Callable[[], None],
    author: str | None = None,
    speakers: bool = False,
    words: bool = False,
) -> BookReport:
    """The book with narration added; ``author``: named in the package instead of the book's own authors (``None``
    or the same: the book's stay as they are); ``words``: highlighted word by word where the takes have words."""
    report = BookReport()
    with zipfile.ZipFile(book) as archive:
        opf_name = _rootfile(archive)
        opf = etree.fromstring(archive.read(opf_name), _PARSER)
        if not (opf.get("version") or "").startswith("3"):
            raise ProjectError("readalong.epub2", name=project.source.get("name", book.name))
        base = posixpath.dirname(opf_name)
        manifest = _child(opf, "manifest")
        metadata = _child(opf, "metadata")
        items = {i.get("id"): i for i in manifest if _local(i) == "item" and i.get("id")}
        dropped = _drop_old_overlays(archive, base, items, metadata, report)
        if author and author != author_line(opf):
            drop_refinements(opf, replace_authors(opf, metadata, author))
        folder = _free_folder(base, set(archive.namelist()))
        clips = {clip.segment: (audio, clip) for audio in audios for clip in audio.clips}
        narrated = [s for s in project.segments if s.id in clips]
        plans = {s.id: plan_words(project, s, clips[s.id][1]) for s in narrated} if words else {}
        wanted = _wanted_by_file(project, narrated, report, speakers, plans)
        anchors = chapter_anchors(book)
        css_name = f"{folder}/readalong.css"
        audio_names = {audio.chapter: f"{folder}/audio/chapter-{audio.chapter + 1:03d}{suffix}" for audio in audios}
        changed: dict[str, bytes] = {}
        new_items: list[tuple[str, str, str, str | None]] = []  # id, member name, media type, properties
        total = 0
        spine = [items[r.get("idref")] for r in _child(opf, "spine") if r.get("idref") in items]
        for number, item in enumerate(spine, 1):
            name = _resolve(base, item.get("href", ""))
            if name not in wanted or name in changed:  # a document listed twice in the spine is narrated once
                continue
            check()
            try:
                marked = mark(archive.read(name), anchors.get(name, set()), wanted[name], _relative(name, css_name))
            except (KeyError, ValueError):
                report.lost += [w.number for w in wanted[name]]
                continue
            report.lost += marked.lost
            smil_name = f"{folder}/{posixpath.splitext(posixpath.basename(name))[0]}-{number}.smil"
            pars: list[Par] = []
            sentences = word_count = 0
            for want in wanted[name]:
                if want.number not in marked.ids:
                    continue
                sentences += 1
                segment_id = project.segments[want.number - 1].id
                audio, clip = clips[segment_id]
                audio_href = _relative(smil_name, audio_names[audio.chapter])
                plan = plans.get(segment_id)
                if plan is not None and want.number in marked.words:
                    said = word_pars(plan, marked.words[want.number], _relative(smil_name, name), audio_href)
                    pars += said
                    word_count += len(said)
                    continue
                if words:
                    report.words_missing.append(want.number)
                pars.append(
                    Par(
                        f"{_relative(smil_name, name)}#{marked.ids[want.number]}",
                        audio_href,
                        clip_ms(clip.start),
                        clip_ms(clip.end),
                    )
                )
            if not pars:
                continue
            changed[name] = marked.data
            smil_id = _free_id(f"cbx-mo-{number}", items)
            item.set("media-overlay", smil_id)
            changed[smil_name] = overlay(pars, _relative(smil_name, name))
            new_items.append((smil_id, smil_name, SMIL_TYPE, None))
            duration = duration_ms(pars)
            total += duration
            _meta(metadata, "media:duration", clock(duration), refines=f"#{smil_id}")
            report.overlays.append(Placed(name, smil_name, duration, sentences, word_count))
        if not report.overlays:
            raise ProjectError("readalong.nothing_found", name=project.source.get("name", book.name))
        _meta(metadata, "media:duration", clock(total))
        _meta(metadata, "media:active-class", active_class)
        _modified(metadata)
        new_items.append((_free_id("cbx-css", items), css_name, "text/css", None))
        for audio in audios:
            new_items.append(
                (
                    _free_id(f"cbx-audio-{audio.chapter + 1}", items),
                    audio_names[audio.chapter],
                    AUDIO_FORMATS[suffix],
                    None,
                )
            )
        for ident, member, kind, properties in new_items:
            element = etree.SubElement(manifest, f"{{{OPF_NS}}}item" if _ns(manifest) else "item")
            element.set("id", ident)
            element.set("href", _href(base, member))
            element.set("media-type", kind)
            if properties:
                element.set("properties", properties)
            items[ident] = element
        changed[opf_name] = etree.tostring(opf.getroottree(), encoding="utf-8", xml_declaration=True)
        for info in archive.infolist():
            if info.filename == "mimetype" or info.filename in dropped or info.is_dir():
                continue
            check()
            if info.filename in changed:
                writer.add_bytes(info.filename, changed.pop(info.filename))
            else:
                writer.copy(archive, info)
        writer.add_bytes(css_name, css)
        for member, data in changed.items():
            writer.add_bytes(member, data)
        for audio in audios:
            check()
            writer.add_file(audio_names[audio.chapter], audio.path)
    return report


def _wanted_by_file(
    project: Project,
    segments: list[Segment],
    report: BookReport,
    speakers: bool = False,
    plans: dict[int, WordPlan | None] | None = None,
) -> dict[str, list[Wanted]]:
    out: dict[str, list[Wanted]] = {}
    for segment in segments:
        source = segment.source
        number = project.number(segment)
        if source is None:
            report.lost.append(number)
            continue
        speaker = segment.speaker if speakers else None
        plan = (plans or {}).get(segment.id)
        out.setdefault(source["file"], []).append(
            Wanted(number, source["block"], source["start"], source["end"], speaker, plan.words if plan else ())
        )
    for wanted in out.values():
        wanted.sort(key=lambda w: (w.block, w.start))
    return out


def _drop_old_overlays(archive, base: str, items: dict, metadata, report: BookReport) -> set[str]:
    """Leave the book's own overlays out: their SMIL, the audio only they use, their properties (durations, classes,
    narrators) and whatever refines what was removed (a SMIL item's duration or narrator, a narrator's file-as)."""
    dropped: set[str] = set()
    removed_ids: set[str] = set()
    for item in list(items.values()):
        if item.get("media-type") == SMIL_TYPE:
            name = _resolve(base, item.get("href", ""))
            dropped.add(name)
            try:
                smil = etree.fromstring(archive.read(name), _PARSER)
                for node in smil.iter():
                    if _local(node) == "audio" and node.get("src"):
                        dropped.add(_resolve(posixpath.dirname(name), node.get("src", "")))
            except (KeyError, etree.XMLSyntaxError):
                pass
    for ident, item in list(items.items()):
        if item.get("media-overlay"):
            del item.attrib["media-overlay"]
        if _resolve(base, item.get("href", "")) in dropped:
            item.getparent().remove(item)
            del items[ident]
            removed_ids.add(ident)
    for node in list(metadata):
        if _local(node) == "meta" and (node.get("property") or "").strip() in _MEDIA_PROPERTIES:
            metadata.remove(node)
            if node.get("id"):
                removed_ids.add(node.get("id"))
    drop_refinements(metadata.getparent(), removed_ids)
    report.replaced = sorted(dropped)
    return dropped


def _meta(metadata, prop: str, value: str, refines: str | None = None) -> None:
    element = etree.SubElement(metadata, f"{{{OPF_NS}}}meta" if _ns(metadata) else "meta")
    element.set("property", prop)
    if refines:
        element.set("refines", refines)
    element.text = value


def _modified(metadata) -> None:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for node in metadata:
        if _local(node) == "meta" and node.get("property") == "dcterms:modified" and not node.get("refines"):
            node.text = stamp
            return
    _meta(metadata, "dcterms:modified", stamp)


def _rootfile(archive: zipfile.ZipFile) -> str:
    container = etree.fromstring(archive.read("META-INF/container.xml"), _PARSER)
    for node in container.iter():
        if _local(node) == "rootfile" and node.get("full-path"):
            return posixpath.normpath(unquote(node.get("full-path", "")))
    raise ProjectError("readalong.book_damaged", name="META-INF/container.xml")


def _child(root, name: str):
    found = next((c for c in root if _local(c) == name), None)
    if found is None:
        raise ProjectError("readalong.book_damaged", name=name)
    return found


def _local(node) -> str:
    return etree.QName(node).localname if isinstance(node.tag, str) else ""


def _ns(node) -> bool:
    return etree.QName(node).namespace == OPF_NS


def _resolve(base: str, href: str) -> str:
    return posixpath.normpath(posixpath.join(base, unquote(href.split("#", 1)[0])))


def _href(base: str, member: str) -> str:
    return quote(posixpath.relpath(member, base or "."))


def _relative(source: str, target: str) -> str:
    """``target``'s href from the member ``source``."""
    return quote(posixpath.relpath(target, posixpath.dirname(source) or "."))


def _free_folder(base: str, names: set[str]) -> str:
    folder = posixpath.join(base, FOLDER) if base else FOLDER
    candidate, number = folder, 1
    while any(n.startswith(candidate + "/") for n in names):
        number += 1
        candidate = f"{folder}{number}"
    return candidate


def _free_id(ident: str, items: dict) -> str:
    candidate, number = ident, 1
    while candidate in items:
        number += 1
        candidate = f"{ident}-{number}"
    items[candidate] = None
    return candidate
