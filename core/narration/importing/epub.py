"""EPUB 2 and 3 into a :class:`~core.narration.importing.document.Document`, with limits, and chapters from the
navigation.

Reading: ``META-INF/container.xml`` → the first (default) ``rootfile`` → the package (OPF): metadata, manifest,
spine → the navigation (EPUB 3 ``nav`` ``toc``, else the EPUB 2 NCX) → the spine's content documents in order
(:mod:`core.narration.importing.html_text` turns each into blocks).

Chapters follow the navigation: its top-level entries, and the entries below one whose children point into other
files (a part holding chapters); a single top-level entry holding the rest (the book's title) gives way to its
children. A file holding several chapters is cut at the entries' anchors; files the
navigation does not name continue the chapter before them (a chapter over several files is one chapter), or, before
the first entry, are chapters of their own (front matter). Each chapter keeps its own first heading as spoken text
and is titled from the navigation. The cover, the table of contents and pages without text are kept as *skipped*
chapters (a contents page: a ``<nav>`` and at most headings); a ``<nav>`` inside a chapter (its own contents,
landmarks, a page list) as skipped blocks.

Limits (each a one-line :class:`DocumentError`, raised within seconds, never after the memory is gone): the file
≤ :data:`MAX_EPUB_BYTES`; every member is inflated in pieces and refused as soon as it passes
:data:`MAX_MEMBER_BYTES` or inflates more than :data:`MAX_RATIO` times its compressed size (a zip bomb), and all
members read together ≤ :data:`MAX_INFLATED_BYTES`; the text ≤
:data:`~core.narration.importing.document.MAX_DOCUMENT_CHARS`. Only members of the archive are read, by names resolved
inside it (a reference that leaves the archive is ignored); XML is parsed without entities, DTDs or network. A missing
or damaged content file is left out with a warning on the document; DRM (Adobe ADEPT, Apple FairPlay, encrypted
content) is refused, font obfuscation is not DRM.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from lxml import etree

from core.engine import Notice
from core.narration.importing.authors import author_line
from core.narration.importing.document import MAX_DOCUMENT_CHARS, Block, Document, DocumentError
from core.narration.importing.html_text import (
    Anchor,
    epub_types,
    local_name,
    page_types,
    parse_xhtml,
    text_runs,
    visible_text,
)

MAX_EPUB_BYTES = 1 << 30
"""An EPUB file larger than 1 GiB is refused before it is opened."""
MAX_MEMBER_BYTES = 32 << 20
"""One member (a content document, the package, the navigation) may inflate to 32 MiB (parsed, about 7 times that in
memory; published books split their text into files of well under 1 MiB)."""
MAX_MEMBERS = 100_000
"""Entries in the archive's directory (each costs memory before anything is read)."""
MAX_SPINE = 20_000
"""Content documents in the reading order."""
MAX_NAV_DEPTH = 16
MAX_INFLATED_BYTES = 512 << 20
"""All members read for one import together."""
MAX_RATIO = 100
"""A member inflating past :data:`RATIO_FLOOR` to more than this many times its compressed size is a zip bomb (text
and markup compress 3–10 times)."""
RATIO_FLOOR = 4 << 20
_CHUNK = 1 << 20
_FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")
_FONT_SUFFIXES = (".ttf", ".otf", ".woff", ".woff2")
_XHTML_TYPES = ("application/xhtml+xml", "text/html", "application/x-dtbook+xml")
_NCX_TYPE = "application/x-dtbncx+xml"
_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_comments=True, remove_pis=True
)


@dataclass
class _Item:
    id: str
    name: str
    """Member name inside the archive."""
    media_type: str
    properties: set[str] = field(default_factory=set)


@dataclass
class _NavEntry:
    title: str
    file: str
    fragment: str
    children: list[_NavEntry] = field(default_factory=list)


@dataclass
class _Chapter:
    title: str
    file: str
    blocks: list[Block] = field(default_factory=list)
    skip: bool = False


