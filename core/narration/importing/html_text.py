"""XHTML (an EPUB's content documents) into blocks of the text a reader sees, in reading order.

Every piece of visible text lands in exactly one block: text placed directly in a block that also holds child blocks
(``<div>Intro <p>…</p> tail</div>``) becomes paragraphs of its own before and after the children; ``<br/>`` separates
words; ``<address>``, ``<blockquote>``, tables and lists are read; ruby is read once, by its base text (never
``<rt>``/``<rp>``); scripts, styles and the head are not text. Element ids the caller names (the navigation's
anchors) come out as :class:`Anchor` marks between the blocks, so a file holding several chapters can be cut there.
The text of a ``<nav>`` (a table of contents, landmarks or a page list inside a content document) is kept in blocks
marked :attr:`~core.narration.importing.document.Block.skipped`: seen, not narrated unless the user says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lxml import etree, html

from core.narration.importing.document import Block

BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog", "dir",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "hr", "legend",
        "li", "main", "menu", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th",
        "thead", "tr", "ul",
    }
)  # fmt: skip
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
HIDDEN_TAGS = frozenset({"head", "script", "style", "template", "rt", "rp"})
"""Elements whose text is never read (``rt``/``rp``: ruby readings, the base text is read instead)."""
UNSPOKEN_TYPES = frozenset({"noteref", "pagebreak", "doc-noteref", "doc-pagebreak"})
"""``epub:type`` or ``role`` of marks that are seen but not read aloud: footnote reference marks ("¹", "[12]") and
page numbers of the printed edition. The notes themselves are read where they stand."""
EPUB_NS = "http://www.idpf.org/2007/ops"
_XML_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_comments=True, remove_pis=True
)


@dataclass(frozen=True)
class Anchor:
    """An element with one of the requested ids starts here (between the blocks before and after it)."""

    id: str


def parse_xhtml(data: bytes) -> etree._Element:
    """The document's root: parsed as XML (what EPUB requires), else leniently as HTML (``&nbsp;`` without a DTD,
    unclosed tags). No entity, DTD or network access either way. Raises ``ValueError`` for bytes that hold no
    document at all."""
    try:
        return etree.fromstring(data, _XML_PARSER)
    except etree.XMLSyntaxError:
        pass
    try:
        root = html.fromstring(data, parser=html.HTMLParser(encoding=_encoding(data), no_network=True))
    except (etree.ParserError, etree.XMLSyntaxError) as exc:
        raise ValueError(str(exc)) from exc
    if root is None:
        raise ValueError("empty document")
    return root


def local_name(node) -> str | None:
    """An element's tag without its namespace, lower case (``None`` for comments, entities and the like)."""
    tag = node.tag
    if not isinstance(tag, str):
        return None
    return tag.rsplit("}", 1)[-1].lower()


def epub_types(node) -> set[str]:
    """The ``epub:type`` words of an element (XML parse: a namespaced attribute; HTML parse: ``epub:type``)."""
    value = node.get(f"{{{EPUB_NS}}}type") or node.get("epub:type") or ""
    return set(value.split())


def body_of(root) -> etree._Element:
    for node in root.iter():
        if local_name(node) == "body":
            return node
    return root


def page_types(root) -> set[str]:
    """``epub:type`` words of the body and its direct children (``cover``, ``toc``, ``titlepage``…), a ``<nav>``
    aside: a chapter may open with contents of its own (:func:`text_runs` keeps a nav's text as skipped blocks)."""
    body = body_of(root)
    out = epub_types(body)
    for child in body:
        if local_name(child) not in (None, "nav"):
            out |= epub_types(child)
    return out


Piece = tuple[str, Any, str | None]
"""A run of a block's raw text: the string, the element holding it and ``"text"`` or ``"tail"`` (which of its strings);
``(" ", None, None)`` for a space a boundary or ``<br/>`` adds."""


@dataclass
class TextRun:
    """A block and the raw strings of the document its text is made of (collapsed by :func:`collapse`)."""

    block: Block
    pieces: list[Piece]


def html_blocks(root, anchors: Iterable[str] = ()) -> list[Block | Anchor]:
    """Headings and paragraphs of a parsed document in reading order, with an :class:`Anchor` where an element
    whose ``id`` is one of ``anchors`` begins."""
    return [r.block if isinstance(r, TextRun) else r for r in text_runs(root, anchors)]


