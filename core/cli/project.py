"""``python -m core narrate`` and ``python -m core project``: narration projects on the command line.

``narrate INPUT --project DIR --bundle B`` creates the project (or brings it up to date with a changed INPUT),
renders what is pending with a progress bar on stderr, and exports. ``project DIR`` lists, edits, regenerates,
chooses takes, performs a line (``--perform N FILE``: a recording of segment N re-voiced into its voice), renders and
exports. Exit codes as for every command: 0, 2 bad input, 1 internal error or interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from core.cli.cast import (
    add_narrate_cast_arguments,
    add_project_cast_arguments,
    attribute_on_import,
    cast_command,
    cast_edit,
)
from core.cli.cluster import add_cluster_arguments, check_cluster_arguments, render_on_cluster, wants_cluster
from core.cli.errors import CliError
from core.cli.progress_line import ProgressLine, bar, short
from core.cli.review import (
    accept_command,
    add_review_arguments,
    add_take_arguments,
    apply_thresholds,
    check_takes_command,
    flagged_fields,
    take_policy,
)
from core.cli.words import add_align_argument, align_command
from core.wording import describe_failure, describe_notice

SAMPLING = (
    ("temperature", float),
    ("top-k", int),
    ("top-p", float),
    ("min-p", float),
    ("repetition-penalty", float),
    ("cfg-weight", float),
    ("exaggeration", float),
    ("max-new-tokens", int),
)
EXIT_OK = 0
EXIT_CHECK_FAILED = 3
"""``--check``: a file was written but does not meet the store's rules."""


def add_sampling_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--language")
    p.add_argument("--seed", type=int)
    p.add_argument("--greedy", action="store_true")
    for name, kind in SAMPLING:
        p.add_argument(f"--{name}", type=kind)


def add_parsers(sub, runtime_arguments) -> None:
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
    _export_arguments(p, FORMATS)
    p.add_argument("--json", action="store_true", help="print one JSON object with the segments and exports")
    add_narrate_speech_arguments(p)
    add_narrate_cast_arguments(p)
    add_cluster_arguments(p)
    add_take_arguments(p)

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
    _add_edit_arguments(action, p)
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
    _export_arguments(p, FORMATS)
    p.add_argument("--json", action="store_true")
    add_cluster_arguments(p)


def _add_edit_arguments(action, p) -> None:
    """The project's structural edits (each undoable with --undo) and the import that renders nothing."""
    action.add_argument("--delete", type=int, metavar="N", help="delete segment N (its takes stay on disk for --undo)")
    action.add_argument("--skip", type=int, metavar="N", help="leave segment N out of rendering and export")
    action.add_argument("--unskip", type=int, metavar="N", help="narrate a skipped segment N again")
    action.add_argument("--merge", type=int, metavar="N", help="merge segment N with segment N+1")
    action.add_argument("--split", type=int, metavar="N", help="split segment N in two (with --at CHARS)")
    action.add_argument("--rename-chapter", type=int, metavar="C", help="retitle chapter C (with --text)")
    action.add_argument("--chapter-starts", type=int, metavar="N", help="segment N starts a new chapter (--title)")
    action.add_argument("--chapter-joins", type=int, metavar="N", help="the chapter segment N starts joins the last")
    action.add_argument("--skip-chapter", type=int, metavar="C", help="leave chapter C out of rendering and export")
    action.add_argument("--unskip-chapter", type=int, metavar="C", help="narrate a skipped chapter C again")
    action.add_argument(
        "--cut-at-quotes",
        action="store_true",
        help="cut every sentence that holds speech and narration together at its quotes (for a dialogue voice or a "
        "cast; the parts are new, pending segments)",
    )
    add_align_argument(action)
    action.add_argument("--undo", action="store_true", help="take back the last edit (kept in the project)")
    action.add_argument("--redo", action="store_true", help="do the last undone edit again")
    action.add_argument(
        "--import",
        dest="import_book",
        metavar="BOOK",
        help="create the project from BOOK (or bring it up to date) and render nothing: review it first",
    )
    p.add_argument("--at", type=int, metavar="CHARS", help="where to split (with --split): length of the first part")
    p.add_argument("--title", help="the new chapter's title (with --chapter-starts; default its first words)")
    p.add_argument("--voice", help="the voice of an imported book (with --import; as for narrate)")


