"""``python -m core bench-short-lines``: the take screen's flags on one- and two-word lines against sentences, with
and without the short-line cap, in one run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.cli.errors import CliError
from core.cli.parser import Subparsers
from core.cli.runtime import runtime_arguments, runtime_options
from core.standin.spec import PRECISIONS as STANDIN_PRECISIONS
from core.standin.spec import SIZES, VARIANTS


def add_parser(sub: Subparsers) -> None:
    """``bench-short-lines``: the take screen's flags on one- and two-word lines against sentences, with and without
    the short-line cap, in one run."""
    p = sub.add_parser(
        "bench-short-lines",
        help="what the take screen flags on one- and two-word lines against sentences, with and without their cap",
        description="Speaks --lines short lines of dialogue and as many sentences with the same seeds, each with the "
        "options a project gives it and with those a render gives it (a short line's cap), interleaved; screens "
        "every take as a render does and reports per side and kind of line the flags by reason, how generation "
        "stopped, speech tokens against their cap, and seconds.",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--bundle", type=Path, help="a real or stand-in bundle")
    source.add_argument("--standin", choices=VARIANTS, default="turbo", help="build/reuse a stand-in (default)")
    p.add_argument("--size", choices=SIZES, default="tiny", help="stand-in size (with --standin)")
    p.add_argument(
        "--never-stops",
        action="store_true",
        help="with --standin: one whose language model never says STOP before its cap (the worst case)",
    )
    p.add_argument("--lines", type=int, default=100, help="short lines, and sentences (default 100 each)")
    p.add_argument("--seed", type=int, default=1000, help="line i is spoken with seed + i on both sides")
    p.add_argument("--voice", type=Path, help="reference recording (default: the bundle's voice, or a synthetic one)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    runtime_arguments(p, cache_dir=False)


def run(args) -> int:
    import tempfile

    from core.bench.short_lines_bench import bench_short_lines, never_stopping_standin, table
    from core.standin import cached_standin

    if args.lines < 1:
        raise CliError(f"--lines must be at least 1, not {args.lines}")
    if args.never_stops and args.bundle:
        raise CliError("--never-stops builds a stand-in: use it with --standin, not --bundle")
    with tempfile.TemporaryDirectory(prefix="chatterbox-short-lines-") as scratch:
        if args.bundle:
            bundle = args.bundle
        elif args.never_stops:
            bundle = never_stopping_standin(Path(scratch) / args.standin, args.standin, args.size)
        else:
            precision = args.precision if args.precision in STANDIN_PRECISIONS else "fp32"
            bundle = cached_standin(
                args.standin, args.size, precision, announce=lambda m: print(m, file=sys.stderr, flush=True)
            )
        report = bench_short_lines(bundle, args.lines, args.voice, runtime_options(args), args.seed)
        if args.never_stops:
            report["bundle"] = f"{args.standin} stand-in ({args.size}) that never says STOP"
    print(table(report), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0
