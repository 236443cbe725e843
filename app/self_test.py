"""``python -m app --self-test OUT_DIR``: the real window, a real request, the real playback path, a screenshot.

Settings and user files go to OUT_DIR so the user's own are untouched. With no audio device (CI), playback runs
through the same Player and callback on a clocked virtual device, and the report says so.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import traceback
from pathlib import Path

from .headless import offscreen_without_display, say, wait_until

TEXT = "Hello! This is Chatterbox Desk, reading a sentence aloud. [pause:0.3s] And here is a second one."


def run_self_test(out_dir: Path, bundle: Path | None, timeout: float = 180.0) -> int:
    offscreen_without_display()
    try:
        return _run(Path(out_dir), bundle, timeout)
    except Exception as exc:  # noqa: BLE001 - a self-test reports every failure as a message and exit code 1
        say(f"self-test failed: {type(exc).__name__}: {exc}", sys.stderr)
        if sys.stderr is not None:
            traceback.print_exc(file=sys.stderr)
        (Path(out_dir) / "error.txt").parent.mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / "error.txt").write_text(traceback.format_exc(), encoding="utf-8")
        return 1


def _run(out: Path, bundle: Path | None, timeout: float) -> int:
    import soundfile as sf
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    from core.engine import SAMPLE_RATE
    from core.standin import make_standin, synthetic_voice
    from core.wording import describe_notice

    from .application import make_application
    from .audio.playback import Player, load_sounddevice
    from .audio.virtual_device import VirtualSoundDevice
    from .main_window import MainWindow
    from .paths import AppPaths
    from .settings import Key, Settings

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
    window.resize(1280, 800)  # the same screenshots on every machine (the first start is checked per screen below)
    window.show()

    loaded = []
    window.bridge.model_loaded.connect(lambda e: loaded.append(e))
    window.bridge.model_failed.connect(lambda m: loaded.append(m))
    window.load_model(Path(bundle))
    if not wait_until(app, lambda: loaded, 60):
        raise RuntimeError("the model did not load within 60 s")
    model = loaded[0]
    if isinstance(model, str):
        raise RuntimeError(f"the model failed to load: {model}")

    window.speak_panel.text.set_text(TEXT)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(voice_file))])
    drop = QDropEvent(
        QPointF(200, 200), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    window.dropEvent(drop)
    if window.voice_panel.voice is None or Path(window.voice_panel.voice.source) != voice_file:
        raise RuntimeError("dropping the reference recording did not select it")

    done, finished = [], []
    window.speak_panel.request_done.connect(lambda ok: done.append(ok))
    window.speak_panel.playback_finished.connect(lambda: finished.append(True))
    # "Play smoothly", so that the latency plot shows its forecast: the first request measures the costs it is made
    # from, the second (the one in the screenshot) plans its start from them.
    settings.set(Key.PLAYBACK_POLICY, "smooth")
    window.settings_panel.load()
    for _round in range(2):
        done.clear()
        finished.clear()
        window.speak_panel.speak_button.click()
        remaining = max(10.0, timeout - (time.monotonic() - started))
        if not wait_until(app, lambda: finished or (done and not done[0]), remaining):
            raise RuntimeError(f"speech and playback did not finish within {remaining:.0f} s")
        if not done or not done[0]:
            raise RuntimeError(f"the request failed: {window.message.text()}")
    wait_until(app, lambda: False, 0.3)  # let the plots' redraw timers run once more

    window.grab().save(str(out / "window.png"))
    report = window.speak_panel.last_report
    speech_played = int(window.player.played)
    studio = _studio_round(app, window, out, max(30.0, timeout - (time.monotonic() - started)))
    window.grab().save(str(out / "window-project.png"))
    api = _api_round(app, window)
    encoders = _encoders_round(window.speak_panel.last_audio)
    first_start = _first_start(out)
    languages = _languages_round(out)
    player = window.player
    generated = window.speak_panel.last_audio
    result = {
        "ok": True,
        "bundle": str(bundle),
        "variant": model.variant,
        "providers": model.capabilities.providers,
        "provider_notice": describe_notice(model.notice),
        "playback_device": device,
        "chunks": len(report.chunks),
        "samples_generated": 0 if generated is None else int(generated.size),
        "samples_played": speech_played,
        "underruns": int(player.underruns),
        "ttfa_ms": report.timings["ttfa_ms"],
        "playback_policy": report.forecast.get("policy"),
        "play_start_ms": report.timings.get("play_start_ms"),
        "rtf": report.timings["rtf"],
        "waveform_points": window.speak_panel.waveform.points,
        "latency_points": window.speak_panel.latency.points,
        **studio,
        "api": api,
        "encoders": encoders,
        "languages": languages,
        "first_start": first_start,
        "guide": _guide(),
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
    if result["segments"] != 3 or not result["regenerated"]:
        problems.append("the project was not rendered and regenerated")
    words = result["words"]
    if words["missing"] or any(code in words["errors"] for code in ALIGNER_BROKEN):
        problems.append(f"the takes' word times were not found (the aligner's process failed): {words}")
    broken = {f: n for f, n in encoders.items() if not isinstance(n, int) or n <= 0}
    if broken:
        problems.append(f"encoding the speech failed: {broken}")
    if not api.get("ok"):
        problems.append(f"the local API did not answer: {api}")
    if not result["guide"]["ok"]:
        problems.append(f"Help → Guide has no page or pictures to show: {result['guide']}")
    if not languages.get("ok"):
        problems.append(f"Japanese or Chinese was not read as the Multilingual model reads it: {languages}")
    problems += [
        f"the first window does not fit {s['screen']}: {s['window']}, outside: {s['outside'][:5]}"
        for s in first_start
        if not s["fits"]
    ]
    if problems:
        say("self-test failed: " + "; ".join(problems), sys.stderr)
        return 1
    say(json.dumps(result), sys.stdout)
    return 0


PROJECT_TEXT = "The studio renders this first sentence. The second one is regenerated! [pause:0.4s] A third ends it."


def _studio_round(app, window, out: Path, timeout: float) -> dict:
    """A three-segment project: render, regenerate segment 2, export an M4B audiobook + SRT (what a narrating user
    does); the M4B is read back with PyAV (its length and chapters), which proves the frozen app writes one."""
    from core.narration import ExportRequest

    window.speak_panel.text.set_text(PROJECT_TEXT)
    folder = out / "selftest.cbproj"
    shutil.rmtree(folder, ignore_errors=True)  # a run before into this OUT: its project would have nothing to render
    project = window.project_files.new_from_text(window.speak_panel.text.text, folder)
    if project is None:
        raise RuntimeError(f"the project could not be created: {window.message.text()}")
    studio, done = window.studio_panel, []
    window.bridge.render_done.connect(lambda rid, summary: done.append(summary))
    window.bridge.request_failed.connect(lambda rid, message: done.append(message))
    for action in (studio.render_pending, lambda: studio.regenerate(2)):
        count = len(done)
        action()
        if not wait_until(app, lambda c=count: len(done) > c, timeout):
            raise RuntimeError(f"rendering the project did not finish within {timeout:.0f} s")
        if isinstance(done[-1], str):
            raise RuntimeError(f"rendering the project failed: {done[-1]}")
    exported: list = []  # the export runs on its own thread: its result (or None) arrives as a signal
    studio.export_finished.connect(exported.append)
    studio.export_ended.connect(lambda: exported.append(None))
    request = ExportRequest(out=out / "selftest.m4b", subtitles=out / "selftest.srt", loudness=-16.0)
    if not studio.export(request) or not wait_until(app, lambda: bool(exported), timeout) or exported[0] is None:
        raise RuntimeError(f"the export failed: {studio.status.text()}")
    export = exported[0]
    wait_until(app, lambda: False, 0.2)
    import av

    with av.open(str(out / "selftest.m4b")) as book:
        m4b = {"seconds": round((book.duration or 0) / 1_000_000, 3), "chapters": len(book.chapters())}
    if m4b["chapters"] < 1 or abs(m4b["seconds"] - export.seconds) > 0.1:
        raise RuntimeError(f"the M4B export reads back wrong: {m4b}, expected {export.seconds:.3f} s")
    readalong = _readalong_round(app, studio, out / "selftest.epub", timeout)
    return {
        "segments": len(project.segments),
        "words": _word_times(project),
        "regenerated": len(project.segments[1].takes) == 2 and project.segments[1].chosen == 1,
        "export_path": str(out / "selftest.m4b"),
        "m4b": m4b,
        "readalong": readalong,
        "subtitles_path": str(out / "selftest.srt"),
        "export_seconds": round(export.seconds, 3),
        "progress_events": studio.progress_events,
    }


ALIGNER_BROKEN = ("align.internal", "align.not_installed")
"""A take's alignment that says the aligner itself failed (its process, or pocketsphinx missing from the build); the
stand-in's speech is not speech, so "align.not_matching" is its usual answer and proves the aligner ran."""


