"""Settings → Render on: the choice and the address are remembered, the address is checked by its form, and the
connection test runs off the GUI thread and says what it found (or why Ray cannot be used) in place."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtGui import QTextDocument

from app.controllers.render_on import RenderTarget, check_address, cluster_summary, rendering_text
from app.panels.render_on_panel import RenderOnPanel, label_html
from app.settings import Key, Settings
from core.narration import ClusterError, ClusterInfo

ROOT = Path(__file__).resolve().parents[2]


def _settings(tmp_path) -> Settings:
    return Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))


def _shown(label) -> str:
    """What a rich-text label reads (no-break spaces as spaces)."""
    document = QTextDocument()
    document.setHtml(label.text())
    return document.toPlainText().replace("\u00a0", " ")


def _panel(qtbot, tmp_path, probe=None, frozen=False) -> RenderOnPanel:
    panel = RenderOnPanel(_settings(tmp_path), probe=probe, frozen=frozen)
    qtbot.addWidget(panel)
    panel.show()
    return panel


@pytest.mark.parametrize(
    ("typed", "address"),
    [
        ("", None),
        ("   ", None),
        ("auto", "auto"),
        (" AUTO ", "auto"),
        ("ray://gpu1:10001", "ray://gpu1:10001"),
        ("ray://gpu1", "ray://gpu1:10001"),  # Ray Client's port when none is given
        ("RAY://10.0.0.5:20001/", "ray://10.0.0.5:20001"),
        ("ray://[fe80::1]:10001", "ray://[fe80::1]:10001"),
        ("head.example.org:6379", "head.example.org:6379"),  # a cluster's own address, as Ray takes it
    ],
)
def test_addresses_of_the_forms_ray_takes_are_accepted(typed, address):
    checked = check_address(typed)
    assert checked.ok and checked.address == address


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("http://gpu1:10001", "“http://” is not a Ray address"),
        ("ray://", "needs the head node's name or IP address"),
        ("ray://:10001", "needs the head node's name or IP address"),
        ("ray://gpu1:port", "not “port”"),
        ("ray://gpu1:70000", "not “70000”"),
        ("ray://gpu1:0", "not “0”"),
        ("gpu1:99999", "not “99999”"),
        ("ray://gpu 1:10001", "no spaces"),
        ("ray://gpu1:10001/jobs", "no path"),
        ("ray://bad_host!:10001", "“bad_host!” is not a host name"),
        ("gpu1", "Write ray://gpu1:10001"),
    ],
)
def test_a_wrong_address_says_what_is_wrong(typed, said):
    checked = check_address(typed)
    assert not checked.ok and checked.address is None
    assert said in (checked.problem or "")


def test_the_choice_and_the_address_persist(qtbot, tmp_path):
    panel = _panel(qtbot, tmp_path)
    assert panel.local_choice.isChecked() and not panel.address.isEnabled() and not panel.test_button.isEnabled()
    assert RenderTarget.from_settings(panel.settings) == RenderTarget()
    panel.cluster_choice.setChecked(True)
    assert panel.address.isEnabled() and panel.test_button.isEnabled()
    panel.address.setText("ray://gpu1")
    again = _panel(qtbot, tmp_path)  # a new window reads the same settings file
    assert again.cluster_choice.isChecked() and again.address.text() == "ray://gpu1"
    assert RenderTarget.from_settings(again.settings) == RenderTarget(True, "ray://gpu1:10001")
    again.local_choice.setChecked(True)
    assert _settings(tmp_path).get(Key.RENDER_ON) == "local"


def test_a_wrong_address_is_said_under_the_field_and_not_tested(qtbot, tmp_path):
    probed = []
    panel = _panel(qtbot, tmp_path, probe=probed.append)
    panel.cluster_choice.setChecked(True)
    assert panel.address_note.text() == "→ a Ray instance on this computer"  # empty: where it leads
    panel.address.setText("gpu1")
    assert panel.address_note.text() == "→ a Ray instance on this computer"  # no problem said while typing
    panel.address.editingFinished.emit()
    assert "Write ray://gpu1:10001" in panel.address_note.text() and "c62828" in panel.address_note.styleSheet()
    assert RenderTarget.from_settings(panel.settings).problem == panel.address_note.text()
    assert not panel.run_test() and probed == []
    panel.address.setText("ray://gpu1")  # fixed: the note says so at once
    assert panel.address_note.text() == "→ the Ray cluster at ray://gpu1:10001"
    assert "c62828" not in panel.address_note.styleSheet()


def _gated_probe(result):
    """A probe that waits until the test lets it go, and records the thread it ran on."""
    gate, calls = threading.Event(), []

    def probe(address):
        calls.append((address, threading.current_thread()))
        assert gate.wait(10)
        if isinstance(result, BaseException):
            raise result
        return result

    return probe, gate, calls


def test_the_test_runs_off_the_gui_thread_and_shows_what_the_cluster_has(qtbot, tmp_path):
    info = ClusterInfo(address="ray://gpu1:10001", nodes=3, cpus=48.0, gpus=4.0, ray_version="2.60.0")
    probe, gate, calls = _gated_probe(info)
    panel = _panel(qtbot, tmp_path, probe=probe)
    panel.cluster_choice.setChecked(True)
    panel.address.setText("ray://gpu1")
    assert panel.run_test()
    # While the probe waits, the window goes on: a timer fires, and the test's controls say it runs.
    ticks = []
    timer = QTimer(panel)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(10)
    qtbot.waitUntil(lambda: len(ticks) >= 3 and bool(calls), timeout=5000)
    assert calls[0][0] == "ray://gpu1:10001" and calls[0][1] is not threading.main_thread()
    assert panel.testing and panel.test_button.text() == "Testing…"
    assert not panel.test_button.isEnabled() and not panel.address.isEnabled()
    assert _shown(panel.result) == "Connecting to the Ray cluster at ray://gpu1:10001…"
    assert not panel.run_test()  # a second click while testing does nothing
    panel.test_button.click()
    with qtbot.waitSignal(panel.test.succeeded, timeout=5000):
        gate.set()
    timer.stop()
    assert len(calls) == 1
    assert _shown(panel.result) == "✓ 3 nodes · 4 GPUs · 48 CPUs (Ray 2.60.0)"
    assert panel.test_button.isEnabled() and panel.address.isEnabled() and not panel.testing
    panel.address.setText("ray://gpu2")
    assert panel.result.isHidden()  # the result was about another address


def test_an_empty_address_tests_a_ray_instance_on_this_computer(qtbot, tmp_path):
    info = ClusterInfo(address="127.0.0.1:6379", nodes=1, cpus=2.0, gpus=0.0, ray_version="2.60.0")
    panel = _panel(qtbot, tmp_path, probe=lambda address: info if address is None else None)
    panel.cluster_choice.setChecked(True)
    with qtbot.waitSignal(panel.test.succeeded, timeout=5000):
        assert panel.run_test()
        assert _shown(panel.result) == "Connecting to a Ray instance on this computer…"
    assert _shown(panel.result) == "✓ 1 node · no GPU · 2 CPUs (Ray 2.60.0)"


def _fail_with(qtbot, tmp_path, error, frozen=False, address="ray://gpu1:10001") -> RenderOnPanel:
    def probe(_address):
        raise error

    panel = _panel(qtbot, tmp_path, probe=probe, frozen=frozen)
    panel.cluster_choice.setChecked(True)
    panel.address.setText(address)
    with qtbot.waitSignal(panel.test.failed, timeout=5000):
        assert panel.run_test()
    assert _shown(panel.result).startswith("✗ ") and "c62828" in panel.result.styleSheet()
    assert panel.test_button.isEnabled()
    return panel


def test_ray_not_installed_says_the_pip_command(qtbot, tmp_path):
    panel = _fail_with(qtbot, tmp_path, ClusterError("cluster.not_installed", reason="No module named 'ray'"))
    assert "pip install .[cluster]" in _shown(panel.result)


def test_the_desktop_build_says_ray_is_not_in_it_and_how_to_get_it(qtbot, tmp_path):
    panel = _fail_with(qtbot, tmp_path, ClusterError("cluster.not_installed", reason="x"), frozen=True)
    text = _shown(panel.result)
    assert "not part of the desktop build" in text and "pip install '.[cluster]'" in text and "--ray" in text


def test_an_unreachable_cluster_names_the_address_and_what_to_check(qtbot, tmp_path):
    error = ClusterError("cluster.unreachable", address="ray://gpu1:10001", reason="Connection refused")
    panel = _fail_with(qtbot, tmp_path, error)
    text = _shown(panel.result)
    assert "ray://gpu1:10001" in text and "Connection refused" in text and "ray start --head" in text


def test_an_unexpected_failure_is_said_too(qtbot, tmp_path):
    panel = _fail_with(qtbot, tmp_path, RuntimeError("grpc exploded"))
    assert "RuntimeError: grpc exploded" in _shown(panel.result)


def test_a_command_s_flags_stay_whole_in_the_result():
    assert label_html("run python -m core --render --ray ADDRESS <x>") == (
        "run python <nobr>-m</nobr> core <nobr>--render</nobr> <nobr>--ray</nobr> ADDRESS &lt;x&gt;"
    )
    assert label_html("gpu-head and ray://a-b:1") == "gpu-head and ray://a-b:1"  # hyphens inside words are not flags


def test_the_status_line_words():
    info = ClusterInfo(address="x", nodes=1, cpus=1.0, gpus=1.0, ray_version="2.60.0")
    assert cluster_summary(info).replace("\u00a0", " ") == "1 node · 1 GPU · 1 CPU (Ray 2.60.0)"
    assert rendering_text("ray://gpu1:10001", 2) == "Rendering on the Ray cluster at ray://gpu1:10001, 2 actors."
    assert rendering_text("auto", 1) == "Rendering on the Ray cluster this computer is part of, 1 actor."
    assert rendering_text(None) == "Connecting to a Ray instance on this computer…"


def test_a_real_probe_of_a_ray_instance_on_this_computer(qtbot, tmp_path):
    pytest.importorskip("ray")
    from core.narration.cluster.connect import disconnect

    panel = _panel(qtbot, tmp_path)  # the real probe: core.narration.probe_cluster
    panel.cluster_choice.setChecked(True)
    try:
        with qtbot.waitSignal(panel.test.succeeded, timeout=120000):
            assert panel.run_test()
    finally:
        disconnect()
    assert _shown(panel.result).startswith("✓ 1 node · ")


def test_the_window_starts_without_importing_ray(tmp_path):
    """Ray is imported by a connection test or a cluster render only: the window (its Render on section
    included) starts without it, as the desktop build, which has no Ray, must."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "app", "--screenshot", str(tmp_path / "w.png"), "--size", "853x480"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    modules = [line.rpartition("|")[2].strip() for line in done.stderr.splitlines() if line.startswith("import time")]
    assert "app.panels.render_on_panel" in modules
    assert not [m for m in modules if m == "ray" or m.startswith("ray.")]


def test_ray_is_looked_for_on_the_import_path_without_importing_it(monkeypatch, tmp_path):
    from app.controllers.render_on import ray_installed

    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert not ray_installed()
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text("raise SystemExit('imported')\n")
    assert ray_installed()
