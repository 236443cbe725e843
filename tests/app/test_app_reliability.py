"""The desktop app under bad input and faults: each case gets a message, nothing crashes, the next request works."""

from __future__ import annotations

import errno
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import Qt

from app.application import install_excepthook
from app.audio.virtual_device import VirtualSoundDevice
from app.engine_bridge import EngineBridge
from app.settings import Key
from core.engine.worker.inference_worker import InferenceWorker
from tests.app_support import drop, make_window, speak_and_wait
from tests.conftest import deny_reading, tone
from tests.engine.test_worker import gpu_that_fails_mid_run

BIG_TEXT = " ".join(f"This is sentence number {i} of a very long chapter, read aloud." for i in range(1700))[:100_000]


def press_speak(qtbot, window, text):
    window.speak_panel.text.set_text(text)
    qtbot.mouseClick(window.speak_panel.speak_button, Qt.MouseButton.LeftButton)


def speak_expect(qtbot, window, text, ok: bool):
    with qtbot.waitSignal(window.speak_panel.request_done, timeout=60000) as done:
        press_speak(qtbot, window, text)
    assert done.args == [ok], window.message.text()


def assert_next_request_works(qtbot, window):
    window.hide_message()
    speak_and_wait(qtbot, window, "And now a good sentence.")
    assert window.speak_panel.last_audio.size > 0 and not window.message.isVisible()
    assert window.bridge.worker.alive and not window.bridge.busy


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", "Type some text"), ("   \n\t  ", "Type some text"), ("?!... --- !!! …", "nothing to say")],
)
def test_unspeakable_text_gets_a_message(qtbot, window, text, expected):
    if expected == "Type some text":
        press_speak(qtbot, window, text)
    else:
        speak_expect(qtbot, window, text, ok=False)
    assert expected in window.message.text() and window.message.isVisible()
    assert_next_request_works(qtbot, window)


@pytest.mark.parametrize(
    "text",
    [
        "Hello 👋 world! Ça va? Привет, мир. 你好。 مرحبا. 🎉🎉",
        "Control\x00 characters\x07 and\x1b[31m escapes\u200b inside\ufeff the text.",
        "Unknown tags [whisper] [sigh:long] <break/> are [laugh] dropped or kept.",
    ],
)
def test_odd_characters_and_unknown_tags_are_spoken(qtbot, window, text):
    speak_expect(qtbot, window, text, ok=True)
    assert window.speak_panel.last_audio.size > 0
    assert_next_request_works(qtbot, window)


def test_a_100000_character_text_starts_quickly_and_stops_cleanly(qtbot, window):
    assert len(BIG_TEXT) == 100_000
    with qtbot.waitSignal(window.bridge.chunk_ready, timeout=30000):
        press_speak(qtbot, window, BIG_TEXT)
    assert window.speak_panel.text.text == BIG_TEXT  # nothing the user typed is lost
    qtbot.mouseClick(window.speak_panel.stop_button, Qt.MouseButton.LeftButton)
    assert not window.bridge.busy and window.speak_panel.export_button.isEnabled()
    assert_next_request_works(qtbot, window)


def _write(path, data, rate=24000, **kw):
    sf.write(path, data, rate, **kw)
    return path


BAD_VOICES = {
    "corrupt.wav": (lambda p: p.write_bytes(b"RIFF\x00\x00garbage" * 10), "not a readable audio"),
    "empty.wav": (lambda p: _write(p, np.zeros((0, 1), np.float32)), "contains no audio"),
    "silent.wav": (lambda p: _write(p, np.zeros(24000 * 3, np.float32)), "is silent"),
    "short.wav": (lambda p: _write(p, tone(0.3)), "only 0.3 s long"),
    "notes.txt": (lambda p: p.write_text("not audio at all\n"), "not a readable audio"),
    "missing.wav": (lambda p: None, "no longer exists"),
}


@pytest.mark.parametrize("name", list(BAD_VOICES))
def test_a_bad_reference_gets_a_message_and_changes_nothing(qtbot, window, tmp_path, voice_wav, name):
    drop(window, voice_wav)
    chosen = window.voice_panel.voice
    make, expected = BAD_VOICES[name]
    make(tmp_path / name)
    drop(window, tmp_path / name)
    assert expected in window.message.text() and window.message.isVisible()
    assert window.voice_panel.voice is chosen
    assert_next_request_works(qtbot, window)


def test_an_unreadable_reference_gets_a_message(qtbot, window, tmp_path, monkeypatch):
    path = _write(tmp_path / "locked.wav", tone(3))
    deny_reading(monkeypatch, path)
    drop(window, path)
    assert "permission denied" in window.message.text() and window.voice_panel.voice is None
    assert_next_request_works(qtbot, window)


