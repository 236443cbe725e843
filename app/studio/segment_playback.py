"""Listening in the studio: Play from the selected segment (a window of finished audio at a time, the next one
prepared meanwhile), Pause / Resume, seeking on the waveform, Stop; while a render is listened to, its chunks as
they come; one segment's take alone (:meth:`SegmentPlayback.play_segment`, for the review). The segment being heard
is highlighted in the list."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.engine import SAMPLE_RATE, ChatterboxError
from core.narration import Placement, clock
from core.wording import describe, describe_error

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object


class SegmentPlayback(_Part):
    """Playback, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def toggle_play(self) -> None:
        """Play from the selected segment; pause; resume where it paused."""
        if self._paused_at is not None:
            self._play_at(self._paused_at)
        elif self._timer.isActive() and not self._live:
            self.pause()
        else:
            self.play_from(self.segments.selected_number() or 1)

    def toggle_from_key(self) -> str:
        """Space in the Project view: what Play / Pause / Resume does when enabled ("studio"), else "nothing"; while
        reviewing, the reviewed take alone (the review's Space)."""
        if self.reviewing and self.review_bar.buttons["play"].isEnabled():
            self.review_play()
            return "studio"
        if self.play_button.isEnabled():
            self.play_button.click()
            return "studio"
        return "nothing"

    def play_from(self, number: int, only: bool = False) -> None:
        """Play from segment ``number`` on; ``only``: its take alone (playback stops where its speech ends)."""
        self._play_only = None
        if self.project is None or self.rendering is not None:
            return
        try:
            audio, placements = self._windows.load(self.project, number)
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return
        if not audio.size:
            self.status.setText("Nothing from here on is rendered yet: press Render.")
            return
        self._play_only = number if only else None
        self._show_window(audio, placements)

    def play_segment(self, number: int) -> None:
        """Hear segment ``number``'s chosen take alone."""
        self.play_from(number, only=True)

    def _show_window(self, audio: np.ndarray, placements: list[Placement]) -> None:
        self._audio, self._placements = audio, placements
        self.waveform.show_audio(self._audio)
        self.segments.highlight(self._placements[0].number)
        self._play_at(0.0)

    def _next_window(self) -> bool:
        """At the end of a window: go on with the next one if it is prepared (``False``: nothing more to play)."""
        try:
            ready = self._windows.take_next(self._open_project())
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return False
        if ready is None:
            self.status.setText("Loading the next segments…")
            return True  # still being prepared: the next tick looks again
        if not ready[0].size:
            return False
        self._show_window(*ready)
        return True

    def _play_at(self, seconds: float) -> None:
        seconds = min(max(0.0, seconds), self._audio.size / SAMPLE_RATE)
        self._live, self._paused_at, self._offset = False, None, seconds
        player = self.player
        player.begin()
        end = self._audio.size
        only = next((p for p in self._placements if p.number == self._play_only), None)
        if only is not None:  # one take alone: its speech, not its pause nor the segments after it
            end = min(end, round(only.end * SAMPLE_RATE))
        if not player.feed(self._audio[round(seconds * SAMPLE_RATE) : end]):
            self.message.emit(player.error or "Audio cannot be played on this computer.", False)
        player.end_of_input()
        self._show_reading(self._heard_at(seconds), seconds)
        self.status.setText("Playing")
        self._timer.start()
        self._update_controls()

    def pause(self) -> None:
        if not self._timer.isActive() or self._live:
            return
        self._paused_at = self.position()
        self.player.stop()
        self._timer.stop()
        self.status.setText(f"Paused at {clock(self._paused_at)}")
        self._update_controls()

    def seek(self, seconds: float) -> None:
        if self.rendering is None and self._audio.size:
            self._play_at(seconds)

    def position(self) -> float:
        """Seconds into the preview being heard (never past the end of what exists)."""
        played = self.player.played / SAMPLE_RATE
        return min(self._offset + played, self._audio.size / SAMPLE_RATE)

    def _heard_at(self, seconds: float) -> int | None:
        """The segment heard ``seconds`` into the window (in a pause: the one before it)."""
        current = next((p.number for p in self._placements if p.start <= seconds < p.end), None)
        if current is None:
            current = next((p.number for p in reversed(self._placements) if p.start <= seconds), None)
        return current

    def _show_reading(self, number: int | None, seconds: float) -> None:
        """The line being heard above the waveform, its word being spoken highlighted (its take's word times scaled
        to the take's place in the window, which the pace stretches)."""
        placement = next((p for p in self._placements if p.number == number), None)
        project = self.project
        if placement is None or project is None or number is None:
            self.reading.show_line(None)
            return
        segment = project.segment(number)
        take = project.chosen_take(segment)
        alignment = take.alignment if take is not None else None
        words = alignment.get("words") if alignment else None
        why = describe(alignment["error"], alignment.get("error_data")) if alignment and alignment.get("error") else ""
        self.reading.show_line(number, segment.text, words, why)
        if take is not None and take.seconds > 0 and placement.end > placement.start:
            self.reading.at((seconds - placement.start) * take.seconds / (placement.end - placement.start))

    def play_from_word(self, seconds_in_take: float) -> None:
        """Play on from a word of the line shown (``seconds_in_take``: where it starts in its take)."""
        project, number = self.project, self.reading.number
        placement = next((p for p in self._placements if p.number == number), None)
        if project is None or number is None or placement is None or self.rendering is not None:
            return
        take = project.chosen_take(project.segment(number))
        if take is None or take.seconds <= 0:
            return
        self._play_only = None
        self._play_at(placement.start + seconds_in_take * (placement.end - placement.start) / take.seconds)

    def stop_playback(self) -> None:
        self._play_only = None
        self._windows.cancel()
        self.player.stop()
        self._paused_at = None
        if self.rendering is None:
            self._timer.stop()

    def stop(self) -> None:
        if self.performing:  # the line being re-voiced: nothing is stored
            self.cancel_performance()
            return
        if self.rendering is not None:
            self.bridge.cancel_render()
            if not self._live:  # the player may be playing what Speak said
                self._timer.stop()
                self._update_controls()
                return
        self.stop_playback()
        if self.project is not None and self.rendering is None:
            self.status.setText("Stopped")
        self._update_controls()

    def _tick(self) -> None:
        player = self.player
        if self._live:
            if self.rendering is not None and player.stream is not None and player.ring.available == 0:
                self.status.setText("Buffering… (generation is behind playback)")
            elif self.rendering is not None:
                self.status.setText("Generating…")
            self.waveform.set_playhead(min(player.played, player.queued))
            self.segments.highlight(heard_segment(self._heard_marks, player.played))
            return
        seconds = self.position()
        self.waveform.set_playhead(round(seconds * SAMPLE_RATE))
        current = self._heard_at(seconds)
        self.segments.highlight(current)
        self._show_reading(current, seconds)
        if player.finished or player.stream is None:
            more = self._play_only is None and self._windows.has_next()  # one take alone ends with it
            if player.stream is not None and more and self._next_window():
                return
            self._timer.stop()
            self.status.setText("Finished playing")
            self._update_controls()


def heard_segment(marks: list[tuple[int, int]], played: int) -> int | None:
    """The segment whose audio the player is playing: the last one that started at or before ``played``."""
    heard = None
    for start, number in marks:
        if start > played:
            break
        heard = number
    return heard
