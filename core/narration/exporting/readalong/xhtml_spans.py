"""Narrated sentences wrapped in ``<span id=…>`` inside a book's own XHTML, and nothing else in its markup changed.

A segment is found by its block (numbered as the import numbered it:
:func:`core.narration.importing.html_text.text_runs` with the same chapter anchors) and its character range in that
block's text; the range is mapped back to the document's strings (a block's text is its strings with whitespace
collapsed). The span goes where both ends of the sentence share a parent, after lifting an end out of an inline element
(``<em>``, ``<a>``, ``<ruby>``) that the sentence starts or ends with. A sentence whose ends cannot meet without
cutting an element (it begins inside an ``<em>`` that holds the next sentence too) is given the smallest element that
holds it instead: that element's own ``id``, or a new one. A document that is not well-formed XML is left as it is (no
overlay).

A book highlighted word by word gets a second pass: the document's blocks read again (the sentence spans changed no
text), each segment's words found in its text (:func:`core.narration.exporting.word_times.find_words`) and each
wrapped in a span of its own inside the sentence's, the same way. A segment one of whose words cannot be a span
without cutting an element (``wo<em>rd</em> <b>…``: a word that ends inside an element holding more) gets none: it
stays a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from core.narration.exporting.word_times import find_words
from core.narration.importing.html_text import TextRun, local_name, text_runs

XHTML_NS = "http://www.w3.org/1999/xhtml"
ID_PREFIX = "cbx-s"
"""The ids of the spans added (``cbx-s12`` wraps segment 12); a book's own id of that name is never reused."""
WORD_PREFIX = "cbx-w"
"""The ids of the word spans added (``cbx-w12-3`` wraps the third placed word of segment 12)."""
_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_comments=False, remove_pis=False
)
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)
_ANNOTATIONS = frozenset({"rt", "rp", "rtc"})
_CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
_CJK_WRAP = re.compile(rf"(?<=[{_CJK}])[ \t\r]*\n\s*(?=[{_CJK}])")


@dataclass(frozen=True)
class Wanted:
    """A segment to find in the document: its number, its block there, and its range in the block's text."""

    number: int
    block: int
    start: int
    end: int
    speaker: str | None = None
    """Who says it: the new span's ``title`` (``None``: none)."""
    words: tuple[str, ...] = ()
    """Its words to wrap one by one, in order (empty: the sentence alone)."""


@dataclass
class Marked:
    data: bytes
    """The document with the spans (and the stylesheet link) added."""
    ids: dict[int, str] = field(default_factory=dict)
    """Segment number → the id of the element that holds it (a new span, or the smallest element around it)."""
    texts: dict[int, str] = field(default_factory=dict)
    """Segment number → the block text of its range (what the reader sees highlighted)."""
    lost: list[int] = field(default_factory=list)
    """Segments not found where their place says (the book changed, or the place is stale): no overlay."""
    words: dict[int, list[str]] = field(default_factory=dict)
    """Segment number → the id of each of its words' spans, in order (missing: its words were not wrapped)."""


def parse(data: bytes) -> Any:
    """The document's tree (comments and processing instructions kept); ``ValueError`` if it is not XML."""
    try:
        return etree.fromstring(data, _PARSER).getroottree()
    except etree.XMLSyntaxError as exc:
        raise ValueError(str(exc)) from exc


def mark(data: bytes, anchors: set[str], wanted: Sequence[Wanted], stylesheet: str | None) -> Marked:
    """Wrap every ``wanted`` segment of one document; ``stylesheet``: a ``<link>`` to add to its head."""
    tree = parse(data)
    root = tree.getroot()
    runs = [r for r in text_runs(root, anchors) if isinstance(r, TextRun)]
    taken = {value for value in (e.get("id") for e in root.iter() if isinstance(e.tag, str)) if value}
    out = Marked(b"")
    places = []
    for item in wanted:
        if not 0 <= item.block < len(runs):
            out.lost.append(item.number)
            continue
        run = runs[item.block]
        text, origin = collapse(run.pieces)
        if text != run.block.text or not 0 <= item.start < item.end <= len(text):
            out.lost.append(item.number)
            continue
        places.append((item, run, origin))
        out.texts[item.number] = text[item.start : item.end]
    places.sort(key=lambda p: (p[0].block, p[0].start), reverse=True)  # the last first: earlier places stay valid
    extents: dict[int, dict] = {}
    for item, run, origin in places:
        if item.block not in extents:
            extents[item.block] = _extent(run, origin)
        out.ids[item.number] = _wrap(run, origin, item, taken, extents[item.block])
    worded = [item for item in wanted if item.words and item.number in out.ids]
    if worded:
        _wrap_words(root, anchors, worded, out, taken)
    if stylesheet is not None:
        _link_stylesheet(root, stylesheet)
    _keep_open_tags(root)
    declaration = data.lstrip().startswith(b"<?xml")
    out.data = etree.tostring(tree, encoding="utf-8", xml_declaration=declaration)
    return out