@pytest.mark.parametrize(
    ("name", "make", "warning"),
    [
        ("long.flac", lambda p: _write(p, tone(600, 16000), 16000), "first 30 s of the 600 s"),
        ("stereo.wav", lambda p: _write(p, tone(6, 48000, channels=2), 48000), None),
        ("phone.wav", lambda p: _write(p, tone(6, 8000), 8000, subtype="PCM_U8"), "8000 Hz"),
    ],
)
def test_unusual_but_usable_references_are_accepted(qtbot, window, tmp_path, name, make, warning):
    make(tmp_path / name)
    drop(window, tmp_path / name)
    assert window.voice_panel.voice is not None and window.voice_panel.voice.source.endswith(name)
    if warning:
        assert warning in window.voice_panel.warning.text()
    speak_expect(qtbot, window, "Speak with this voice.", ok=True)


def test_a_reference_deleted_between_choosing_and_speaking_still_speaks(qtbot, window, tmp_path, voice_wav):
    copy = tmp_path / "gone.wav"
    copy.write_bytes(voice_wav.read_bytes())
    drop(window, copy)
    copy.unlink()
    speak_expect(qtbot, window, "The file is gone but its audio was kept.", ok=True)
    # A library voice whose file vanished is reported when chosen, and nothing changes.
    drop(window, voice_wav)
    window.voice_panel.save_voice("Fragile")
    entry = window.library.get("Fragile")
    entry.path.unlink()
    window.voice_panel.select_library_voice("Fragile")
    assert "no longer in the library" in window.message.text() and window.voice_panel.voice_name == "Fragile"
    assert_next_request_works(qtbot, window)


@pytest.mark.parametrize("case", ["missing_graph", "truncated_data", "wrong_variant", "garbled_tokenizer"])
def test_a_broken_bundle_gets_the_core_message_and_the_loaded_model_stays(qtbot, window, broken, case):
    bundle, expected = broken[case]
    with qtbot.waitSignal(window.bridge.model_failed, timeout=30000) as failed:
        window.load_model(bundle)
    assert expected in failed.args[0] and expected in window.message.text()
    assert window.speak_panel.speak_button.isEnabled() and window.bridge.model.bundle != bundle
    assert_next_request_works(qtbot, window)


def test_the_audio_device_vanishing_mid_playback_keeps_synthesis_and_export(qtbot, tmp_path, bundles):
    sd = VirtualSoundDevice(speed=1.0)  # real time, so playback is still running when the device goes
    w = make_window(qtbot, tmp_path, bundles["original"], sd=sd)
    try:
        with qtbot.waitSignal(w.speak_panel.playback_finished, timeout=60000):
            press_speak(qtbot, w, "A sentence that plays for a while. And another one after it.")
            qtbot.waitUntil(lambda: w.player.played > 0, timeout=30000)
            sd.streams[-1].unplug()
        assert "sound output stopped" in w.message.text() and w.playback_label.text() == "audio output lost"
        speak = w.speak_panel
        assert speak.last_audio.size > 0 and speak.last_audio.size == sum(c.size for c in speak.controller.chunks)
        assert w.history.entries and w.exporter.export(w.speak_panel.last_audio, path=tmp_path / "kept.wav")
        assert sf.info(tmp_path / "kept.wav").frames == w.speak_panel.last_audio.size

        # The device comes back: the next request plays again.
        sd.unplugged, sd.speed = False, 40.0
        speak_and_wait(qtbot, w, "Back again.")
        assert w.player.played > 0 and not w.player.lost
    finally:
        w.close()


