"""The command line's own refusals (a flag missing or out of range, a render that left failed segments), worded by
the command line where they are raised."""

from __future__ import annotations

from core.engine import ChatterboxError


class CliError(ChatterboxError):
    """A command that cannot go on; ``data["text"]`` is the sentence the command line prints (code ``cli.message``)."""

    def __init__(self, text: str) -> None:
        super().__init__("cli.message", text=text)
