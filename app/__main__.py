"""``python -m app`` starts the desktop app; ``python -m app --check`` says what this machine lacks;
``python -m app --self-test OUT_DIR [--bundle DIR]`` proves it works; ``python -m app --screenshots DIR`` saves each
main view as a PNG (the docs' pictures).

Before Qt is imported, the platform plugin Qt is about to use is loaded once (:mod:`app.platform_check`): where a
system library is missing, the app prints which one and the command that installs it, instead of Qt's abort.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

CANNOT_START = 3
"""Exit code when the window cannot open on this machine (a message on stderr says why and what to install)."""
QT_OPTIONS = frozenset(
    {
        "platform", "platformpluginpath", "platformtheme", "plugin", "qwindowgeometry", "qwindowicon",
        "qwindowtitle", "reverse", "session", "style", "stylesheet", "widgetcount", "display", "geometry", "name",
        "title", "visual", "ncols", "cmap", "nograb", "dograb", "sync", "qmljsdebugger",
    }
)  # fmt: skip
"""The command-line options Qt itself reads (with one dash or two: ``-style fusion``, ``--style=fusion``); they are
handed to Qt, any other option is refused."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app", description="Chatterbox Desk")
    parser.add_argument(
        "--check", action="store_true", help="say what this computer lacks (Qt libraries, sound device, CUDA) and exit"
    )
    parser.add_argument(
        "--self-test",
        type=Path,
        metavar="OUT_DIR",
        help="start the window, speak a sentence, write screenshots and report.json, exit",
    )
    parser.add_argument(
        "--screenshots",
        type=Path,
        metavar="DIR",
        help="open the window offscreen on stand-in data, save each main view as a PNG in DIR, exit",
    )
    parser.add_argument("--bundle", type=Path, help="model folder for the self-test (default: a tiny stand-in)")
    parser.add_argument("--timeout", type=float, default=180.0, help="self-test time limit in seconds")
    parser.add_argument("--screenshot", type=Path, help=argparse.SUPPRESS)  # one screen of the self-test
    parser.add_argument("--size", default="853x480", help=argparse.SUPPRESS)
    parser.add_argument("--scale", type=float, default=1.0, help=argparse.SUPPRESS)
    args, qt_args = parser.parse_known_args(argv)
    unknown = [arg for arg in qt_args if arg.startswith("-") and not _qt_option(arg)]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)} (see python -m app --help)")
    if args.check:
        from .machine_check import run_check

        return run_check()
    if args.self_test or args.screenshots:
        from .headless import offscreen_without_display

        offscreen_without_display()
    if (problem := _window_problem()) is not None:
        print(problem, file=sys.stderr)
        return CANNOT_START
    if args.screenshot:
        from .self_test import screenshot

        width, height = (int(v) for v in args.size.lower().split("x"))
        return screenshot(args.screenshot, width, height, args.scale)
    if args.screenshots:
        from .screenshots import take_screenshots

        return take_screenshots(args.screenshots, args.timeout)
    if args.self_test:
        from .self_test import run_self_test

        return run_self_test(args.self_test, args.bundle, args.timeout)
    from .application import run

    return run([sys.argv[0], *qt_args])


def _qt_option(arg: str) -> bool:
    """Whether ``arg`` is one of Qt's own options (a value after one, such as ``fusion``, is not an option)."""
    return arg.lstrip("-").split("=", 1)[0] in QT_OPTIONS


def _window_problem() -> str | None:
    """Why Qt would abort here, in words (``None``: it can start)."""
    from .platform_check import import_problem, window_problem

    problem = window_problem()
    if problem is None:
        try:
            import PySide6.QtWidgets  # noqa: F401 - its own libraries (libEGL, libGL, libfontconfig…) load here
        except ImportError as exc:
            problem = import_problem(exc)
    if problem is None or sys.stderr is None:  # a frozen app without a console cannot print
        return None
    return problem.message()


if __name__ == "__main__":
    sys.exit(main())