def text_runs(root, anchors: Iterable[str] = ()) -> list[TextRun | Anchor]:
    """:func:`html_blocks` with the strings of the document each block comes from (the read-along export wraps
    sentences found there; both walk the same way, so a block's number in its file finds it again)."""
    wanted = frozenset(anchors)
    out: list[TextRun | Anchor] = []
    run: list[Piece] = []
    navs = 0
    """``<nav>`` elements open around the current node: their blocks are skipped."""

    def flush() -> None:
        words = _words("".join(p[0] for p in run))
        if words:
            out.append(TextRun(Block("paragraph", words, skipped=navs > 0), list(run)))
        run.clear()

    stack: list[tuple[etree._Element, bool]] = [(body_of(root), False)]
    while stack:
        node, closing = stack.pop()
        tag = local_name(node)
        if closing:
            if tag in BLOCK_TAGS:
                flush()
            if tag == "nav":
                navs -= 1
            if node.tail:
                run.append((node.tail, node, "tail"))
            continue
        if tag is None or tag in HIDDEN_TAGS or _unspoken(node):
            if node.tail:
                run.append((node.tail, node, "tail"))
            continue
        ident = _anchor_id(node, tag)
        if ident in wanted:
            flush()
            out.append(Anchor(ident))
        if tag in HEADING_TAGS:
            flush()
            inner = [a for a in (_anchor_id(d, local_name(d)) for d in node.iterdescendants()) if a in wanted]
            out += [Anchor(a) for a in inner if a != ident]
            pieces = visible_pieces(node)
            words = _words("".join(p[0] for p in pieces))
            if words:
                out.append(TextRun(Block("heading", words, skipped=navs > 0), pieces))
            if node.tail:
                run.append((node.tail, node, "tail"))
            continue
        if tag == "br":
            run.append((" ", None, None))
            if node.tail:
                run.append((node.tail, node, "tail"))
            continue
        if tag in BLOCK_TAGS:
            flush()
        if tag == "nav":
            navs += 1
        if node.text:
            run.append((node.text, node, "text"))
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node))
    flush()
    return out


def visible_text(node) -> str:
    """The text of an element and its descendants as a reader sees it (no ruby readings, scripts or styles;
    ``<br/>`` and block boundaries separate words)."""
    return "".join(p[0] for p in visible_pieces(node))


def visible_pieces(node) -> list[Piece]:
    """:func:`visible_text` as the strings of the document it is made of."""
    parts: list[Piece] = []
    space: Piece = (" ", None, None)
    stack: list[tuple[etree._Element, bool]] = [(node, False)]
    while stack:
        current, closing = stack.pop()
        tag = local_name(current)
        if closing:
            if tag in BLOCK_TAGS or tag in HEADING_TAGS:
                parts.append(space)
            if current.tail and current is not node:
                parts.append((current.tail, current, "tail"))
            continue
        if tag is None or tag in HIDDEN_TAGS or tag == "br":
            if tag == "br":
                parts.append(space)
            if current.tail and current is not node:
                parts.append((current.tail, current, "tail"))
            continue
        if tag in BLOCK_TAGS or tag in HEADING_TAGS:
            parts.append(space)
        if current.text:
            parts.append((current.text, current, "text"))
        stack.append((current, True))
        stack.extend((child, False) for child in reversed(current))
    return parts


_CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
_CJK_WRAP = re.compile(rf"(?<=[{_CJK}])[ \t\r]*\n\s*(?=[{_CJK}])")


def _words(text: str) -> str:
    """Whitespace collapsed to single spaces; a line break of the source between two Chinese or Japanese characters
    is no space at all (those scripts put none between words; the break only wrapped the file's line)."""
    if "\n" in text:
        text = _CJK_WRAP.sub("", text)
    return " ".join(text.split())


def _unspoken(node) -> bool:
    marks = epub_types(node)
    role = node.get("role")
    if role:
        marks.add(role)
    return bool(marks & UNSPOKEN_TYPES)


def _anchor_id(node, tag: str | None) -> str | None:
    if tag is None:
        return None
    return node.get("id") or (node.get("name") if tag == "a" else None)


def _encoding(data: bytes) -> str:
    """The encoding an XML declaration or BOM names (XHTML's default: UTF-8)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    head = data[:200].decode("ascii", "replace")
    marker = head.find("encoding=")
    if head.startswith("<?xml") and marker > 0:
        value = head[marker + 9 :].lstrip()[1:].split(head[marker + 9 :].lstrip()[:1] or '"')[0]
        try:
            "".encode(value)
            return value
        except LookupError:
            pass
    return "utf-8"