def _word_times(project) -> dict:
    """What the render's aligner (in its own process: in the frozen app, a multiprocessing child) made of each take."""
    found: dict = {"aligned": 0, "errors": {}, "missing": 0}
    for segment in project.segments:
        take = project.chosen_take(segment)
        alignment = take.alignment if take is not None else None
        if alignment is None:
            found["missing"] += 1
        elif alignment.get("error"):
            found["errors"][alignment["error"]] = found["errors"].get(alignment["error"], 0) + 1
        else:
            found["aligned"] += 1
    return found


def _readalong_round(app, studio, path: Path, timeout: float) -> dict:
    """The same project as a read-along EPUB 3 (Media Overlays): the zip holds the mimetype first, overlays, audio."""
    import zipfile

    from core.narration import ExportRequest

    exported: list = []
    studio.export_finished.connect(exported.append)
    studio.export_ended.connect(lambda: exported.append(None))
    if (
        not studio.export(ExportRequest(out=path))
        or not wait_until(app, lambda: bool(exported), timeout)
        or not exported[0]
    ):
        raise RuntimeError(f"the read-along export failed: {studio.status.text()}")
    with zipfile.ZipFile(path) as book:
        names = book.namelist()
    result = {
        "path": str(path),
        "mimetype_first": names[:1] == ["mimetype"],
        "overlays": sum(n.endswith(".smil") for n in names),
        "audio": sum(n.endswith((".mp3", ".m4a")) for n in names),
    }
    if not (result["mimetype_first"] and result["overlays"] and result["audio"]):
        raise RuntimeError(f"the read-along book is incomplete: {result}")
    return result


