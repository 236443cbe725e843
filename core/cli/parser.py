"""The command line's parser: a usage error is one line and exit 2, and each command adds its own sub-parser to the
collection :func:`core.cli.main.build_parser` hands it (``add_parser(sub)`` in the command's module)."""

from __future__ import annotations

import argparse
from typing import TypeAlias

EXIT_BAD_INPUT = 2


class CliParser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, like every other bad input
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


Subparsers: TypeAlias = "argparse._SubParsersAction[CliParser]"
"""argparse's sub-parser collection (``add_subparsers()``), as :func:`core.cli.main.build_parser` passes it on."""