def collapse(pieces: Sequence[tuple[str, Any, str | None]]) -> tuple[str, list[tuple[int, int]]]:
    """A block's text from its strings (as :func:`core.narration.importing.html_text._words` collapses it) and, for
    each of its characters, the string and offset it comes from."""
    raw = "".join(p[0] for p in pieces)
    where: list[tuple[int, int]] = []
    for index, piece in enumerate(pieces):
        where += [(index, offset) for offset in range(len(piece[0]))]
    dropped = bytearray(len(raw))
    if "\n" in raw:
        for match in _CJK_WRAP.finditer(raw):
            dropped[match.start() : match.end()] = b"\x01" * (match.end() - match.start())
    chars: list[str] = []
    origin: list[tuple[int, int]] = []
    space: tuple[int, int] | None = None
    for position, ch in enumerate(raw):
        if dropped[position]:
            continue
        if ch.isspace():
            if chars and space is None:
                space = where[position]
            continue
        if space is not None:
            chars.append(" ")
            origin.append(space)
            space = None
        chars.append(ch)
        origin.append(where[position])
    return "".join(chars), origin


def _wrap_words(root: Any, anchors: set[str], worded: Sequence[Wanted], out: Marked, taken: set[str]) -> None:
    """The second pass: each segment's words in spans inside its own (the last segment first, its last word first,
    so the places found before any change stay valid)."""
    runs = [r for r in text_runs(root, anchors) if isinstance(r, TextRun)]
    blocks: dict[int, tuple[list[tuple[int, int]], dict]] = {}
    for item in sorted(worded, key=lambda w: (w.block, w.start), reverse=True):
        places = find_words(out.texts[item.number], item.words)
        if places is None or not 0 <= item.block < len(runs):
            continue
        run = runs[item.block]
        if item.block not in blocks:
            text, origin = collapse(run.pieces)
            if text != run.block.text:
                continue
            blocks[item.block] = (origin, _extent(run, origin))
        origin, inside = blocks[item.block]
        spans = [_place(run, origin, item.start + low, item.start + high, inside) for low, high in places]
        if any(start is None or end is None for _parent, start, end in spans):
            continue  # a word that would cut an element: the segment stays a sentence
        ids = [_new_id(f"{WORD_PREFIX}{item.number}-{k}", taken) for k in range(1, len(spans) + 1)]
        for (parent, start, end), ident in reversed(list(zip(spans, ids))):
            assert start is not None and end is not None
            _span(parent, start, end, ident)
        out.words[item.number] = ids


def _wrap(run: TextRun, origin: list[tuple[int, int]], item: Wanted, taken: set[str], inside: dict) -> str:
    parent, start, end = _place(run, origin, item.start, item.end, inside)
    if start is None or end is None:
        return _element_id(parent, item.number, taken)
    ident = _new_id(f"{ID_PREFIX}{item.number}", taken)
    span = _span(parent, start, end, ident)
    if item.speaker:
        span.set("title", item.speaker)
    return ident


Position = tuple[Any, str, int]


def _place(
    run: TextRun, origin: list[tuple[int, int]], low: int, high: int, inside: dict
) -> tuple[Any, Position | None, Position | None]:
    """Where a span around characters ``low``–``high`` of the block goes: its parent and both ends, after lifting
    an end out of an element the range starts or ends with; or, where no span can hold them without cutting an
    element, the smallest element that holds them and no ends."""
    first, last = origin[low], origin[high - 1]
    start = _position(run, first[0], first[1])
    end = _position(run, last[0], last[1] + 1)
    if start is None or end is None:
        return next(n for _t, n, _a in run.pieces if n is not None), None, None
    common = _common(_container(start), _container(end))
    while True:
        while _container(start) is not common:
            box = _container(start)
            if inside.get(box, (low, 0))[0] < low:
                return common, None, None
            start = _before(box)
        while _container(end) is not common:
            box = _container(end)
            if inside.get(box, (0, high - 1))[1] >= high:
                return common, None, None
            end = (box, "tail", 0)
        parent = common.getparent()
        if not _holds_annotation(common, start, end) or parent is None:
            return common, start, end
        common = parent  # a span may hold a ruby's base text, never its readings: around the whole ruby instead


