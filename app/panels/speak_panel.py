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
from PySide6.QtCore import QTimer, Slot
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
from core.wording import describe_error

from ..audio.playback import Player
from ..audio_export import AudioExport
from ..controllers.history import HistoryController
from ..controllers.speak import PlaybackState, SpeakController, history_fields, playback_text, speak_problem
from ..controllers.voices import VoiceController
from ..engine_bridge import EngineBridge
from ..history import HistoryEntry
from ..messages import Messages
from ..settings import Key, Settings
from ..studio.export_dialog import export_name
from ..widgets.latency_plot import LatencyPlot
from ..widgets.model_reading_dialog import show_model_reading
from ..widgets.spoken_words import SpokenWords, highlight_word
from ..widgets.text_entry import TextEntry
from ..widgets.waveform_plot import WaveformPlot
from .result_playback import ResultPlayback

SPEAK_TIP = "Speak the text (Ctrl+Enter)"
BUSY_TIP = "Speaking: press again to start over, Stop (Esc) to stop"


class SpeakPanel(ResultPlayback):
    """Its signals (:class:`ResultPlayback`): ``playback_finished`` when the last request's audio has been played to
    the end; ``request_done`` True when a request produced audio."""

    ACTION_TEXT = ("Spea&k", "Speaking…")
    ACTION_TIP = (SPEAK_TIP, BUSY_TIP)

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
        super().__init__(bridge, player, settings, messages, exporter, runtime, parent)
        self.voices, self.history = voices, history
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

    # --- what others read --------------------------------------------------------------------------------------
    @property
    def last_audio(self) -> np.ndarray | None:
        return self.controller.last_audio

    @property
    def last_report(self) -> Any:
        return self.controller.last_report

    @property
    def action_button(self) -> QPushButton:
        return self.speak_button

    # --- the model ---------------------------------------------------------------------------------------------
    def model_loaded(self, caps: Capabilities) -> None:
        super().model_loaded(caps)
        self.text.set_tags(caps.tags)  # the Insert tag menu, and unknown tags flagged while typing

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
        self._begin_request("generating…")
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
        self._show_busy(False)

    def _history_fields(self, text: str, seed: int | None) -> dict[str, Any]:
        voice, source = self.voices.history_label()
        return history_fields(text, seed, self.bridge.model, voice, source, self.settings)

    @Slot(object)
    def _on_chunk_ready(self, chunk: AudioChunk) -> None:
        self.controller.add_chunk(chunk.samples)
        self.spoken_words.add(chunk)
        if chunk.play_start_ms is not None:  # play smoothly: held before the audio is queued, so none slips out
            self.player.hold_until(time.monotonic() + (chunk.play_start_ms - chunk.at_ms) / 1000)
        self._feed_live(chunk.samples)
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
        self._say_notices(report.warnings)
        if fields is not None:
            timings = {k: round(v, 2) for k, v in t.items()} | {"chunks": self.latency.chunk_rows()}
            if forecast.get("chunks"):
                timings["forecast"] = forecast
            entry = self._add_to_history(audio, fields, timings=timings)
            if entry is not None:
                self.latency.name_last_request(entry.id)  # replaying it shows its chunks and marks its point
        self._request_ended(True)

    @Slot(int, str)
    def _on_request_failed(self, rid: int, message: str) -> None:
        if not self.controller.owns(rid):
            return  # not a Speak request (a project render says so itself)
        self.player.end_of_input()
        self.controller.fail()
        self._request_failed(message)

    @Slot(int)
    def _on_player_taken(self, _rid: int) -> None:
        """A Re-voice started (it cancelled a running Speak: what arrived stays the last result); the player is its."""
        self._play_timer.stop()
        self.controller.awaiting_playback = False
        if self.controller.rid is not None:
            if self.controller.interrupted():
                self._set_export_available(True)
            self._show_busy(False)

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
    def export_last(self) -> bool:
        report = self.controller.last_report
        return self._export(self.controller.last_audio, export_name(report.text if report else ""))

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
        self._play_all(voice.samples)
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
            return self._pause_or_resume()
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
        self._check_output()
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
            no_output=self._no_output(),
            generating=busy,
            holding_s=p.holding_s if p.stream is not None else 0.0,
            starved=self._starved(),
            finished=self._played_out(),
            ended=self.controller.ended,
        )
        self.playback_status.emit(playback_text(state))
        if self.controller.awaiting_playback and not busy and self._played_out():
            self.controller.awaiting_playback = False
            self._play_timer.stop()
            self.playback_finished.emit()
