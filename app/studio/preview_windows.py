"""The studio's playback of finished segments, about a minute at a time.

Reading and pacing every following segment at once held the whole rest of the book in memory and froze the window
while it was prepared (a 25-minute project at pace 1.25: 13 s on the GUI thread; a 10-hour book: minutes and
gigabytes). The studio now plays windows of finished segments: the first (about :data:`FIRST_WINDOW_S`) is prepared
when playback starts (10 ms at pace 1, 0.15 s at pace 1.25), each next one (about :data:`WINDOW_S`) on a helper
thread while the current one plays, so that playback goes on at the next segment boundary without a wait.
"""

from __future__ import annotations

import threading

import numpy as np

from core.engine import ChatterboxError
from core.narration import Placement, Project, preview

FIRST_WINDOW_S = 15.0
WINDOW_S = 60.0


class PreviewWindows:
    def __init__(self, window_s: float = WINDOW_S):
        self.window_s = window_s
        self._generation = 0
        self._thread: threading.Thread | None = None
        self._next: tuple | None = None
        """``(generation, audio, placements)`` or ``(generation, error)`` once the next window is prepared."""
        self._next_number: int | None = None
        self._lock = threading.Lock()

    def load(self, project: Project, number: int) -> tuple[np.ndarray, list[Placement]]:
        """The window starting at segment ``number`` (``ChatterboxError`` when a take cannot be read); the next one
        starts preparing at once."""
        self.cancel()
        audio, placements = preview(project, number, min(FIRST_WINDOW_S, self.window_s))
        self._prepare_after(project, placements)
        return audio, placements

    def has_next(self) -> bool:
        return self._next_number is not None

    def take_next(self, project: Project) -> tuple[np.ndarray, list[Placement]] | None:
        """The next window once it is prepared (``None`` while it is not yet); the one after starts preparing."""
        with self._lock:
            ready = self._next if self._next is not None and self._next[0] == self._generation else None
        if ready is None:
            return None
        if len(ready) == 2:
            self._next_number = None
            raise ready[1]
        _generation, audio, placements = ready
        self._prepare_after(project, placements)
        return audio, placements

    def refresh(self, project: Project) -> None:
        """The project changed (an edit, a new take, a pace): prepare the next window again from its new state."""
        following = self._next_number
        if following is not None:
            self._prepare_from(project, following)

    def cancel(self) -> None:
        """Forget the window being prepared (the project changed, or playback stopped or moved)."""
        with self._lock:
            self._generation += 1
            self._next = None
        self._next_number = None

    def join(self, timeout: float = 5.0) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _prepare_after(self, project: Project, placements: list[Placement]) -> None:
        following = placements[-1].number + 1 if placements else None
        if following is None or following > len(project.segments):
            self._next_number = None
            return
        self._prepare_from(project, following)

    def _prepare_from(self, project: Project, following: int) -> None:
        with self._lock:
            self._generation += 1
            self._next = None
            generation = self._generation
        self._next_number = following

        def prepare():
            result: tuple[int, np.ndarray, list[Placement]] | tuple[int, ChatterboxError]
            try:
                audio, found = preview(project, following, self.window_s)
                result = (generation, audio, found)
            except ChatterboxError as exc:
                result = (generation, exc)
            with self._lock:
                if generation == self._generation:
                    self._next = result

        self._thread = threading.Thread(target=prepare, name="studio-preview", daemon=True)
        self._thread.start()
