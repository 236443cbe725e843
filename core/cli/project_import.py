"""A book into a project: ``narrate``'s import and ``project DIR --import BOOK`` (which renders nothing), and the
settings a command keeps in the project (sampling, seed, pace, loudness, true peak)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.cli.errors import CliError
from core.cli.project_report import json_report, print_chapters, print_summary
from core.cli.sampling import sampling_given
from core.cli.voices import voice_library
from core.wording import describe_notice

EXIT_OK = 0


def import_book(args, doc, raw: bytes, name: str, base: Path):
    """The project at ``args.project`` (created if new) with ``doc`` imported unless it is already up to date."""
    from core.narration import create_project, import_document, is_project, needs_import, open_project, source_identity

    for warning in doc.warnings:  # e.g. a file of the book that is missing: the rest is imported
        print(f"warning: {describe_notice(warning, 'cli')}", file=sys.stderr)
    project = open_project(args.project) if is_project(args.project) else create_project(args.project, doc.title)
    source = source_identity(name, raw, args.voice)
    dialogue_voice, language = getattr(args, "dialogue_voice", None), getattr(args, "language", None)
    if dialogue_voice is not None:
        source["dialogue_voice"] = dialogue_voice  # a new dialogue voice cuts the sentences at their quotes
    cast = bool(getattr(args, "cast", False))  # narrate --cast
    if cast:
        source["cast"] = True  # so does a cast
    if language is not None:
        project.set_language(language)
    report = None
    if needs_import(project, source):
        report = import_document(project, doc, args.voice, voice_library(args), base, source, dialogue_voice, cast)
    return project, report


def print_import(project, report) -> None:
    if report is not None:
        print(
            f"{project.folder}: {report.segments} segments in {report.chapters} chapter(s); {report.kept} kept "
            f"from before, {report.new} new",
            file=sys.stderr,
        )


def apply_settings(project, args) -> None:
    from core.engine import SynthesisOptions

    changed = sampling_given(args)
    SynthesisOptions(**changed)
    project.settings.update(changed)
    if args.seed is not None:
        if not 0 <= args.seed < 2**31:
            raise CliError(f"--seed must be between 0 and {2**31 - 1}.")
        project.seed = args.seed
    apply_finishing(project, args)


def apply_finishing(project, args) -> None:
    from core.engine import parse_loudness

    if args.speed is not None:
        project.set_speed(None, args.speed)
    if args.loudness is not None:
        project.finishing["loudness"] = parse_loudness(args.loudness)
    if args.true_peak is not None:
        if not -20.0 <= args.true_peak <= 0.0:
            raise CliError(f"--true-peak must be between -20 and 0 dBTP, not {args.true_peak:g}.")
        project.finishing["true_peak"] = args.true_peak


def import_command(args) -> int:
    """``project DIR --import BOOK``: the project made or brought up to date, and nothing rendered."""
    from core.narration import read_document

    path = Path(args.import_book)
    doc = read_document(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CliError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    project, report = import_book(args, doc, raw, path.name, path.parent)
    project.save()
    print_import(project, report)
    if args.json:
        report = json_report(project, None, None)
        report["warnings"] = [describe_notice(w, "cli") for w in doc.warnings]
        print(json.dumps(report))
    else:
        print_chapters(project)
        print_summary(project, None, None)
    return EXIT_OK
