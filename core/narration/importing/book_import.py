"""Text, Markdown and EPUB into a document of headings and paragraphs, and a document into project segments.

- Plain text: paragraphs are separated by blank lines (hard-wrapped lines are joined); ``[chapter]`` or
  ``[chapter: Title]`` on a line of its own starts a chapter.
- Markdown: the highest heading level used (``#`` normally) starts chapters, lower ones are spoken headings; links,
  emphasis, code, images, lists and quotes are reduced to their words; fenced code is skipped.
- EPUB: :mod:`core.narration.importing.epub` (chapters from the navigation, limits, skipped cover and contents pages;
  the text of a ``<nav>`` inside a chapter becomes skipped segments).

Square brackets that are not a known tag are text (:func:`core.narration.text.brackets.speakable_brackets`).

Everywhere, ``[voice:Name]`` switches the voice from that point and ``[pause:2s]`` sets the pause after the
sentence before it; sentences come from ``pysbd`` in the book's language (:mod:`core.narration.text.sentences`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.engine import Pause, Sentence, TextInputError, find_pauses
from core.narration.importing.document import MAX_DOCUMENT_CHARS, Block, Document, DocumentError
from core.narration.importing.epub import read_epub
from core.narration.projects.project import Chapter, Segment
from core.narration.text.brackets import speakable_brackets
from core.narration.text.dialogue import PART_PAUSE_S, sentence_parts
from core.narration.text.locator import locate
from core.narration.text.sentences import clean_paragraph, split_sentences

PAUSE_SENTENCE_S = 0.3
PAUSE_PARAGRAPH_S = 0.8
PAUSE_HEADING_S = 1.0
PAUSE_CHAPTER_S = 2.0
PAUSE_PART_S = PART_PAUSE_S
"""Between the parts of one sentence cut at its quotes (speech and narration)."""
MAX_BOOK_CHARS = MAX_DOCUMENT_CHARS
PIECE_CHARS = 100_000
"""A paragraph longer than this is cut (at a sentence end, else between words) before it is split into sentences,
so that a paragraph of millions of characters becomes segments instead of being refused as one text."""
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


# --- reading ------------------------------------------------------------------------------------------------------
def read_document(path: Path) -> Document:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in EPUB_SUFFIXES:
        return _speakable(read_epub(path))
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


def _speakable(doc: Document) -> Document:
    for block in doc.blocks:
        block.text = speakable_brackets(block.text)
    return doc


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
    return _speakable(doc)


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
    return _speakable(doc)


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


# --- document → segments --------------------------------------------------------------------------------------------
@dataclass
class Script:
    chapters: list[Chapter]
    segments: list[Segment]
    voices: list[str]
    """Voice names the text asks for with ``[voice:Name]``, in order of first use."""


def build_script(doc: Document, voice: str | None, language: str | None = "en", dialogue: bool = False) -> Script:
    """Segments (ids from 1) with chapters, paragraphs, voices and default pauses; ``voice`` speaks until a tag.

    Sentences come from :func:`core.narration.text.sentences.split_sentences` in ``language``. Quoted speech is marked
    (``Segment.dialogue``); with ``dialogue`` a sentence that mixes speech and narration is also cut at its quotes,
    so that a dialogue voice can read just the speech."""
    chapters: list[Chapter] = []
    segments: list[Segment] = []
    voices: list[str] = []
    paragraph = 0
    tagged = False

    def chapter(title: str, skipped: bool) -> None:
        empty = chapters and not any(s.chapter == len(chapters) - 1 for s in segments)
        if empty and not skipped and not chapters[-1].skipped:
            chapters[-1] = Chapter(title or chapters[-1].title)  # the previous chapter has no text: rename it
        else:
            for last in _last_ones(segments):
                last.pause_after, last.pause_exact = PAUSE_CHAPTER_S, False
            chapters.append(Chapter(title or f"Chapter {len(chapters) + 1}", skipped=skipped))

    for block in doc.blocks:
        if block.kind == "chapter":
            chapter(block.title or block.text, block.skipped)
            if not block.text:
                continue
        if not chapters:
            chapters.append(Chapter(doc.title))
        paragraph += 1
        kind = "sentence" if block.kind == "paragraph" else "heading"
        if kind == "sentence" and _PAGE_NUMBER.match(block.text):
            continue  # a page number of a scanned book, on a line of its own
        cursor, first = 0, len(segments)
        for match in list(_VOICE_TAG.finditer(block.text)) + [None]:
            piece = block.text[cursor : match.start() if match else len(block.text)]
            items = _pieces(piece, language, whole=kind == "heading")
            said = [item.text for item in items if isinstance(item, Sentence)]
            parts = iter(sentence_parts(" ".join(clean_paragraph(_PAUSE_TAGS.sub(" ", piece)).split()), said))
            for item in items:
                if isinstance(item, Pause):
                    if segments:
                        segments[-1].pause_after, segments[-1].pause_exact = item.seconds, True
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
                            skipped=block.skipped and block.kind != "chapter",
                        )
                    )
            if match:
                voice = match.group(1).strip()
                tagged = True
                if voice not in voices:
                    voices.append(voice)
                cursor = match.end()
        if block.source is not None:
            _locate(block.text, block.source, segments[first:])
        if segments and segments[-1].paragraph == paragraph and kind == "sentence":
            last = segments[-1]
            if last.pause_after < PAUSE_PARAGRAPH_S:  # a tag shorter than a paragraph's gap gives way to it
                last.pause_after, last.pause_exact = PAUSE_PARAGRAPH_S, False
    for last in _last_ones(segments):
        last.pause_after, last.pause_exact = 0.0, False
    if not segments:
        raise TextInputError("document.nothing_to_say")
    return Script(chapters, segments, voices)


def _last_ones(segments: list[Segment]) -> list[Segment]:
    """The last segment, and the last one narrated when skipped ones (a ``<nav>``'s) follow it: both end the
    chapter (or the book) with its pause."""
    narrated = next((s for s in reversed(segments) if not s.skipped), None)
    return segments[-1:] + ([narrated] if narrated is not None and narrated is not segments[-1] else [])


def _locate(text: str, source: dict, segments: list[Segment]) -> None:
    """Each segment's place in its EPUB block (the read-along export wraps it there)."""
    for segment, place in zip(segments, locate(text, [s.text for s in segments])):
        if place is not None:
            segment.source = {**source, "start": place[0], "end": place[1]}


def _pieces(text: str, language: str | None = "en", whole: bool = False) -> list[Sentence | Pause]:
    out: list[Sentence | Pause] = []
    for part in _parts(text, PIECE_CHARS):
        try:
            out += split_sentences(part, language, whole)
        except TextInputError:
            out += find_pauses(part)  # a scene break ("* * *") or a bare tag: nothing to say here
    return out


_PART_END = re.compile(r"[.!?…。！？．؟]\S*\s+")


def _parts(text: str, size: int) -> list[str]:
    """``text`` in parts of at most about ``size`` characters, cut after a sentence end where there is one, else
    between words (a run without spaces is cut at ``size``)."""
    parts, start = [], 0
    while len(text) - start > size:
        window = text[start : start + size]
        cut = max((m.end() for m in _PART_END.finditer(window, size // 2)), default=0)
        if not cut:
            space = window.rfind(" ")
            cut = space + 1 if space > 0 else size
        parts.append(text[start : start + cut])
        start += cut
    parts.append(text[start:])
    return parts
