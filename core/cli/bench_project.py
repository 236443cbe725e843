"""``python -m core bench-project``: the project store at book size (a take's bookkeeping, a long render, opening a
long project)."""

from __future__ import annotations

from pathlib import Path

from core.cli.parser import Subparsers


def add_parser(sub: Subparsers) -> None:
    """``bench-project``: the project store at book size (per take, a long render, opening)."""
    p = sub.add_parser(
        "bench-project",
        help="a take's bookkeeping on 1,000- and 10,000-segment projects, a long render's time per tenth, and the "
        "time and memory to open a long project in the command line and the window",
        description="Builds stand-in projects (no synthesis) of each size, stores takes spread over each and times "
        "their bookkeeping beside a whole project.json rewrite (what earlier versions did per take); opens each in a "
        "fresh process; then renders a long project on the tiny stand-in with a few tokens a segment.",
    )
    p.add_argument("--sizes", default="1000,10000", help="project sizes in segments, comma-separated")
    p.add_argument("--render-segments", type=int, default=10000, help="segments of the render (0: no render)")
    p.add_argument("--bundle", type=Path, help="the model of the render (default: the tiny Original stand-in)")
    p.add_argument("--folder", type=Path, help="where the projects go (default: the temp folder)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")


def run(args) -> int:
    import json

    from core.bench.project_bench import bench_project

    sizes = tuple(int(n) for n in args.sizes.split(","))
    report = bench_project(sizes, args.render_segments, args.bundle, args.folder)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0
