"""Find in the text (Ctrl+F): the list shows only the segments whose text holds the words, once typing rests;
Enter goes to the list (on the first found unless the selected one is), Esc shows every segment again. Beside it,
Needs review (with their count) shows only the segments whose take the take screen flagged; with words in the search,
only those of them that hold the words."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object


class SegmentSearch(_Part):
    """The search field, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def apply_search(self) -> None:
        """Show only the segments whose text holds the words in the search field (all of them when it is empty)."""
        self._search_timer.stop()
        words = self.search.text().strip()
        shown = self.segments.search(words)
        self._show_found(words, shown)

    def filter_review(self, on: bool) -> None:
        """Needs review: only the flagged segments (with the search), or every segment the search leaves."""
        if self.review_filter.isChecked() != on:
            self.review_filter.setChecked(on)  # comes back here through ``toggled``
            return
        shown = self.segments.set_review_only(on)
        self._show_found(self.search.text().strip(), shown)

    def _show_found(self, words: str, shown: int) -> None:
        self.found.setText(f"{shown} found" if words else "")

    def _show_review_count(self) -> None:
        """The filter's count (every flagged segment of the book, whatever the search shows)."""
        count = len(self.segments.flagged()) if self.project is not None else 0
        self.review_filter.setText(f"Needs review ({count})")
        self.review_filter.setEnabled(self.project is not None and (count > 0 or self.review_filter.isChecked()))

    def _search_entered(self) -> None:
        """Enter in the search field: to the list, on the selected segment if it is found, else the first found."""
        self.apply_search()
        selected = self.segments.selected_number()
        if selected is None or not self.segments.segment_index(selected).isValid():
            first = self.segments.first_shown()
            if first is not None:
                self.segments.select(first)
        self.segments.setFocus()

    def _find(self) -> None:
        self.search.setFocus()
        self.search.selectAll()