class _Archive:
    """Bounded reads of an EPUB's members."""

    def __init__(self, archive: zipfile.ZipFile, name: str):
        self.zip, self.name, self.inflated = archive, name, 0
        self.names = set(archive.namelist())

    def read(self, member: str) -> bytes:
        """The member's bytes; ``KeyError`` when it is missing, :class:`DocumentError` past a limit."""
        info = self.zip.getinfo(member)
        self.check_header(member, info)
        chunks, size = [], 0
        with self.zip.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                self.inflated += len(chunk)
                if size > MAX_MEMBER_BYTES:
                    raise DocumentError(
                        "document.member_too_large", name=self.name, member=member, limit=MAX_MEMBER_BYTES
                    )
                if size > RATIO_FLOOR and size > MAX_RATIO * max(info.compress_size, 1):
                    raise DocumentError("document.zip_bomb", name=self.name, member=member, ratio=MAX_RATIO)
                if self.inflated > MAX_INFLATED_BYTES:
                    raise DocumentError("document.too_large", name=self.name, limit=MAX_INFLATED_BYTES)
                chunks.append(chunk)
        return b"".join(chunks)

    def check_header(self, member: str, info: zipfile.ZipInfo) -> None:
        """Refuse from the sizes the archive declares, before inflating anything (:meth:`read` counts again while
        inflating, so a header that understates is caught as soon as the real bytes pass a limit)."""
        if info.flag_bits & 0x1:
            raise DocumentError("document.drm", name=self.name, scheme="encrypted")
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise DocumentError("document.zip_bomb", name=self.name, member=member, ratio=MAX_RATIO)
        if info.file_size > MAX_MEMBER_BYTES:
            raise DocumentError("document.member_too_large", name=self.name, member=member, limit=MAX_MEMBER_BYTES)

    def xml(self, member: str) -> etree._Element:
        return etree.fromstring(self.read(member), _PARSER)


