"""Text, Markdown and EPUB into a document of headings and paragraphs, and a document into project segments.

- Plain text: paragraphs are separated by blank lines (hard-wrapped lines are joined); ``[chapter]`` or
  ``[chapter: Title]`` on a line of its own starts a chapter.
- Markdown: the highest heading level used (``#`` normally) starts chapters, lower ones are spoken headings; links,
  emphasis, code, images, lists and quotes are reduced to their words; fenced code is skipped.
- EPUB (``ebooklib``): each spine document with text is a chapter titled from the book's table of contents (or its
  first heading); DRM-protected books and books without text are refused with a message saying so.

Everywhere, ``[voice:Name]`` switches the voice from that point and ``[pause:2s]`` sets the pause after the
sentence before it; sentences come from ``pysbd`` in the book's language (:mod:`core.narration.sentences`).
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from core.engine import Pause, Sentence, TextInputError, clean_text, find_pauses
from core.narration.dialogue import sentence_parts
from core.narration.project import Chapter, Segment
from core.narration.sentences import split_sentences

PAUSE_SENTENCE_S = 0.3
PAUSE_PARAGRAPH_S = 0.8
PAUSE_HEADING_S = 1.0
PAUSE_CHAPTER_S = 2.0
PAUSE_PART_S = 0.1
"""Between the parts of one sentence cut at its quotes (speech and narration)."""
MAX_BOOK_CHARS = 5_000_000
TEXT_SUFFIXES = (".txt", ".text")
MARKDOWN_SUFFIXES = (".md", ".markdown")
EPUB_SUFFIXES = (".epub",)

_VOICE_TAG = re.compile(r"\[voice\s*:\s*([^\[\]\n]{1,80}?)\s*\]", re.IGNORECASE)
_PAGE_NUMBER = re.compile(r"^\s*[\[{(—–-]*\s*(?:p(?:g|age)?\.?\s*)?(?:\d{1,4}|[ivxlc]{1,7})\s*[\]})—–-]*\s*$")
_PAUSE_TAGS = re.compile(r"\[pause[^\[\]\n]*\]", re.IGNORECASE)
_CHAPTER_MARK = re.compile(r"^\s*\[chapter(?:\s*:\s*([^\[\]\n]{0,200}?))?\s*\]\s*$", re.IGNORECASE)


def _chapter_title(line: str) -> str:
    """The title of a ``[chapter: Title]`` line (empty for ``[chapter]`` or another line)."""
    match = _CHAPTER_MARK.match(line)
    return (match.group(1) or "").strip() if match else ""


@dataclass
class Block:
    kind: str
    """``chapter`` (starts a chapter; its text, if any, is spoken as a heading), ``heading`` or ``paragraph``."""
    text: str


@dataclass
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)
    author: str = ""
    language: str = ""
    """The book's own language code (an EPUB's ``dc:language``), if it says; a new project is read in it."""


class DocumentError(TextInputError):
    """The file cannot be turned into a narration (unreadable, not the format it claims, DRM, no text)."""


# --- reading ------------------------------------------------------------------------------------------------------
def read_document(path: Path) -> Document:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in EPUB_SUFFIXES:
        return read_epub(path)
    if suffix not in TEXT_SUFFIXES + MARKDOWN_SUFFIXES:
        kinds = list(TEXT_SUFFIXES + MARKDOWN_SUFFIXES + EPUB_SUFFIXES)
        raise DocumentError("document.bad_suffix", name=path.name, suffixes=kinds)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError as exc:
        raise DocumentError("document.missing", path=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise DocumentError("document.not_utf8", name=path.name) from exc
    except OSError as exc:
        raise DocumentError("document.unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    return parse_markdown(text, path.stem) if suffix in MARKDOWN_SUFFIXES else parse_text(text, path.stem)


def parse_text(text: str, title: str) -> Document:
    _check_size(text)
    doc = Document(title)
    for chunk in _paragraphs(text):
        mark = _CHAPTER_MARK.match(chunk) if "\n" not in chunk else None
        if mark:
            doc.blocks.append(Block("chapter", (mark.group(1) or "").strip()))
            continue
        lines = [line for line in chunk.split("\n") if line.strip()]
        marks = [i for i, line in enumerate(lines) if _CHAPTER_MARK.match(line)]
        if not marks:
            doc.blocks.append(Block("paragraph", " ".join(lines)))
            continue
        cursor = 0
        for i in marks + [len(lines)]:
            if lines[cursor:i]:
                doc.blocks.append(Block("paragraph", " ".join(lines[cursor:i])))
            if i < len(lines):
                doc.blocks.append(Block("chapter", _chapter_title(lines[i])))
            cursor = i + 1
    return doc


_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_INLINE = (
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), ""),  # images
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links keep their words
    (re.compile(r"`([^`]*)`"), r"\1"),
    (re.compile(r"(\*\*|__)(.+?)\1"), r"\2"),
    (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"\1"),
    (re.compile(r"(?<!\w)_(?!\s)(.+?)(?<!\s)_(?!\w)"), r"\1"),
    (re.compile(r"~~(.+?)~~"), r"\1"),
    (re.compile(r"<[^>\n]+>"), " "),  # inline HTML tags
)
_LINE_PREFIX = re.compile(r"^\s{0,3}(?:>\s?)*(?:[-*+]\s+|\d{1,9}[.)]\s+)?")


def parse_markdown(text: str, title: str) -> Document:
    _check_size(text)
    headings: list[tuple[int, str]] = []
    blocks: list[tuple[str, str, int]] = []
    paragraph: list[str] = []
    in_fence = False

    def flush():
        if paragraph:
            blocks.append(("paragraph", " ".join(paragraph), 0))
            paragraph.clear()

    for line in text.replace("\r\n", "\n").split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            flush()
            continue
        if in_fence:
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            level, words = len(heading.group(1)), _inline(heading.group(2))
            headings.append((level, words))
            blocks.append(("heading", words, level))
        elif _SETEXT.match(line) and len(paragraph) == 1 and not _RULE.match(paragraph[0]):
            level = 1 if line.strip().startswith("=") else 2
            words = paragraph.pop()
            headings.append((level, words))
            blocks.append(("heading", words, level))
        elif not line.strip() or _RULE.match(line):
            flush()
        elif _CHAPTER_MARK.match(line):
            flush()
            blocks.append(("chapter", _chapter_title(line), 0))
        else:
            words = _inline(_LINE_PREFIX.sub("", line, count=1).replace("|", " "))
            if words:
                paragraph.append(words)
    flush()
    chapter_level = min((level for level, _ in headings), default=0)
    doc = Document(title)
    for kind, words, level in blocks:
        if kind == "heading" and level == chapter_level:
            kind = "chapter"
        doc.blocks.append(Block(kind, words))
    return doc


def _inline(text: str) -> str:
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    return " ".join(text.split())


def _paragraphs(text: str) -> list[str]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return [p.strip("\n") for p in re.split(r"\n[ \t]*\n", text) if p.strip()]


def _check_size(text: str) -> None:
    if len(text) > MAX_BOOK_CHARS:
        raise DocumentError("document.too_long", chars=len(text), limit=MAX_BOOK_CHARS)


# --- EPUB ---------------------------------------------------------------------------------------------------------
_FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")
_BLOCK_TAGS = {"p", "li", "blockquote", "pre", "dd", "dt", "td", "th", "figcaption", "div", "section"}
_HEADING_TAGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


def read_epub(path: Path) -> Document:
    import ebooklib
    from ebooklib import epub
    from lxml import html

    _refuse_drm(path)
    try:
        book = epub.read_epub(str(path), options={"ignore_ncx": False})
    except Exception as exc:  # ebooklib raises many kinds for a broken book
        raise DocumentError("document.bad_epub", name=path.name, reason=f"{type(exc).__name__}: {exc}") from exc
    titles = _toc_titles(book.toc)
    doc = Document(_metadata(book, "title") or path.stem, author=_metadata(book, "creator"))
    for idref, *_ in book.spine:
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT or isinstance(item, epub.EpubNav):
            continue
        try:
            tree = html.fromstring(item.get_content())
        except Exception:  # noqa: BLE001 - an empty or broken chapter file is skipped
            continue
        blocks = _html_blocks(tree)
        if not any(b.kind == "paragraph" for b in blocks):
            continue  # cover, title page image, blank page
        title = titles.get(PurePosixPath(item.get_name()).name) or ""
        if blocks[0].kind == "heading":
            title = title or blocks[0].text
            blocks = blocks[1:]
        doc.blocks.append(Block("chapter", title or f"Chapter {sum(b.kind == 'chapter' for b in doc.blocks) + 1}"))
        doc.blocks += blocks
    if not doc.blocks:
        raise DocumentError("document.no_text", name=path.name)
    return doc


def _refuse_drm(path: Path) -> None:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if "META-INF/rights.xml" in names:
                raise DocumentError("document.drm", name=path.name, scheme="adept")
            if "META-INF/encryption.xml" in names:
                xml = archive.read("META-INF/encryption.xml").decode("utf-8", "replace")
                methods = re.findall(r'EncryptionMethod[^>]*Algorithm="([^"]+)"', xml)
                targets = re.findall(r'CipherReference[^>]*URI="([^"]+)"', xml)
                fonts_only = all(m in _FONT_OBFUSCATION for m in methods) or all(
                    t.lower().endswith((".ttf", ".otf", ".woff", ".woff2")) for t in targets
                )
                if not fonts_only:
                    raise DocumentError("document.drm", name=path.name, scheme="encrypted")
    except FileNotFoundError as exc:
        raise DocumentError("document.missing", path=str(path)) from exc
    except (zipfile.BadZipFile, OSError) as exc:
        raise DocumentError("document.not_zip", name=path.name) from exc


def _metadata(book, name: str) -> str:
    values = book.get_metadata("DC", name)
    return " ".join(str(values[0][0]).split()) if values and values[0] and values[0][0] else ""


def _toc_titles(toc) -> dict[str, str]:
    """File name → the first table-of-contents title that points into it."""
    out: dict[str, str] = {}
    for entry in toc:
        if isinstance(entry, (tuple, list)):
            section, children = entry[0], entry[1]
            out.setdefault(PurePosixPath(str(getattr(section, "href", "")).split("#")[0]).name, section.title or "")
            for name, title in _toc_titles(children).items():
                out.setdefault(name, title)
        elif getattr(entry, "href", None):
            out.setdefault(PurePosixPath(entry.href.split("#")[0]).name, entry.title or "")
    return {k: " ".join(v.split()) for k, v in out.items() if k and v}


def _html_blocks(tree) -> list[Block]:
    """Headings and innermost text blocks in reading order (a ``<div>`` holding ``<p>``s yields the ``<p>``s)."""
    for bad in tree.xpath("//script|//style|//head"):
        bad.drop_tree()
    blocks: list[Block] = []
    for element in tree.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        tag = tag.split("}")[-1].lower()
        if tag in _HEADING_TAGS:
            words = " ".join(element.text_content().split())
            if words:
                blocks.append(Block("heading", words))
        elif tag in _BLOCK_TAGS and not any(
            (d.tag.split("}")[-1].lower() if isinstance(d.tag, str) else "") in _BLOCK_TAGS | _HEADING_TAGS
            for d in element.iterdescendants()
        ):
            if any(a.tag in _HEADING_TAGS for a in element.iterancestors() if isinstance(a.tag, str)):
                continue
            words = " ".join(element.text_content().split())
            if words:
                blocks.append(Block("paragraph", words))
    if not blocks:
        body = tree.find(".//body")
        words = " ".join((body if body is not None else tree).text_content().split())
        if words:
            blocks.append(Block("paragraph", words))
    return blocks


# --- document → segments --------------------------------------------------------------------------------------------
@dataclass
class Script:
    chapters: list[Chapter]
    segments: list[Segment]
    voices: list[str]
    """Voice names the text asks for with ``[voice:Name]``, in order of first use."""


def build_script(doc: Document, voice: str | None, language: str | None = "en", dialogue: bool = False) -> Script:
    """Segments (ids from 1) with chapters, paragraphs, voices and default pauses; ``voice`` speaks until a tag.

    Sentences come from :func:`core.narration.sentences.split_sentences` in ``language``. Quoted speech is marked
    (``Segment.dialogue``); with ``dialogue`` a sentence that mixes speech and narration is also cut at its quotes,
    so that a dialogue voice can read just the speech."""
    chapters: list[Chapter] = []
    segments: list[Segment] = []
    voices: list[str] = []
    paragraph = 0
    tagged = False

    def chapter(title: str) -> None:
        if chapters and not any(s.chapter == len(chapters) - 1 for s in segments):
            chapters[-1] = Chapter(title or chapters[-1].title)  # the previous chapter has no text: rename it
        else:
            if segments:
                segments[-1].pause_after = PAUSE_CHAPTER_S
            chapters.append(Chapter(title or f"Chapter {len(chapters) + 1}"))

    for block in doc.blocks:
        if block.kind == "chapter":
            chapter(block.text)
            if not block.text:
                continue
        if not chapters:
            chapters.append(Chapter(doc.title))
        paragraph += 1
        kind = "sentence" if block.kind == "paragraph" else "heading"
        if kind == "sentence" and _PAGE_NUMBER.match(block.text):
            continue  # a page number of a scanned book, on a line of its own
        cursor = 0
        for match in list(_VOICE_TAG.finditer(block.text)) + [None]:
            piece = block.text[cursor : match.start() if match else len(block.text)]
            items = _pieces(piece, language, whole=kind == "heading")
            said = [item.text for item in items if isinstance(item, Sentence)]
            parts = iter(sentence_parts(" ".join(clean_text(_PAUSE_TAGS.sub(" ", piece)).split()), said))
            for item in items:
                if isinstance(item, Pause):
                    if segments:
                        segments[-1].pause_after = item.seconds
                    continue
                quoted = next(parts, [(item.text, False)])
                if not dialogue or kind == "heading" or len(quoted) == 1:
                    quoted = [(item.text, len(quoted) == 1 and quoted[0][1] and kind != "heading")]
                for number, (words, is_speech) in enumerate(quoted, 1):
                    pause = PAUSE_HEADING_S if kind == "heading" else PAUSE_SENTENCE_S
                    segments.append(
                        Segment(
                            len(segments) + 1,
                            words,
                            len(chapters) - 1,
                            paragraph,
                            kind,
                            voice,
                            pause_after=pause if number == len(quoted) else PAUSE_PART_S,
                            dialogue=is_speech,
                            own_voice=tagged,
                        )
                    )
            if match:
                voice = match.group(1).strip()
                tagged = True
                if voice not in voices:
                    voices.append(voice)
                cursor = match.end()
        if segments and segments[-1].paragraph == paragraph and kind == "sentence":
            segments[-1].pause_after = max(segments[-1].pause_after, PAUSE_PARAGRAPH_S)
    if segments:
        segments[-1].pause_after = 0.0
    if not segments:
        raise TextInputError("document.nothing_to_say")
    return Script(chapters, segments, voices)


def _pieces(text: str, language: str | None = "en", whole: bool = False) -> list[Sentence | Pause]:
    try:
        return split_sentences(text, language, whole)
    except TextInputError:
        return list(find_pauses(text))  # a scene break ("* * *") or a bare tag: nothing to say here
