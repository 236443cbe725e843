"""EPUB files built by hand for the import tests: every structure a published book uses, and hostile files.

Nothing is downloaded: each fixture is written with :mod:`zipfile` from the strings here, so a test shows exactly
which container, package, navigation and XHTML it reads. :func:`visible_text` is an extraction independent of the
importer (lxml ``itertext`` over the spine's bodies, minus ``rt``/``rp``/``script``/``style``) to check the import
against: nothing lost, nothing read twice.
"""

from __future__ import annotations

import posixpath
import random
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree, html

OPS = "OEBPS"


@dataclass
class Nav:
    title: str
    href: str
    """Relative to the OEBPS folder (``chap1.xhtml#sec``); empty: a heading without a link."""
    children: list[Nav] = field(default_factory=list)


def xhtml(body: str, title: str = "", lang: str = "en", direction: str = "", style: str = "", head: str = "") -> str:
    attrs = f' dir="{direction}"' if direction else ""
    css = f"<style>{style}</style>" if style else ""
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="{lang}" '
        f'xml:lang="{lang}"{attrs}>\n<head><title>{title}</title>{css}{head}</head>\n<body>\n{body}\n</body>\n</html>\n'
    )


def write_epub(
    path: Path,
    documents: list[tuple[str, str]],
    toc: list[Nav] | None = None,
    *,
    version: int = 3,
    title: str = "Fixture Book",
    language: str = "en",
    spine: list[str] | None = None,
    nav_in_spine: bool = True,
    landmarks: dict[str, str] | None = None,
    guide: dict[str, str] | None = None,
    missing: tuple[str, ...] = (),
    extra: dict[str, str | bytes] | None = None,
    extra_manifest: dict[str, str] | None = None,
    renditions: list[tuple[str, str]] | None = None,
    direction: str = "",
) -> Path:
    """An EPUB of ``documents`` (file name under ``OEBPS/`` → XHTML) with an EPUB 3 nav or an EPUB 2 NCX from
    ``toc``. ``missing``: files listed in the package but left out of the archive. ``renditions``: more
    ``rootfile`` entries (full path, package XML) listed *after* the default one. ``extra``: more members."""
    toc = toc if toc is not None else [Nav(name, name) for name, _ in documents]
    spine = spine if spine is not None else [name for name, _ in documents]
    manifest = [f'<item id="{_id(n)}" href="{n}" media-type="application/xhtml+xml"/>' for n, _ in documents]
    manifest += [f'<item id="{_id(n)}" href="{n}" media-type="application/xhtml+xml"/>' for n in missing]
    manifest += [f'<item id="{_id(h)}" href="{h}" media-type="{k}"/>' for h, k in (extra_manifest or {}).items()]
    members: dict[str, str | bytes] = {f"{OPS}/{n}": text for n, text in documents}
    itemrefs = []
    if version >= 3:
        manifest.append('<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>')
        members[f"{OPS}/nav.xhtml"] = _nav_document(toc, landmarks or {})
        if nav_in_spine:
            itemrefs.append('<itemref idref="nav"/>')
    else:
        manifest.append('<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>')
        members[f"{OPS}/toc.ncx"] = _ncx(toc, title)
    itemrefs += [f'<itemref idref="{_id(n)}"/>' for n in spine]
    guide_xml = "".join(f'<reference type="{k}" title="{k}" href="{v}"/>' for k, v in (guide or {}).items())
    spine_attrs = ' toc="ncx"' if version < 3 else ""
    spine_attrs += f' page-progression-direction="{direction}"' if direction else ""
    opf = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<package xmlns="http://www.idpf.org/2007/opf" version="{"3.0" if version >= 3 else "2.0"}" '
        'unique-identifier="id">\n'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:identifier id="id">fixture</dc:identifier><dc:title>{title}</dc:title>'
        f"<dc:language>{language}</dc:language><dc:creator>Fixture Author</dc:creator></metadata>\n"
        f"<manifest>{''.join(manifest)}</manifest>\n"
        f"<spine{spine_attrs}>{''.join(itemrefs)}</spine>\n" + (f"<guide>{guide_xml}</guide>" if guide_xml else "")
    ) + "</package>\n"
    members[f"{OPS}/content.opf"] = opf
    rootfiles = [f"{OPS}/content.opf"]
    for full_path, package in renditions or []:
        members[full_path] = package
        rootfiles.append(full_path)
    members.update(extra or {})
    return write_zip(path, container(rootfiles), members)


def container(rootfiles: list[str]) -> str:
    entries = "".join(f'<rootfile full-path="{r}" media-type="application/oebps-package+xml"/>' for r in rootfiles)
    return (
        '<?xml version="1.0"?>\n<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        f"<rootfiles>{entries}</rootfiles></container>\n"
    )


