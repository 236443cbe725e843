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
    modified: bool = False,
    item_attrs: dict[str, str] | None = None,
    metadata: str = "",
    creators: str = "<dc:creator>Fixture Author</dc:creator>",
) -> Path:
    """An EPUB of ``documents`` (file name under ``OEBPS/`` → XHTML) with an EPUB 3 nav or an EPUB 2 NCX from
    ``toc``. ``missing``: files listed in the package but left out of the archive. ``renditions``: more
    ``rootfile`` entries (full path, package XML) listed *after* the default one. ``extra``: more members.
    ``creators``: the package's ``dc:creator`` elements (and whatever refines them)."""
    toc = toc if toc is not None else [Nav(name, name) for name, _ in documents]
    spine = spine if spine is not None else [name for name, _ in documents]
    attrs = item_attrs or {}
    manifest = [
        f'<item id="{_id(n)}" href="{n}" media-type="application/xhtml+xml"{attrs.get(n, "")}/>' for n, _ in documents
    ]
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
        f"<dc:language>{language}</dc:language>{creators}"
        + ('<meta property="dcterms:modified">2024-01-01T00:00:00Z</meta>' if modified and version >= 3 else "")
        + f"{metadata}</metadata>\n"
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


# --- books for the read-along export ------------------------------------------------------------------------------
READALONG_CSS = "body { font-family: serif; }\n"
FONT_BYTES = bytes(range(256)) * 4
"""Stands for a font file: copied byte for byte, never parsed."""


def readalong_novel(path: Path, overlays: bool = False) -> Path:
    """An EPUB 3 with what a read-along book meets: several sentences per paragraph, sentences across ``<em>``,
    ``<a>`` and ruby, a footnote mark, headings, a list and a table, a file holding two chapters, a stylesheet, an
    image and a font (kept byte for byte). ``overlays``: the book already has Media Overlays of its own."""
    css = '<link rel="stylesheet" type="text/css" href="style.css"/>'
    one = xhtml(
        '<h1 id="c1">Chapter <em>One</em></h1>\n'
        "<p>The harbour was quiet. Gulls circled over the masts. Nobody moved on the quay.</p>\n"
        '<p>She read the <em>whole letter</em> twice. Then she went to <a href="chapter2.xhtml">the inn</a> and '
        "waited.</p>\n"
        '<p>It began <em>slowly. Then it</em> rained hard.<a epub:type="noteref" href="#n1">1</a> The roads '
        "flooded.</p>\n"
        '<p><img src="images/map.png" alt="a map"/>The map showed <ruby>東<rt>とう</rt>京<rt>きょう</rt></ruby> '
        "in the corner. It was old.</p>\n"
        '<aside epub:type="footnote" id="n1"><p>A note about the rain.</p></aside>\n',
        "One",
        head=css,
    )
    two = xhtml(
        '<h1 id="c2">Chapter Two</h1>\n<p>The inn was warm. A fire burned in the hearth.</p>\n'
        "<ul><li>Bread was on the table.</li><li>Wine stood beside it.</li></ul>\n"
        '<h1 id="c3">Chapter Three</h1>\n'
        "<table><tr><th>Day</th><th>Weather</th></tr><tr><td>Monday was grey.</td><td>Tuesday was clear.</td></tr>"
        "</table>\n<p>They left at dawn. The sea was calm again.</p>\n",
        "Two and Three",
        head=css,
    )
    documents = [("chapter1.xhtml", one), ("chapter2.xhtml", two)]
    toc = [Nav("One", "chapter1.xhtml"), Nav("Two", "chapter2.xhtml#c2"), Nav("Three", "chapter2.xhtml#c3")]
    extra: dict[str, str | bytes] = {
        f"{OPS}/style.css": READALONG_CSS,
        f"{OPS}/images/map.png": _png(),
        f"{OPS}/fonts/serif.woff": FONT_BYTES,
    }
    manifest = {"style.css": "text/css", "images/map.png": "image/png", "fonts/serif.woff": "font/woff"}
    attrs: dict[str, str] = {}
    metadata = ""
    if overlays:
        smil = (
            '<?xml version="1.0" encoding="utf-8"?>\n<smil xmlns="http://www.w3.org/ns/SMIL" version="3.0">'
            '<body><par id="p1"><text src="../chapter1.xhtml#c1"/>'
            '<audio src="../audio/old.mp3" clipBegin="0:00:00.000" clipEnd="0:00:01.000"/></par></body></smil>\n'
        )
        extra[f"{OPS}/smil/chapter1.smil"] = smil
        extra[f"{OPS}/audio/old.mp3"] = _silent_mp3()
        manifest.update({"smil/chapter1.smil": "application/smil+xml", "audio/old.mp3": "audio/mpeg"})
        attrs["chapter1.xhtml"] = ' media-overlay="i-smil-chapter1-smil"'
        metadata = (
            '<meta property="media:duration" refines="#i-smil-chapter1-smil">0:00:01.000</meta>'
            '<meta property="media:duration">0:00:01.000</meta>'
            '<meta property="media:active-class">old-active</meta>'
        )
    return write_epub(
        path,
        documents,
        toc,
        extra=extra,
        extra_manifest=manifest,
        modified=True,
        item_attrs=attrs,
        metadata=metadata,
    )


