"""Voice in the window: recording from a microphone (injected input stream), listening, trimming; Turbo's missing
built-in voice."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import soundfile as sf

from app.settings import Key
from app.widgets.record_dialog import RecordDialog, TrimDialog
from core.engine.constants import SAMPLE_RATE
from core.standin import synthetic_voice
from core.voices.trimming import cut, speech_span
from tests.app_support import make_window


class FakeMicrophone:
    """A ``sounddevice`` stand-in whose InputStream delivers 1 s of silence, then speech, ``speed`` times faster."""

    def __init__(self, speed: float = 20.0, fail: str | None = None):
        self.speed, self.fail = speed, fail
        self.audio = np.concatenate([np.zeros(SAMPLE_RATE, np.float32), synthetic_voice(12.0, seed=5, pitch_hz=150)])

    def InputStream(self, samplerate, channels, dtype, callback, **_):
        if self.fail:
            raise OSError(self.fail)
        return _Stream(self, callback)


class _Stream:
    def __init__(self, mic, callback):
        self.mic, self.callback, self._stop = mic, callback, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()

    def _run(self):
        block, at = 480, 0
        while not self._stop.is_set() and at < self.mic.audio.size:
            chunk = self.mic.audio[at : at + block]
            self.callback(chunk[:, None], chunk.size, None, None)
            at += block
            time.sleep(block / SAMPLE_RATE / self.mic.speed)

    def stop(self):
        self._stop.set()
        self._thread.join(2)

    def close(self):
        pass


def test_recording_from_the_microphone_counts_down_meters_trims_and_selects_the_voice(qtbot, window, monkeypatch):
    window.voice_panel.input_device = FakeMicrophone(speed=20)
    seen = {"levels": set(), "countdown": set()}

    def run(dialog):
        assert dialog.start_recording()
        assert not dialog.record.isEnabled() and dialog.stop.isEnabled()
        dialog._timer.timeout.connect(
            lambda: (seen["levels"].add(dialog.meter.value()), seen["countdown"].add(dialog.countdown.text()))
        )
        qtbot.waitUntil(lambda: not dialog.stop.isEnabled(), timeout=10000)  # stops by itself after 10 s
        assert dialog.recorder.seconds >= RecordDialog.SECONDS
        assert dialog.trim.start.value() == pytest.approx(0.9, abs=0.1)  # the leading second of silence is cut
        assert dialog.use.isEnabled()
        dialog._use()
        return dialog.result()

    monkeypatch.setattr(RecordDialog, "exec", run)
    assert window.voice_panel.record_voice()
    assert max(seen["levels"]) > 50 and len(seen["countdown"]) >= 3 and "10 s left" in seen["countdown"]
    assert window.voice_panel.voice is not None and window.voice_panel.voice.duration_s == pytest.approx(9.1, abs=0.2)
    assert window.voice_panel.name.text().startswith("recording-")
    assert window.settings.get(Key.VOICE) == window.voice_panel.voice.source


def test_without_a_microphone_the_dialog_says_so_and_nothing_changes(qtbot, window, monkeypatch):
    window.voice_panel.input_device = FakeMicrophone(fail="Error querying device -1")
    results = []

    def run(dialog):
        results.append(dialog.start_recording())
        assert "No microphone is available" in dialog.hint.text()
        return 0

    monkeypatch.setattr(RecordDialog, "exec", run)
    before = window.voice_panel.voice
    assert not window.voice_panel.record_voice() and results == [False] and window.voice_panel.voice is before


def test_play_and_trim_the_reference(qtbot, window, voice_wav, monkeypatch):
    assert window.voice_panel.select_file(voice_wav)
    window.voice_panel.play.click()
    assert window.player.queued == window.voice_panel.voice.samples.size
    original = voice_wav.read_bytes()

    def run(dialog):
        dialog.trim.start.setValue(1.0)
        dialog.trim.end.setValue(3.5)
        assert dialog.trim.length.text().startswith("2.5 s kept")
        dialog._keep()
        return dialog.result()

    monkeypatch.setattr(TrimDialog, "exec", run)
    assert window.voice_panel.trim_voice()
    assert window.voice_panel.voice.duration_s == pytest.approx(2.5, abs=0.01)
    assert voice_wav.read_bytes() == original  # the original recording is not changed
    trimmed, rate = sf.read(window.voice_panel.voice.source, dtype="float32")
    assert rate == SAMPLE_RATE and abs(trimmed[0]) < 1e-3  # faded in: no click


def test_turbo_offers_no_default_voice_and_says_a_recording_is_needed(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["turbo"])
    assert window.voice_panel.voice is None
    assert not window.voice_panel.use_default.isVisible()
    assert "no built-in voice" in window.voice_panel.details.text()
    assert window.tabs.currentWidget() is window.voice_panel
    shown = window.findChildren(type(window.voice_panel.name))
    assert any("Record 10 s" in label.text() for label in shown if label.isVisible())
    window.close()


def test_speech_span_and_cut():
    audio = np.concatenate([np.zeros(SAMPLE_RATE), 0.5 * np.ones(2 * SAMPLE_RATE), np.zeros(SAMPLE_RATE)])
    start, end = speech_span(audio.astype(np.float32))
    assert start == pytest.approx(0.9, abs=0.02) and end == pytest.approx(3.1, abs=0.02)
    piece = cut(audio.astype(np.float32), 1.0, 2.0)
    assert piece.size == SAMPLE_RATE and piece[0] == 0.0 and piece[SAMPLE_RATE // 2] == 0.5
    assert speech_span(np.zeros(100, np.float32)) == (0.0, 100 / SAMPLE_RATE)
