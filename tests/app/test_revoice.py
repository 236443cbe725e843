"""The Re-voice tab: a recording (file, drop, microphone) converted into the chosen voice while it streams to the
player and the plots; Stop; A/B; export; bad recordings worded, with nothing lost and the worker still working."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog

from app.controllers.revoice import (
    LOADING,
    NO_MODEL,
    NO_SOURCE,
    NO_VOICE,
    describe_source,
    export_name,
    final_words,
    playback_words,
    revoice_problem,
)
from app.settings import Key
from app.widgets.record_dialog import SourceRecordDialog
from app.widgets.waveform_plot import BUCKET
from core.engine import SAMPLE_RATE, source_from_array
from core.engine.streaming.conversion import ConversionStream
from core.standin import synthetic_voice
from tests.app.test_studio_voice import FakeMicrophone

SECONDS = 8.0


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, Path]:
    """Recordings to re-voice: speech at 44.1 kHz, a long one, a silent one, a corrupt one, stereo at 8 kHz."""
    root = tmp_path_factory.mktemp("sources")
    speech = synthetic_voice(SECONDS, seed=21, pitch_hz=130)
    files = {name: root / f"{name}.wav" for name in ("speech", "long", "silent", "stereo8k")}
    sf.write(files["speech"], soxr.resample(speech, SAMPLE_RATE, 44100), 44100)
    sf.write(files["long"], synthetic_voice(40.0, seed=22, pitch_hz=150), SAMPLE_RATE)
    sf.write(files["silent"], np.zeros(3 * SAMPLE_RATE, np.float32), SAMPLE_RATE)
    low = soxr.resample(synthetic_voice(4.0, seed=23, pitch_hz=200), SAMPLE_RATE, 8000)
    sf.write(files["stereo8k"], np.stack([low, 0.5 * low], axis=1), 8000, subtype="PCM_16")
    files["corrupt"] = root / "corrupt.wav"
    files["corrupt"].write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00garbage" * 40)
    return files


@pytest.fixture
def panel(window):
    window.modes.setCurrentWidget(window.revoice_panel)
    return window.revoice_panel


@pytest.fixture
def held(monkeypatch):
    """Every window of a conversion after its first waits until the test sets this event (set at the end anyway)."""
    gate = threading.Event()
    decode = ConversionStream._decode

    def wait_then_decode(self, cond, tokens, seed, encoder_ms):
        if seed != self.report.seed:  # the first window's seed is the request's
            gate.wait(10)
        return decode(self, cond, tokens, seed, encoder_ms)

    monkeypatch.setattr(ConversionStream, "_decode", wait_then_decode)
    yield gate
    gate.set()


def open_source(qtbot, panel, path: Path) -> None:
    with qtbot.waitSignal(panel.loader.loaded, timeout=30000):
        panel.open_source(path)


def revoice_and_wait(qtbot, panel, ok: bool = True) -> None:
    with qtbot.waitSignal(panel.request_done, timeout=60000) as done:
        qtbot.mouseClick(panel.revoice_button, Qt.MouseButton.LeftButton)
    assert done.args == [ok]


def test_a_recording_converts_while_it_streams_to_playback_and_the_plots(qtbot, window, panel, sources):
    panel.revoice()
    assert "Open, drop or record a recording" in window.message.text()
    with qtbot.waitSignal(panel.loader.loaded, timeout=30000):
        panel.open_source(sources["speech"])
        assert panel.source_label.text() == "Reading speech.wav…"
        panel.revoice()  # read off the GUI thread: the window answers meanwhile
        assert "still being read" in window.message.text() and not panel.busy
    source = panel.source
    assert source is not None and source.samples.size == round(SECONDS * SAMPLE_RATE)
    assert panel.source_label.text() == "speech.wav · 8.0 s · 44,100 Hz · mono"
    assert panel.waveform.original_samples == source.samples.size and not panel.waveform.empty.isVisible()
    chunks, speak_chunks = [], []
    window.bridge.conversion_chunk.connect(lambda c: chunks.append(c))
    window.bridge.chunk_ready.connect(lambda c: speak_chunks.append(c))
    with qtbot.waitSignal(panel.playback_finished, timeout=60000):
        revoice_and_wait(qtbot, panel)
        assert any(word in window.playback_label.text() for word in ("re-voicing", "playing", "finished"))
    assert len(chunks) >= 2 and not speak_chunks  # streamed window by window; never taken for a Speak
    assert chunks[0].samples.size < source.samples.size
    assert panel.converted is not None and panel.converted.size == source.samples.size
    assert window.player.queued == source.samples.size and window.player.played >= source.samples.size
    assert panel.waveform.samples == source.samples.size
    wave = panel.waveform  # A (the original) above the line, B (re-voiced) below, on one time axis
    qtbot.waitUntil(lambda: wave.curve.xData is not None and wave.curve.xData.size == source.samples.size // BUCKET)
    assert max(wave.curve.yData) <= 0 < min(-wave.curve.yData.min(), wave.original_curve.yData.max())
    assert wave.original_curve.xData[-1] == pytest.approx(wave.curve.xData[-1])
    latency = panel.latency
    assert len(latency.chunk_plot.chunks) == len(chunks) and len(latency.requests) == 1
    assert latency.chunk_plot.legend.items[0][1].text == "encoder"
    assert latency.metric_choice.itemText(1) == "encoder"
    assert "RTF" in window.rtf_label.text() and "first audio" in window.rtf_label.text()
    assert window.playback_label.text().startswith("finished")
    assert panel.export_button.isEnabled() and window.export_action.isEnabled()
    assert window.speak_panel.last_audio is None  # the Speak panel's result is untouched


def test_the_re_voiced_audio_saved_to_a_file_is_as_long_as_the_source(
    qtbot, window, panel, sources, monkeypatch, tmp_path
):
    open_source(qtbot, panel, sources["speech"])
    revoice_and_wait(qtbot, panel)
    for name in ("revoiced.wav", "revoiced.flac"):
        target = tmp_path / name
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, t=target, **k: (str(t), ""))
        window.export_action.trigger()  # File → Export last result: the Re-voice tab's audio while it shows
        assert sf.info(target).frames == panel.source.samples.size


def test_the_chosen_voice_is_the_voice_tabs_and_a_seeded_conversion_repeats(qtbot, window, panel, sources, voice_wav):
    window.settings.set(Key.RANDOM_SEED, False)
    window.settings.set(Key.SEED, 1234)
    choice = panel.voice_choice
    assert choice.currentText() == "Default voice"
    assert choice.itemText(choice.count() - 1) == "Choose a recording…"
    open_source(qtbot, panel, sources["speech"])
    revoice_and_wait(qtbot, panel)
    default = panel.converted.copy()
    revoice_and_wait(qtbot, panel)
    assert np.array_equal(panel.converted, default)  # same seed, same voice: the same audio
    assert window.voice_panel.select_file(voice_wav)  # chosen in the Voice tab: shown here
    assert choice.currentText() == "voice.wav"
    window.voice_panel.save_voice("Ada")
    assert choice.currentText() == "Ada" and choice.findText("Default voice") == 0
    revoice_and_wait(qtbot, panel)
    assert panel.converted.size == default.size and not np.array_equal(panel.converted, default)
    choice.activated.emit(choice.findText("Default voice"))  # chosen here: the Voice tab follows
    assert window.voice_panel.voice is None and window.voice_panel.name.text() == "Default voice"
    assert choice.currentText() == "Default voice"


def test_stop_cancels_the_conversion_and_keeps_what_arrived(qtbot, window, panel, sources, held):
    open_source(qtbot, panel, sources["long"])
    chunks: list = []
    window.bridge.conversion_chunk.connect(lambda c: chunks.append(c))
    try:
        qtbot.mouseClick(panel.revoice_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(chunks) == 1 and window.player.stream is not None, timeout=30000)
        assert panel.busy and panel.revoice_button.text() == "Re-voicing…"
        window.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
        qtbot.keyClick(panel, Qt.Key.Key_Escape)  # Esc: Stop
        assert not panel.busy and window.bridge.current is None and panel.controller.ended == "stopped"
        assert window.player.stream is None and window.player.ring.available == 0
        assert window.playback_label.text() == "stopped"
    finally:
        held.set()
    qtbot.waitUntil(lambda: window.bridge.worker.status().running is None, timeout=30000)
    assert len(chunks) == 1  # nothing of the stopped conversion arrives after Stop
    assert panel.converted is not None and panel.converted.size == chunks[0].samples.size  # kept, exportable
    assert panel.export_button.isEnabled() and panel.revoice_button.text() == "R&e-voice"


@pytest.mark.parametrize(
    ("name", "words"),
    [("silent", "silent.wav is silent"), ("corrupt", "corrupt.wav is not a readable audio file")],
)
def test_a_bad_recording_is_worded_and_loses_nothing(qtbot, window, panel, sources, name, words):
    open_source(qtbot, panel, sources["speech"])
    revoice_and_wait(qtbot, panel)
    before = panel.converted
    with qtbot.waitSignal(panel.loader.failed, timeout=30000):
        panel.open_source(sources[name])
    assert window.message.isVisible() and words in window.message.text()
    assert panel.source_label.text().startswith("speech.wav")  # the recording before stays, with its result
    assert panel.converted is before and panel.export_button.isEnabled()
    revoice_and_wait(qtbot, panel)  # and it still converts


def test_a_recording_over_the_limit_is_refused_with_words(qtbot, window, panel, sources, monkeypatch):
    monkeypatch.setattr("core.engine.audio.source_recording.MAX_SOURCE_SECONDS", 30.0)  # not a 31-minute file
    with qtbot.waitSignal(panel.loader.failed, timeout=30000):
        panel.open_source(sources["long"])
    assert "long.wav is" in window.message.text() and "split the recording" in window.message.text()
    assert panel.source is None and panel.source_label.text().startswith("Drop a recording here")


def test_stereo_at_8_khz_is_mixed_resampled_and_said(qtbot, window, panel, sources):
    open_source(qtbot, panel, sources["stereo8k"])
    assert panel.source_label.text() == "stereo8k.wav · 4.0 s · 8,000 Hz · stereo, mixed to mono"
    assert panel.warning.isVisible() and "sampled at 8000 Hz" in panel.warning.text()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    with qtbot.waitSignal(panel.request_done, timeout=60000):  # Ctrl+Enter: Re-voice (Speak's own is hidden)
        qtbot.keyClick(panel, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert window.speak_panel.last_report is None and not window.message.isVisible()
    assert panel.converted.size == panel.source.samples.size == 4 * SAMPLE_RATE


def test_a_conversion_the_worker_fails_is_worded_and_the_next_one_succeeds(qtbot, window, panel, sources, monkeypatch):
    worker = window.bridge.worker
    convert = worker.convert
    silent = sources["silent"]  # as if the recording became silent: the worker reads it and fails
    monkeypatch.setattr(
        worker, "convert", lambda request, runtime=None: convert(replace(request, source=silent), runtime)
    )
    open_source(qtbot, panel, sources["speech"])
    revoice_and_wait(qtbot, panel, ok=False)
    assert "silent.wav is silent" in window.message.text() and panel.controller.ended == "failed"
    assert panel.waveform.samples == 0 and panel.waveform.original_samples > 0 and not panel.busy
    monkeypatch.setattr(worker, "convert", convert)
    revoice_and_wait(qtbot, panel)
    assert panel.converted.size == panel.source.samples.size


def test_a_dropped_recording_opens_and_a_recording_from_the_microphone_too(qtbot, window, panel, sources, monkeypatch):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(sources["stereo8k"]))])
    event = QDropEvent(
        QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    with qtbot.waitSignal(panel.loader.loaded, timeout=30000):
        panel.dropEvent(event)
    assert panel.source_label.text().startswith("stereo8k.wav") and window.voice_panel.voice is None

    panel.input_device = FakeMicrophone(speed=20)

    def record(dialog):
        assert dialog.windowTitle() == "Record something to re-voice" and "5:00" in dialog.countdown.text()
        assert dialog.start_recording()
        qtbot.waitUntil(lambda: dialog.recorder.seconds >= 12.5, timeout=10000)
        dialog.stop_recording()
        dialog._use()
        return dialog.result()

    monkeypatch.setattr(SourceRecordDialog, "exec", record)
    with qtbot.waitSignal(panel.loader.loaded, timeout=30000):
        assert panel.record_source()
    assert Path(panel.source.source).name.startswith("revoice-source-")
    assert panel.source.seconds == pytest.approx(11.6, abs=0.6)  # the leading second of silence is trimmed


def test_a_and_b_take_over_at_the_same_spot_and_space_pauses(qtbot, window, panel, sources):
    open_source(qtbot, panel, sources["speech"])
    revoice_and_wait(qtbot, panel)
    qtbot.waitUntil(lambda: not panel._play_timer.isActive(), timeout=30000)
    window.player.sd.speed = 1.0  # real time: the comparison happens while it plays
    assert panel.play("original") == "played" and panel.original_button.isChecked()
    assert window.player.queued == panel.source.samples.size
    qtbot.waitUntil(lambda: window.player.played > SAMPLE_RATE // 2, timeout=10000)
    assert panel.play("converted") == "played"
    at = panel._offset
    assert at > SAMPLE_RATE // 2 and panel.converted_button.isChecked() and not panel.original_button.isChecked()
    assert window.player.queued == panel.converted.size - at  # B goes on from where A was
    qtbot.waitUntil(lambda: window.playback_label.text().startswith("playing the re-voiced audio · "))
    assert window.toggle_playback() == "paused" and window.player.paused
    assert window.toggle_playback() == "resumed" and not window.player.paused
    assert panel.play("converted") == "stopped" and not window.player.playing  # pressing the one that plays


def test_speak_and_re_voice_take_the_player_from_each_other(qtbot, window, panel, sources, held):
    open_source(qtbot, panel, sources["long"])
    speak = window.speak_panel
    speak.text.set_text("Hello there, this is a test. " * 12)
    speak.speak_button.click()
    qtbot.waitUntil(lambda: speak.controller.chunks != [], timeout=30000)
    held.set()
    revoice_and_wait(qtbot, panel)  # Re-voice while speaking: the Speak stops, what it said is kept
    assert speak.controller.ended == "stopped" and speak.speak_button.text() == "Spea&k" and speak.last_audio.size
    assert panel.converted.size == panel.source.samples.size
    held.clear()
    panel.revoice()
    qtbot.waitUntil(lambda: panel.controller.chunks != [], timeout=30000)
    with qtbot.waitSignal(speak.request_done, timeout=60000):  # Speak while converting: the conversion stops
        speak.text.set_text("Second request.")
        speak.speak_button.click()
        assert not panel.busy and panel.controller.ended == "stopped"
        assert panel.revoice_button.text() == "R&e-voice" and not panel._play_timer.isActive()
        held.set()  # the cancelled conversion ends, and the worker runs the Speak
    assert speak.last_report.text == "Second request."
    qtbot.waitUntil(lambda: window.bridge.worker.status().running is None, timeout=30000)
    assert panel.converted is not None and 0 < panel.converted.size < panel.source.samples.size  # what arrived


def test_the_tabs_words_without_a_window():
    source = source_from_array(np.tile(synthetic_voice(2.0, seed=1)[:, None], (1, 2)), SAMPLE_RATE, "/x/talk.flac")
    assert describe_source(source) == "2.0 s · 24,000 Hz · stereo, mixed to mono"
    long = replace(source, samples=np.zeros(125 * SAMPLE_RATE, np.float32), channels=1)
    assert describe_source(long) == "2:05 · 24,000 Hz · mono"

    class Model:
        class capabilities:
            has_default_voice = False

    assert revoice_problem(source, False, None, True) == NO_MODEL
    assert revoice_problem(source, True, Model, True) == LOADING  # a newer recording is on its way
    assert revoice_problem(None, False, Model, True) == NO_SOURCE
    assert revoice_problem(source, False, Model, False) == NO_VOICE  # Turbo: no voice of its own
    assert revoice_problem(source, False, Model, True) is None
    assert export_name(source, "Ada Lovelace") == "talk-as-Ada-Lovelace.wav"
    assert export_name(source, "Default voice") == "talk-as-Default-voice.wav"
    assert playback_words("live", 1.23, converting=True) == "re-voicing… · played 1.2 s"
    assert playback_words("live", 1.2, converting=True, starved=True).startswith("buffering")
    assert playback_words("original", 3.0) == "playing the original · 3.0 s"
    assert final_words("converted", 8.0) == "finished · played the re-voiced audio"
    assert final_words("live", 2.5, "stopped") == "stopped · played 2.5 s"
