"""The take screen on the command line: re-takes and candidates while rendering, ``project DIR --check-takes``,
``--accept N``, the book's thresholds (``--screen NAME=VALUE``) and the flagged takes in reports (docs/REVIEW.md).

``--check-takes`` exits 3 when any take is flagged (as ``--check acx`` does for a file that fails), 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys

from core.cli.errors import CliError
from core.cli.progress_line import ProgressLine, short
from core.wording import describe_error, describe_reasons

EXIT_FLAGGED = 3


def add_take_arguments(p: argparse.ArgumentParser) -> None:
    """``--retakes``, ``--candidates`` and ``--asr`` (narrate, and project with --render / --regenerate)."""
    p.add_argument(
        "--retakes",
        type=int,
        metavar="N",
        help="render a take the screen flags again with a new seed, up to N more times; the best take is chosen, "
        "every take is kept",
    )
    p.add_argument(
        "--candidates", type=int, metavar="K", help="render K takes of every segment and keep the best-scoring one"
    )
    p.add_argument(
        "--asr",
        nargs="?",
        const="auto",
        choices=("auto", "whisper", "sphinx"),
        help="screen with speech recognition too (the transcript against the text): faster-whisper "
        "(pip install '.[asr]') or, for English, pocketsphinx; slower",
    )


def add_review_arguments(p: argparse.ArgumentParser, action) -> None:
    """``project DIR``'s review actions and the book's thresholds."""
    action.add_argument(
        "--check-takes",
        action="store_true",
        help="screen the chosen takes again (all, or --chapters/--segments; --asr to listen with speech "
        "recognition); exit 3 when any is flagged",
    )
    action.add_argument(
        "--accept", type=int, metavar="N", help="keep segment N's flagged take: a person listened, it is fine"
    )
    p.add_argument(
        "--screen",
        action="append",
        metavar="NAME=VALUE",
        help="set one of the take screen's thresholds for this book (repeatable; docs/REVIEW.md lists them)",
    )


def take_policy(args, project):
    """The render's :class:`core.narration.TakePolicy` from the arguments."""
    from core.narration import MAX_EXTRA_TAKES, TakePolicy

    retakes = getattr(args, "retakes", None)
    candidates = getattr(args, "candidates", None)
    retakes = 0 if retakes is None else retakes
    candidates = 1 if candidates is None else candidates
    if not 0 <= retakes <= MAX_EXTRA_TAKES:
        raise CliError(f"--retakes must be between 0 and {MAX_EXTRA_TAKES}, not {retakes}.")
    if not 1 <= candidates <= MAX_EXTRA_TAKES:
        raise CliError(f"--candidates must be between 1 and {MAX_EXTRA_TAKES}, not {candidates}.")
    return TakePolicy(retakes, candidates, recogniser_of(args, project.language))


def recogniser_of(args, language: str | None):
    """The recogniser ``--asr`` asks for (``None`` without it); refused with what to install when unavailable."""
    choice = getattr(args, "asr", None)
    if choice is None:
        return None
    from core.narration.screening.recognition import RecognitionUnavailable, recogniser_for

    line = ProgressLine(sys.stderr)

    def progress(done: int, total: int) -> None:  # the Whisper model's first download (~145 MB)
        line.fraction(done, total, f"speech-recognition model {done / 1e6:.0f} of {total / 1e6:.0f} MB")

    try:
        return recogniser_for(language or "en", choice, progress=progress)
    except RecognitionUnavailable as exc:
        raise CliError(describe_error(exc, "cli")) from exc
    finally:
        line.close()


def apply_thresholds(project, args) -> None:
    """``--screen NAME=VALUE``: the book's own thresholds, and its takes judged again against them (stored with the
    command's save)."""
    from core.narration import parse_setting, set_thresholds

    settings = getattr(args, "screen", None) or []
    values = dict(project.screening)
    for text in settings:
        try:
            name, value = parse_setting(text)
        except ValueError as exc:
            raise CliError(f"--screen {text}: {exc}.") from exc
        values[name] = value
    if settings:
        set_thresholds(project, values)


def accept_command(project, number: int) -> None:
    from core.narration import accept

    segment = project.segment(number)
    if not accept(project, segment):
        print(f"segment {number}: its take is not flagged; nothing to accept", file=sys.stderr)


def check_takes_command(project, args, numbers: list[int] | None) -> int:
    """Screen the chosen takes again and report the flagged ones; exit 3 when there are any."""
    from core.narration import check_takes

    recogniser = recogniser_of(args, project.language)
    line = ProgressLine(sys.stderr)

    def progress(done: int, total: int) -> None:
        line.fraction(done, total, f"screening take {done}/{total}")

    try:
        report = check_takes(project, numbers, recogniser, progress)
    finally:
        line.close()
    if args.json:
        print(json.dumps(_report(project, report), ensure_ascii=False))
    else:
        for item in report.flagged:
            segment = project.segment(item.number)
            print(f"{item.number:>5}  take {item.take}  score {item.score:5.1f}  {short(segment.text)}")
            print(f"       {describe_reasons(item.reasons)}")
        for number in report.missing:
            print(f"{number:>5}  the take's audio cannot be read: regenerate it", file=sys.stderr)
        print(f"{len(report.flagged)} of {report.checked} take(s) flagged for review in {project.folder}")
    return EXIT_FLAGGED if report.flagged else 0


def _report(project, report) -> dict:
    flagged = []
    for item in report.flagged:
        entry = item.to_dict()
        entry["text"] = project.segment(item.number).text
        entry["words"] = describe_reasons(item.reasons)
        flagged.append(entry)
    return {
        "project": str(project.folder),
        "checked": report.checked,
        "flagged": flagged,
        "unreadable": report.missing,
        "thresholds": _thresholds(project),
    }


def _thresholds(project) -> dict:
    from dataclasses import asdict

    from core.narration import Thresholds

    return asdict(Thresholds.of(project.screening))


def flagged_fields(project, segment) -> dict:
    """What ``--list --json`` and narrate's report say of a segment's screen."""
    from core.narration import reasons_of, segment_flagged

    take = project.chosen_take(segment)
    screen = take.screen if take is not None else None
    return {
        "flagged": segment_flagged(project, segment),
        "score": screen.get("score") if screen else None,
        "reasons": reasons_of(take),
    }
