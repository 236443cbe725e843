"""Which export is a read-along book, its audio format, and the checks made before any work (imported by the
export's plan, so it depends on nothing of the export itself)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.engine import check_settings, encoding_for
from core.narration.projects.project import ProjectError

SUFFIX = ".epub"
HIGHLIGHTS = ("sentence", "word")
"""What a read-along book highlights as it is read."""


def is_readalong(path: Path | None) -> bool:
    return path is not None and Path(path).suffix.lower() == SUFFIX


def audio_suffix(chapter_format: str | None) -> str:
    """The audio of a read-along book: AAC when the chapter format asks for ``.m4a``/``.m4b``/``.aac``, else MP3."""
    return ".m4a" if (chapter_format or "").lower() in (".m4a", ".m4b", ".aac") else ".mp3"


def check_readalong(request: Any) -> None:
    """Refuse a read-along request (an ``ExportRequest`` whose ``out`` ends in ``.epub``) that cannot be written,
    before any work (:func:`core.narration.exporting.plan.check_request` calls it)."""
    assert request.out is not None
    if request.per_chapter is not None or request.subtitles is not None:
        raise ProjectError("readalong.alone")
    if request.highlight not in HIGHLIGHTS:
        raise ProjectError("export.bad_highlight", highlight=request.highlight, choices=list(HIGHLIGHTS))
    if request.subtitle_words is not None:
        raise ProjectError("export.subtitle_words_alone")
    folder = request.out.parent if str(request.out.parent) else Path(".")
    if not folder.is_dir():
        raise ProjectError("export.folder_failed", folder=str(folder), reason="no such folder")
    check_settings(encoding_for(Path("chapter" + audio_suffix(request.chapter_format))), request.encoding)
