"""Books into projects: text, Markdown and EPUB read into a document (``book_import.py``, ``epub.py``,
``html_text.py``, ``document.py``, ``authors.py`` for ``dc:creator``), and a document made into a project's chapters
and segments or brought up to date (``build.py``)."""

from core.narration.importing.book_import import Block, Document, DocumentError, parse_text, read_document
from core.narration.importing.build import import_document, needs_import, source_identity

__all__ = [
    "Block",
    "Document",
    "DocumentError",
    "import_document",
    "needs_import",
    "parse_text",
    "read_document",
    "source_identity",
]
