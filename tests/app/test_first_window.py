"""The first window on any screen: sized from the available geometry, never larger; status labels elide; the model
dialog offers the Turbo test model first with an honest time estimate; a moved last project is said."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QMargins, QRect, QSize

from app.model_speed import speed_estimate
from app.settings import Key
from app.widgets.elided_label import ElidedLabel
from app.window_placement import initial_geometry
from tests.app_support import make_window

ROOT = Path(__file__).resolve().parents[2]


def test_the_first_window_never_exceeds_the_available_area():
    small = initial_geometry(QRect(0, 0, 683, 400), QSize(666, 394), QMargins(1, 1, 1, 1))
    assert QRect(0, 0, 683, 400).contains(small.marginsAdded(QMargins(1, 1, 1, 1)))
    assert small.size() == QSize(681, 398)
    large = initial_geometry(QRect(0, 30, 1920, 1050), QSize(666, 394), QMargins(0, 30, 0, 0))
    assert large.size() == QSize(1280, 800)
    assert large.center().x() in (959, 960) and QRect(0, 30, 1920, 1050).contains(large)


@pytest.mark.parametrize(("size", "scale"), [("1024x600", 1.5), ("1366x768", 1.0), ("1920x1080", 2.0)])
def test_each_screen_gets_a_window_that_fits_with_every_control_inside(tmp_path, size, scale):
    width, height = (int(v) for v in size.split("x"))
    config = tmp_path / "screen.json"
    screen = {"name": size, "x": 0, "y": 0, "width": width, "height": height, "logicalDpi": 96}
    config.write_text(json.dumps({"screens": [screen]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}", "QT_SCALE_FACTOR": f"{scale:g}"}
    png = tmp_path / "shot.png"
    done = subprocess.run(
        [sys.executable, "-m", "app", "--screenshot", str(png), "--size", size, "--scale", f"{scale:g}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout.strip().splitlines()[-1])
    assert entry["screen"] == f"{size}@{round(scale * 100)}%"
    assert entry["fits"], entry["outside"]
    window_w, window_h = (int(v) for v in entry["window"].split("x"))
    assert window_w <= width / scale and window_h <= height / scale
    png_w, png_h = (int(v) for v in entry["png_size"].split("x"))
    assert png_w == pytest.approx(window_w * scale, abs=2) and png.stat().st_size > 10_000


def test_a_status_label_elides_instead_of_widening_the_window(qtbot):
    label = ElidedLabel("Rendering “A very long book title that goes on and on” · 3 requests waiting")
    qtbot.addWidget(label)
    assert label.minimumSizeHint().width() < label.sizeHint().width() / 3
    label.resize(80, 20)
    assert label.elided and label.toolTip() == label.text()


def test_the_speed_estimate_is_honest_about_the_cpu():
    turbo, original = speed_estimate("turbo", cores=2), speed_estimate("original", cores=2)
    assert "about 7 s to speak 10 s" in turbo and "faster than real time" in turbo
    assert "about 13 s to speak 10 s" in original and "about 1.3× slower than real time" in original
    assert "estimated" in speed_estimate("multilingual", cores=2)


def test_the_model_dialog_offers_turbo_first_with_its_time_and_every_test_model(qtbot, tmp_path):
    from app.widgets.model_dialog import ModelDialog

    dialog = ModelDialog(tmp_path)
    qtbot.addWidget(dialog)
    assert dialog.model_combo.itemText(0).startswith("Turbo")
    assert "faster than real time" in dialog.speed.text()
    original = next(i for i in range(dialog.model_combo.count()) if dialog.model_combo.itemText(i).startswith("Orig"))
    dialog.model_combo.setCurrentIndex(original)
    assert "slower than real time" in dialog.speed.text()
    variants = [dialog.standin_combo.itemData(i) for i in range(dialog.standin_combo.count())]
    assert variants == ["turbo", "multilingual", "original"]
    dialog.standin_button.click()
    assert dialog.chosen == "standin:turbo"


def test_a_moved_last_project_is_said_on_start(qtbot, tmp_path, bundles):
    w = make_window(qtbot, tmp_path, bundles["original"], load=False)
    w.settings.set(Key.PROJECT, str(tmp_path / "gone.cbproj"))
    w.close()
    again = make_window(qtbot, tmp_path, bundles["original"], load=False)
    try:
        assert "is no longer there" in again.message.text() and "gone.cbproj" in again.message.text()
        assert again.settings.get(Key.PROJECT) == ""
    finally:
        again.close()


def test_a_finished_playback_leaves_the_status_bar_after_a_moment(qtbot, tmp_path, bundles):
    w = make_window(qtbot, tmp_path, bundles["original"], load=False)
    try:
        w._playback_expiry.setInterval(50)
        w.speak_panel.playback_status.emit("playing · 1.0 s")
        assert w.playback_label.text() == "playing · 1.0 s"
        w.speak_panel.playback_status.emit("finished · played 2.0 s")
        qtbot.waitUntil(lambda: w.playback_label.text() == "", timeout=5000)
        w.speak_panel.playback_status.emit("finished · played 2.0 s")  # the playback timer repeating itself
        assert w.playback_label.text() == ""
        w.speak_panel.playback_status.emit("generating…")  # a new request is said again
        assert w.playback_label.text() == "generating…"
    finally:
        w.close()


def test_the_reference_playing_note_goes_when_it_has_played(qtbot, tmp_path, bundles):
    from core.engine import voice_from_array
    from core.standin import synthetic_voice

    w = make_window(qtbot, tmp_path, bundles["original"], load=False)
    try:
        w._playback_expiry.setInterval(50)
        voice = voice_from_array(synthetic_voice(1.2, seed=1, pitch_hz=150), 24000, source="probe")
        w.speak_panel.play_reference(voice)
        assert w.playback_label.text() == "playing the reference"
        qtbot.waitUntil(lambda: w.playback_label.text() == "", timeout=10000)
    finally:
        w.close()


def test_a_legend_that_would_be_cut_off_steps_aside_and_returns_when_there_is_room(qtbot):
    from app.widgets.chunk_latency_plot import ChunkLatencyPlot, ChunkPoint

    plot = ChunkLatencyPlot()
    qtbot.addWidget(plot)
    plot.show()
    plot.show_chunks([ChunkPoint(40 + i, 60 + i, 0.7, 100 * i) for i in range(6)])
    plot.resize(160, 90)
    qtbot.waitUntil(lambda: plot.legend.opacity() == 0.0, timeout=5000)
    plot.resize(700, 300)
    qtbot.waitUntil(lambda: plot.legend.opacity() == 1.0, timeout=5000)
