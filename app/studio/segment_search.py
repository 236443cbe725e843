"""Find in the text (Ctrl+F): the list shows only the segments whose text holds the words, once typing rests;
Enter goes to the list (on the first found unless the selected one is), Esc shows every segment again."""

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
        self.found.setText(f"{shown} found" if words else "")

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
