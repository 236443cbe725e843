"""Perform this line: the user says a segment themselves (a recording file chosen or dropped on its row, or the
microphone) and the recording, re-voiced into the segment's voice, becomes its chosen take, marked performed
(:mod:`core.narration.rendering.perform`).

The recording is checked here (worded errors at once; nothing changes), re-voiced on the inference worker as an
interactive job (``EngineBridge.perform``: the window stays responsive, a render is not needed), and its audio is
stored when it comes back: the take file and the kept recording first, the segment's row after. Meanwhile the project
waits, as it does for a render (Stop cancels it and nothing is stored). The segment's row then says "performed".
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtWidgets import QFileDialog

from core.engine import SAMPLE_RATE, ChatterboxError, source_from_array
from core.narration import performance_source
from core.voices import AUDIO_SUFFIXES
from core.wording import describe_error

from ..widgets.record_dialog import LineRecordDialog

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object

RECORDING_FILTER = "Recordings (" + " ".join(f"*{s}" for s in sorted(AUDIO_SUFFIXES)) + ")"


class PerformLine(_Part):
    """Performed lines, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def _connect_perform(self) -> None:
        self.segments.perform_file.connect(self.perform_file)
        self.segments.perform_choose.connect(self.choose_performance)
        self.segments.perform_record.connect(self.record_performance)
        self.segments.perform_again.connect(self.perform_again)
        self.bridge.perform_progress.connect(self._on_perform_progress)
        self.bridge.performed.connect(self._on_performed)
        self.bridge.perform_failed.connect(self._on_perform_failed)

    # --- where the recording comes from ------------------------------------------------------------------------
    def choose_performance(self, number: int) -> None:
        """Perform this line → Choose a recording…: a file of the user's own reading of segment ``number``."""
        if not self._can_perform(number):
            return
        path, _ = QFileDialog.getOpenFileName(self, f"Your recording of segment {number}", "", RECORDING_FILTER)
        if path:
            self.perform_file(number, path)

    def record_performance(self, number: int) -> None:
        """Perform this line → Record it…: the microphone, then the kept part re-voiced."""
        if not self._can_perform(number):
            return
        text = self._open_project().segments[number - 1].text
        dialog = LineRecordDialog(text, self.input_device, self.window())
        if dialog.exec() and dialog.samples is not None and dialog.samples.size:
            self.perform_samples(number, dialog.samples)

    def perform_again(self, number: int) -> None:
        """Perform this line → Again from my recording: the recording of the segment's latest performed take,
        re-voiced into the segment's voice now (after a change of voice, or for another seed)."""
        if not self._can_perform(number):
            return
        project = self._open_project()
        segment = project.segments[number - 1]
        for take in reversed(segment.takes):
            source = performance_source(project, take)
            if source is not None:
                self.perform_file(number, source)
                return
        self.message.emit(f"Segment {number} has no recording of yours kept: choose or record one.", True)

    def perform_samples(self, number: int, samples: np.ndarray) -> bool:
        """A recording made in memory (the microphone, at the app's rate)."""
        try:
            recording = source_from_array(samples, SAMPLE_RATE, "recording")
        except ChatterboxError as exc:
            return self._perform_refused(number, exc)
        return self._start_performance(number, recording)

    def perform_file(self, number: int, path: str | Path) -> bool:
        """Re-voice the recording in ``path`` into segment ``number``'s voice (a file chosen, or dropped on its row);
        ``False`` when it cannot start (the reason is said)."""
        return self._start_performance(number, Path(path))

    # --- the conversion ----------------------------------------------------------------------------------------
    def _can_perform(self, number: int) -> bool:
        project = self.project
        if project is None or not 1 <= number <= len(project.segments):
            return False
        if not self._writable():
            self.message.emit("A line can be performed when no render or export has the project.", True)
            return False
        if self.bridge.model is None:
            self.message.emit("No model is loaded: choose one in the Models menu.", True)
            return False
        return True

    def _start_performance(self, number: int, source: Any) -> bool:
        if not self._can_perform(number):
            return False
        model = self.bridge.model
        assert model is not None  # _can_perform
        try:
            plan = self.controller.plan_performance(number, source, model.capabilities)
        except ChatterboxError as exc:
            return self._perform_refused(number, exc)
        self.stop_playback()
        rid = self.bridge.perform(plan.request(), self.runtime())
        self.controller.perform_started(rid, plan)
        voice = plan.voice_name or "the model's voice"
        self.status.setText(f"Re-voicing your recording of segment {number} into {voice}…")
        self.progress.setRange(0, max(1, round(plan.seconds * 10)))
        self.progress.setValue(0)
        self.progress.setFormat(f"Segment {number}: 0.0 of {plan.seconds:.1f} s")
        self.segments.editable = False
        self.segments.highlight(number)
        self._update_controls()
        return True

    def _perform_refused(self, number: int, exc: ChatterboxError) -> bool:
        words = describe_error(exc)
        self.status.setText(f"Segment {number} was not performed: {words}")
        self.message.emit(words, True)
        return False

    def _on_perform_progress(self, rid: int, seconds: float) -> None:
        plan = self.controller.performance
        if not self.controller.owns_performance(rid) or plan is None:
            return
        self.progress.setValue(min(self.progress.maximum(), round(seconds * 10)))
        self.progress.setFormat(f"Segment {plan.number}: {seconds:.1f} of {plan.seconds:.1f} s")

    def _on_performed(self, rid: int, audio: np.ndarray, report: Any) -> None:
        if not self.controller.owns_performance(rid):
            return
        plan = self.controller.perform_ended()
        assert plan is not None
        try:
            number, take = self.controller.store_performance(plan, audio, report)
        except ChatterboxError as exc:
            self._performance_over(f"Segment {plan.number} was not performed: {describe_error(exc)}")
            self.message.emit(describe_error(exc), True)
            return
        index = self._open_project().segments[number - 1].takes.index(take) + 1
        review = " The take screen flags it: see Review." if take.screen and take.screen.get("reasons") else ""
        voice = plan.voice_name or "the model's voice"
        self._performance_over(
            f"Segment {number}: take {index} performed from {plan.name} ({take.seconds:.1f} s, in {voice}); "
            f"Enter plays it.{review}",
            number,
        )

    def _on_perform_failed(self, rid: int, message: str) -> None:
        if not self.controller.owns_performance(rid):
            return
        plan = self.controller.perform_ended()
        number = plan.number if plan is not None else None
        self._performance_over(f"Segment {number} was not performed: {message}")
        self.message.emit(message, True)

    def cancel_performance(self) -> None:
        """Stop: the recording is not re-voiced, nothing is stored."""
        if self.controller.performing is None:
            return
        self.bridge.cancel_perform()
        plan = self.controller.perform_ended()
        self._performance_over(f"Stopped: nothing was stored for segment {plan.number if plan else ''}.")

    def _performance_over(self, text: str, number: int | None = None) -> None:
        self.segments.editable = not self.controller.read_only
        self.progress.setFormat("")
        self.status.setText(text)
        self.segments.highlight(None)
        if number is not None:
            self.segments.segments_changed([number])
            self.segments.select(number)
        self._show_counts()
        self._update_controls()
        self.changed.emit()