def write_zip(path: Path, container_xml: str | None, members: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        if container_xml is not None:
            archive.writestr("META-INF/container.xml", container_xml, compress_type=zipfile.ZIP_DEFLATED)
        for name, data in members.items():
            archive.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return path


def _id(name: str) -> str:
    return "i-" + "".join(ch if ch.isalnum() else "-" for ch in name)


def _nav_document(toc: list[Nav], landmarks: dict[str, str]) -> str:
    marks = "".join(f'<li><a epub:type="{k}" href="{v}">{k}</a></li>' for k, v in landmarks.items())
    body = f'<nav epub:type="toc" id="toc"><h1>Contents</h1>{_nav_ol(toc)}</nav>'
    if marks:
        body += f'<nav epub:type="landmarks" hidden=""><h2>Guide</h2><ol>{marks}</ol></nav>'
    return xhtml(body, "Contents")


def _nav_ol(entries: list[Nav]) -> str:
    items = []
    for entry in entries:
        label = f'<a href="{entry.href}">{entry.title}</a>' if entry.href else f"<span>{entry.title}</span>"
        items.append(f"<li>{label}{_nav_ol(entry.children) if entry.children else ''}</li>")
    return f"<ol>{''.join(items)}</ol>"


def _ncx(toc: list[Nav], title: str) -> str:
    counter = iter(range(1, 10_000))

    def points(entries: list[Nav]) -> str:
        out = []
        for entry in entries:
            n = next(counter)
            out.append(
                f'<navPoint id="p{n}" playOrder="{n}"><navLabel><text>{entry.title}</text></navLabel>'
                f'<content src="{entry.href}"/>{points(entry.children)}</navPoint>'
            )
        return "".join(out)

    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">'
        f'<head><meta name="dtb:uid" content="fixture"/></head><docTitle><text>{title}</text></docTitle>'
        f"<navMap>{points(toc)}</navMap></ncx>\n"
    )


# --- an independent extraction of the visible text ------------------------------------------------------------------
_HIDDEN = ("rt", "rp", "script", "style")


def visible_text(path: Path, skip: tuple[str, ...] = ()) -> str:
    """The text of every spine document's body (default rendition), whitespace-normalised, in spine order, without
    ruby readings, scripts and styles; files named in ``skip`` (e.g. the nav page) are left out."""
    parts = []
    with zipfile.ZipFile(path) as archive:
        root = etree.fromstring(archive.read("META-INF/container.xml"))
        opf_name = root.find(".//{*}rootfile").get("full-path")
        opf = etree.fromstring(archive.read(opf_name))
        base = posixpath.dirname(opf_name)
        hrefs = {i.get("id"): i.get("href") for i in opf.iter("{*}item")}
        for ref in opf.iter("{*}itemref"):
            name = posixpath.normpath(posixpath.join(base, hrefs[ref.get("idref")]))
            if name not in archive.namelist() or posixpath.basename(name) in skip:
                continue
            data = archive.read(name)
            try:
                doc = etree.fromstring(data, etree.XMLParser(resolve_entities=False))
            except etree.XMLSyntaxError:
                doc = html.fromstring(data)
            body = next(doc.iter("{*}body", "body"))
            for hidden in [e for e in body.iter() if isinstance(e.tag, str) and etree.QName(e).localname in _HIDDEN]:
                _drop_keep_tail(hidden)
            parts.append(" ".join(body.itertext()))
    return " ".join(" ".join(parts).split())


def _drop_keep_tail(element) -> None:
    parent, tail = element.getparent(), element.tail or ""
    previous = element.getprevious()
    if previous is not None:
        previous.tail = (previous.tail or "") + tail
    else:
        parent.text = (parent.text or "") + tail
    parent.remove(element)


# --- a novel for the speed and memory figures ---------------------------------------------------------------------
_PROSE = (
    "the sea was calm and grey under a low sky while the ship moved slowly toward the harbour where lights were "
    "burning in windows of old houses along the quay and somebody was singing a song about home"
)


def novel(path: Path, text_chars: int = 1_000_000, chapters: int = 40, seed: int = 7) -> Path:
    """An EPUB 3 of about ``text_chars`` characters of prose in ``chapters`` files of paragraphs."""
    rng = random.Random(seed)
    vocabulary = _PROSE.split()
    per_chapter = text_chars // chapters
    documents, toc = [], []
    for number in range(1, chapters + 1):
        paragraphs, size = [], 0
        while size < per_chapter:
            sentences = []
            for _ in range(rng.randint(3, 8)):
                words = [rng.choice(vocabulary) for _ in range(rng.randint(6, 22))]
                sentences.append(" ".join(words).capitalize() + rng.choice([".", ".", ".", "?", "!"]))
            paragraph = " ".join(sentences)
            paragraphs.append(f"<p>{paragraph}</p>")
            size += len(paragraph)
        name = f"chapter{number:03d}.xhtml"
        documents.append((name, xhtml(f"<h2>Chapter {number}</h2>\n" + "\n".join(paragraphs), f"Chapter {number}")))
        toc.append(Nav(f"Chapter {number}", name))
    return write_epub(path, documents, toc, title="A Long Voyage")
