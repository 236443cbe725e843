"""The chapter edits (each on the undo stack): start a new chapter at a segment, join a chapter to the previous one,
rename a chapter, skip a chapter or narrate it again; and what an import shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QInputDialog

from core.narration import editing

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object


class ChapterActions(_Part):
    """The chapter edits, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def chapter_starts(self, number: int, title: str | None = None) -> bool:
        return self._apply(lambda p: editing.chapter_starts(p, number, title or None))

    def chapter_joins(self, number: int) -> bool:
        return self._apply(lambda p: editing.chapter_joins(p, number))

    def rename_chapter(self, chapter: int, title: str) -> bool:
        return self._apply(lambda p: editing.rename_chapter(p, chapter, title))

    def set_chapter_skipped(self, chapter: int, skipped: bool) -> bool:
        return self._apply(lambda p: editing.set_chapter_skipped(p, chapter, skipped))

    def _ask_chapter_start(self, number: int) -> None:
        title, ok = QInputDialog.getText(
            self, "New chapter", f"Title of the chapter that starts at segment {number} (empty: its first words):"
        )
        if ok:
            self.chapter_starts(number, title.strip() or None)

    def _ask_chapter_title(self, chapter: int) -> None:
        current = self._open_project().chapters[chapter - 1].title
        title, ok = QInputDialog.getText(self, "Rename chapter", f"Title of chapter {chapter}:", text=current)
        if ok and title.strip() and title != current:
            self.rename_chapter(chapter, title)

    def show_imported(self) -> None:
        """After an import: the chapters are in the list (skipped ones marked); nothing renders before Render."""
        project = self.project
        if project is None:
            return
        skipped = sum(c.skipped for c in project.chapters)
        marked = f" ({skipped} skipped)" if skipped else ""
        self.status.setText(
            f"Imported {len(project.chapters)} chapter(s){marked} and {len(project.segments)} segments. Review "
            "them (skip, merge, split, rename), then press Render."
        )