def _export_arguments(p, formats) -> None:
    p.add_argument("--speed", type=float, help="pace of the whole project, 0.5-2.0 (kept in the project)")
    p.add_argument("--loudness", help="target loudness in LUFS, or podcast (-16), audiobook (-19), broadcast (-23)")
    p.add_argument("--true-peak", type=float, help="true-peak ceiling in dBTP (default -1; kept in the project)")
    p.add_argument("--out", type=Path, help=f"the whole narration as one file ({', '.join(formats)})")
    p.add_argument("--subtitles", type=Path, help="subtitles for --out (.srt or .vtt), one cue per segment")
    p.add_argument("--per-chapter", type=Path, metavar="DIR", help="one file per chapter and a chapter list")
    p.add_argument("--format", choices=[s.lstrip(".") for s in formats], help="chapter file format (default flac)")
    p.add_argument("--chapter-subtitles", choices=("srt", "vtt"), help="a subtitle file beside each chapter file")
    p.add_argument(
        "--name-speakers",
        action="store_true",
        help="name who speaks each line (a project with a cast): in the subtitles (WebVTT <v Name>, SRT 'Name: ') "
        "and the read-along book (each line's title)",
    )
    p.add_argument(
        "--highlight",
        choices=("sentence", "word"),
        help="what a read-along book (--out BOOK.epub) highlights as it is read: sentence (default), or word (word "
        "by word where the takes have word times; other segments by sentence)",
    )
    p.add_argument(
        "--subtitle-words",
        nargs="?",
        const=1,
        type=int,
        metavar="N",
        help="word timing in --subtitles/--chapter-subtitles: WebVTT keeps a cue per segment with a timestamp before "
        "each word; SRT gets a cue per N words (default 1). Segments without word times keep their cue",
    )
    p.add_argument(
        "--chapters",
        metavar="RANGE",
        help="only these chapters (numbers as --list shows: 3, 2-4, 1,3,5-7): rendered "
        "with --render, exported with --export",
    )
    p.add_argument("--segments", metavar="RANGE", help="only these segments (as --chapters): rendered and exported")
    p.add_argument(
        "--cover", type=Path, metavar="IMG", help="cover image (JPEG/PNG) for M4B and MP3 (default: the book's)"
    )
    p.add_argument("--bitrate", help="bitrate of MP3, M4B and Opus, e.g. 64k, 128k, 192k (default: the format's)")
    p.add_argument("--sample-rate", type=int, metavar="HZ", help="sample rate of the files, e.g. 44100 (default 24000)")
    rate = p.add_mutually_exclusive_group()
    rate.add_argument("--vbr", action="store_true", help="MP3 at a variable bitrate (LAME V2)")
    rate.add_argument("--cbr", action="store_true", help="MP3 at a constant bitrate (the default)")
    p.add_argument("--author", help="the book's author, in the files' tags (default: the imported EPUB's author)")
    p.add_argument("--narrator", help="the narrator, in the files' tags")
    p.add_argument("--year", help="the year, in the files' tags")
    p.add_argument(
        "--check", choices=("acx",), help="check every exported file against ACX/Audible's rules (exit 3 if any fails)"
    )
    p.add_argument(
        "--master", choices=("acx",), help="master for ACX/Audible: level, peaks, room tone, 44.1 kHz 192k CBR MP3"
    )
    p.add_argument("--strict", action="store_true", help="refuse to export while takes are flagged for review (exit 2)")


# --- narrate --------------------------------------------------------------------------------------------------------
def narrate(args, runtime) -> int:
    from core.narration import parse_text, read_document

    _check_export_arguments(args)
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
    project, report = _import_book(args, doc, raw, name, base)
    if args.cast:
        attribute_on_import(project)
    _apply_settings(project, args)
    _remember_bundle(project, args)
    project.save()
    _print_import(project, report)
    bar = _ProgressBar(sys.stderr)
    summary = _render(project, args, runtime, bar, None)
    return _finish(project, args, summary, bar.failures_shown)


def _import_book(args, doc, raw: bytes, name: str, base: Path):
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
        report = import_document(project, doc, args.voice, _library(args), base, source, dialogue_voice, cast)
    return project, report


def _print_import(project, report) -> None:
    if report is not None:
        print(
            f"{project.folder}: {report.segments} segments in {report.chapters} chapter(s); {report.kept} kept "
            f"from before, {report.new} new",
            file=sys.stderr,
        )


def sampling_given(args) -> dict:
    """The sampling options given on the command line (``add_sampling_arguments``), by SynthesisOptions field."""
    names = [name.replace("-", "_") for name, _kind in SAMPLING] + ["language"]
    given = {name: getattr(args, name) for name in names if getattr(args, name) is not None}
    return given | ({"greedy": True} if args.greedy else {})