def _guide() -> dict:
    """Help → Guide's page and its pictures, where the app finds them (in a desktop build: the copy it carries)."""
    import re

    from .resources import docs_path

    page = docs_path("GUIDE.md")
    if not page.is_file():
        return {"ok": False, "page": str(page)}
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text(encoding="utf-8"))
    missing = [p for p in pictures if not (page.parent / p).is_file()]
    return {"ok": bool(pictures) and not missing, "page": str(page), "pictures": len(pictures), "missing": missing}


def _encoders_round(audio) -> dict:
    """The speech through every streaming encoder (PyAV's FFmpeg: MP3, AAC, Opus, FLAC…): bytes each, or the error.
    Proves the frozen app carries a working PyAV."""
    import numpy as np

    from core.engine import STREAM_FORMATS, StreamEncoder

    samples = np.zeros(0, np.float32) if audio is None else np.asarray(audio, np.float32)
    result: dict = {}
    for fmt in STREAM_FORMATS:
        try:
            encoder = StreamEncoder(fmt)
            result[fmt] = len(encoder.encode(samples) + encoder.finish())
        except Exception as exc:  # noqa: BLE001 - reported in the self-test's report
            result[fmt] = f"{type(exc).__name__}: {exc}"
    return result


JAPANESE = ("私は東京へ行きました。", "[ja]わたしはとうきょうへいきました。")
CHINESE = ("你好。", "[zh][cj_o][cj_n][cj_f][cj_.][cj_v][cj_n][cj_d][cj_.]。")


def _languages_round(out: Path) -> dict:
    """Japanese and Chinese through the text front end on a Multilingual test model: pykakasi's dictionaries and
    the Cangjie table must be there (in a desktop build, that they were bundled)."""
    from core.engine import open_reader, read_text
    from core.standin import make_standin

    try:
        bundle = make_standin(out / "multilingual-test-model", "multilingual")
        reader = open_reader(bundle, out / "models")
        readings = {lang: read_text(reader, text, lang)[0] for lang, (text, _) in (("ja", JAPANESE), ("zh", CHINESE))}
    except Exception as exc:  # noqa: BLE001 - reported in the result
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    prepared = {lang: r.prepared for lang, r in readings.items()}
    unknown = sum(r.tokens.count("[UNK]") for r in readings.values())
    ok = prepared == {"ja": JAPANESE[1], "zh": CHINESE[1]} and unknown == 0
    return {"ok": ok, "prepared": prepared, "unknown_tokens": unknown}


