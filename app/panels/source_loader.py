"""Reading a recording to re-voice on a thread of its own, its result back on the GUI thread.

A source may be up to 30 minutes of any format and rate (:func:`core.engine.load_source` reads, mixes and resamples
it block by block): seconds of work that never run on the GUI thread. One file is read at a time; a file asked for
while another is read is read next, and only the last one asked for is reported (the user changed their mind).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from core.engine import ChatterboxError, load_source
from core.wording import describe_error

from ..background_job import BackgroundJob

log = logging.getLogger(__name__)


class SourceLoader(BackgroundJob):
    loaded = Signal(object)  # the SourceRecording
    failed = Signal(str, str)  # the file's name, the sentence that says what is wrong

    def __init__(self, parent: QObject | None = None, poll_ms: int = 20) -> None:
        super().__init__(parent, poll_ms)
        self._next: Path | None = None
        self.path: Path | None = None
        """The file being read (``None``: none)."""

    def load(self, path: Path) -> None:
        """Read ``path``; while another file is read, this one is read after it (and only this one is reported)."""
        if self.running:
            self._next = Path(path)
            return
        self.path = Path(path)
        self._start(self._run, (self.path,), "revoice-source")

    def shutdown(self, timeout: float = 5.0) -> bool:
        """The window closes: wait a little for a file being read (a daemon thread: it cannot hold the exit)."""
        thread, self._next = self._thread, None
        if thread is None:
            return True
        thread.join(timeout)
        self._timer.stop()
        self._thread = None
        return not thread.is_alive()

    def _run(self, path: Path) -> None:
        try:
            source = load_source(path)
        except Exception as exc:  # every failure becomes the load's result
            if not isinstance(exc, ChatterboxError):
                log.exception("reading %s failed", path)
            self._put("failed", (path.name, describe_error(exc)))
        else:
            self._put("loaded", source)

    def _deliver(self, kind: str, value: Any) -> None:
        following, self._next = self._next, None
        self.path = None
        if following is not None:  # a newer choice: this result is not wanted any more
            self.load(following)
        elif kind == "loaded":
            self.loaded.emit(value)
        else:
            self.failed.emit(*value)
