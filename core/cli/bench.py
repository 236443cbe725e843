"""``python -m core bench``: every optimisation against its baseline, A/B interleaved (core/bench/runner.py)."""

from __future__ import annotations

from pathlib import Path

from core.cli.parser import Subparsers
from core.cli.runtime import Q4_HELP, add_playback_policy, decoder_arguments, graph_rewrite_arguments
from core.engine import PRECISIONS, PROVIDERS, Q4_COMPUTE, RuntimeOptions
from core.standin.spec import SIZES, VARIANTS


def add_parser(sub: Subparsers) -> None:
    """``bench``: every optimisation against its baseline."""
    defaults = RuntimeOptions()
    p = sub.add_parser("bench", help="measure every optimisation against its baseline (A/B interleaved)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--bundle", type=Path, help="a real or stand-in bundle")
    source.add_argument("--standin", choices=VARIANTS, default="turbo", help="build/reuse a stand-in (default)")
    p.add_argument("--size", choices=SIZES, default="full")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32")
    p.add_argument("--q4-compute", choices=Q4_COMPUTE, default=defaults.q4_compute, help=Q4_HELP)
    p.add_argument("--provider", choices=PROVIDERS, default="auto")
    p.add_argument("--threads", type=int)
    p.add_argument("--lm-batch", type=int, default=defaults.lm_batch, help="the book comparison's batch (default 4)")
    graph_rewrite_arguments(p)
    decoder_arguments(p)
    p.add_argument("--quick", action="store_true", help="fewer repetitions and a 5 s utterance")
    p.add_argument(
        "--runs",
        type=int,
        help="runs of each side of the streaming comparisons (plan: start fast, play smoothly, one-shot); "
        "default 2, 1 with --quick",
    )
    add_playback_policy(p, defaults)
    p.add_argument(
        "--only",
        help="comma-separated subset: kv,overhead,fold,attention,shared,floor,cfg,prefix,conditioning,streaming,"
        "spinning,threads,decoder,convs,q4,plan,book,cold,export; and, only when named, decoder_levers (each decoder "
        "lever's cost and output SNR on one set of tokens)",
    )
    p.add_argument("--json", type=Path, help="also write the full report as JSON")


def run(args) -> int:
    from core.bench import bench_main

    return bench_main(args)  # a stand-in precision it cannot build is refused by cached_standin
