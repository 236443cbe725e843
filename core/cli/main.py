"""``python -m core``: make-standin, info, bench and its kin, soak, synth, convert, narrate, project, serve, text,
languages, voices, align. Each command is a module of this package named after it (``bench-export``:
``core/cli/bench_export.py``) with ``add_parser(sub)`` and ``run(args)``; this module only assembles them.
A public interface: keep flags, JSON fields and exit codes.

Exit codes: 0 success; 2 bad input or bad bundle, or a render that could not finish (failed segments, a Ray cluster
that went away: one-line message on stderr, no traceback); 1 internal error;
3 ``soak``: the soak ran but failed its criteria (tokens drifted, a request failed, or memory kept growing);
``narrate``/``project --check``: the files were written but one fails the store's rules.
"""

from __future__ import annotations

import argparse
import logging
import sys
from types import ModuleType

import core.cli.align as align
import core.cli.bench as bench
import core.cli.bench_api as bench_api
import core.cli.bench_cast as bench_cast
import core.cli.bench_cluster as bench_cluster
import core.cli.bench_convert as bench_convert
import core.cli.bench_export as bench_export
import core.cli.bench_import as bench_import
import core.cli.bench_project as bench_project
import core.cli.bench_screen as bench_screen
import core.cli.bench_short_lines as bench_short_lines
import core.cli.bench_text as bench_text
import core.cli.bench_words as bench_words
import core.cli.convert as convert
import core.cli.info as info
import core.cli.languages as languages
import core.cli.make_standin as make_standin
import core.cli.narrate as narrate
import core.cli.project as project
import core.cli.serve as serve
import core.cli.soak as soak
import core.cli.synth as synth
import core.cli.text as text
import core.cli.voices as voices
from core.cli.cluster import check_cluster_arguments, claim_status, note_finished, run_watched, watched
from core.cli.parser import CliParser
from core.engine import ChatterboxError
from core.wording import describe_error

EXIT_INTERNAL, EXIT_BAD_INPUT = 1, 2
COMMANDS: dict[str, ModuleType] = {
    "make-standin": make_standin,
    "info": info,
    "bench": bench,
    "bench-export": bench_export,
    "bench-project": bench_project,
    "bench-screen": bench_screen,
    "bench-words": bench_words,
    "bench-short-lines": bench_short_lines,
    "bench-text": bench_text,
    "bench-cast": bench_cast,
    "bench-import": bench_import,
    "bench-convert": bench_convert,
    "bench-api": bench_api,
    "bench-cluster": bench_cluster,
    "soak": soak,
    "synth": synth,
    "convert": convert,
    "narrate": narrate,
    "project": project,
    "serve": serve,
    "text": text,
    "languages": languages,
    "voices": voices,
    "align": align,
}
"""Each command's module, in the order ``--help`` lists them: ``add_parser(sub)`` adds the command's parser,
``run(args)`` runs it and returns the exit code."""
log = logging.getLogger("core.cli.main")


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(prog="python -m core", description="Chatterbox TTS ONNX pipeline (no GUI).")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=CliParser)
    for command in COMMANDS.values():
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    claim_status()  # in the child of a command with --ray: where it says that it finished (core/cli/cluster.py)
    try:
        return _main(argv)
    finally:
        note_finished()


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2): return the code instead of exiting
        return int(exc.code or 0)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        if watched(args):  # Ray may end the process that renders: a child renders, this one says what happened
            check_cluster_arguments(args)  # a refusal is said at once
            return run_watched(list(sys.argv[1:] if argv is None else argv))
        return COMMANDS[args.command].run(args)
    except ChatterboxError as exc:
        print(f"error: {describe_error(exc, 'cli')}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as exc:
        if args.verbose:
            log.exception("internal error")
        print(f"internal error: {type(exc).__name__}: {exc} (run with --verbose for details)", file=sys.stderr)
        return EXIT_INTERNAL
