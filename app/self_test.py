"""``python -m app --self-test OUT_DIR``: the real window, a real request, the real playback path, a screenshot.

Settings and user files go to OUT_DIR so the user's own are untouched. With no audio device (CI), playback runs
through the same Player and callback on a clocked virtual device, and the report says so.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

TEXT = "Hello! This is Chatterbox Desk, reading a sentence aloud. [pause:0.3s] And here is a second one."


def _wait(app, condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        app.processEvents()
        if condition():
            return True
        time.sleep(0.005)
    return False


def run_self_test(out_dir: Path, bundle: Path | None, timeout: float = 180.0) -> int:
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        return _run(Path(out_dir), bundle, timeout)
    except Exception as exc:  # noqa: BLE001 - a self-test reports every failure as a message and exit code 1
        _say(f"self-test failed: {type(exc).__name__}: {exc}", sys.stderr)
        if sys.stderr is not None:
            traceback.print_exc(file=sys.stderr)
        (Path(out_dir) / "error.txt").parent.mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / "error.txt").write_text(traceback.format_exc(), encoding="utf-8")
        return 1


def _run(out: Path, bundle: Path | None, timeout: float) -> int:
    import soundfile as sf
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    from core.constants import SAMPLE_RATE
    from core.standin import make_standin, synthetic_voice

    from .application import make_application
    from .audio.playback import Player, load_sounddevice
    from .audio.virtual_device import VirtualSoundDevice
    from .main_window import MainWindow
    from .paths import AppPaths
    from .settings import Settings

    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    app = make_application()
    if bundle is None:
        bundle = make_standin(out / "standin", "original", "tiny")
    voice_file = out / "reference.wav"
    sf.write(voice_file, synthetic_voice(6.0, seed=4, pitch_hz=160), SAMPLE_RATE)

    sd, reason = load_sounddevice()
    device = "sounddevice"
    try:
        has_output = sd is not None and any(d["max_output_channels"] > 0 for d in sd.query_devices())
    except Exception:  # noqa: BLE001 - PortAudio without devices raises on query
        has_output = False
    if not has_output:
        sd, device = VirtualSoundDevice(), f"virtual (no audio output device{': ' + reason if reason else ''})"
    from PySide6.QtCore import QSettings

    settings = Settings(QSettings(str(out / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings, AppPaths.under(out / "appdata"), player=Player(sd))
    window.resize(1280, 800)
    window.show()

    loaded = []
    window.bridge.model_loaded.connect(lambda e: loaded.append(e))
    window.bridge.model_failed.connect(lambda m: loaded.append(m))
    window.load_model(Path(bundle))
    if not _wait(app, lambda: loaded, 60):
        raise RuntimeError("the model did not load within 60 s")
    if isinstance(loaded[0], str):
        raise RuntimeError(f"the model failed to load: {loaded[0]}")

    window.text.set_text(TEXT)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(voice_file))])
    drop = QDropEvent(QPointF(200, 200), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)  # fmt: skip
    window.dropEvent(drop)
    if window.voice is None or Path(window.voice.source) != voice_file:
        raise RuntimeError("dropping the reference recording did not select it")

    done, finished = [], []
    window.request_done.connect(lambda ok: done.append(ok))
    window.playback_finished.connect(lambda: finished.append(True))
    window.speak_button.click()
    remaining = max(10.0, timeout - (time.monotonic() - started))
    if not _wait(app, lambda: finished or (done and not done[0]), remaining):
        raise RuntimeError(f"speech and playback did not finish within {remaining:.0f} s")
    if not done or not done[0]:
        raise RuntimeError(f"the request failed: {window.message.text()}")
    _wait(app, lambda: False, 0.3)  # let the plots' redraw timers run once more

    window.grab().save(str(out / "window.png"))
    report = window.last_report
    player = window.player
    result = {
        "ok": True,
        "bundle": str(bundle),
        "variant": window.bridge.model.variant,
        "providers": window.bridge.model.capabilities.providers,
        "provider_notice": window.bridge.model.notice,
        "playback_device": device,
        "chunks": len(report.chunks),
        "samples_generated": int(window.last_audio.size),
        "samples_played": int(player.played),
        "underruns": int(player.underruns),
        "ttfa_ms": report.timings["ttfa_ms"],
        "rtf": report.timings["rtf"],
        "waveform_points": window.waveform.points,
        "latency_points": window.latency.points,
        "seconds": round(time.monotonic() - started, 2),
    }
    (out / "report.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    window.close()
    app.processEvents()
    problems = []
    if result["samples_played"] < result["samples_generated"]:
        problems.append("not all audio was played")
    if not result["waveform_points"] or not result["latency_points"]:
        problems.append("a plot is empty")
    if problems:
        _say("self-test failed: " + "; ".join(problems), sys.stderr)
        return 1
    _say(json.dumps(result), sys.stdout)
    return 0


def _say(text: str, stream) -> None:
    if stream is not None:  # a frozen app without a console has neither stdout nor stderr
        print(text, file=stream)
