"""``python -m core bench-export``: the streaming export's speed and peak memory on stand-in books."""

from __future__ import annotations

from pathlib import Path

from core.cli.parser import Subparsers


def add_parser(sub: Subparsers) -> None:
    """``bench-export``: the streaming export's speed and memory on stand-in books."""
    p = sub.add_parser(
        "bench-export",
        help="export speed (x real time, M4B and MP3 with pace and loudness) and peak memory by book length",
        description="Builds projects of stand-in audio (no synthesis), exports the first with pace 1.1 and -19 LUFS "
        "to each format, then exports each length to M4B in a fresh process and reports its peak memory above the "
        "loaded project.",
    )
    p.add_argument("--hours", default="1,10", help="book lengths in hours, comma-separated (default 1,10)")
    p.add_argument("--formats", default="m4b,mp3", help="formats for the speed run (default m4b,mp3)")
    p.add_argument("--folder", type=Path, help="where the stand-in books and spools go (default: the temp folder)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")


def run(args) -> int:
    import json

    from core.bench import bench_export

    hours = tuple(float(h) for h in args.hours.split(","))
    report = bench_export(hours, tuple(f.strip() for f in args.formats.split(",")), args.folder)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0
