"""``python -m core``: the command line (synth, narrate, project, serve, bench, soak, info, make-standin)."""

from core.cli.main import main

__all__ = ["main"]
