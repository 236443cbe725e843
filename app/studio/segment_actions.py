"""What the segment list's menu and keys do to one segment (not to the book's shape): edit its text (on the undo
stack), choose a take (heard at once), its voice, the pause after it, its pace; and the pace of the whole
narration. What the model reads of it (its spoken text's tokens) is shown without changing anything."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QInputDialog

from core.engine import ChatterboxError
from core.narration import SPEED_RANGE, editing
from core.wording import describe_error

from ..widgets.model_reading_dialog import show_model_reading

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object


class SegmentActions(_Part):
    """One segment's edits, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def _ask_text(self, number: int) -> None:
        segment = self._open_project().segments[number - 1]
        text, ok = QInputDialog.getMultiLineText(self, "Edit segment", f"Segment {number}:", segment.text)
        if ok and text.strip() and text != segment.text:
            self.edit_text(number, text)

    def edit_text(self, number: int, text: str) -> bool:
        return self._apply(lambda p: editing.edit_text(p, number, text), reshaped=False)

    def show_reading(self, number: int) -> None:
        """The segment's spoken text (what a render sends) in the language it is rendered in, as the model reads it."""
        project = self._open_project()
        segment = project.segments[number - 1]
        model = self.bridge.model
        bundle = model.bundle if model is not None else self.settings.bundle
        language = project.model_language(segment, model.capabilities.variant if model is not None else None)
        show_model_reading(self, bundle, project.spoken_text(segment), language, source=f"segment {number}")

    def choose_take(self, number: int, take: int) -> None:
        if not self._writable():
            return
        try:
            self.controller.choose_take(number, take)
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return
        self._edited(number)
        self.play_from(number)  # A/B: hear the chosen take at once

    def set_voice(self, number: int, name) -> None:
        if not self._writable():
            return
        try:
            self.controller.set_voice(number, name)
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return
        self._edited(number)

    def _ask_pause(self, number: int) -> None:
        if not self._writable():
            return
        segment = self._open_project().segments[number - 1]
        value, ok = QInputDialog.getDouble(
            self, "Pause after", f"Seconds of silence after segment {number}:", segment.pause_after, 0.0, 30.0, 2
        )
        if ok:
            self.controller.set_pause(number, value)
            self._edited(number)

    def _ask_speed(self, number: int) -> None:
        if not self._writable():
            return
        segment = self._open_project().segments[number - 1]
        value, ok = QInputDialog.getDouble(
            self,
            "Pace of this segment",
            f"Pace of segment {number} (× the project's):",
            segment.speed or 1.0,
            SPEED_RANGE[0],
            SPEED_RANGE[1],
            2,
        )
        if ok:
            self.controller.set_speed(number, value)
            self._edited(number)

    def _on_pace(self, value: int, mark: bool = True) -> None:
        speed = value / 100
        self.pace_label.setText(f"Pace {speed:.2f}×")
        if mark and self.controller.set_pace(speed):
            self.changed.emit()
