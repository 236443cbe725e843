"""``python -m core narrate INPUT --project DIR --bundle B``: a text, Markdown or EPUB file into a narration project.

Creates the project (or brings it up to date with a changed INPUT), renders what is pending with a progress bar on
stderr, and exports (the flags and the export: core/cli/project_export.py). Exit codes as for every command: 0, 2 bad
input, 1 internal error or interrupted; 3 ``--check``: the files were written but one fails the store's rules.
"""

from __future__ import annotations

import sys
from pathlib import Path

from core.cli.cast import add_narrate_cast_arguments, attribute_on_import
from core.cli.cluster import add_cluster_arguments, check_cluster_arguments
from core.cli.errors import CliError
from core.cli.parser import Subparsers
from core.cli.project_export import add_export_arguments, check_export_arguments
from core.cli.project_import import apply_settings, import_book, print_import
from core.cli.project_render import finish, remember_bundle, render, render_runtime
from core.cli.project_speech import add_narrate_speech_arguments
from core.cli.render_progress import RenderBar
from core.cli.review import add_take_arguments
from core.cli.runtime import runtime_arguments
from core.cli.sampling import add_sampling_arguments


def add_parser(sub: Subparsers) -> None:
    from core.narration import EXPORT_SUFFIXES as FORMATS

    p = sub.add_parser(
        "narrate",
        help="turn a text, Markdown or EPUB file into a narration project, render what is pending and export",
        description="Creates the project folder (or continues it: only new or changed sentences of a changed INPUT "
        "are rendered again), renders every pending segment with progress on stderr, then exports.",
    )
    p.add_argument("input", help="a .txt, .md or .epub file, or - for standard input")
    p.add_argument("--project", type=Path, required=True, help="the project folder (created if new)")
    p.add_argument("--bundle", type=Path, required=True)
    p.add_argument("--voice", help="a voice-library name, a recording, or 'default' (the model's voice)")
    p.add_argument("--library", type=Path, help="voice library folder (default: the app's)")
    add_sampling_arguments(p)
    runtime_arguments(p, lm_batch=True)
    add_export_arguments(p, FORMATS)
    p.add_argument("--json", action="store_true", help="print one JSON object with the segments and exports")
    add_narrate_speech_arguments(p)
    add_narrate_cast_arguments(p)
    add_cluster_arguments(p)
    add_take_arguments(p)


def run(args) -> int:
    return narrate_locked(args, render_runtime(args))


def narrate_locked(args, runtime) -> int:
    """``narrate`` holding the project's lock (another process rendering it: exit 2, saying who)."""
    from core.narration import ProjectLock

    with ProjectLock(args.project, "narrate"):
        return narrate(args, runtime)


def narrate(args, runtime) -> int:
    from core.narration import parse_text, read_document

    check_export_arguments(args)
    check_cluster_arguments(args)
    if args.input == "-":
        raw = sys.stdin.buffer.read()
        try:
            doc = parse_text(raw.decode("utf-8-sig"), "Narration")
        except UnicodeDecodeError as exc:
            raise CliError("Standard input is not UTF-8 text.") from exc
        name, base = "stdin", Path.cwd()
    else:
        path = Path(args.input)
        doc = read_document(path)
        raw, name, base = path.read_bytes(), path.name, path.parent
    project, report = import_book(args, doc, raw, name, base)
    if args.cast:
        attribute_on_import(project)
    apply_settings(project, args)
    remember_bundle(project, args)
    project.save()
    print_import(project, report)
    bar = RenderBar(sys.stderr)
    summary = render(project, args, runtime, bar, None)
    return finish(project, args, summary, bar.failures_shown)
