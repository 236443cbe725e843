"""Reviewing the takes the take screen flagged, from the keyboard: Review (F7) shows the review bar over the list and
goes to the first segment that needs review; J / N and K / P go to the next and previous one (going round), Space
plays the chosen take alone (again: pause, resume), A chooses the best other take of the segment and plays it
(again: back), Y or Enter accepts the take (its mark is cleared and stored at once, and the review goes on to the
next), R renders a new take (the review stays on the segment: still flagged, it still needs review), E edits how
the segment is said. Each key is a button of the bar too. Selecting a segment in the list reviews that segment (so
the list's arrow keys move the review too, at their best with Needs review on). With nothing flagged the bar says so.

The keys act while the focus is in the studio, except in a text field (Enter: only in the list and the bar, so that
Enter in the search still searches)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QKeySequence, QShortcut

from core.engine import ChatterboxError
from core.wording import describe_error

from ..controllers.review import alternative_take, review_view, step
from .lexicon_dialog import edit_spoken
from .review_bar import HINT, KEYS
from .screen_thresholds import ThresholdsDialog

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object

SHORT_PANEL = 560
"""A studio shorter than this (a 1280×720 screen at 150 %) hides the waveform while reviewing: the review bar and a
few rows of the list would not fit beside it without cutting the bar's words off."""
REVIEW_TIP = "Review the takes that need review one by one, from the keyboard ({key}; again: close the review).\n{keys}"
ENTER_KEYS = ("Return", "Enter")


