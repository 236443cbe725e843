"""The export's progress bar on stderr: ``[#####.....] encoding 01 - Morning.mp3  42%  0:12 left`` (a line every
few seconds when stderr is not a terminal)."""

from __future__ import annotations

import time
from pathlib import Path

from core.cli.progress_line import ProgressLine, bar

_PIPE_EVERY_S = 5.0


class ExportBar:
    def __init__(self, stream) -> None:
        self.line = ProgressLine(stream)
        self.shown_at = 0.0
        self.unshown = None
        """The latest progress not shown yet (shown by :meth:`close`: a log ends with where the export got to)."""

    def update(self, progress) -> None:
        now = time.monotonic()
        if now - self.shown_at < (0.2 if self.line.tty else _PIPE_EVERY_S):
            self.unshown = progress
            return
        self.shown_at = now
        self._show(progress)

    def _show(self, progress) -> None:
        from core.narration import clock

        self.unshown = None
        left = progress.seconds_left
        left_text = f"{clock(left)} left" if left is not None else "estimating…"
        self.line.show(
            f"{bar(progress.fraction)} {progress.stage} {Path(progress.file).name}  "
            f"{progress.fraction:4.0%}  {left_text}"
        )

    def close(self) -> None:
        if self.unshown is not None:
            self._show(self.unshown)
        self.line.close()
