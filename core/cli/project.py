"""``python -m core project DIR ...``: one action on a narration project, named by a flag of the action group.

It lists (``--list``, ``--dump-json``: core/cli/project_report.py), edits (core/cli/project_edit.py; the lexicon and
voices: project_speech.py; the cast: cast.py; the take screen: review.py), regenerates and renders
(project_render.py), performs a line (``--perform N FILE``: project_perform.py), imports (``--import``:
project_import.py) and exports (project_export.py). This module builds the parser and dispatches, holding the
project's lock while the action changes the project. Exit codes as for every command: 0, 2 bad input, 1 internal
error or interrupted; 3 ``--check``: the files were written but one fails the store's rules.
"""

from __future__ import annotations

import sys
from pathlib import Path

from core.cli.cast import add_project_cast_arguments, cast_command
from core.cli.cluster import add_cluster_arguments, check_cluster_arguments
from core.cli.errors import CliError
from core.cli.parser import Subparsers
from core.cli.project_edit import add_edit_arguments, edit_command, parse_number, segment_number
from core.cli.project_export import add_export_arguments, check_export_arguments, chosen_numbers
from core.cli.project_import import apply_finishing, import_command
from core.cli.project_perform import perform
from core.cli.project_render import bundle_of, finish, remember_bundle, render, render_runtime
from core.cli.project_report import dump_json
from core.cli.project_speech import add_project_speech_arguments, print_lexicon, speech_edit
from core.cli.render_progress import RenderBar
from core.cli.review import (
    accept_command,
    add_review_arguments,
    add_take_arguments,
    apply_thresholds,
    check_takes_command,
)
from core.cli.runtime import runtime_arguments
from core.cli.voices import voice_library
from core.cli.words import align_command


def add_parser(sub: Subparsers) -> None:
    from core.narration import EXPORT_SUFFIXES as FORMATS

    p = sub.add_parser("project", help="list, edit, regenerate, choose takes of, render and export a project")
    p.add_argument("project", type=Path)
    action = p.add_mutually_exclusive_group(required=True)
    action.add_argument("--list", action="store_true", help="the segments with their status and takes")
    action.add_argument(
        "--dump-json",
        metavar="OUT",
        help="write a readable copy of the project (every segment, take and setting, and the undo history) to OUT "
        "as JSON, in the format project.json had; the project itself is not changed",
    )
    action.add_argument("--regenerate", type=int, metavar="N", help="a new take of segment N (with --bundle)")
    action.add_argument("--edit", type=int, metavar="N", help="replace the text of segment N (with --text)")
    action.add_argument("--choose", type=int, nargs=2, metavar=("N", "TAKE"), help="use take TAKE of segment N")
    action.add_argument(
        "--perform",
        nargs=2,
        metavar=("N", "FILE"),
        help="segment N's take from FILE, your own recording of it, re-voiced into the segment's voice with the "
        "recording's words and timing (with --bundle); it becomes the chosen take, marked performed, and FILE is "
        "kept beside it",
    )
    action.add_argument("--set-pause", nargs=2, metavar=("N", "SECONDS"), help="the pause after segment N")
    action.add_argument("--set-speed", nargs=2, metavar=("N", "X"), help="pace of segment N (0.5-2; 'project')")
    action.add_argument("--set-voice", nargs=2, metavar=("N", "VOICE"), help="voice of segment N")
    action.add_argument("--render", action="store_true", help="render every pending segment (with --bundle)")
    action.add_argument("--export", action="store_true", help="write the files named by --out, --subtitles ...")
    add_edit_arguments(action, p)
    add_project_speech_arguments(p, action)
    add_project_cast_arguments(p, action)
    add_review_arguments(p, action)
    add_take_arguments(p)
    p.add_argument("--text", help="the new text (with --edit and --rename-chapter)")
    p.add_argument("--seed", type=int, help="seed of the new take (with --regenerate and --perform; default a new one)")
    p.add_argument(
        "--bundle",
        type=Path,
        help="model folder (with --regenerate, --perform and --render; default: the one it last used)",
    )
    p.add_argument("--library", type=Path, help="voice library folder (with --set-voice; default: the app's)")
    runtime_arguments(p, lm_batch=True)
    add_export_arguments(p, FORMATS)
    p.add_argument("--json", action="store_true")
    add_cluster_arguments(p)


