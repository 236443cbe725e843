"""``python -m core bench-words``: finding the takes' words against the render, in one run."""

from __future__ import annotations

from pathlib import Path

from core.cli.bench_screen import add_sentences_render_arguments
from core.cli.parser import Subparsers
from core.cli.runtime import runtime_arguments, runtime_options


def add_parser(sub: Subparsers) -> None:
    """``bench-words``: finding the takes' words against the render, in one run."""
    p = sub.add_parser(
        "bench-words",
        help="what finding each take's words costs as a share of rendering it (and on real speech)",
        description="Renders a few sentences with BUNDLE without and with word times, reports the aligner's time as "
        "a share of the render and the render's ratio, and the aligner's rate on espeak-ng speech.",
    )
    add_sentences_render_arguments(p)
    p.add_argument("--folder", type=Path, help="where the projects go (default: the temp folder)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    runtime_arguments(p, cache_dir=False)


def run(args) -> int:
    import json

    from core.bench.words_bench import bench_words

    runtime = runtime_options(args)
    report = bench_words(args.bundle, args.voice, args.sentences, runtime, args.folder, args.max_new_tokens)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0