def _apply_settings(project, args) -> None:
    from core.engine import SynthesisOptions

    changed = sampling_given(args)
    SynthesisOptions(**changed)
    project.settings.update(changed)
    if args.seed is not None:
        if not 0 <= args.seed < 2**31:
            raise CliError(f"--seed must be between 0 and {2**31 - 1}.")
        project.seed = args.seed
    _apply_finishing(project, args)


def _apply_finishing(project, args) -> None:
    from core.engine import parse_loudness

    if args.speed is not None:
        project.set_speed(None, args.speed)
    if args.loudness is not None:
        project.finishing["loudness"] = parse_loudness(args.loudness)
    if args.true_peak is not None:
        if not -20.0 <= args.true_peak <= 0.0:
            raise CliError(f"--true-peak must be between -20 and 0 dBTP, not {args.true_peak:g}.")
        project.finishing["true_peak"] = args.true_peak


def _render(project, args, runtime, bar, numbers, seed=None, regenerate=False):
    from core.engine import Pipeline
    from core.narration import regenerate as regenerate_one
    from core.narration import render_pending, render_todo

    if not regenerate:
        numbers = _chosen_numbers(project, args)
    policy = take_policy(args, project)  # bad counts, a recogniser not installed: said before the model loads
    todo = 1 if regenerate else len(render_todo(project, numbers, policy))
    if not todo:
        return None
    pipe = Pipeline.from_bundle(_bundle_of(project, args), runtime, background=True)
    if pipe.provider_notice:
        print(f"notice: {describe_notice(pipe.provider_notice, 'cli')}", file=sys.stderr)
    try:
        if regenerate:
            return regenerate_one(project, pipe, numbers[0], seed, bar.update, policy=policy)
        if wants_cluster(args):
            return render_on_cluster(project, args, pipe, bar, numbers, policy)
        return render_pending(project, pipe, bar.update, numbers=numbers, policy=policy)
    except KeyboardInterrupt:
        bar.close()
        counts = project.counts()
        print(
            f"{counts['rendered']} of {len(project.segments)} segments are rendered and saved; run the same "
            "command again to continue.",
            file=sys.stderr,
        )
        raise
    finally:
        bar.close()


def _finish(
    project, args, summary, failures_shown: frozenset[int] | set[int] = frozenset(), performed: dict | None = None
) -> int:
    """Export, report, and refuse (exit 2) when segments failed: the reason of each failure is said once, by the
    progress line that showed it or else here. ``performed``: what ``--perform`` made (said first, and in the JSON
    as ``perform``)."""
    result = None
    chosen = _chosen_numbers(project, args)
    failed = [
        s
        for n, s in enumerate(project.segments, 1)
        if project.status(s) == "failed" and (chosen is None or n in chosen)
    ]
    wants_export = args.out or args.subtitles or args.per_chapter
    if wants_export and not failed:
        result = _export(project, args)
    if args.json:
        report = _report(project, summary, result)
        if performed is not None:
            report["perform"] = performed
        print(json.dumps(report))
    else:
        if performed is not None:
            print(_performed_line(performed))
        _print_summary(project, summary, result)
    if failed:
        exported = " Nothing was exported." if wants_export else ""
        raise CliError(_failed_text(project, failed, failures_shown) + exported)
    if result is not None and result.checks and not all(c["passed"] for c in result.checks):
        return EXIT_CHECK_FAILED
    return EXIT_OK


def _failed_text(project, failed: list, failures_shown) -> str:
    unseen = [s for s in failed if project.number(s) not in failures_shown]
    if not unseen:
        numbers = ", ".join(str(project.number(s)) for s in failed[:10]) + ("…" if len(failed) > 10 else "")
        return f"{len(failed)} segment(s) failed ({numbers}); the reason of each is above."
    first = unseen[0]
    which = "the first, segment" if first is failed[0] else "segment"
    return f"{len(failed)} segment(s) failed; {which} {project.number(first)}: {describe_failure(first, 'cli')}"


def _export(project, args):
    from core.cli.export_progress import ExportBar
    from core.narration import export_project

    loudness, true_peak = project.finishing.get("loudness"), float(project.finishing.get("true_peak", -1.0))
    bar = ExportBar(sys.stderr)
    try:
        return export_project(project, _export_request(args, loudness, true_peak), bar.update)
    finally:
        bar.close()