def read_epub(path: Path) -> Document:
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_EPUB_BYTES:
            raise DocumentError("document.too_large", name=path.name, limit=MAX_EPUB_BYTES)
        with path.open("rb") as file:
            head = file.read(4)
            entries = _directory_entries(file)
        if entries > MAX_MEMBERS:
            raise DocumentError("document.too_many_files", name=path.name, files=entries, limit=MAX_MEMBERS)
        archive = zipfile.ZipFile(path)
    except FileNotFoundError as exc:
        raise DocumentError("document.missing", path=str(path)) from exc
    except zipfile.BadZipFile as exc:
        if head.startswith(b"PK"):
            raise DocumentError("document.damaged_zip", name=path.name) from exc
        raise DocumentError("document.not_zip", name=path.name) from exc
    except OSError as exc:
        raise DocumentError("document.unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    with archive:
        try:
            doc = _read(_Archive(archive, path.name), path)
            doc.book = path
            return doc
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise DocumentError("document.damaged_zip", name=path.name) from exc
        except NotImplementedError as exc:  # a compression method zipfile cannot inflate
            raise DocumentError("document.bad_epub", name=path.name, reason=str(exc)) from exc


def _read(archive: _Archive, path: Path) -> Document:
    _refuse_drm(archive)
    opf_name = _rootfile(archive)
    try:
        opf = archive.xml(opf_name)
    except KeyError as exc:
        raise DocumentError("document.not_epub", name=archive.name, missing=opf_name) from exc
    except etree.XMLSyntaxError as exc:
        raise DocumentError("document.bad_epub", name=archive.name, reason=f"{opf_name}: {exc}") from exc
    base = posixpath.dirname(opf_name)
    items = _manifest(opf, base)
    doc = Document(_meta(opf, "title") or path.stem, author=author_line(opf), language=_meta(opf, "language").lower())
    listed = [items[i] for i in _spine_ids(opf) if i in items and items[i].media_type in _XHTML_TYPES]
    spine = list({item.name: item for item in listed}.values())  # a file listed twice is read once, where it is first
    if len(spine) > MAX_SPINE:
        raise DocumentError("document.too_many_files", name=archive.name, files=len(spine), limit=MAX_SPINE)
    doc.cover = _cover(archive, opf, items)
    nav_item = next((i for i in items.values() if "nav" in i.properties), None)
    entries, skip_files = _navigation(archive, opf, base, items, nav_item, doc)
    chapters = _chapters(archive, spine, entries, skip_files, nav_item, doc)
    if not any(b.kind == "paragraph" and not b.skipped for c in chapters if not c.skip for b in c.blocks):
        raise DocumentError("document.no_text", name=archive.name)
    for number, chapter in enumerate(chapters, 1):
        if chapter.skip:  # the chapter's skip covers its blocks: taking it back narrates them all
            for block in chapter.blocks:
                block.skipped = False
        heading = next((b.text for b in chapter.blocks if b.kind == "heading" and not b.skipped), "")
        title = chapter.title or heading or _first_words(chapter) or f"Chapter {number}"
        doc.blocks.append(Block("chapter", "", title=title, skipped=chapter.skip))
        doc.blocks += chapter.blocks
    return doc


def chapter_anchors(path: Path) -> dict[str, set[str]]:
    """Archive member → the ids at which the import cut that file into chapters: walking a file again with the same
    ids numbers its blocks as the import did (:attr:`~core.narration.importing.document.Block.source`)."""
    with zipfile.ZipFile(path) as zipped:
        archive = _Archive(zipped, Path(path).name)
        opf_name = _rootfile(archive)
        opf = archive.xml(opf_name)
        base = posixpath.dirname(opf_name)
        items = _manifest(opf, base)
        nav_item = next((i for i in items.values() if "nav" in i.properties), None)
        entries, _skip = _navigation(archive, opf, base, items, nav_item, Document(""))
    out: dict[str, set[str]] = {}
    for entry in _split_points(entries):
        if entry.fragment:
            out.setdefault(entry.file, set()).add(entry.fragment)
    return out


def _first_words(chapter: _Chapter, count: int = 6) -> str:
    """A title for a chapter the navigation does not name and that has no heading: its first words (a skipped page
    without text: its file's name)."""
    if not chapter.blocks:
        return posixpath.splitext(posixpath.basename(chapter.file))[0]
    words = next((b for b in chapter.blocks if not b.skipped), chapter.blocks[0]).text.split()
    return " ".join(words[:count]) + ("…" if len(words) > count else "")


# --- the package ------------------------------------------------------------------------------------------------------
def _directory_entries(file) -> int:
    """The number of entries the archive's end record declares (0 when there is none: ``ZipFile`` says so)."""
    try:
        record = zipfile._EndRecData(file)  # type: ignore[attr-defined]  # stable since Python 2; handles ZIP64
    except (OSError, ValueError, AttributeError):
        return 0
    return int(record[4]) if record else 0


def _refuse_drm(archive: _Archive) -> None:
    if "META-INF/rights.xml" in archive.names:
        raise DocumentError("document.drm", name=archive.name, scheme="adept")
    if "META-INF/sinf.xml" in archive.names:
        raise DocumentError("document.drm", name=archive.name, scheme="fairplay")
    if "META-INF/encryption.xml" in archive.names:
        xml = archive.read("META-INF/encryption.xml").decode("utf-8", "replace")
        methods = re.findall(r'EncryptionMethod[^>]*Algorithm="([^"]+)"', xml)
        targets = re.findall(r'CipherReference[^>]*URI="([^"]+)"', xml)
        fonts_only = all(m in _FONT_OBFUSCATION for m in methods) or all(
            t.lower().endswith(_FONT_SUFFIXES) for t in targets
        )
        if not fonts_only:
            raise DocumentError("document.drm", name=archive.name, scheme="encrypted")


def _rootfile(archive: _Archive) -> str:
    """The first ``rootfile`` of ``container.xml`` (the default rendition; later ones are alternatives)."""
    try:
        container = archive.xml("META-INF/container.xml")
    except KeyError as exc:
        raise DocumentError("document.not_epub", name=archive.name, missing="META-INF/container.xml") from exc
    except etree.XMLSyntaxError as exc:
        raise DocumentError("document.bad_epub", name=archive.name, reason=f"container.xml: {exc}") from exc
    for node in container.iter():
        if local_name(node) == "rootfile" and node.get("full-path"):
            kind = node.get("media-type") or "application/oebps-package+xml"
            if kind == "application/oebps-package+xml":
                name = _resolve("", node.get("full-path", ""))
                if name is None:
                    break
                return name
    raise DocumentError("document.not_epub", name=archive.name, missing="rootfile")


def _manifest(opf, base: str) -> dict[str, _Item]:
    items = {}
    for node in opf.iter():
        if local_name(node) == "item" and node.get("id") and node.get("href"):
            name = _resolve(base, node.get("href", ""))
            if name is not None:
                props = set((node.get("properties") or "").split())
                items[node.get("id", "")] = _Item(node.get("id", ""), name, node.get("media-type", ""), props)
    return items


def _cover(archive: _Archive, opf, items: dict[str, _Item]) -> bytes:
    """The cover image: the manifest item marked ``cover-image`` (EPUB 3), else the one ``<meta name="cover">``
    names (EPUB 2); only JPEG or PNG (what M4B and MP3 covers hold); empty when there is none or it is unreadable."""
    item = next((i for i in items.values() if "cover-image" in i.properties), None)
    if item is None:
        for node in opf.iter():
            if local_name(node) == "meta" and node.get("name") == "cover" and node.get("content") in items:
                item = items[node.get("content", "")]
                break
    if item is None or item.media_type not in ("image/jpeg", "image/png"):
        return b""
    try:
        data = archive.read(item.name)
    except (KeyError, DocumentError):
        return b""
    return data if data.startswith((b"\xff\xd8", b"\x89PNG")) else b""


def _spine_ids(opf) -> list[str]:
    return [n.get("idref", "") for n in opf.iter() if local_name(n) == "itemref"]


def _meta(opf, name: str) -> str:
    for node in opf.iter():
        if local_name(node) == name and isinstance(node.tag, str) and "purl.org/dc" in node.tag:
            text = " ".join("".join(node.itertext()).split())
            if text:
                return text
    return ""


def _resolve(base: str, href: str) -> str | None:
    """The archive member an ``href`` names, relative to the file at ``base`` (``None`` if it leaves the archive or
    is not a local file)."""
    href = unquote(href.split("#", 1)[0].strip())
    if not href or "://" in href or href.startswith(("/", "\\")) or ":" in href.split("/", 1)[0]:
        return None
    name = posixpath.normpath(posixpath.join(base, href))
    if name.startswith("../") or name in ("..", "."):
        return None
    return name


# --- the navigation -----------------------------------------------------------------------------------------------
def _navigation(archive, opf, base, items, nav_item, doc) -> tuple[list[_NavEntry], set[str]]:
    """The table of contents (EPUB 3 nav, else NCX) and the files to skip (the cover, the table of contents)."""
    skip: set[str] = set()
    entries: list[_NavEntry] = []
    for node in opf.iter():  # EPUB 2 guide
        if local_name(node) == "reference" and node.get("type", "").lower() in ("toc", "cover"):
            name = _resolve(base, node.get("href", ""))
            if name:
                skip.add(name)
    if nav_item is not None:
        skip.add(nav_item.name)
        root = _parse_nav(archive, nav_item.name, doc)
        if root is not None:
            nav_base = posixpath.dirname(nav_item.name)
            for nav in root.iter():
                if local_name(nav) != "nav":
                    continue
                kinds = epub_types(nav)
                lists = [c for c in nav if local_name(c) == "ol"]
                if "toc" in kinds and lists and not entries:
                    entries = _nav_list(lists[0], nav_base)
                elif "landmarks" in kinds:
                    for link in nav.iter():
                        if local_name(link) == "a" and epub_types(link) & {"toc", "cover"}:
                            name = _resolve(nav_base, link.get("href", ""))
                            if name:
                                skip.add(name)
    if not entries:
        toc = next((n.get("toc") for n in opf.iter() if local_name(n) == "spine"), None)
        ncx = items.get(toc or "") or next((i for i in items.values() if i.media_type == _NCX_TYPE), None)
        if ncx is not None:
            root = _parse_nav(archive, ncx.name, doc)
            nav_map = next((n for n in root.iter() if local_name(n) == "navmap"), None) if root is not None else None
            if nav_map is not None:
                entries = _ncx_points(nav_map, posixpath.dirname(ncx.name))
    return _unwrapped(entries), skip


def _unwrapped(entries: list[_NavEntry]) -> list[_NavEntry]:
    """The navigation without a single top-level entry that holds the whole book (the book's title, with the
    chapters below it): its children are the top level, after it if it starts elsewhere (a title page), in its
    place if it starts where its first child does. An entry whose children all start where it does (one file,
    no anchors) is kept: it is the one chapter there is."""
    for _ in range(MAX_NAV_DEPTH):
        if len(entries) != 1 or not _starts_elsewhere(entries[0], entries[0]):
            break
        whole = entries[0]
        first = whole.children[0]
        entries = list(whole.children)
        if (first.file, first.fragment) != (whole.file, whole.fragment):
            entries.insert(0, _NavEntry(whole.title, whole.file, whole.fragment))
    return entries


def _starts_elsewhere(entry: _NavEntry, parent: _NavEntry) -> bool:
    """Whether any entry below ``entry`` starts at another place than ``parent``."""
    return any(
        (child.file, child.fragment) != (parent.file, parent.fragment) or _starts_elsewhere(child, parent)
        for child in entry.children
    )


def _parse_nav(archive, name: str, doc: Document):
    try:
        return parse_xhtml(archive.read(name))
    except KeyError:
        doc.warnings.append(Notice("document.item_missing", {"name": archive.name, "item": name}))
    except ValueError:
        doc.warnings.append(Notice("document.item_damaged", {"name": archive.name, "item": name}))
    return None


def _nav_list(ol, base: str, depth: int = 0) -> list[_NavEntry]:
    out: list[_NavEntry] = []
    if depth > MAX_NAV_DEPTH:
        return out
    for li in ol:
        if local_name(li) != "li":
            continue
        label = next((c for c in li if local_name(c) in ("a", "span")), None)
        sub = next((c for c in li if local_name(c) == "ol"), None)
        children = _nav_list(sub, base, depth + 1) if sub is not None else []
        href = label.get("href", "") if label is not None else ""
        title = " ".join(visible_text(label).split()) if label is not None else ""
        name = _resolve(base, href) if href else None
        if name is None:  # a heading without a link (a part title): its first child stands for it
            if children:
                out.append(_NavEntry(title, children[0].file, children[0].fragment, children))
            continue
        out.append(_NavEntry(title, name, _fragment(href), children))
    return out


def _ncx_points(parent, base: str, depth: int = 0) -> list[_NavEntry]:
    out: list[_NavEntry] = []
    if depth > MAX_NAV_DEPTH:
        return out
    for point in parent:
        if local_name(point) != "navpoint":
            continue
        label = next((c for c in point if local_name(c) == "navlabel"), None)
        content = next((c for c in point if local_name(c) == "content"), None)
        title = " ".join("".join(label.itertext()).split()) if label is not None else ""
        src = content.get("src", "") if content is not None else ""
        name = _resolve(base, src)
        children = _ncx_points(point, base, depth + 1)
        if name is not None:
            out.append(_NavEntry(title, name, _fragment(src), children))
        elif children:
            out.append(_NavEntry(title, children[0].file, children[0].fragment, children))
    return out


def _fragment(href: str) -> str:
    return unquote(href.split("#", 1)[1]) if "#" in href else ""


def _split_points(entries: list[_NavEntry]) -> list[_NavEntry]:
    """The entries that start chapters: the top level, and the children of an entry whose children point into other
    files than its own (a part holding chapters), at any depth; sections inside a chapter's file are not chapters."""
    out: list[_NavEntry] = []
    for entry in entries:
        out.append(entry)
        if any(child.file != entry.file or _spans_files(child) for child in entry.children):
            out += _split_points(entry.children)
    return out


def _spans_files(entry: _NavEntry) -> bool:
    return any(child.file != entry.file or _spans_files(child) for child in entry.children)


# --- the chapters -------------------------------------------------------------------------------------------------
def _chapters(archive, spine, entries, skip_files, nav_item, doc) -> list[_Chapter]:
    starts: dict[str, dict[str, str]] = {}
    """File → fragment ("" for the file's start) → title of the chapter starting there."""
    for entry in _split_points(entries):
        starts.setdefault(entry.file, {}).setdefault(entry.fragment, entry.title)
    chapters: list[_Chapter] = []
    seen_start = False
    chars = 0
    for item in spine:
        if item.name not in archive.names:
            doc.warnings.append(Notice("document.item_missing", {"name": archive.name, "item": item.name}))
            continue
        try:
            root = parse_xhtml(archive.read(item.name))
        except (ValueError, zipfile.BadZipFile, zlib.error, EOFError):
            doc.warnings.append(Notice("document.item_damaged", {"name": archive.name, "item": item.name}))
            continue
        here = starts.get(item.name, {})
        anchors = {f for f in here if f}
        kinds = page_types(root)
        skip = item.name in skip_files or bool(kinds & {"toc", "cover"}) or item is nav_item
        items = _located_blocks(root, anchors, item.name)
        if anchors and "" not in here and not any(isinstance(p, Anchor) for p in items):
            here = {"": next(iter(here.values()))}  # the navigation names ids the file lacks: it starts at the top
        if "" in here or not seen_start or skip:
            title = here.get("", "")
            chapters.append(_Chapter(title, item.name, skip=skip))
            seen_start = seen_start or "" in here
        elif chapters and chapters[-1].skip:  # a file after a skipped page belongs to no chapter yet
            chapters.append(_Chapter("", item.name))
        for piece in items:
            if isinstance(piece, Anchor):
                if chapters[-1].blocks or chapters[-1].file != item.name:
                    chapters.append(_Chapter(here.get(piece.id, ""), item.name, skip=skip))
                else:
                    chapters[-1].title = chapters[-1].title or here.get(piece.id, "")
                seen_start = True
            else:
                chapters[-1].blocks.append(piece)
                chars += len(piece.text)
        if chars > MAX_DOCUMENT_CHARS:
            raise DocumentError("document.too_long", chars=chars, limit=MAX_DOCUMENT_CHARS)
    for chapter in chapters:
        read = {b.kind for b in chapter.blocks if not b.skipped}
        navs = any(b.skipped for b in chapter.blocks)
        if "paragraph" not in read and ("heading" not in read or navs):
            chapter.skip = True  # a page without text (a cover image, a blank page), or a contents page: a <nav>
    return chapters


def _located_blocks(root, anchors: set[str], name: str) -> list[Block | Anchor]:
    """The file's blocks, each with its :attr:`~core.narration.importing.document.Block.source` (file, number,
    element)."""
    out: list[Block | Anchor] = []
    tree = root.getroottree()
    number = 0
    for run in text_runs(root, anchors):
        if isinstance(run, Anchor):
            out.append(run)
            continue
        owner, attr = next(((n, a) for _, n, a in run.pieces if n is not None), (None, None))
        element = owner.getparent() if attr == "tail" and owner is not None else owner
        path = tree.getpath(element) if element is not None else ""
        run.block.source = {"file": name, "block": number, "path": path}
        number += 1
        out.append(run.block)
    return out