def _api_round(app, window) -> dict:
    """Settings → Local API on (any free port), one speech request over loopback, off again."""
    import threading
    import urllib.request

    panel = window.api_panel
    panel.port.setValue(0)
    if not panel.start():
        return {"ok": False, "status": panel.status.text()}
    url = panel.server.url
    body = json.dumps({"model": "tts-1", "input": "The local API speaks.", "response_format": "wav"}).encode()
    result: dict = {}

    def fetch():
        try:
            request = urllib.request.Request(f"{url}/audio/speech", body, {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=60) as response:
                result.update(status=response.status, bytes=len(response.read()))
        except Exception as exc:  # noqa: BLE001 - reported in the self-test's report
            result["error"] = f"{type(exc).__name__}: {exc}"

    thread = threading.Thread(target=fetch, daemon=True)
    thread.start()
    wait_until(app, lambda: not thread.is_alive(), 60)
    panel.stop_http()
    return {"ok": result.get("status") == 200 and result.get("bytes", 0) > 44, "url": url, **result}


SCREENS = (("1024x600", 1.5), ("1366x768", 1.0), ("1920x1080", 2.0))
"""The first start is checked on these screens (device pixels, scale): a netbook at 150 %, a common laptop, a
high-DPI monitor at 200 %."""


def _first_start(out: Path) -> list[dict]:
    """The first window on each of :data:`SCREENS`, each in its own process started at that screen and scale."""
    return [_first_start_on(out, size, scale) for size, scale in SCREENS]


def _first_start_on(out: Path, size: str, scale: float) -> dict:
    import subprocess
    import tempfile

    width, height = (int(v) for v in size.split("x"))
    png = out / f"first-start-{size}@{round(scale * 100)}.png"
    command = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "app"]
    with tempfile.TemporaryDirectory(prefix="chatterbox-screen-") as folder:
        config = Path(folder) / "screen.json"
        screen = {"name": size, "x": 0, "y": 0, "width": width, "height": height, "logicalDpi": 96}
        config.write_text(json.dumps({"screens": [screen]}), encoding="utf-8")
        env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}", "QT_SCALE_FACTOR": f"{scale:g}"}
        env.pop("QT_SCREEN_SCALE_FACTORS", None)
        env.pop("QT_AUTO_SCREEN_SCALE_FACTOR", None)
        done = subprocess.run(
            [*command, "--screenshot", str(png), "--size", size, "--scale", f"{scale:g}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    if done.returncode != 0:
        raise RuntimeError(f"the {size} screenshot failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def screenshot(path: Path, width: int, height: int, scale: float = 1.0) -> int:
    """``--screenshot PATH --size WxH --scale S`` (in a process whose screen is WxH device pixels at scale S): the
    first window as a new user sees it (no model yet), placed by the app itself; prints its ``first_start`` entry."""
    offscreen_without_display()
    import tempfile

    from PySide6.QtCore import QSettings

    from .application import make_application
    from .audio.playback import Player
    from .audio.virtual_device import VirtualSoundDevice
    from .main_window import MainWindow
    from .paths import AppPaths
    from .screen_fit import window_fit
    from .settings import Settings

    app = make_application()
    with tempfile.TemporaryDirectory(prefix="chatterbox-screenshot-") as home:
        settings = Settings(QSettings(str(Path(home) / "settings.ini"), QSettings.Format.IniFormat))
        window = MainWindow(settings, AppPaths.under(Path(home)), player=Player(VirtualSoundDevice()))
        window.speak_panel.text.set_text(TEXT)
        window.show()
        wait_until(app, lambda: False, 0.3)
        fit = window_fit(window)  # every view: each mode (Speak, Project, Re-voice), each side tab
        image = window.grab()
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        image.save(str(path))
        result = {
            "screen": f"{width}x{height}@{round(scale * 100)}%",
            "window": f"{window.width()}x{window.height()}",
            "fits": fit["fits"],
            "png": str(path),
            "png_size": f"{image.width()}x{image.height()}",  # device pixels
            "available": fit["available"],
            "minimum": fit["minimum"],
            "outside": fit["outside"],
        }
        window.close()
        app.processEvents()
    say(json.dumps(result), sys.stdout)
    return 0
