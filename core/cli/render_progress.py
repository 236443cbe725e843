"""The render's progress bar on stderr: ``[#####.....] segment 3/12  0:21 of audio  RTF 0.62  0:45 left`` (a line
per segment when stderr is not a terminal; a failure stays on the terminal, with its reason)."""

from __future__ import annotations

import time

from core.cli.progress_line import ProgressLine, bar
from core.wording import describe_failure


class RenderBar:
    """``[#####.....] segment 3/12  0:21 of audio  RTF 0.62  0:45 left`` on stderr (one line per segment when
    stderr is not a terminal)."""

    def __init__(self, stream):
        self.line = ProgressLine(stream)
        self.shown_at = 0.0
        self.failures_shown: set[int] = set()
        """The segments whose failure (with its reason) a line has shown: the final message does not repeat it."""

    def update(self, event) -> None:
        from core.narration import clock

        if event.kind == "chunk" and (not self.line.tty or time.monotonic() - self.shown_at < 0.2):
            return
        self.shown_at = time.monotonic()
        left = f"{clock(event.eta_s)} left" if event.eta_s is not None else "estimating…"
        status = f" segment {event.number} failed: {describe_failure(event, 'cli')}" if event.kind == "failed" else ""
        if event.kind == "failed":
            self.failures_shown.add(event.number)
        self.line.show(
            f"{bar(event.done / max(event.total, 1))} segment {min(event.done + 1, event.total)}/{event.total}  "
            f"{clock(event.audio_seconds)} of audio  RTF {event.rtf:.2f}  {left}{status}",
            keep=event.kind == "failed",  # a failure stays on the terminal, with its reason
        )

    def close(self) -> None:
        self.line.close()
