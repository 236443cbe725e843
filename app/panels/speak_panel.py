"""The Speak tab: the text, Speak / Stop / Export, the waveform and the latency plots; playback of the result.

Its state (the running request, the last result) is a :class:`SpeakController`; the panel starts requests on the
engine bridge, feeds the player, keeps each result in the history and says how playback goes through
:attr:`SpeakPanel.playback_status` (the window shows it in the status bar).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from core.engine import (
    SAMPLE_RATE,
    AudioChunk,
    Capabilities,
    ChatterboxError,
    RuntimeOptions,
    VoiceReference,
    new_seed,
)
from core.wording import describe_error, describe_notice

from ..audio.playback import Player
from ..audio_export import AudioExport
from ..controllers.history import HistoryController
from ..controllers.speak import PlaybackState, SpeakController, history_fields, playback_text, speak_problem
from ..controllers.voices import VoiceController
from ..engine_bridge import EngineBridge
from ..history import HistoryEntry
from ..messages import Messages
from ..settings import Key, Settings
from ..settings_summary import describe_settings
from ..studio.export_dialog import export_name
from ..widgets.latency_plot import LatencyPlot
from ..widgets.model_reading_dialog import show_model_reading
from ..widgets.spoken_words import SpokenWords, highlight_word
from ..widgets.text_entry import TextEntry
from ..widgets.waveform_plot import WaveformPlot

SPEAK_TIP = "Speak the text (Ctrl+Enter)"
BUSY_TIP = "Speaking: press again to start over, Stop (Esc) to stop"
CANNOT_PLAY = "Audio cannot be played on this computer."


class SpeakPanel(QWidget):
    playback_finished = Signal()
    """The last request's audio has been played to the end (or could not be played)."""
    request_done = Signal(bool)
    """A request ended: True when it produced audio, False when it failed."""
    playback_status = Signal(str)
    """What playback does now, for the status bar ("generating… · played 1.2 s", "stopped", …)."""
    timing_status = Signal(str)
    """The last request's speed for the status bar ("RTF 0.40 · first audio 0.31 s")."""
    export_available = Signal(bool)
    """There is a result to export (the window enables File → Export last result)."""

    def __init__(
        self,
        bridge: EngineBridge,
        player: Player,
        settings: Settings,
        voices: VoiceController,
        history: HistoryController,
        messages: Messages,
        exporter: AudioExport,
        runtime: Callable[[], RuntimeOptions],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.bridge, self.player, self.settings, self.voices = bridge, player, settings, voices
        self.history, self.messages, self.exporter, self.runtime = history, messages, exporter, runtime
        self.controller = SpeakController()
        self._build_ui()
        self._connect_signals()

    # --- construction ------------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.text = TextEntry(self)
        self.speak_button = QPushButton("Spea&k", self)
        self.speak_button.setToolTip(SPEAK_TIP)
        self.speak_button.setDefault(True)
        self.stop_button = QPushButton("S&top", self)
        self.stop_button.setToolTip("Stop synthesis and playback (Esc)")
        self.export_button = QPushButton("&Export…", self)
        self.export_button.setToolTip("Save the last result as an audio file (Ctrl+E)")
        self.export_button.setEnabled(False)
        self.waveform = WaveformPlot(self)
        self.latency = LatencyPlot(self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.speak_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        column = QVBoxLayout(self)
        column.addWidget(self.text, 2)  # the plots keep room on short screens
        column.addLayout(buttons)
        column.addWidget(self.waveform, 2)
        column.addWidget(self.latency, 3)
        self._play_timer = QTimer(self)
        self._play_timer.setInterval(50)
        self.spoken_words = SpokenWords(self)
        """Each word's time in what is being spoken: the word heard is highlighted in the text."""
        self._reference_serial = 0
        """Counts what was played; a reference's "played" note is said only if nothing was played after it."""

    def _connect_signals(self) -> None:
        self.speak_button.clicked.connect(self.speak)
        self.text.speak_requested.connect(self.speak)
        self.stop_button.clicked.connect(self.stop)
        self.text.stop_requested.connect(self.stop)
        self.export_button.clicked.connect(self.export_last)
        self.text.reading_requested.connect(self.show_reading)
        self.bridge.chunk_ready.connect(self._on_chunk_ready)
        self.bridge.request_finished.connect(self._on_request_finished)
        self.bridge.request_failed.connect(self._on_request_failed)
        self.bridge.convert_submitted.connect(self._on_player_taken)
        self._play_timer.timeout.connect(self._on_play_tick)

    # --- what others read --------------------------------------------------------------------------------------
    @property
    def last_audio(self) -> np.ndarray | None:
        return self.controller.last_audio

    @property
    def last_report(self) -> Any:
        return self.controller.last_report

    # --- the model ---------------------------------------------------------------------------------------------
    def model_loading(self) -> None:
        self.speak_button.setEnabled(False)

    def model_loaded(self, caps: Capabilities) -> None:
        self.speak_button.setEnabled(True)
        self.text.set_tags(caps.tags)  # the Insert tag menu, and unknown tags flagged while typing

    def model_failed(self) -> None:
        self.speak_button.setEnabled(self.bridge.model is not None)  # the model loaded before stays

    @Slot()
    def show_reading(self) -> None:
        """What the model reads of the text: the loaded model (else the remembered one) in the chosen language."""
        model = self.bridge.model
        bundle = model.bundle if model is not None else self.settings.bundle
        show_model_reading(self, bundle, self.text.text, self.settings.get(Key.LANGUAGE), source="the Speak tab")

    # --- speaking ----------------------------------------------------------------------------------------------
    @Slot()
    def speak(self) -> None:
        text, model = self.text.text, self.bridge.model
        problem = speak_problem(text, model, self.voices.voice is not None)
        if problem is not None or model is None:
            self.messages.show(problem or "")
            return
        self.messages.hide()
        self._reference_serial += 1
        self.player.begin()
        self.waveform.clear_audio()
        self.latency.start_request(describe_settings({k.value: self.settings.get(k) for k in Key}))
        self.playback_status.emit("generating…")
        self._speaking(True)
        options = self.settings.synthesis_options(model.variant)
        if options.seed is None:  # chosen here, so that a result stopped early is kept with its seed too
            options = replace(options, seed=new_seed())
        rid = self.bridge.speak(text, self.voices.voice, options, self.runtime())
        self.spoken_words.begin(text, options.language)
        highlight_word(self.text.editor, None)
        self.controller.begin(rid, self._history_fields(text, options.seed))
        self._play_timer.start()

    @Slot()
    def stop(self) -> None:
        self.save_stopped()
        self.bridge.cancel()
        self.player.stop()
        self.player.end_of_input()
        if self.controller.stop():
            self._set_export_available(True)
        self.playback_status.emit("stopped")
        self._speaking(False)

    def _history_fields(self, text: str, seed: int | None) -> dict[str, Any]:
        voice, source = self.voices.history_label()
        return history_fields(text, seed, self.bridge.model, voice, source, self.settings)

    @Slot(object)
    def _on_chunk_ready(self, chunk: AudioChunk) -> None:
        self.controller.add_chunk(chunk.samples)
        self.spoken_words.add(chunk)
        if chunk.play_start_ms is not None:  # play smoothly: held before the audio is queued, so none slips out
            self.player.hold_until(time.monotonic() + (chunk.play_start_ms - chunk.at_ms) / 1000)
        if not self.player.feed(chunk.samples) and chunk.samples.size and not self.controller.playback_note_shown:
            self.controller.playback_note_shown = True
            self.messages.show(self.player.error or CANNOT_PLAY, error=False)
        self.waveform.append(chunk.samples)
        if chunk.forecast is not None:
            self.latency.set_forecast(chunk.forecast)
        if chunk.kind == "speech":
            self.latency.add_chunk(chunk.lm_ms, chunk.decode_ms, chunk.rtf, at_ms=chunk.at_ms)

    @Slot(int, object)
    def _on_request_finished(self, rid: int, report: Any) -> None:
        self.player.end_of_input()
        self.player.hold_until(time.monotonic())  # all the audio is here: a smooth start waits no longer
        fields = self.controller.finish(rid, report, self._history_fields(report.text, report.seed))
        t = report.timings
        heard_ms = t.get("play_start_ms", t["ttfa_ms"])  # play smoothly: the first audio is heard at the planned start
        self.timing_status.emit(f"RTF {t['rtf']:.2f} · first audio {heard_ms / 1000:.2f} s")
        self.latency.add_request(heard_ms, t["step_ms_median"], t["rtf"])
        forecast = getattr(report, "forecast", None) or {}
        if forecast.get("chunks"):
            self.latency.set_forecast(forecast)
        audio = self.controller.audio()
        self._set_export_available(audio.size > 0)
        for warning in report.warnings:
            self.messages.show(describe_notice(warning) or "", error=False)
        if fields is not None:
            timings = {k: round(v, 2) for k, v in t.items()} | {"chunks": self.latency.chunk_rows()}
            if forecast.get("chunks"):
                timings["forecast"] = forecast
            entry = self._add_to_history(audio, fields, timings=timings)
            if entry is not None:
                self.latency.name_last_request(entry.id)  # replaying it shows its chunks and marks its point
        self._speaking(False)
        self.request_done.emit(True)

    @Slot(int, str)
    def _on_request_failed(self, rid: int, message: str) -> None:
        if not self.controller.owns(rid):
            return  # not a Speak request (a project render says so itself)
        self.player.end_of_input()
        self.controller.fail()
        self.messages.show(message)
        self.playback_status.emit("failed")
        self._speaking(False)
        self.request_done.emit(False)

    @Slot(int)
    def _on_player_taken(self, _rid: int) -> None:
        """A Re-voice started (it cancelled a running Speak: what arrived stays the last result); the player is its."""
        self._play_timer.stop()
        self.controller.awaiting_playback = False
        if self.controller.rid is not None:
            if self.controller.interrupted():
                self._set_export_available(True)
            self._speaking(False)

    def _speaking(self, busy: bool) -> None:
        """The Speak button says that work runs; the status line keeps "stopped" / "failed" until the next Speak."""
        self.speak_button.setText("Speaking…" if busy else "Spea&k")
        self.speak_button.setToolTip(BUSY_TIP if busy else SPEAK_TIP)

    def _set_export_available(self, available: bool) -> None:
        self.export_button.setEnabled(available)
        self.export_available.emit(available)

    # --- results -----------------------------------------------------------------------------------------------
    def _add_to_history(
        self, audio: np.ndarray, fields: dict[str, Any], partial: bool = False, timings: dict[str, Any] | None = None
    ) -> HistoryEntry | None:
        try:
            return self.history.add(audio, fields, partial=partial, timings=timings)
        except (OSError, ChatterboxError) as exc:
            self.messages.show(f"The result could not be added to the history: {describe_error(exc)}", error=False)
            return None

    def save_stopped(self) -> None:
        """The request being stopped keeps what it produced: into the history, marked "stopped (partial)"."""
        stopped = self.controller.take_stopped(self.bridge.current)
        if stopped is not None:
            audio, fields = stopped
            self._add_to_history(audio, fields, partial=True, timings={"chunks": self.latency.chunk_rows()})

    @Slot()
    def export_last(self) -> None:
        audio, report = self.controller.last_audio, self.controller.last_report
        if audio is not None and audio.size:
            self.exporter.export(audio, default_name=export_name(report.text if report else ""))

    # --- playing -----------------------------------------------------------------------------------------------
    def replay(self, entry: HistoryEntry, audio: np.ndarray) -> None:
        """Play a result of the history again, with its waveform and its chunks in the latency plot."""
        self.save_stopped()
        self.bridge.cancel()
        self._play(audio)
        self.latency.show_replay(entry.id, entry.timings, entry.created)
        self.controller.replayed(audio)

    def play_reference(self, voice: VoiceReference) -> None:
        """Listen to the reference recording."""
        self.bridge.cancel()
        self.player.begin()
        if not self.player.feed(voice.samples):
            self.messages.show(self.player.error or CANNOT_PLAY, error=False)
        self.player.end_of_input()
        self.playback_status.emit("playing the reference")
        serial = self._reference_serial = self._reference_serial + 1
        # with the panel as context, the timer dies with it (a window closed before the reference ends)
        QTimer.singleShot(round(voice.duration_s * 1000) + 300, self, lambda: self._reference_played(serial))

    def _reference_played(self, serial: int) -> None:
        """The reference has played: its status goes, unless something else plays or was started since."""
        quiet = not self.bridge.busy and not self.player.playing and not self._play_timer.isActive()
        if serial == self._reference_serial and quiet:
            self.playback_status.emit("finished · played the reference")

    def toggle_playback(self) -> str:
        """Pause or resume what plays; with nothing playing, play the last result again. Returns what it did."""
        if self.bridge.busy or self.player.playing:
            paused = self.player.toggle_pause()
            self.playback_status.emit("paused — Space resumes" if paused else "playing")
            return "paused" if paused else "resumed"
        audio = self.controller.last_audio
        if audio is None or not np.size(audio):
            self.messages.note("Nothing to play yet: speak some text first.", 3000)
            return "nothing"
        self._play(audio)
        return "played"

    def _play(self, audio: np.ndarray) -> None:
        self._reference_serial += 1
        self.spoken_words.begin("", None)  # a replay or a reference: no word times to follow
        highlight_word(self.text.editor, None)
        self.player.begin()
        self.waveform.clear_audio()
        self.waveform.append(audio)
        self.player.feed(audio)
        self.player.end_of_input()
        self._play_timer.start()

    @Slot()
    def _on_play_tick(self) -> None:
        p = self.player
        lost = p.check()
        if lost:
            self.messages.show(lost, error=False)
        self.waveform.set_playhead(min(p.played, p.queued))  # never past what exists
        heard = None
        if self.spoken_words.text == self.text.text:  # the text spoken is the one shown: its word heard marked
            heard = self.spoken_words.at(min(p.played, p.queued) / SAMPLE_RATE)
        if heard is not None or self.text.editor.extraSelections():
            highlight_word(self.text.editor, heard)
        busy = self.bridge.busy
        state = PlaybackState(
            played_s=p.played / SAMPLE_RATE,
            lost=p.lost,
            no_output=bool(p.error) and p.stream is None,
            generating=busy,
            holding_s=p.holding_s if p.stream is not None else 0.0,
            starved=p.stream is not None and bool(p.played) and p.ring.available == 0,
            finished=p.finished or p.stream is None,
            ended=self.controller.ended,
        )
        self.playback_status.emit(playback_text(state))
        if self.controller.awaiting_playback and not busy and (p.finished or p.stream is None):
            self.controller.awaiting_playback = False
            self._play_timer.stop()
            self.playback_finished.emit()

    def stop_playback_timer(self) -> None:
        self._play_timer.stop()
