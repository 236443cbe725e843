"""``python -m app --screenshots DIR``: the real window, offscreen, walked through every main view by the window's own
methods, each view saved as a PNG and checked not to be blank (the docs' pictures are made this way)."""

from __future__ import annotations

import json
import subprocess
import sys

from PySide6.QtGui import QImage

from app.screenshots import MIN_COLOURS, _colours

VIEWS = {
    "first-start", "speak", "revoice", "project", "cast", "review", "word-highlight", "export", "local-api",
}  # fmt: skip


def test_the_screenshots_command_writes_every_view_and_none_is_blank(tmp_path):
    out = tmp_path / "shots"
    done = subprocess.run(
        [sys.executable, "-m", "app", "--screenshots", str(out)], capture_output=True, text=True, timeout=400
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert set(report["images"]) == VIEWS
    for name in VIEWS:
        image = QImage(str(out / f"{name}.png"))
        assert not image.isNull(), name
        assert image.width() >= 250 and image.height() >= 200, (name, image.size())
        assert _colours(image) >= MIN_COLOURS, name  # read back from the file, not the report's word
    window = QImage(str(out / "speak.png"))
    assert (window.width(), window.height()) == (1280, 800)


def test_a_flat_image_counts_as_blank():
    image = QImage(640, 480, QImage.Format.Format_RGB32)
    image.fill(0xFFF0F0F0)
    assert _colours(image) < MIN_COLOURS
    for x in range(0, 640, 20):  # a few lines are not a picture either
        image.setPixel(x, 10, 0xFF000000)
    assert _colours(image) < MIN_COLOURS
