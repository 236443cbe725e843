"""Security: nothing touches the network unless the user starts a download (core, the window, imports), and
onnxruntime's telemetry stays off."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from core.engine.options import SynthesisOptions
from core.engine.pipeline import Pipeline
from tests.security_support import FAST, ROOT, audited, block_network, child_env, socket_events


def test_synthesis_touches_no_network(monkeypatch, bundles, voice_wav):
    attempts = block_network(monkeypatch)
    with audited() as events:
        pipeline = Pipeline.from_bundle(bundles["original"], FAST)
        result = pipeline.synthesize("Hello there.", voice=voice_wav, options=SynthesisOptions(max_new_tokens=40))
    assert result.audio.size > 0
    assert attempts == [] and socket_events(events) == []


def test_the_blocker_and_the_hook_catch_connection_attempts(monkeypatch):
    attempts = block_network(monkeypatch)
    with pytest.raises(OSError, match="network access attempted"):
        socket.create_connection(("huggingface.co", 443), timeout=1)
    with socket.socket() as s, pytest.raises(OSError, match="network access attempted"):
        s.connect(("127.0.0.1", 9))
    assert [a[0] for a in attempts] == ["create_connection", "socket.connect"]
    monkeypatch.undo()
    with audited() as events, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("127.0.0.1", 9))  # UDP: nothing is sent, but the audit hook sees the attempt
    assert [e[0] for e in socket_events(events)] == ["socket.connect"]


def test_the_app_loads_and_speaks_without_the_network(qtbot, monkeypatch, tmp_path, bundles):
    from PySide6.QtCore import QSettings, Qt

    from app.audio.playback import Player
    from app.audio.virtual_device import VirtualSoundDevice
    from app.main_window import MainWindow
    from app.paths import AppPaths
    from app.settings import Settings

    attempts = block_network(monkeypatch)
    with audited() as events:
        settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
        window = MainWindow(settings, AppPaths.under(tmp_path / "home"), player=Player(VirtualSoundDevice(speed=40)))
        qtbot.addWidget(window)
        window.show()
        try:
            with qtbot.waitSignal(window.bridge.model_loaded, timeout=30000):
                window.load_model(bundles["original"])
            window.speak_panel.text.set_text("Hello.")
            with qtbot.waitSignal(window.speak_panel.playback_finished, timeout=60000):
                qtbot.mouseClick(window.speak_panel.speak_button, Qt.MouseButton.LeftButton)
            assert window.speak_panel.last_audio is not None and window.speak_panel.last_audio.size > 0
        finally:
            window.close()
    assert attempts == [] and socket_events(events) == []


@pytest.mark.qt
def test_importing_the_app_and_core_loads_no_network_client(tmp_path):
    clients = [
        "huggingface_hub",
        "requests",
        "httpx",
        "urllib3",
        "aiohttp",
        "hf_xet",
        "httpcore",
        "http.client",
        "urllib.request",
    ]
    code = (
        "import sys, json\n"
        "import app.main_window, app.application, app.self_test, app.widgets.model_dialog\n"
        "import core.engine.model.hub_download\n"
        "import core.engine.pipeline, core.cli.main, core.engine.worker.inference_worker\n"
        f"print(json.dumps(sorted(m for m in {clients!r} if m in sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, env=child_env(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_onnxruntime_telemetry_stays_off(tmp_path, bundles):
    home = tmp_path / "home"
    code = (
        "import sys\nfrom core.engine.pipeline import Pipeline\nfrom core.engine.options import RuntimeOptions\n"
        "Pipeline.from_bundle(sys.argv[1], RuntimeOptions(provider='cpu')).synthesize('Hi.')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(bundles["original"])],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(home),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    store = [str(p.relative_to(home)) for p in home.rglob("*") if ".onnxruntime" in p.parts]
    assert store == []