def _holds_annotation(parent: Any, start: Position, end: Position) -> bool:
    """A span from ``start`` to ``end`` in ``parent`` would hold a ruby's reading (``rt``, ``rp``, ``rtc``)."""
    k1 = -1 if start[1] == "text" else parent.index(start[0])
    k2 = -1 if end[1] == "text" else parent.index(end[0])
    return any(local_name(child) in _ANNOTATIONS for child in parent[k1 + 1 : k2 + 1])


def _position(run: TextRun, index: int, offset: int) -> tuple[Any, str, int] | None:
    _text, node, attr = run.pieces[index]
    if node is None or attr is None:
        return None
    return node, attr, offset


def _container(position: tuple[Any, str, int]) -> Any:
    node, attr, _offset = position
    return node if attr == "text" else node.getparent()


def _before(element: Any) -> tuple[Any, str, int]:
    previous = element.getprevious()
    if previous is not None:
        return previous, "tail", len(previous.tail or "")
    parent = element.getparent()
    return parent, "text", len(parent.text or "")


def _common(a: Any, b: Any) -> Any:
    above = {id(e): e for e in [a, *a.iterancestors()]}
    for element in [b, *b.iterancestors()]:
        if id(element) in above:
            return element
    return a.getroottree().getroot()


def _extent(run: TextRun, origin: list[tuple[int, int]]) -> dict[Any, tuple[int, int]]:
    """Element → the first and last character of the block's text it holds."""
    out: dict[Any, tuple[int, int]] = {}
    for index, (piece, _offset) in enumerate(origin):
        _text, node, attr = run.pieces[piece]
        if node is None:
            continue
        holder = node if attr == "text" else node.getparent()
        for element in [holder, *holder.iterancestors()]:
            low, high = out.get(element, (index, index))
            out[element] = (min(low, index), max(high, index))
    return out


def _span(parent: Any, start: tuple[Any, str, int], end: tuple[Any, str, int], ident: str) -> Any:
    namespace = etree.QName(parent).namespace
    span = parent.makeelement(f"{{{namespace}}}span" if namespace else "span", {"id": ident})
    k1 = -1 if start[1] == "text" else parent.index(start[0])
    k2 = -1 if end[1] == "text" else parent.index(end[0])
    o1, o2 = start[2], end[2]

    def get(k: int) -> str:
        return (parent.text if k == -1 else parent[k].tail) or ""

    def put(k: int, value: str) -> None:
        if k == -1:
            parent.text = value or None
        else:
            parent[k].tail = value or None

    before = get(k1)
    if k1 == k2:
        span.text, span.tail = before[o1:o2] or None, before[o2:] or None
        put(k1, before[:o1])
    else:
        span.text = before[o1:] or None
        put(k1, before[:o1])
        moved = list(parent[k1 + 1 : k2 + 1])
        after = moved[-1].tail or ""
        for child in moved:
            span.append(child)  # each child's tail moves with it
        moved[-1].tail = after[:o2] or None
        span.tail = after[o2:] or None
    parent.insert(k1 + 1, span)
    return span


def _element_id(element: Any, number: int, taken: set[str]) -> str:
    ident = element.get("id")
    if not ident:
        ident = _new_id(f"{ID_PREFIX}{number}", taken)
        element.set("id", ident)
    return str(ident)


def _new_id(ident: str, taken: set[str]) -> str:
    candidate, suffix = ident, 1
    while candidate in taken:
        suffix += 1
        candidate = f"{ident}-{suffix}"
    taken.add(candidate)
    return candidate


def _link_stylesheet(root: Any, href: str) -> None:
    head = next((e for e in root if local_name(e) == "head"), None)
    if head is None:
        return
    namespace = etree.QName(root).namespace
    link = head.makeelement(
        f"{{{namespace}}}link" if namespace else "link", {"rel": "stylesheet", "type": "text/css", "href": href}
    )
    head.append(link)


def _keep_open_tags(root: Any) -> None:
    """An empty element that is not void (``<a id="p1"></a>``, ``<div></div>``) keeps its end tag: lxml would
    write it self-closed, which an HTML parser reads as an open tag."""
    for element in root.iter():
        empty = isinstance(element.tag, str) and element.text is None and not len(element)
        if empty and local_name(element) not in _VOID:
            element.text = ""