def _export_request(args, loudness: float | None, true_peak: float):
    from core.engine import EncodeSettings, parse_bitrate
    from core.narration import BookInfo, ExportRequest

    chapter_format = f".{args.format}" if args.format else (args.out.suffix.lower() if args.out else ".flac")
    encoding = EncodeSettings(args.sample_rate, parse_bitrate(args.bitrate), bool(args.vbr))
    return ExportRequest(
        out=args.out,
        subtitles=args.subtitles,
        per_chapter=args.per_chapter,
        chapter_format=chapter_format,
        chapter_subtitles=f".{args.chapter_subtitles}" if args.chapter_subtitles else None,
        loudness=loudness,
        true_peak=true_peak,
        chapters=_numbers(args.chapters, "chapters"),
        segments=_numbers(args.segments, "segments"),
        encoding=encoding,
        cover=args.cover,
        book=BookInfo(author=args.author, narrator=args.narrator, year=args.year),
        check=args.check,
        master=args.master,
        strict=bool(getattr(args, "strict", False)),
        name_speakers=bool(getattr(args, "name_speakers", False)),
        highlight=getattr(args, "highlight", None) or "sentence",
        subtitle_words=getattr(args, "subtitle_words", None),
    )


def _numbers(text: str | None, what: str) -> tuple[int, ...] | None:
    from core.narration import parse_numbers

    return None if text is None else parse_numbers(text, what)


def _chosen_numbers(project, args) -> list[int] | None:
    """The segment numbers ``--chapters`` and ``--segments`` choose (``None``: every one)."""
    chapters, segments = _numbers(args.chapters, "chapters"), _numbers(args.segments, "segments")
    if chapters is None and segments is None:
        return None
    from core.narration import ProjectError

    for number in chapters or ():
        if not 1 <= number <= len(project.chapters):
            raise ProjectError("export.no_chapter", number=number, count=len(project.chapters))
    return [
        n
        for n, s in enumerate(project.segments, 1)
        if (chapters is None or s.chapter + 1 in chapters) and (segments is None or n in segments)
    ]


def _check_export_arguments(args) -> None:
    """The export's names, formats, pace and loudness are refused before the model loads or anything renders."""
    from core.engine import parse_loudness
    from core.narration import SPEED_RANGE, check_request

    if args.out or args.subtitles or args.per_chapter:
        check_request(_export_request(args, None, -1.0))
    else:
        _export_request(args, None, -1.0)  # --chapters, --segments, --bitrate: said before the model loads
    if args.speed is not None and not SPEED_RANGE[0] <= args.speed <= SPEED_RANGE[1]:
        raise CliError(f"--speed must be between {SPEED_RANGE[0]} and {SPEED_RANGE[1]}, not {args.speed:g}.")
    parse_loudness(args.loudness)


# --- project --------------------------------------------------------------------------------------------------------
def project_command(args, runtime) -> int:
    from core.narration import open_project

    if args.import_book is not None:
        return _import_command(args)
    project = open_project(args.project)
    _check_export_arguments(args)
    check_cluster_arguments(args)
    summary = performed = None
    bar = _ProgressBar(sys.stderr)
    if args.lexicon and not args.json:
        return _print_lexicon(project)
    if args.dump_json:
        return _dump_json(project, Path(args.dump_json), args.json)
    if args.cast:
        return cast_command(project, args)
    apply_thresholds(project, args)
    if args.check_takes:
        project.save()
        return check_takes_command(project, args, _chosen_numbers(project, args))
    if args.align is not None:
        return align_command(project, args)
    _speech_edit(project, args)  # the lexicon, spoken forms, dialogue and chapter voices (block below)
    history = _edit_command(project, args)  # the action group lets at most one of these branches run
    if args.choose is not None:
        project.choose(project.segment(args.choose[0]), args.choose[1])
    elif args.accept is not None:
        accept_command(project, args.accept)
    elif args.set_pause is not None:
        project.set_pause(project.segment(_int(args.set_pause[0])), _float(args.set_pause[1], "the pause"))
    elif args.set_speed is not None:
        value = None if args.set_speed[1].lower() in ("project", "none") else _float(args.set_speed[1], "the pace")
        project.set_speed(project.segment(_int(args.set_speed[0])), value)
    elif args.set_voice is not None:
        from core.narration import resolve_voices

        segment = project.segment(_int(args.set_voice[0]))
        name = resolve_voices(project, [args.set_voice[1]], _library(args), Path.cwd())[args.set_voice[1]]
        project.set_voice(segment, name)
    elif args.regenerate is not None or args.render:
        _bundle_of(project, args)  # no model, or a remembered one that is gone: said before anything else
        _remember_bundle(project, args)
        if args.regenerate is not None:
            project.segment(args.regenerate)  # a bad number fails before the model loads
        if args.seed is not None and not 0 <= args.seed < 2**31:
            raise CliError(f"--seed must be between 0 and {2**31 - 1}.")
        regenerate = args.regenerate is not None
        summary = _render(project, args, runtime, bar, [args.regenerate], args.seed, regenerate=regenerate)
    elif args.perform is not None:
        performed = _perform(project, args, runtime)
    _apply_finishing(project, args)
    if lock_purpose(args) is not None:  # a look at the project (--list) writes nothing: another may be rendering it
        project.save(history=history.records() if history is not None else None)  # one transaction
    elif history is not None:
        history.save(project)
    if args.export and not (args.out or args.subtitles or args.per_chapter):
        raise CliError("--export needs --out FILE, --subtitles FILE or --per-chapter DIR.")
    if not args.export:
        args.out = args.subtitles = args.per_chapter = None
    return _finish(project, args, summary, bar.failures_shown, performed)


