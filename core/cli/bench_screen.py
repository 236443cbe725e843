"""``python -m core bench-screen``: the take screen's cost per take against the render's, in one run; and the
arguments of a bench that renders a few sentences (``bench-screen``, ``bench-words``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli.parser import Subparsers
from core.cli.runtime import runtime_arguments, runtime_options


def add_sentences_render_arguments(p: argparse.ArgumentParser) -> None:
    """What a bench that renders a few sentences takes (``bench-screen``, ``bench-words``): the model, a voice, how
    many sentences and how long each may be."""
    p.add_argument("--bundle", type=Path, required=True, help="the model (the faithful Turbo bundle: see PERFORMANCE)")
    p.add_argument("--voice", type=Path, help="a reference recording (Turbo has no voice of its own)")
    p.add_argument("--sentences", type=int, default=12)
    p.add_argument(
        "--max-new-tokens",
        type=int,
        default=100,
        help="speech tokens a sentence may have (100: 4 s; random weights never say STOP)",
    )


def add_parser(sub: Subparsers) -> None:
    """``bench-screen``: the take screen's cost per take against the render's, in one run."""
    p = sub.add_parser(
        "bench-screen",
        help="what screening a take costs (with and without speech recognition) as a share of rendering it",
        description="Renders a few sentences with BUNDLE, then times the take screen (and speech recognition) on "
        "each take the render made; reports both per take and as a share of the take's render time.",
    )
    add_sentences_render_arguments(p)
    p.add_argument("--asr", choices=("auto", "whisper", "sphinx", "none"), default="auto")
    p.add_argument("--folder", type=Path, help="where the project goes (default: the temp folder)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    runtime_arguments(p, cache_dir=False)


def run(args) -> int:
    import json

    from core.bench.screen_bench import bench_screen

    asr = None if args.asr == "none" else args.asr
    report = bench_screen(
        args.bundle, args.voice, args.sentences, asr, runtime_options(args), args.folder, args.max_new_tokens
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0
