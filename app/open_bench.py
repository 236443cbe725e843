"""``python -m app.open_bench PROJECT``: how long the window's studio takes to open a long project, to scroll
to its end and to select its last segment, and the process's peak memory (one line of JSON; what
``python -m core bench-project`` reports for the window). Runs offscreen, in a home of its own."""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path


def main(folder: Path) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.application import make_application
    from app.main_window import MainWindow
    from app.paths import AppPaths
    from app.settings import Settings
    from core.narration import open_project

    home = Path(tempfile.mkdtemp(prefix="chatterbox-open-bench-"))
    app = make_application()
    settings = Settings(QSettings(str(home / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings, AppPaths.under(home / "app"))
    window.show()
    QApplication.processEvents()
    before_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    project = open_project(folder)
    opened = time.perf_counter()
    studio = window.studio_panel
    studio.set_project(project)
    QApplication.processEvents()
    shown = time.perf_counter()
    bar = studio.segments.verticalScrollBar()
    bar.setValue(bar.maximum())
    QApplication.processEvents()
    scrolled = time.perf_counter()
    studio.segments.select(len(project.segments))
    QApplication.processEvents()
    selected = time.perf_counter()
    print(
        json.dumps(
            {
                "segments": len(project.segments),
                "open_project_s": round(opened - started, 3),
                "studio_shows_s": round(shown - opened, 3),
                "scroll_to_end_s": round(scrolled - shown, 3),
                "select_last_s": round(selected - scrolled, 3),
                "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "window_before_mb": round(before_mb, 1),
            }
        )
    )
    window.close()
    app.quit()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