def _perform(project, args, runtime) -> dict:
    """``--perform N FILE``: the recording checked before the model loads, re-voiced with progress on stderr,
    stored as segment N's chosen take; what was made (the ``perform`` of the JSON report)."""
    from core.engine import Pipeline
    from core.narration import is_flagged, load_recording, perform_segment

    number = _int(args.perform[0])
    segment = project.segment(number)
    file = Path(args.perform[1])
    recording = load_recording(file, number)  # a bad file is said before the model loads
    for warning in recording.warnings:
        print(f"warning: {describe_notice(warning, 'cli')}", file=sys.stderr)
    bundle = _bundle_of(project, args)
    _remember_bundle(project, args)
    if args.seed is not None and not 0 <= args.seed < 2**31:
        raise CliError(f"--seed must be between 0 and {2**31 - 1}.")
    pipe = Pipeline.from_bundle(bundle, runtime, background=True)
    if pipe.provider_notice:
        print(f"notice: {describe_notice(pipe.provider_notice, 'cli')}", file=sys.stderr)
    line = ProgressLine(sys.stderr)

    def progress(done: float, total: float) -> None:
        line.fraction(done, total, f"re-voicing segment {number}: {done:.1f} of {total:.1f} s")

    try:
        take = perform_segment(project, pipe, segment, file, args.seed, progress=progress, loaded=recording)
    finally:
        line.close()
    return {
        "segment": number,
        "take": segment.takes.index(take) + 1,
        "file": take.file,
        "source": (take.performed or {}).get("source"),
        "recording": str(file),
        "seconds": take.seconds,
        "seed": take.seed,
        "voice": project.voice_of(segment),
        "flagged": is_flagged(take),
        "warnings": [describe_notice(w, "cli") for w in recording.warnings],
    }


def _performed_line(performed: dict) -> str:
    voice = performed["voice"] or "the model's voice"
    review = "; the take screen flags it for review" if performed["flagged"] else ""
    return (
        f"segment {performed['segment']}: take {performed['take']} performed from {Path(performed['recording']).name} "
        f"({performed['seconds']:.1f} s) in {voice}; the recording is kept as {performed['source']}{review}"
    )


def _dump_json(project, out: Path, as_json: bool) -> int:
    project.dump_json(out)
    if as_json:
        print(json.dumps({"project": str(project.folder), "dump": str(out), "segments": len(project.segments)}))
    else:
        print(f"{project.folder}: {len(project.segments)} segments written to {out}")
    return EXIT_OK