class TakeReview(_Part):
    """The review of flagged takes, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def _connect_review(self) -> None:
        """The bar's buttons and their keys (the keys are on only while the review is shown)."""
        slots = {
            "previous": self.review_previous,
            "next": self.review_next,
            "play": self.review_play,
            "other": self.review_other,
            "accept": self.review_accept,
            "regenerate": self.review_regenerate,
            "spoken": self.review_spoken,
        }
        self._review_keys = []
        for name, (_words, keys, _does) in KEYS.items():
            self.review_bar.buttons[name].clicked.connect(slots[name])
            for key in keys:
                # Enter in the search field searches: Enter accepts only in the list and in the bar
                places = (self.segments, self.review_bar) if key in ENTER_KEYS else (self,)
                for place in places:
                    shortcut = QShortcut(QKeySequence(key), place)
                    shortcut.setContext(
                        Qt.ShortcutContext.WidgetShortcut
                        if place is self.segments
                        else Qt.ShortcutContext.WidgetWithChildrenShortcut
                    )
                    shortcut.setEnabled(False)
                    shortcut.activated.connect(lambda n=name: self._review_key(n))
                    self._review_keys.append(shortcut)
        key = self.review_action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        self.review_action.setToolTip(REVIEW_TIP.format(key=key, keys=HINT))
        self.review_action.toggled.connect(self.toggle_review)
        self.takes.thresholds_action.triggered.connect(self.edit_thresholds)
        self.segments.selectionModel().currentChanged.connect(self._on_review_row)
        self.review_bar.setVisible(False)

    def edit_thresholds(self) -> None:
        """Takes ▾ → Screen thresholds…: the book's own, stored; every rendered take judged again against them."""
        if not self._writable():
            self.message.emit("The thresholds can be changed when no render or export has the project.", True)
            return
        project = self.controller.project
        assert project is not None  # _writable: a project is open
        dialog = ThresholdsDialog(dict(project.screening), self)
        if not dialog.exec():
            return
        try:
            changed = self.controller.set_thresholds(dialog.values())
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return
        self.segments.segments_changed(changed)
        self._show_counts()
        self.changed.emit()
        flagged = len(self.segments.flagged())
        self.status.setText(f"Thresholds stored: {len(changed)} segment(s) judged differently; {flagged} need review.")

    # --- the review shown, and where it is -----------------------------------------------------------------------
    @property
    def reviewing(self) -> bool:
        return self.review_action.isChecked()

    def toggle_review(self, on: bool) -> None:
        """Show the review (at the selected segment if it needs review, else the next one that does) or close it."""
        if self.review_action.isChecked() != on:
            self.review_action.setChecked(on)  # comes back here through ``toggled``
            return
        self.review_bar.setVisible(on)
        self._fit_review()
        for shortcut in self._review_keys:
            shortcut.setEnabled(on)
        self._review_segment = None
        if not on:
            return
        selected = self.segments.selected_number()
        flagged = self.segments.flagged()
        if selected is not None and self.segments.segment_model.is_flagged(selected):
            start: int | None = selected
        else:
            start = step(flagged, selected - 1 if selected is not None else None)
        if start is not None:
            self.review_go(start)
        else:
            self._show_review()
        self.segments.setFocus()

    def _fit_review(self) -> None:
        """On a short screen the review bar takes the waveform's place (the list shows which segment is heard)."""
        self.waveform.setVisible(not (self.reviewing and self.height() < SHORT_PANEL))

    def review_number(self) -> int | None:
        """The segment being reviewed (``None``: none, or it was removed)."""
        project, segment = self.project, self._review_segment
        if project is None or segment is None:
            return None
        try:
            return project.number(segment)
        except ValueError:  # deleted or merged away since
            self._review_segment = None
            return None

    def review_go(self, number: int) -> None:
        """Review segment ``number``: it is selected in the list (if the search and filter show it)."""
        project = self.project
        if project is None or not 1 <= number <= len(project.segments):
            return
        if self._play_only is not None:  # the take of the segment left is not heard on
            self.stop_playback()
            self._update_controls()
        self._review_segment = project.segments[number - 1]
        self.segments.select(number)
        self._show_review()

    def review_next(self) -> None:
        self._review_step(True)

    def review_previous(self) -> None:
        self._review_step(False)

    def _review_step(self, forward: bool) -> None:
        following = step(self.segments.flagged(), self.review_number(), forward)
        if following is not None:
            self.review_go(following)

    def _on_review_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        """A segment selected in the list is the one reviewed (the list's arrow keys move the review)."""
        if not self.reviewing or self.project is None:
            return
        number = self.segments.segment_model.number_at(current)
        if number is not None and number != self.review_number():
            self._review_segment = self.project.segments[number - 1]
            self._show_review()

    def _review_key(self, name: str) -> None:
        button = self.review_bar.buttons[name]
        if button.isEnabled():
            button.click()

    # --- what the keys do ----------------------------------------------------------------------------------------
    def review_play(self) -> None:
        """Space: the reviewed segment's chosen take alone; again: pause; again: resume."""
        number = self.review_number()
        if number is None:
            return
        if self._play_only == number and self._timer.isActive() and self._paused_at is None:
            self.pause()
        elif self._play_only == number and self._paused_at is not None:
            self._play_at(self._paused_at)
        else:
            self.play_segment(number)

    def review_other(self) -> None:
        """A: the best other take of the segment is chosen and heard (again: back to the one before)."""
        number = self.review_number()
        if number is None or not self._writable():
            return
        project = self._open_project()
        segment = project.segments[number - 1]
        other = alternative_take(project, segment)
        if other is None:
            self.status.setText(f"Segment {number} has no other take of its current text: Regenerate (R) renders one.")
            return
        before = (segment.chosen or 0) + 1
        try:
            self.controller.choose_take(number, other)
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return
        self._edited(number)
        self.play_segment(number)
        self.status.setText(f"Playing take {other} of segment {number} (A again: back to take {before}).")

    def review_accept(self) -> None:
        """Y or Enter: keep the take (stored at once); the review goes on to the next segment that needs review."""
        number = self.review_number()
        if number is None or not self._writable():
            return
        try:
            accepted = self.controller.accept(number)
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return
        self._edited(number)
        following = step(self.segments.flagged(), number)
        done = f"Segment {number}: take accepted." if accepted else f"Segment {number} needs no review."
        if following is None:
            self._review_segment = None
            self.stop_playback()
            self._update_controls()
            self._show_review()
        else:
            self.review_go(following)
        self.status.setText(done + ("" if following is not None else " No takes need review now."))

    def review_regenerate(self) -> None:
        """R: a new take of the segment; the review stays on it."""
        number = self.review_number()
        if number is not None:
            self.regenerate(number)
            self._show_review()

    def review_spoken(self) -> None:
        """E: how the segment is said (it is pending afterwards: Render or R makes its take)."""
        number = self.review_number()
        if number is not None and self._writable():
            edit_spoken(self, number)

    # --- the bar -------------------------------------------------------------------------------------------------
    def _show_review(self) -> None:
        """The bar again from the project (a take arrived or was accepted, the selection moved, a render ended)."""
        if not self.reviewing:
            return
        project, bar = self.project, self.review_bar
        flagged = self.segments.flagged() if project is not None else []
        number = self.review_number()
        if project is None or not flagged:
            self._review_segment = None
            bar.show_nothing()
            bar.show_speaker(self._review_speaker_words(None))
            return
        if number is None:  # flagged since the bar said there was nothing: shown, the selection left where it is
            number = flagged[0]
            self._review_segment = project.segments[number - 1]
        view = review_view(project, number, flagged)
        bar.show_view(view)
        bar.show_speaker(self._review_speaker_words(number))
        writable = self._writable()
        bar.enable(
            previous=bool(flagged),
            next=bool(flagged),
            play=view.take is not None and self.rendering is None,
            other=writable,
            accept=writable and view.position is not None,
            regenerate=writable,
            spoken=writable,
        )
