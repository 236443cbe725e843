"""Application start-up: logging (rotating file in the user log dir), the Qt application, the main window."""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import sys

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from core.engine import APP_NAME

from . import __version__
from .paths import AppPaths
from .resources import resource_path


def configure_logging(paths: AppPaths) -> None:
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    try:
        paths.logs.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            paths.logs / "chatterbox-desk.log", maxBytes=2_000_000, backupCount=3, encoding="utf-8"
        )
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    except OSError:
        pass
    if sys.stderr is not None:  # a frozen app without a console has no stderr
        console = logging.StreamHandler(sys.stderr)
        console.setLevel(logging.WARNING)
        root.addHandler(console)


def install_excepthook(window) -> object:
    """An exception that escapes a Qt slot is logged with its traceback and shown; the app keeps running."""
    log = logging.getLogger("app")

    def hook(kind, value, tb) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, value, tb)
            return
        log.error("unexpected error", exc_info=(kind, value, tb))
        with contextlib.suppress(Exception):  # the hook itself must never raise
            window.show_message(
                f"Something went wrong ({kind.__name__}: {value}). Your text and settings are kept; "
                "the details are in the log file."
            )

    sys.excepthook = hook
    return hook


def make_application(argv: list[str] | None = None) -> QApplication:
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv or sys.argv[:1])
    app.setApplicationName("Chatterbox Desk")
    app.setOrganizationName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setStyle("Fusion")  # Fusion follows the system's light/dark colour scheme on every platform
    icon = resource_path("icon.png")
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    return app


def run(argv: list[str]) -> int:
    from .main_window import MainWindow
    from .settings import Settings

    paths = AppPaths.default()
    configure_logging(paths)
    app = make_application(argv)
    window = MainWindow(Settings(), paths)
    install_excepthook(window)
    window.show()
    window.start()
    return app.exec()