def _edit_command(project, args):
    """Run the structural edit the arguments name (``--edit`` too); the history that records it, or ``None``."""
    from core.narration import History, editing

    history = History.load(project)
    if args.edit is not None:
        if args.text is None:
            raise CliError("--edit N needs --text with the new words.")
        history.record(editing.edit_text(project, args.edit, args.text))
    elif args.delete is not None:
        history.record(editing.delete(project, args.delete))
    elif args.skip is not None or args.unskip is not None:
        skipped = args.skip is not None
        history.record(editing.set_skipped(project, args.skip if skipped else args.unskip, skipped))
    elif args.merge is not None:
        history.record(editing.merge(project, args.merge))
    elif args.split is not None:
        if args.at is None:
            raise CliError("--split N needs --at CHARS: how many characters of segment N stay in the first part.")
        history.record(editing.split(project, args.split, args.at))
    elif args.rename_chapter is not None:
        if args.text is None:
            raise CliError("--rename-chapter C needs --text with the new title.")
        history.record(editing.rename_chapter(project, args.rename_chapter, args.text))
    elif args.chapter_starts is not None:
        history.record(editing.chapter_starts(project, args.chapter_starts, args.title))
    elif args.chapter_joins is not None:
        history.record(editing.chapter_joins(project, args.chapter_joins))
    elif args.skip_chapter is not None or args.unskip_chapter is not None:
        skipped = args.skip_chapter is not None
        number = args.skip_chapter if skipped else args.unskip_chapter
        history.record(editing.set_chapter_skipped(project, number, skipped))
    elif args.cut_at_quotes:
        history.record(editing.cut_at_quotes(project))
    elif args.undo or args.redo:
        try:
            if args.undo:
                history.undo(project)
            else:
                history.redo(project)
        finally:
            if history.stale:
                history.save(project)  # emptied: the project itself is left as it is
    elif not cast_edit(project, args, history):  # the cast's edits (core/cli/cast.py)
        return None
    return history


