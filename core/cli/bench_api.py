"""``python -m core bench-api``: the local speech API through HTTP (first bytes per format, fair turns); the flags and
the bench are core/bench/api_bench.py's."""

from __future__ import annotations

from core.cli.parser import Subparsers


def add_parser(sub: Subparsers) -> None:
    """``bench-api``: the local speech API through HTTP (first bytes per format, fair turns)."""
    from core.bench import bench_api_arguments

    p = sub.add_parser(
        "bench-api",
        help="the speech API as a client sees it: first audio of each format next to the total, and fair turns",
        description="Serves a bundle (or a stand-in) on loopback and measures, in one run, each format's first byte "
        "and first audio on a five-sentence input next to the whole response, and the first byte of a one-sentence "
        "request sent while a 20-sentence request streams, in sentences' time.",
    )
    bench_api_arguments(p)


def run(args) -> int:
    from core.bench import bench_api

    return bench_api(args)
