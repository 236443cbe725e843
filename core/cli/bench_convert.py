"""``python -m core bench-convert``: voice conversion's speed and first audio, and the seeded decoder noise against the
graph's own."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.cli.parser import Subparsers
from core.cli.runtime import runtime_arguments, runtime_options

EXIT_OK = 0


def add_parser(sub: Subparsers) -> None:
    """``bench-convert``: voice conversion's speed and first audio, and the seeded noise against the graph's."""
    p = sub.add_parser(
        "bench-convert",
        help="voice conversion: first audio and x real time, and the seeded decoder noise against the graph's own",
        description="Converts SOURCE (or synthetic speech of --seconds) into VOICE after a warm-up, then decodes the "
        "same tokens alternately with the float32 decoder as exported and with its noise seeded.",
    )
    p.add_argument("--bundle", type=Path, required=True, help="the model (a faithful bundle: see PERFORMANCE)")
    p.add_argument("--voice", type=Path, help="the target voice (Turbo has no voice of its own)")
    p.add_argument("--source", type=Path, help="the recording to convert (default: synthetic speech)")
    p.add_argument("--seconds", type=float, default=30.0, help="length of the synthetic source")
    p.add_argument("--noise-calls", type=int, default=3, help="decoder calls per side in the noise comparison")
    p.add_argument("--runs", type=int, default=1, help="conversions of each side (decoder thread on, off)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    runtime_arguments(p, cache_dir=False)


def run(args) -> int:
    from core.bench.convert_bench import bench_convert

    runtime = runtime_options(args, threads=args.threads)
    report = bench_convert(
        args.bundle, args.voice, args.source, args.seconds, runtime, args.noise_calls, say=say, runs=args.runs
    )
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text, encoding="utf-8")
    return EXIT_OK


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
