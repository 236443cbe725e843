"""``project DIR --align [missing|all] [--json]``: every rendered take's words and their times.

A take rendered before takes had words (or one whose alignment was stopped) gets them here; ``all`` aligns every
rendered take again. Progress on stderr; Ctrl-C stops between two takes, keeping what is done. With ``--json``:
``{"project", "aligned", "failed" (segment numbers), "skipped", "cancelled", "seconds"}``."""

from __future__ import annotations

import json
import sys

from core.cli.progress_line import ProgressLine


def add_align_argument(action) -> None:
    action.add_argument(
        "--align",
        nargs="?",
        const="missing",
        choices=("missing", "all"),
        help="give the rendered takes their words and times (read-along books and subtitles at word level): those "
        "without them, or all",
    )


def align_command(project, args) -> int:
    from core.narration import align_takes

    line = ProgressLine(sys.stderr)
    stop = {"asked": False}

    def progress(done: int, total: int, number: int) -> None:
        line.fraction(done, total, f"aligning take {done}/{total} (segment {number})")

    try:
        report = align_takes(project, args.align == "all", progress, lambda: stop["asked"])
    except KeyboardInterrupt:  # between two saves: every take aligned so far is stored
        stop["asked"] = True
        report = None
    finally:
        line.close()
    if report is None:
        print("stopped: the takes aligned so far keep their words (--align goes on from there)", file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps({"project": str(project.folder), **report.to_dict()}))
        return 0
    failed = f"; {len(report.failed)} could not be aligned (they keep their sentence timing)" if report.failed else ""
    print(
        f"{report.aligned} take(s) given their words in {report.seconds:.1f} s, {report.skipped} had them already"
        f"{failed} — {project.folder}"
    )
    for number in report.failed[:20]:
        print(f"  segment {number}: its take could not be aligned", file=sys.stderr)
    return 0
