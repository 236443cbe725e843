"""``python -m core bench-cast [BOOK]``: how long attributing every quotation of a book takes and its peak memory; with
``--annotated DIR ...``, how many of a person's annotations it matches."""

from __future__ import annotations

from pathlib import Path

from core.cli.errors import CliError
from core.cli.parser import Subparsers


def add_parser(sub: Subparsers) -> None:
    """``bench-cast BOOK``: how long attributing every quotation of a book takes, and its peak memory."""
    p = sub.add_parser(
        "bench-cast",
        help="time the attribution of every quotation of a book (who says each line) and its peak memory",
        description="Reads BOOK (a text file, paragraphs separated by blank lines), repeats it to --mb megabytes, "
        "and times the attribution of its quotations (median of --runs) and its peak memory (tracemalloc). With "
        "--annotated, scores it instead on novels whose quotations a person annotated with their speakers (the "
        "Project Dialogism Novel Corpus's folders: novel_text.txt, quotation_info.csv, character_info.csv).",
    )
    p.add_argument("book", type=Path, nargs="?")
    p.add_argument(
        "--annotated",
        type=Path,
        nargs="+",
        metavar="DIR",
        help="annotated novels' folders (PDNC's data/*): the share of quotations given the right speaker, by type",
    )
    p.add_argument("--mb", type=float, default=1.0, help="megabytes of text to attribute (the book repeated)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--language", default="en")
    p.add_argument("--json", action="store_true")


def _score_cast(args) -> int:
    import json

    from core.bench.attribution_accuracy import TYPES, score_novels

    needed = ("novel_text.txt", "quotation_info.csv", "character_info.csv")
    for folder in args.annotated:
        missing = [name for name in needed if not (folder / name).is_file()]
        if missing:
            raise CliError(f"{folder} is not an annotated novel's folder: it lacks {', '.join(missing)}.")
    try:
        report = score_novels(args.annotated)
    except (OSError, UnicodeDecodeError, ValueError, SyntaxError, KeyError) as exc:
        raise CliError(f"The annotated novels cannot be read: {exc}") from exc
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for novel in [*report["novels"], {**report, "novel": "all"}]:
        types = novel["by_type"]
        kinds = "  ".join(f"{kind} {types[kind]['accuracy']:.1%} of {types[kind]['quotations']}" for kind in TYPES)
        print(
            f"{novel['novel']}: {novel['accuracy']:.1%} of {novel['quotations']} quotations ({kinds}); most frequent "
            f"speaker {novel['most_frequent_speaker']:.1%}, two quotes back {novel['two_quotes_back']:.1%}"
        )
    return 0


def run(args) -> int:
    import json

    from core.bench.attribution_bench import bench_cast

    if args.annotated:
        return _score_cast(args)
    if args.book is None:
        raise CliError("bench-cast needs a BOOK to time, or --annotated DIR ... to score.")
    if args.runs < 1 or args.mb <= 0:
        raise CliError("--runs must be at least 1 and --mb above 0")
    try:
        report = bench_cast(args.book, args.mb, args.runs, args.language)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CliError(f"{args.book} cannot be read as a UTF-8 text book: {exc}") from exc
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"{report['characters_of_text'] / 1e6:.2f} MB, {report['quotes']} quotes, {report['characters']} "
            f"characters: {report['seconds']} s (runs {report['runs_s']}), peak {report['peak_mb']} MB, "
            f"{report['unsure_share']:.0%} of lines unsure"
        )
    return 0