def run(args) -> int:
    return project_locked(args, render_runtime(args))


def project_locked(args, runtime) -> int:
    """``project DIR ...`` holding the project's lock, except a look that changes nothing (``--list``,
    ``--lexicon``), which works while another process renders the project."""
    from core.narration import ProjectLock

    purpose = lock_purpose(args)
    if purpose is None or (args.import_book is None and not Path(args.project).is_dir()):
        return project_command(args, runtime)  # a look, or no project there (which the command says)
    with ProjectLock(args.project, purpose):
        return project_command(args, runtime)


def lock_purpose(args) -> str | None:
    """What a ``project`` command does to the project (``None``: it only looks)."""
    if args.render or args.regenerate is not None or args.perform is not None:
        return "render"
    if args.check_takes or args.accept is not None or args.screen or args.align is not None:
        return "edit"
    if args.export:
        return "export"
    finishing = args.speed is not None or args.loudness is not None or args.true_peak is not None
    if (args.list or args.lexicon or args.dump_json) and not finishing:
        return None
    return "edit"


def project_command(args, runtime) -> int:
    from core.narration import open_project

    if args.import_book is not None:
        return import_command(args)
    project = open_project(args.project)
    check_export_arguments(args)
    check_cluster_arguments(args)
    summary = performed = None
    bar = RenderBar(sys.stderr)
    if args.lexicon and not args.json:
        return print_lexicon(project)
    if args.dump_json:
        return dump_json(project, Path(args.dump_json), args.json)
    if args.cast:
        return cast_command(project, args)
    apply_thresholds(project, args)
    if args.check_takes:
        project.save()
        return check_takes_command(project, args, chosen_numbers(project, args))
    if args.align is not None:
        return align_command(project, args)
    speech_edit(project, args)  # the lexicon, spoken forms, dialogue and chapter voices (block below)
    history = edit_command(project, args)  # the action group lets at most one of these branches run
    if args.choose is not None:
        project.choose(project.segment(args.choose[0]), args.choose[1])
    elif args.accept is not None:
        accept_command(project, args.accept)
    elif args.set_pause is not None:
        project.set_pause(
            project.segment(segment_number(args.set_pause[0])), parse_number(args.set_pause[1], "the pause")
        )
    elif args.set_speed is not None:
        value = (
            None if args.set_speed[1].lower() in ("project", "none") else parse_number(args.set_speed[1], "the pace")
        )
        project.set_speed(project.segment(segment_number(args.set_speed[0])), value)
    elif args.set_voice is not None:
        from core.narration import resolve_voices

        segment = project.segment(segment_number(args.set_voice[0]))
        name = resolve_voices(project, [args.set_voice[1]], voice_library(args), Path.cwd())[args.set_voice[1]]
        project.set_voice(segment, name)
    elif args.regenerate is not None or args.render:
        bundle_of(project, args)  # no model, or a remembered one that is gone: said before anything else
        remember_bundle(project, args)
        if args.regenerate is not None:
            project.segment(args.regenerate)  # a bad number fails before the model loads
        if args.seed is not None and not 0 <= args.seed < 2**31:
            raise CliError(f"--seed must be between 0 and {2**31 - 1}.")
        regenerate = args.regenerate is not None
        summary = render(project, args, runtime, bar, [args.regenerate], args.seed, regenerate=regenerate)
    elif args.perform is not None:
        performed = perform(project, args, runtime)
    apply_finishing(project, args)
    if lock_purpose(args) is not None:  # a look at the project (--list) writes nothing: another may be rendering it
        project.save(history=history.records() if history is not None else None)  # one transaction
    elif history is not None:
        history.save(project)
    if args.export and not (args.out or args.subtitles or args.per_chapter):
        raise CliError("--export needs --out FILE, --subtitles FILE or --per-chapter DIR.")
    if not args.export:
        args.out = args.subtitles = args.per_chapter = None
    return finish(project, args, summary, bar.failures_shown, performed)
