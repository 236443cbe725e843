"""*Takes ▾ → Find word times*: the rendered takes without word times (a project rendered before takes had them, or a
render stopped before its takes were aligned) aligned on a thread of its own, with progress and Stop; the words are
stored on the GUI thread. Meanwhile the project is busy, as while its takes are screened again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.engine import ChatterboxError
from core.narration import store_alignments, takes_to_align
from core.wording import describe_error

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object


class WordTimes(_Part):
    """Finding the takes' word times, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def _connect_word_times(self) -> None:
        self.word_times.progress.connect(self._takes_job_progress)
        self.word_times.finished.connect(self._on_words_found)
        self.word_times.failed.connect(self._on_words_failed)
        self.takes.words_action.triggered.connect(self.find_word_times)

    def find_word_times(self) -> bool:
        """Start (or, while it runs, stop) finding the rendered takes' word times; ``False`` when it cannot."""
        if self.aligning:
            self.word_times.cancel()
            return False
        if not self._writable():
            return False
        project = self._open_project()
        takes, had = takes_to_align(project)
        if not takes:
            self.status.setText(
                f"Every rendered take has its word times ({had})." if had else "No rendered takes to align."
            )
            return False
        if not self.word_times.start(project, takes):
            return False
        self._aligned_project = project
        status = "Finding each word's time in the takes…"
        self._takes_job_began(len(takes), "Word times: {done} of {total} takes", status)
        return True

    def _on_words_found(self, found: list, cancelled: bool) -> None:
        if self.project is None or self.project is not getattr(self, "_aligned_project", None):
            self._takes_job_ended("")  # another project is open now: these words were the closed one's
            return
        project = self._open_project()
        try:
            changed = store_alignments(project, found)
        except ChatterboxError as exc:
            self._takes_job_ended("Word times not stored: " + describe_error(exc))
            self.message.emit(describe_error(exc), True)
            return
        failed = sum(1 for _segment, _take, alignment in found if alignment.get("error"))
        stopped = " (stopped early: Find word times goes on from there)" if cancelled else ""
        without = f"; {failed} could not be aligned and keep their sentence timing" if failed else ""
        self.segments.segments_changed([project.number(segment) for segment in changed])
        self._takes_job_ended(f"Word times found for {len(found) - failed} take(s){stopped}{without}.")
        self.changed.emit()

    def _on_words_failed(self, message: str) -> None:
        self._takes_job_ended("Finding the word times stopped: " + message)
        self.message.emit(message, True)