def _import_command(args) -> int:
    """``project DIR --import BOOK``: the project made or brought up to date, and nothing rendered."""
    from core.narration import read_document

    path = Path(args.import_book)
    doc = read_document(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CliError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    project, report = _import_book(args, doc, raw, path.name, path.parent)
    project.save()
    _print_import(project, report)
    if args.json:
        report = _report(project, None, None)
        report["warnings"] = [describe_notice(w, "cli") for w in doc.warnings]
        print(json.dumps(report))
    else:
        _print_chapters(project)
        _print_summary(project, None, None)
    return EXIT_OK


def _bundle_of(project, args) -> Path:
    """The model folder to render with: ``--bundle``, else the one the project remembers."""
    from core.narration import ProjectError

    if args.bundle is not None:
        return Path(args.bundle)
    if project.bundle is None:
        raise CliError("Rendering needs the model: add --bundle DIR.")
    if not Path(project.bundle).is_dir():
        raise ProjectError("project.bundle_missing", folder=project.bundle)
    return Path(project.bundle)


def _remember_bundle(project, args) -> None:
    if args.bundle is not None:
        project.bundle = str(Path(args.bundle).resolve())


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CliError(f"{text!r} is not a segment number.") from None


def _float(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CliError(f"{text!r} is not a number for {what}.") from None


def _library(args):
    from core.engine import voices_dir
    from core.voices import VoiceLibrary

    return VoiceLibrary(args.library or voices_dir())


# --- one renderer per project: the lock held while a command renders or changes the project -------------------------
def narrate_locked(args, runtime) -> int:
    """``narrate`` holding the project's lock (another process rendering it: exit 2, saying who)."""
    from core.narration import ProjectLock

    with ProjectLock(args.project, "narrate"):
        return narrate(args, runtime)


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


# --- text prepared for speech: the lexicon, spoken forms, dialogue and chapter voices -------------------------------
def add_narrate_speech_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dialogue-voice",
        metavar="NAME",
        help="a second voice for quoted speech (sentences are cut at their quotes); --language also sets the "
        "language the book is read in (sentences, numbers, abbreviations)",
    )


def add_project_speech_arguments(p: argparse.ArgumentParser, action) -> None:
    action.add_argument("--lexicon", action="store_true", help="the pronunciation lexicon (with --json: as JSON)")
    action.add_argument(
        "--lexicon-add", nargs=2, metavar=("WORD", "SPOKEN"), help="say WORD as SPOKEN everywhere (whole words)"
    )
    action.add_argument("--lexicon-remove", metavar="WORD", help="remove WORD from the lexicon")
    action.add_argument(
        "--set-spoken", nargs=2, metavar=("N", "TEXT"), help="what segment N says (its text stays); 'auto' resets it"
    )
    action.add_argument(
        "--set-dialogue-voice", metavar="NAME", help="the voice of quoted speech ('none': the narrator's)"
    )
    action.add_argument(
        "--set-chapter-voice", nargs=2, metavar=("C", "NAME"), help="the voice of chapter C ('none': the narrator's)"
    )
    action.add_argument("--set-language", metavar="CODE", help="the language the book is read in (en, de, fr, ...)")
    p.add_argument("--match-case", action="store_true", help="with --lexicon-add: only where the case matches")
    p.add_argument("--dialogue-voice", metavar="NAME", help="with --import: a second voice for quoted speech")
    p.add_argument("--language", metavar="CODE", help="with --import: the language the book is read in")


def _speech_edit(project, args) -> None:
    """One of the speech edits of ``project DIR`` (each makes only the segments it changes pending)."""
    if args.lexicon_add is not None:
        word, spoken = args.lexicon_add
        changed = project.set_lexicon(word, spoken, args.match_case)
        case = " (matching case)" if args.match_case else ""
        print(f"lexicon: {word!r} → {spoken!r}{case}; {len(changed)} segment(s) change", file=sys.stderr)
    elif args.lexicon_remove is not None:
        changed = project.remove_lexicon(args.lexicon_remove)
        print(f"lexicon: {args.lexicon_remove!r} removed; {len(changed)} segment(s) change", file=sys.stderr)
    elif args.set_spoken is not None:
        number, text = args.set_spoken
        segment = project.segment(_int(number))
        project.set_spoken(segment, None if text.strip().lower() == "auto" else text)
    elif args.set_dialogue_voice is not None:
        project.set_dialogue_voice(_project_voice(project, args, args.set_dialogue_voice))
        mixed = project.mixed_speech()
        if mixed and project.dialogue_voice is not None:
            print(
                f"{len(mixed)} segment(s) hold speech and narration together (the first: segment "
                f"{project.number(mixed[0])}) and stay with the narrator; --cut-at-quotes cuts them (every other "
                "segment keeps its takes).",
                file=sys.stderr,
            )
    elif args.set_chapter_voice is not None:
        chapter, name = args.set_chapter_voice
        try:
            number = int(chapter)
        except ValueError:
            raise CliError(f"{chapter!r} is not a chapter number.") from None
        project.set_chapter_voice(number, _project_voice(project, args, name))
    elif args.set_language is not None:
        project.set_language(args.set_language)


def _project_voice(project, args, name: str) -> str | None:
    """A voice name for the project (copied in from the library or a file when new); 'none' → ``None``."""
    from core.narration import resolve_voices

    if name.strip().lower() in ("none", "narrator"):
        return None
    return resolve_voices(project, [name], _library(args), Path.cwd())[name]


def _print_lexicon(project) -> int:
    if not project.lexicon:
        print(f"The lexicon of {project.folder} is empty; add words with --lexicon-add WORD SPOKEN.")
    for word, entry in sorted(project.lexicon.items(), key=lambda item: item[0].casefold()):
        print(f"{word}  →  {entry.spoken}" + ("  (matching case)" if entry.match_case else ""))
    return EXIT_OK


def _speech_fields(project, segment) -> dict:
    return {
        "written": segment.text,
        "spoken": project.spoken_text(segment),
        "spoken_override": segment.spoken,
        "dialogue": segment.dialogue,
        "speaker": segment.speaker,
        "speaker_confidence": segment.speaker_confidence,
    }


def _speech_report(project) -> dict:
    return {
        "language": project.language,
        "dialogue_voice": project.dialogue_voice,
        "lexicon": [
            {"word": word, "spoken": entry.spoken, "match_case": entry.match_case}
            for word, entry in sorted(project.lexicon.items(), key=lambda item: item[0].casefold())
        ],
    }


# --- output ---------------------------------------------------------------------------------------------------------
def _report(project, summary, result) -> dict:
    timeline = result.timeline if result else {}
    segments = []
    for number, segment in enumerate(project.segments, 1):
        take = project.chosen_take(segment)
        place = timeline.get(number)
        segments.append(
            {
                "number": number,
                "id": segment.id,
                "text": segment.text,
                "kind": segment.kind,
                "chapter": segment.chapter + 1,
                "voice": project.voice_of(segment),
                "status": project.status(segment),
                "seed": take.seed if take else None,
                "takes": len(segment.takes),
                "chosen": segment.chosen + 1 if segment.chosen is not None else None,
                "performed": take is not None and take.is_performed,
                "pause_after": segment.pause_after,
                "pause_exact": segment.pause_exact,
                "speed": project.speed_of(segment),
                "start": round(place.start, 3) if place else None,
                "end": round(place.end, 3) if place else None,
                "error": describe_failure(segment, "cli") if segment.error else None,
                "skipped": project.is_skipped(segment),
                **_speech_fields(project, segment),
                **flagged_fields(project, segment),
            }
        )
    out = {
        "project": str(project.folder),
        "title": project.title,
        "counts": project.counts(),
        "chapters": _chapters(project),
        "segments": segments,
        "model": project.model,
        "finishing": project.finishing,
        "bundle": project.bundle,
        **_speech_report(project),
    }
    if summary is not None:
        out["render"] = {
            "rendered": summary.rendered,
            "failed": summary.failed,
            "cancelled": summary.cancelled,
            "audio_seconds": round(summary.audio_seconds, 3),
            "seconds": round(summary.elapsed_s, 3),
            "rtf": round(summary.rtf, 4),
            "flagged": summary.flagged,
            "extra_takes": summary.extra_takes,
        }
        if summary.cluster is not None:
            out["cluster"] = summary.cluster
    if result is not None:
        out["export"] = {
            "files": result.files,
            "seconds": round(result.seconds, 3),
            "loudness": result.loudness,
            "chapters": result.chapters,
            "checks": result.checks,
            "flagged": result.flagged,
        }
    return out


def _chapters(project) -> list[dict]:
    sizes = [0] * len(project.chapters)
    for segment in project.segments:
        sizes[segment.chapter] += 1
    return [
        {"number": i, "title": c.title, "skipped": c.skipped, "segments": sizes[i - 1], "voice": c.voice}
        for i, c in enumerate(project.chapters, 1)
    ]


def _print_chapters(project) -> None:
    for chapter in _chapters(project):
        skipped = "  (skipped)" if chapter["skipped"] else ""
        print(f"chapter {chapter['number']:>3}  {chapter['segments']:>5} segment(s)  {chapter['title']}{skipped}")


def _print_summary(project, summary, result) -> None:
    counts = project.counts()
    if summary is not None:
        print(
            f"rendered {summary.rendered} segment(s), {summary.audio_seconds:.1f} s of audio in "
            f"{summary.elapsed_s:.1f} s (RTF {summary.rtf:.2f})"
            + (f"; {summary.failed} failed" if summary.failed else "")
        )
    if not result:
        for number, segment in enumerate(project.segments, 1):
            status = project.status(segment)
            takes = f"{len(segment.takes)} take(s)" if segment.takes else "no takes"
            chosen = f", take {segment.chosen + 1}" if segment.chosen is not None else ""
            review = "  (needs review)" if flagged_fields(project, segment)["flagged"] else ""
            take = project.chosen_take(segment)
            performed = "  (performed)" if take is not None and take.is_performed else ""
            speaker = f"  [{segment.speaker}]" if segment.speaker else ""
            print(f"{number:>4}  {status:<8}  {takes}{chosen:<9}  {short(segment.text)}{speaker}{performed}{review}")
    skipped = f", {counts['skipped']} skipped" if counts["skipped"] else ""
    print(
        f"{counts['rendered']} rendered, {counts['pending']} pending, {counts['failed']} failed{skipped} "
        f"of {len(project.segments)} segments in {project.folder}"
    )
    if result:
        for file in result.files:
            extra = f" ({file['seconds']:.1f} s)" if "seconds" in file else ""
            print(f"wrote {file['path']}{extra}")
        for level in result.loudness:
            if "target_rms_db" in level:
                print(
                    f"level {level['after_rms_db']} dBFS RMS (target {level['target_rms_db']}), true peak "
                    f"{level['true_peak_db']} dBTP: {level['path']}"
                )
            else:
                print(
                    f"loudness {level['after_lufs']} LUFS (target {level['target_lufs']}), true peak "
                    f"{level['true_peak_db']} dBTP: {level['path']}"
                )
        for check in result.checks:
            print(_check_line(check))


def _check_line(check: dict) -> str:
    """One line per checked file: the figures, then PASS or FAIL with what fails."""

    def figure(value, unit: str) -> str:
        return "–" if value is None else f"{value:.1f}{unit}"

    rate = f"{check['sample_rate'] / 1000:g} kHz" if check.get("sample_rate") else "–"
    bitrate = f"{round(check['bitrate'] / 1000)}k" if check.get("bitrate") else "–"
    kind = "CBR" if check.get("cbr") else ("VBR" if check.get("cbr") is False else "")
    verdict = "PASS" if check["passed"] else "FAIL: " + "; ".join(check["failures"])
    return (
        f"check {Path(check['path']).name}: RMS {figure(check['rms_db'], ' dB')}, "
        f"peak {figure(check['peak_db'], ' dB')}, "
        f"noise floor {figure(check['noise_floor_db'], ' dB')}, head {figure(check['head_s'], ' s')}, tail "
        f"{figure(check['tail_s'], ' s')}, {rate} {bitrate} {kind}  {verdict}"
    )


class _ProgressBar:
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
