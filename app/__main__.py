"""``python -m app`` starts the desktop app; ``python -m app --self-test OUT_DIR [--bundle DIR]`` proves it works."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app", description="Chatterbox Desk")
    parser.add_argument(
        "--self-test",
        type=Path,
        metavar="OUT_DIR",
        help="start the window, speak a sentence, write window.png and report.json, exit",
    )
    parser.add_argument("--bundle", type=Path, help="model folder for the self-test (default: a tiny stand-in)")
    parser.add_argument("--timeout", type=float, default=180.0, help="self-test time limit in seconds")
    parser.add_argument("--screenshot", type=Path, help=argparse.SUPPRESS)  # the self-test's 150 % screenshot
    parser.add_argument("--size", default="853x480", help=argparse.SUPPRESS)
    args, qt_args = parser.parse_known_args(argv)
    if args.screenshot:
        from .self_test import screenshot

        width, height = (int(v) for v in args.size.lower().split("x"))
        return screenshot(args.screenshot, width, height)
    if args.self_test:
        from .self_test import run_self_test

        return run_self_test(args.self_test, args.bundle, args.timeout)
    from .application import run

    return run([sys.argv[0], *qt_args])


if __name__ == "__main__":
    sys.exit(main())