def readalong_rtl(path: Path) -> Path:
    """A right-to-left book (Arabic): ``dir="rtl"`` documents, the spine read right to left."""
    one = xhtml(
        "<h1>الفصل الأول</h1>\n<p>كان البحر هادئا. طارت النوارس فوق السفن. لم يتحرك أحد.</p>\n"
        "<p>قرأت <em>الرسالة كلها</em> مرتين. ثم ذهبت إلى النزل.</p>\n",
        "الفصل الأول",
        lang="ar",
        direction="rtl",
    )
    return write_epub(path, [("chapter1.xhtml", one)], language="ar", direction="rtl", modified=True)


def readalong_vertical(path: Path) -> Path:
    """Vertical Japanese: ``writing-mode: vertical-rl``, pages turned right to left, ruby over the kanji."""
    one = xhtml(
        "<h1>第一章</h1>\n<p>港は静かだった。<ruby>海<rt>うみ</rt></ruby>の上を鳥が飛んでいた。誰も動かなかった。</p>\n"
        "<p>彼女は手紙を<em>二度</em>読んだ。それから宿へ行った。</p>\n",
        "第一章",
        lang="ja",
        style="html { writing-mode: vertical-rl; -epub-writing-mode: vertical-rl; }",
    )
    return write_epub(path, [("chapter1.xhtml", one)], language="ja", direction="rtl", modified=True)


def readalong_published_overlays(path: Path) -> Path:
    """A Japanese book with narration of its own, in the shape published samples have: vertical text in two files,
    each with its Media Overlay (SMIL) and audio, and package metadata that refines them: ``media:duration`` of every
    overlay, a ``media:narrator`` for one overlay, the narrator's and the author's ``file-as`` and role."""
    style = "html { writing-mode: vertical-rl; -epub-writing-mode: vertical-rl; }"
    one = xhtml(
        '<h1 id="h1">第一章</h1>\n<p id="p1">港は静かだった。鳥が飛んでいた。</p>\n',
        "第一章",
        lang="ja",
        style=style,
    )
    two = xhtml(
        '<h1 id="h2">第二章</h1>\n<p id="p2">彼女は手紙を読んだ。それから宿へ行った。</p>\n',
        "第二章",
        lang="ja",
        style=style,
    )
    extra: dict[str, str | bytes] = {}
    manifest: dict[str, str] = {}
    attrs: dict[str, str] = {}
    metadata = (
        '<meta property="media:narrator" id="narrator">山田花子</meta>'
        '<meta refines="#narrator" property="file-as">ヤマダハナコ</meta>'
        '<meta property="media:active-class">-epub-media-overlay-active</meta>'
        '<meta property="media:duration">0:00:02.000</meta>'
    )
    for number, name in ((1, "chapter1.xhtml"), (2, "chapter2.xhtml")):
        smil_id = f"i-smil-chapter{number}-smil"
        extra[f"{OPS}/smil/chapter{number}.smil"] = (
            '<?xml version="1.0" encoding="utf-8"?>\n<smil xmlns="http://www.w3.org/ns/SMIL" '
            'xmlns:epub="http://www.idpf.org/2007/ops" version="3.0"><body>'
            f'<seq epub:textref="../{name}"><par id="par{number}-1"><text src="../{name}#h{number}"/>'
            f'<audio src="../audio/chapter{number}.mp3" clipBegin="0:00:00.000" clipEnd="0:00:00.500"/></par>'
            f'<par id="par{number}-2"><text src="../{name}#p{number}"/>'
            f'<audio src="../audio/chapter{number}.mp3" clipBegin="0:00:00.500" clipEnd="0:00:01.000"/></par>'
            "</seq></body></smil>\n"
        )
        extra[f"{OPS}/audio/chapter{number}.mp3"] = _silent_mp3()
        manifest[f"smil/chapter{number}.smil"] = "application/smil+xml"
        manifest[f"audio/chapter{number}.mp3"] = "audio/mpeg"
        attrs[name] = f' media-overlay="{smil_id}"'
        metadata += f'<meta property="media:duration" refines="#{smil_id}">0:00:01.000</meta>'
    metadata += '<meta property="media:narrator" refines="#i-smil-chapter2-smil">鈴木一郎</meta>'
    creators = (
        '<dc:creator id="creator01">夏目漱石</dc:creator>'
        '<meta refines="#creator01" property="role" scheme="marc:relators">aut</meta>'
        '<meta refines="#creator01" property="file-as">ナツメ, ソウセキ</meta>'
    )
    return write_epub(
        path,
        [("chapter1.xhtml", one), ("chapter2.xhtml", two)],
        [Nav("第一章", "chapter1.xhtml"), Nav("第二章", "chapter2.xhtml")],
        title="港",
        language="ja",
        direction="rtl",
        extra=extra,
        extra_manifest=manifest,
        modified=True,
        item_attrs=attrs,
        metadata=metadata,
        creators=creators,
    )


def _png() -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b"")
    )


def _silent_mp3() -> bytes:
    import io

    import av
    import numpy as np

    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp3") as container:
        stream = container.add_stream("libmp3lame", rate=24000, layout="mono")
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 24000), np.float32), format="flt", layout="mono")
        frame.sample_rate, frame.pts = 24000, 0
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            container.mux(packet)
    return buffer.getvalue()
