"""One progress line on stderr, shared by the render and export bars: drawn in place on a terminal (``\\r``), a new
line each time when stderr is a log or a pipe; and a segment's text cut to fit a line of a listing."""

from __future__ import annotations

WIDTH = 24


def short(text: str, width: int = 70) -> str:
    """``text`` cut to ``width`` characters with an ellipsis (a segment's text in a listing)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def bar(fraction: float) -> str:
    """``[#########...............]`` for a fraction between 0 and 1."""
    filled = round(WIDTH * fraction)
    return f"[{'#' * filled}{'.' * (WIDTH - filled)}]"


class ProgressLine:
    def __init__(self, stream) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.open = False
        """A line is on the terminal without its newline (the next one overwrites it; :meth:`close` ends it)."""
        self._shown_at: float | None = None

    def show(self, line: str, keep: bool = False) -> None:
        """Show ``line``; ``keep``: on a terminal, a line of its own that the next update does not overwrite."""
        if self.tty and keep:
            self.stream.write("\r" + line.ljust(100) + "\n")
            self.open = False
        elif self.tty:
            self.stream.write("\r" + line.ljust(100)[:160])
            self.open = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def fraction(self, done: float, total: float, words: str) -> None:
        """A bar for ``done`` of ``total`` and ``words``: every call on a terminal; in a log, the first, then one a
        tenth of the way, and the last."""
        last = self._shown_at
        if self.tty or last is None or done >= total or done - last >= total / 10:
            self._shown_at = done
            self.show(f"{bar(done / max(total, 1))} {words}")

    def close(self) -> None:
        if self.open:
            self.stream.write("\n")
            self.stream.flush()
            self.open = False
