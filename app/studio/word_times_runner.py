"""Finding the rendered takes' word times on a thread of its own (:func:`core.narration.take_alignment` for each
take without them, through the aligner's process), with progress and Stop: ``finished(found, cancelled)`` gives the
takes aligned so far, which the studio stores on the GUI thread (:mod:`app.studio.word_times`). Reports as
:class:`app.background_job.TakesJob`."""

from __future__ import annotations

import threading
from typing import Any

from core.narration import Project, take_alignment

from ..background_job import TakesJob


class WordTimesRunner(TakesJob):
    def start(self, project: Project, takes: list) -> bool:
        """Align ``takes`` (``(segment, take)`` pairs of ``project``); ``False`` while it runs (:meth:`cancel`
        stops it, keeping what was aligned)."""
        return self._start_cancellable(self._run, (project, takes), "word-times")

    def _run(self, project: Project, takes: list, cancel: threading.Event) -> None:
        def work(progress) -> list[tuple[Any, Any, dict]]:
            found: list[tuple[Any, Any, dict]] = []
            for done, (segment, take) in enumerate(takes, 1):
                if cancel.is_set():
                    break
                found.append((segment, take, take_alignment(project, segment, take)))
                progress(done, len(takes))
            return found

        self._report(work, cancel, "finding the word times")