def test_a_device_that_silently_stops_taking_audio_is_noticed(qtbot, tmp_path, bundles):
    sd = VirtualSoundDevice(speed=1.0)
    w = make_window(qtbot, tmp_path, bundles["original"], sd=sd)
    w.player.STALL_SECONDS = 0.3
    try:
        with qtbot.waitSignal(w.speak_panel.playback_finished, timeout=60000):
            press_speak(qtbot, w, "A sentence that plays for a while. And another one after it.")
            qtbot.waitUntil(lambda: w.player.played > 0, timeout=30000)
            sd.streams[-1].unplug(notify=False)  # PortAudio does not always report a lost device
        assert w.player.lost and "sound output stopped" in w.message.text()
        assert w.speak_panel.last_audio.size > 0
    finally:
        w.close()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_export_to_a_full_or_read_only_disk_says_so_and_leaves_no_file(qtbot, window, tmp_path, monkeypatch, code):
    speak_and_wait(qtbot, window)
    target = tmp_path / "out" / "narration.wav"
    target.parent.mkdir()
    target.write_bytes(b"an earlier export")

    real_write = sf.SoundFile.write

    def failing_write(self, data):
        real_write(self, data[: data.size // 2])  # half the audio reaches the disk, then it is full
        raise OSError(code, "simulated")

    monkeypatch.setattr(sf.SoundFile, "write", failing_write)
    assert not window.exporter.export(window.speak_panel.last_audio, path=target)
    assert "Cannot write" in window.message.text() and "free space and permissions" in window.message.text()
    assert target.read_bytes() == b"an earlier export"
    assert sorted(p.name for p in target.parent.iterdir()) == ["narration.wav"]


def test_a_full_disk_keeps_history_and_voice_library_consistent(qtbot, window, tmp_path, voice_wav, monkeypatch):
    speak_and_wait(qtbot, window)
    before = [e.id for e in window.history.entries]
    files_before = sorted(p.name for p in window.history.directory.iterdir())

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("core.engine.files.atomic.os.replace", full)
    speak_and_wait(qtbot, window, "This one cannot be saved.")
    assert "could not be added to the history" in window.message.text()
    assert [e.id for e in window.history.entries] == before
    assert sorted(p.name for p in window.history.directory.iterdir()) == files_before
    drop(window, voice_wav)
    window.voice_panel.save_voice("Full disk")
    assert "Cannot save the voice" in window.message.text() and window.library.voices() == []
    assert not [p for p in window.library.directory.glob("*") if p.name != "voices.json"]
    monkeypatch.undo()
    assert_next_request_works(qtbot, window)
    assert len(window.history.entries) == len(before) + 1


def test_an_unexpected_exception_is_logged_and_shown_and_the_app_goes_on(qtbot, window, monkeypatch, caplog):
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    hook = install_excepthook(window)
    assert sys.excepthook is hook
    try:
        raise ZeroDivisionError("division by zero in a slot")
    except ZeroDivisionError:
        hook(*sys.exc_info())
    assert "ZeroDivisionError" in window.message.text() and "log file" in window.message.text()
    assert any(r.exc_info and r.exc_info[0] is ZeroDivisionError for r in caplog.records)
    assert_next_request_works(qtbot, window)


def test_fifty_rapid_speak_stop_speak_sequences_leave_one_request_and_no_stale_audio(qtbot, window):
    fed = []
    window.bridge.chunk_ready.connect(lambda chunk: fed.append((chunk.request_id, window.bridge.current)))
    real_feed = window.player.feed
    played_by = []
    window.player.feed = lambda samples: played_by.append(window.bridge.current) or real_feed(samples)
    threads_before = {t.name for t in threading.enumerate()}
    for i in range(50):
        press_speak(qtbot, window, f"First request {i}, which will be stopped.")
        qtbot.wait((i % 5) * 15)  # sometimes before, sometimes after its first chunks arrive
        qtbot.mouseClick(window.speak_panel.stop_button, Qt.MouseButton.LeftButton)
        press_speak(qtbot, window, f"Second request {i}, which the next round replaces.")
        qtbot.wait((i % 3) * 15)
    final_text = "The one request that is left."
    with qtbot.waitSignal(window.speak_panel.playback_finished, timeout=60000):
        press_speak(qtbot, window, final_text)
    final = window.speak_panel.last_report
    assert final.text.startswith("The one request") and window.speak_panel.last_audio.size == final.samples
    assert len({rid for rid, _ in fed}) > 10  # many requests got as far as playing before being replaced
    assert all(rid == current for rid, current in fed), "a chunk of a stopped request reached the window"
    assert played_by and all(rid is not None for rid in played_by)
    assert window.player.queued == window.speak_panel.last_audio.size  # only the final request's audio was queued
    assert not window.bridge.busy and window.bridge.worker.scheduler.empty()
    assert {t.name for t in threading.enumerate()} - threads_before <= {"virtual-audio", "spoken-words_0"}


@pytest.mark.parametrize("mode", ["speak", "export"])
def test_settings_library_and_history_survive_kill_9(qtbot, tmp_path, bundles, voice_wav, mode):
    (tmp_path / "export").mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.crash_child", str(tmp_path), str(bundles["original"]), str(voice_wav), mode],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        marker = child.stdout.readline().strip()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        child.stdout.close()
    assert marker == ("SPEAKING" if mode == "speak" else "EXPORTING")
    assert child.returncode == -signal.SIGKILL

    # Nothing half-written under a final name: the interrupted export left no narration.wav.
    assert not (tmp_path / "export" / "narration.wav").exists()
    w = make_window(qtbot, tmp_path, bundles["original"])
    try:
        assert [v.name for v in w.library.voices()] == ["Narrator"]
        assert w.voice_panel.voice_name == "Narrator" and w.voice_panel.voice is not None
        assert w.history_panel.list.count() == 1 and w.history.entries[0].text.startswith("A short sentence")
        assert w.settings.get(Key.RANDOM_SEED) is False and w.settings.get(Key.SEED) == 4242
        assert not list((tmp_path / "home").rglob("*.partial*"))  # leftovers of the killed process are gone
        speak_and_wait(qtbot, w)
        assert len(w.history.entries) == 2
    finally:
        w.close()


def test_a_gpu_failing_mid_request_moves_the_app_to_the_cpu(qtbot, tmp_path, bundles):
    loads = []
    worker = InferenceWorker(pipeline_factory=gpu_that_fails_mid_run(loads))
    w = make_window(qtbot, tmp_path, bundles["original"], bridge=EngineBridge(worker=worker))
    try:
        assert "CUDA" in w.provider_label.text()
        with qtbot.waitSignal(w.bridge.model_loaded, timeout=30000):
            speak_expect(qtbot, w, "The GPU fails while this is spoken.", ok=False)
        assert w.provider_label.text() == "on CPU"
        assert "Running on CPU: the GPU failed during synthesis" in w.message.text()
        assert_next_request_works(qtbot, w)
        assert [r.provider for r in loads] == ["auto", "cpu"]
    finally:
        w.close()
