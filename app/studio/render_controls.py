"""The studio's render controls: Render (every pending segment), Render ▾ (the selected chapter, a range of chapters),
Regenerate (one segment, on this computer), where the render goes (this computer or a Ray cluster, Settings →
Render on), how many takes a render makes (Takes ▾: re-takes of flagged takes, candidates,
:mod:`~app.studio.take_settings`), and what its progress events change: the progress bar, the status line, the
rows of the segments that are done (only those), the title's counts."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from core.narration import ONE_TAKE, RenderProgress, RenderSummary, TakePolicy
from core.wording import describe_failure

from ..controllers.render_on import RenderTarget, refusal, rendering_text, where
from ..controllers.studio import done_text, progress_text
from .render_range import ChapterRangeDialog

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object


class RenderControls(_Part):
    """Rendering, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def take_policy(self) -> TakePolicy:
        """What Render makes: the re-takes and candidates set under Takes ▾."""
        return self.takes.policy()

    def render_pending(self) -> None:
        self._start_render(None)

    def regenerate(self, number: int) -> None:
        self._start_render(number)

    def render_chapters(self, first: int, last: int) -> None:
        """Render the pending segments of chapters ``first`` to ``last`` (1-based, both included)."""
        if self.project is None:
            return
        numbers = self.controller.pending_in_chapters(first, last, self.takes.retakes.value())
        if not numbers:
            which = f"Chapter {first}" if first == last else f"Chapters {first} to {last}"
            self.status.setText(f"{which}: every segment is rendered (or skipped).")
            return
        self._start_render(None, numbers)

    def render_chapter(self) -> None:
        """Render the chapter of the selected row (the first chapter when nothing is selected)."""
        chapter = self._selected_chapter()
        self.render_chapters(chapter, chapter)

    def _ask_chapter_range(self) -> None:
        if self.project is None:
            return
        chapter = self._selected_chapter()
        dialog = ChapterRangeDialog(self.project, chapter, chapter, self)
        if dialog.exec():
            self.render_chapters(*dialog.chapters())

    def _selected_chapter(self) -> int:
        return self.segments.selected_chapter() or 1

    def selected_segments(self) -> tuple[int, ...]:
        """The selected segments, in order; a selected chapter row stands for all of its segments."""
        return self.segments.selected_numbers() if self.project is not None else ()

    def _start_render(self, regenerate: int | None, numbers: tuple[int, ...] | None = None) -> None:
        project = self.project
        if project is None or not self._writable():
            return
        if self.bridge.model is None:
            self.message.emit("No model is loaded: choose one in the Models menu.", True)
            return
        policy = self.take_policy() if regenerate is None else ONE_TAKE  # Regenerate: one new take, chosen
        todo = self.controller.pending(regenerate, numbers, policy.retakes)
        if not todo:
            self.status.setText("Every segment is rendered. Play it, fix a sentence, or export.")
            return
        target = RenderTarget() if regenerate is not None else RenderTarget.from_settings(self.settings)
        refused = refusal(target, frozen=self.frozen)
        if refused is not None:  # nothing has started: the project and the studio are as they were
            self.status.setText("Not rendered: " + refused)
            self.message.emit(refused, True)
            return
        self._target = target
        self.stop_playback()
        self._live = self.listen.isChecked() and not target.cluster  # a cluster's takes come back whole
        self._heard_marks = []
        if self._live:
            self.player.begin()
            self.waveform.clear_audio()
        self.progress.setRange(0, todo)
        self.progress.setValue(0)
        self.progress.setFormat(f"0 of {todo} segments")
        self.status.setText(rendering_text(target.address) if target.cluster else "Generating…")
        self.segments.editable = False
        runtime = self.runtime()
        if not self._live:  # nobody listens: one decoder call per segment renders faster than streaming windows
            runtime = replace(runtime, stream=False)
        self.controller.started(
            self.bridge.render(project, runtime, regenerate, numbers=numbers, target=target, policy=policy)
        )
        if self._live:  # the playhead and "Buffering…" (a silent render has no playhead: the status says what runs)
            self._timer.start()
        self._update_controls()

    @property
    def on_cluster(self) -> bool:
        """A render runs on a Ray cluster now."""
        return self.rendering is not None and self._target.cluster

    @property
    def frozen(self) -> bool:
        """The desktop build (no Ray in it)."""
        return bool(getattr(sys, "frozen", False))

    def render_on_changed(self) -> None:
        """Settings → Render on changed: Render's tooltip says where the next render goes."""
        self._update_controls()

    def _on_cluster_changed(self, stats) -> None:
        """The cluster render found its nodes and started its actors, or re-queued a unit whose actor died."""
        if self.rendering is None or not self._target.cluster:
            return
        text = rendering_text(self._target.address, stats.actors or None)
        if stats.requeued_units:
            text += f" {stats.requeued_units} unit(s) re-queued after an actor was lost."
        self.status.setText(text)

    def _on_step(self, step: RenderProgress) -> None:
        if self.rendering is None:
            return
        self.progress_events += 1
        if step.kind == "chunk":
            if self._live and step.chunk is not None:
                if not self._heard_marks or self._heard_marks[-1][1] != step.number:
                    self._heard_marks.append((self.player.queued, step.number))  # where its audio starts
                self.player.feed(step.chunk.samples)
                self.waveform.append(step.chunk.samples)
            else:
                self.segments.highlight(step.number)  # nobody listens: the segment being generated
            return
        self.segments.segments_changed([step.number])  # its take arrived (or it failed): only its row changes
        self.progress.setValue(step.done)
        self.progress.setFormat(progress_text(step))
        if step.kind == "failed":
            self.message.emit(f"Segment {step.number} failed: {describe_failure(step)}", True)
        self._show_counts()

    def _on_done(self, rid: int, summary: RenderSummary) -> None:
        if not self.controller.owns(rid):
            return
        self._end_render()
        text = done_text(summary)
        stats = self.bridge.cluster_stats
        if self._target.cluster and stats is not None and stats.actors:
            text += f" On {where(self._target.address)}, {stats.actors} actor{'' if stats.actors == 1 else 's'}."
        self.status.setText(text)

    def _on_failed(self, rid: int, message: str) -> None:
        if self.controller.owns(rid):
            self._end_render()
            self.status.setText("Rendering stopped: " + message)
            self.message.emit(message, True)

    def _on_cancelled(self, rid: int) -> None:
        if self.controller.owns(rid):
            self._end_render()
            self.status.setText("Stopped. Finished segments are saved; Render continues with the rest.")

    def _on_speak_submitted(self, _rid: int, what: str = "Speak") -> None:
        """Speak (or Re-voice) during a render: the render goes on (the worker runs the request between two
        segments), and a render being listened to hands the player over and goes on silently."""
        if self.rendering is None or not self._live:
            return
        self._live = False
        self._timer.stop()
        self.status.setText(f"{what} is playing; the render goes on without sound.")

    def _end_render(self) -> None:
        self.controller.ended()
        self.segments.editable = True
        if self._live:
            self.player.end_of_input()
        self.segments.segments_changed()
        self._show_counts()
        self._update_controls()
        self.changed.emit()
