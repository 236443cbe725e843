"""``python -m core bench-cluster``: a project rendered locally, by one Ray actor and by two (needs Ray); the flags and
the bench are core/bench/cluster_bench.py's."""

from __future__ import annotations

from core.cli.parser import Subparsers


def add_parser(sub: Subparsers) -> None:
    """``bench-cluster``: a project rendered locally, by one Ray actor and by two (needs Ray)."""
    from core.bench import bench_cluster_arguments

    p = sub.add_parser(
        "bench-cluster",
        help="a 40-sentence project rendered locally, with 1 and with 2 Ray actors: wall time, speed-up, start-up",
        description="Renders the same seeded project three times on this computer: locally, then on a local Ray "
        "instance with 1 and with 2 actors; reports wall times, speed-ups, Ray's start-up and each actor's "
        "throughput, and checks that the audio is the same.",
    )
    bench_cluster_arguments(p)


def run(args) -> int:
    from core.bench import bench_cluster

    return bench_cluster(args)
