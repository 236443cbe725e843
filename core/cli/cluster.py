"""``--ray [ADDRESS]`` and ``--actors N`` of ``narrate`` and ``project --render``: the pending segments rendered by Ray
actors (:mod:`core.narration.cluster_render`), with the same progress bar and exit codes as a local render."""

from __future__ import annotations

import argparse
import sys

from core.cli.errors import CliError

LOCAL = "local"


def add_cluster_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ray",
        nargs="?",
        const=LOCAL,
        metavar="ADDRESS",
        help="render on Ray actors: alone, a local Ray instance on this computer; 'auto', HOST:6379 or "
        "ray://HOST:10001 joins a cluster (needs pip install .[cluster])",
    )
    p.add_argument(
        "--actors", type=int, metavar="N", help="with --ray: how many actors (default one per GPU, else per 4 cores)"
    )


def check_cluster_arguments(args) -> None:
    if getattr(args, "actors", None) is not None and (args.actors < 1 or args.ray is None):
        raise CliError("--actors needs --ray and a number of at least 1.")
    if getattr(args, "ray", None) is None:
        return
    if getattr(args, "regenerate", None) is not None:
        raise CliError("--ray renders the pending segments (--render); --regenerate runs on this computer.")
    if args.command == "project" and not args.render:
        raise CliError("--ray goes with --render: it says where the pending segments are rendered.")


def wants_cluster(args) -> bool:
    return getattr(args, "ray", None) is not None


def render_on_cluster(project, args, pipe, bar, numbers):
    """The pending segments (or ``numbers``) on Ray; the summary carries the ``cluster`` report."""
    from core.narration import ClusterStats, cluster_steps, run_steps

    address = None if args.ray == LOCAL else args.ray
    stats = ClusterStats()
    try:
        summary = run_steps(
            cluster_steps(project, lambda: pipe, address, bar.update, None, numbers, args.actors, stats)
        )
    finally:
        if stats.actors and not getattr(args, "json", False):
            print(_line(stats), file=sys.stderr)
    summary.cluster = stats.as_dict()
    return summary


def _line(stats) -> str:
    return (
        f"ray ({stats.address}): {stats.actors} actor(s) on {stats.nodes} node(s), {stats.units} unit(s), "
        f"{stats.requeued_units} re-queued; start-up {stats.startup_s:.1f} s"
    )
