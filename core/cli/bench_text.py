"""``python -m core bench-text``: the text front end's cost per sentence and language against the language model's."""

from __future__ import annotations

from pathlib import Path

from core.cli.errors import CliError
from core.cli.parser import Subparsers
from core.cli.runtime import runtime_arguments, runtime_options


def add_parser(sub: Subparsers) -> None:
    """``bench-text``: the text front end's cost per sentence and language against the language model's."""
    p = sub.add_parser(
        "bench-text",
        help="what the text front end costs per sentence in each language, as a share of the language model's time",
        description="For one sentence in each language the bundle reads, times the text front end (prepare and "
        "encode, warm; each language's one-time loads apart, as first use) and the language model generating that "
        "sentence's speech tokens, interleaved in one run; reports both and their ratio (issue 50: under 2 percent).",
    )
    p.add_argument("--bundle", type=Path, required=True, help="the model (a faithful bundle: see PERFORMANCE)")
    p.add_argument("--runs", type=int, default=3, help="language-model runs per language (the median is reported)")
    p.add_argument("--calls", type=int, default=50, help="front-end calls per language and run")
    p.add_argument("--languages", help="language codes, comma-separated (default: every language the model reads)")
    p.add_argument("--models-dir", type=Path, help="where the language data lives (default: the app's models)")
    p.add_argument(
        "--json",
        nargs="?",
        const="-",
        help="print the report as JSON instead of the table, or with a path, also write it there",
    )
    runtime_arguments(p, cache_dir=False)


def run(args) -> int:
    import json
    from dataclasses import replace

    from core.bench.text_front_end_bench import BenchTextError, bench_text, table

    languages = [c.strip() for c in args.languages.split(",") if c.strip()] if args.languages else None
    runtime = replace(runtime_options(args), threads=args.threads)
    try:
        report = bench_text(args.bundle, runtime, args.runs, args.calls, languages, args.models_dir)
    except BenchTextError as exc:
        raise CliError(str(exc)) from exc
    if args.json == "-":
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0
