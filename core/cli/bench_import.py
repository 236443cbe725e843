"""``python -m core bench-import BOOK``: importing a book (read, then cut into segments), each run in a fresh
interpreter: median wall time, processor time and peak resident memory."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from core.cli.errors import CliError
from core.cli.parser import Subparsers


def add_parser(sub: Subparsers) -> None:
    """``bench-import BOOK``: importing a book (read, then segments): wall time, processor time, peak memory."""
    p = sub.add_parser(
        "bench-import",
        help="time importing a book (read, then cut into segments) and its peak memory",
        description="Imports BOOK (an EPUB, or any file the importer reads) --runs times, each in a fresh "
        "interpreter, and reports the median wall time, processor time and peak resident memory (Linux's VmHWM).",
    )
    p.add_argument("book", type=Path)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    from core.bench.import_bench import bench_import

    if args.runs < 1:
        raise CliError("--runs must be at least 1")
    if not args.book.is_file():
        raise CliError(f"{args.book} is not a file.")
    try:
        report = bench_import(args.book, args.runs)
    except subprocess.CalledProcessError as exc:
        raise CliError(f"{args.book} could not be imported: {(exc.stderr or '').strip().splitlines()[-1:]}") from exc
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"{report['chars'] / 1e6:.2f} million characters, {report['segments']} segments: {report['seconds']} s "
            f"({report['cpu_s']} s of CPU; runs {[r['seconds'] for r in report['runs']]}), peak "
            f"{report['max_rss_mb']} MB"
        )
    return 0
