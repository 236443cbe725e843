"""The model every importer produces: a document of blocks (chapter starts, headings, paragraphs) and its warnings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core.engine import Notice, TextInputError

MAX_DOCUMENT_CHARS = 50_000_000
"""The most text one document may hold (about 50 MB): a longer book is refused with ``document.too_long``."""


@dataclass
class Block:
    kind: str
    """``chapter`` (starts a chapter; its text, if any, is spoken as a heading), ``heading`` or ``paragraph``."""
    text: str
    title: str = ""
    """A ``chapter`` block's title in the project when it differs from what is spoken (an EPUB chapter is titled
    from the book's navigation while its own heading is read); empty: the text is the title."""
    skipped: bool = False
    """A ``chapter`` block kept in the project but not narrated (a cover, the table of contents, a page without
    text); its text, if any, becomes segments of that skipped chapter. A ``heading`` or ``paragraph`` block: its
    segments are skipped ones (the text of a ``<nav>`` inside a chapter), which the user may take back."""
    source: dict | None = None
    """Where the block stands in its EPUB: ``file`` (the archive member), ``block`` (its number among the blocks of
    that file, as :func:`core.narration.importing.html_text.text_runs` counts them) and ``path`` (its element, an lxml
    path); ``None`` for text and Markdown. The read-along export finds the block's sentences there again."""


@dataclass
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)
    author: str = ""
    """The book's authors (an EPUB's ``dc:creator`` of role ``aut``, several joined: :mod:`package_authors`);
    empty when unknown (text and Markdown)."""
    language: str = ""
    """The book's declared language (``dc:language`` of an EPUB; empty when unknown)."""
    cover: bytes = b""
    """The book's cover image (JPEG or PNG bytes, from an EPUB's manifest; empty: none): exports embed it."""
    warnings: list[Notice] = field(default_factory=list)
    """What the import left out and why (a missing or damaged file of an EPUB): the rest was imported."""
    book: Path | None = None
    """The EPUB file the document was read from (the project keeps a copy for the read-along export)."""


class DocumentError(TextInputError):
    """The file cannot be turned into a narration (unreadable, not the format it claims, DRM, no text, too large)."""
