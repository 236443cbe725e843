"""Screening the rendered takes again, the slow part on a thread of its own: each take's audio read and measured
(:func:`core.narration.measure_again`, with speech recognition when asked), progress and Stop; the studio stores what
it found on the GUI thread (:mod:`app.studio.take_check`). Reports as :class:`app.background_job.TakesJob`."""

from __future__ import annotations

import threading

from core.narration import measure_again, recogniser_for

from ..background_job import TakesJob


class TakeCheckRunner(TakesJob):
    """The measuring part on its own thread: ``finished(measured, cancelled)``."""

    def start(self, takes: list, listen: bool, language: str) -> bool:
        """Start measuring ``takes``; ``False`` while it runs (:meth:`cancel` stops it, keeping what was measured)."""
        return self._start_cancellable(self._run, (takes, listen, language), "take-check")

    def _run(self, takes: list, listen: bool, language: str, cancel: threading.Event) -> None:
        def work(progress):
            recogniser = recogniser_for(language, "auto") if listen else None
            return measure_again(takes, recogniser, progress, cancel.is_set)

        self._report(work, cancel, "screening the takes again")
