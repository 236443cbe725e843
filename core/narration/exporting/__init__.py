"""Exporting a project: the request and its checks (``plan.py``), the export itself (``export.py``), each file
streamed (``stream.py``), tags, chapters and cover (``book_tags.py``, ``chapter_marks.py``), what each chapter file
was made from (``manifest.py``), subtitles (``subtitles.py``), the takes' word times as the exports read them
(``word_times.py``), the audiobook stores' check (``store_check.py``), and the read-along EPUB (``readalong/``)."""

from core.narration.exporting.export import (
    ExportCancelled,
    ExportEstimate,
    ExportProgress,
    ExportRequest,
    ExportResult,
    Placement,
    check_request,
    check_space,
    estimate_export,
    export_project,
    preview,
)
from core.narration.exporting.plan import EXPORT_SUFFIXES, BookInfo, parse_numbers
from core.narration.exporting.word_times import place_words

__all__ = [
    "EXPORT_SUFFIXES",
    "BookInfo",
    "ExportCancelled",
    "ExportEstimate",
    "ExportProgress",
    "ExportRequest",
    "ExportResult",
    "Placement",
    "check_request",
    "check_space",
    "estimate_export",
    "export_project",
    "parse_numbers",
    "place_words",
    "preview",
]
