"""The Re-voice tab: a recording (opened, dropped or recorded) spoken again in another voice (voice conversion).

The recording is read off the GUI thread (:class:`SourceLoader`); the target voice is the one Speak uses, chosen here
or in the Voice tab (both show the same choice); Re-voice streams the converted windows into the player, the
waveform (over the original's) and the latency plots as Speak does. A and B play the original and the re-voiced
audio, the second taking over where the first was, so the two can be compared at the same spot; Export saves the
re-voiced audio. Its state is a :class:`RevoiceController`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from core.engine import SAMPLE_RATE, AudioChunk, RuntimeOptions, SourceRecording
from core.wording import describe_notice

from ..audio.playback import Player
from ..audio_export import AudioExport
from ..controllers.revoice import (
    RevoiceController,
    describe_source,
    encoder_per_window,
    export_name,
    final_words,
    playback_words,
    revoice_problem,
    timing_text,
)
from ..controllers.voices import has_default_voice
from ..engine_bridge import EngineBridge
from ..messages import Messages
from ..settings import Settings
from ..widgets.compare_waveform import CompareWaveform
from ..widgets.elided_label import ElidedLabel
from ..widgets.latency_plot import CONVERSION_WORDS, LatencyPlot
from ..widgets.message_bar import warning_label_style
from ..widgets.record_dialog import SourceRecordDialog
from ..widgets.voice_picker import VoicePicker
from .result_playback import ResultPlayback
from .source_loader import SourceLoader
from .voice_panel import AUDIO_FILTER, VoicePanel, dropped_file

REVOICE_TIP = "Speak the recording again in the chosen voice (Ctrl+Enter)"
BUSY_TIP = "Re-voicing: press again to start over, Stop (Esc) to stop"
HINT = "Drop a recording here, open one or record one: it is spoken again in the chosen voice."


class RevoicePanel(ResultPlayback):
    """Its signals (:class:`ResultPlayback`) say what the conversion and A / B do: ``request_done`` True when a
    conversion produced all its audio, ``export_available`` when there is re-voiced audio to export."""

    ACTION_TEXT = ("R&e-voice", "Re-voicing…")
    ACTION_TIP = (REVOICE_TIP, BUSY_TIP)

    def __init__(
        self,
        bridge: EngineBridge,
        player: Player,
        settings: Settings,
        voice_panel: VoicePanel,
        messages: Messages,
        exporter: AudioExport,
        runtime: Callable[[], RuntimeOptions],
        recordings: Path,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(bridge, player, settings, messages, exporter, runtime, parent)
        self.voice_panel, self.voices, self.recordings = voice_panel, voice_panel.controller, recordings
        self.input_device: Any = None
        """The ``sounddevice`` module for recording (tests inject a fake microphone)."""
        self.controller = RevoiceController()
        self.loader = SourceLoader(self)
        self._live = False
        """The running conversion's chunks go to the player (not while A or B plays instead)."""
        self._playing = ""
        """What the player plays for this tab: "live", "original", "converted" or "" (nothing)."""
        self._offset = 0
        """Where in the recording the player started (A/B takes over at the same spot)."""
        self._folder = ""
        self.setAcceptDrops(True)
        self._build_ui()
        self._connect_signals()
        self._refresh_voices()
        self._show_source()

    # --- construction ------------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.open_button = QPushButton("Open recordin&g…", self)
        self.open_button.setToolTip("Open a recording to re-voice (any length up to 30 minutes)")
        self.record_button = QPushButton("● Record &with mic…", self)
        self.record_button.setToolTip("Record what the other voice should say, from the microphone")
        self.source_label = ElidedLabel(HINT, self)
        self.source_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.warning = ElidedLabel("", self)  # one line, whole in its tooltip: the plots keep their room
        self.warning.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.warning.setStyleSheet(warning_label_style())
        self.warning.hide()
        self.voice_choice = VoicePicker(self)
        self.voice_choice.setToolTip("The voice the recording is spoken in (the same choice as in the Voice tab)")
        voice_caption = QLabel("Into voice:", self)
        voice_caption.setBuddy(self.voice_choice)
        self.revoice_button = QPushButton("R&e-voice", self)
        self.revoice_button.setToolTip(REVOICE_TIP)
        self.revoice_button.setDefault(True)
        self.stop_button = QPushButton("S&top", self)
        self.stop_button.setToolTip("Stop the conversion and playback (Esc)")
        self.original_button = QPushButton("▶ &A: original", self)
        self.original_button.setToolTip("Play the original recording (from where the other one plays)")
        self.converted_button = QPushButton("▶ &B: re-voiced", self)
        self.converted_button.setToolTip("Play the re-voiced audio (from where the other one plays)")
        for button in (self.original_button, self.converted_button):
            button.setCheckable(True)
        self.export_button = QPushButton("E&xport…", self)
        self.export_button.setToolTip("Save the re-voiced audio as an audio file (Ctrl+E)")
        self.export_button.setEnabled(False)  # until there is re-voiced audio, as Speak's until there is a result
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # a click on a plot takes the focus: Space plays / pauses
        for button in (
            self.open_button,
            self.record_button,
            self.revoice_button,
            self.stop_button,
            self.original_button,
            self.converted_button,
            self.export_button,
        ):  # a clicked button leaves the focus where it was (Space is play / pause, not "click again")
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.waveform = CompareWaveform(self)
        self.latency = LatencyPlot(self, CONVERSION_WORDS)
        source_row = QHBoxLayout()
        source_row.addWidget(self.open_button)
        source_row.addWidget(self.record_button)
        source_row.addWidget(self.source_label, 1)
        voice_row = QHBoxLayout()
        voice_row.addWidget(voice_caption)
        voice_row.addWidget(self.voice_choice, 1)
        voice_row.addWidget(self.revoice_button)
        voice_row.addWidget(self.stop_button)
        compare_row = QHBoxLayout()
        compare_row.addWidget(QLabel("Compare:", self))
        compare_row.addWidget(self.original_button)
        compare_row.addWidget(self.converted_button)
        compare_row.addStretch(1)
        compare_row.addWidget(self.export_button)
        column = QVBoxLayout(self)
        column.addLayout(source_row)
        column.addWidget(self.warning)
        column.addLayout(voice_row)
        column.addLayout(compare_row)
        column.addWidget(self.waveform, 2)
        column.addWidget(self.latency, 3)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):  # active while this tab shows (Speak's own are hidden then)
            QShortcut(QKeySequence(keys), self, self.revoice)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.stop)

    def _connect_signals(self) -> None:
        self.open_button.clicked.connect(self.choose_source)
        self.record_button.clicked.connect(self.record_source)
        self.voice_choice.chosen.connect(self._on_voice_chosen)
        self.revoice_button.clicked.connect(self.revoice)
        self.stop_button.clicked.connect(self.stop)
        self.original_button.clicked.connect(lambda: self.play("original"))
        self.converted_button.clicked.connect(lambda: self.play("converted"))
        self.export_button.clicked.connect(self.export_converted)
        self.loader.loaded.connect(self._on_source_loaded)
        self.loader.failed.connect(self._on_source_failed)
        self.voice_panel.voice_changed.connect(self._refresh_voices)
        self.bridge.conversion_chunk.connect(self._on_chunk)
        self.bridge.conversion_finished.connect(self._on_finished)
        self.bridge.request_failed.connect(self._on_failed)
        self.bridge.request_cancelled.connect(self._on_cancelled)
        self.bridge.speak_submitted.connect(self._on_player_taken)

    # --- what others read --------------------------------------------------------------------------------------
    @property
    def source(self) -> SourceRecording | None:
        return self.controller.source

    @property
    def converted(self) -> np.ndarray | None:
        return self.controller.converted

    @property
    def busy(self) -> bool:
        """A conversion of this tab runs."""
        return self.controller.rid is not None

    @property
    def action_button(self) -> QPushButton:
        return self.revoice_button

    # --- the recording -----------------------------------------------------------------------------------------
    @Slot()
    def choose_source(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a recording to re-voice", self._folder, AUDIO_FILTER)
        if path:
            self.open_source(Path(path))

    @Slot()
    def record_source(self) -> bool:
        """Record from the microphone; the recording (saved with the app's recordings) becomes the source."""
        dialog = SourceRecordDialog(self.recordings, self.input_device, self.window())
        if dialog.exec() and dialog.path is not None:
            self.open_source(dialog.path)
            return True
        return False

    def open_source(self, path: Path) -> None:
        """Read ``path`` off the GUI thread; the recording shown so far stays until it is read (and if it fails)."""
        self._folder = str(path.parent)
        self.source_label.setText(f"Reading {path.name}…")
        self.loader.load(path)

    @Slot(object)
    def _on_source_loaded(self, source: SourceRecording) -> None:
        if self.busy:
            self.stop()  # what it converts belongs to the recording before
        self.stop_playing()
        self.controller.set_source(source)
        self.waveform.set_original(source.samples)
        self.latency.start_request()
        self._show_source()
        self._set_export_available(False)
        self.messages.hide()

    @Slot(str, str)
    def _on_source_failed(self, _name: str, message: str) -> None:
        self._show_source()  # the recording before stays, with what was converted from it
        self.messages.show(message)

    def _show_source(self) -> None:
        source = self.controller.source
        if source is None:
            self.source_label.setText(HINT)
            self.warning.hide()
        else:
            self.source_label.setText(f"{Path(source.source).name} · {describe_source(source)}")
            self.warning.setText(" ".join(describe_notice(w) or "" for w in source.warnings))
            self.warning.setVisible(bool(source.warnings))
        self.original_button.setEnabled(source is not None)
        self.converted_button.setEnabled(self.controller.converted is not None or self.busy)

    # --- the voice ---------------------------------------------------------------------------------------------
    @Slot()
    def _refresh_voices(self) -> None:
        """The same choices as the Voice tab: the default voice, the library, the recording in use; and a file."""
        self.voice_choice.show_choices(self.voices.choices(has_default_voice(self.bridge.model)))

    @Slot(str, str)
    def _on_voice_chosen(self, kind: str, value: str) -> None:
        self.voice_panel.choose_voice(kind, value)
        self._refresh_voices()  # a cancelled choice shows the voice in use again

    # --- converting --------------------------------------------------------------------------------------------
    @Slot()
    def revoice(self) -> None:
        model, source = self.bridge.model, self.controller.source
        problem = revoice_problem(source, self.loader.running, model, self.voices.voice is not None)
        if problem is not None or model is None or source is None:
            self.messages.show(problem or "")
            return
        self.messages.hide()
        seed = self.settings.synthesis_options(model.variant).seed
        rid = self.bridge.convert(source, self.voices.voice, seed, self.runtime())
        self.controller.begin(rid)
        self._live, self._playing, self._offset = True, "live", 0
        self._begin_request("re-voicing…")
        self._set_export_available(False)
        self._play_timer.start()

    @Slot()
    def stop(self) -> None:
        """Stop the conversion (what arrived is kept) and playback."""
        if self.busy and self.bridge.current == self.controller.rid:
            self.bridge.cancel()  # its request_cancelled does the rest
        elif self.busy:
            self._on_cancelled(self.controller.rid or 0)
        self.stop_playing()
        self.playback_status.emit("stopped")

    def stop_playing(self) -> None:
        if self._playing:
            self.player.stop()
            self.player.end_of_input()
        self._play_timer.stop()
        self._live, self._playing = False, ""
        self._show_playing()

    @Slot(object)
    def _on_chunk(self, chunk: AudioChunk) -> None:
        if not self.controller.owns(chunk.request_id):
            return
        self.controller.add_chunk(chunk.samples)
        if self._live:
            self._feed_live(chunk.samples)
        self.waveform.append(chunk.samples)
        self.latency.add_chunk(chunk.lm_ms, chunk.decode_ms, chunk.rtf, at_ms=chunk.at_ms)
        self.converted_button.setEnabled(True)

    @Slot(int, object)
    def _on_finished(self, rid: int, report: Any) -> None:
        if not self.controller.owns(rid):
            return
        if self._live:
            self.player.end_of_input()
        self.controller.finish(report)
        t = report.timings
        self.timing_status.emit(timing_text(t))
        self.latency.add_request(t.get("first_audio_ms", 0.0), encoder_per_window(report.chunks), t.get("rtf", 0.0))
        source_warnings = self.controller.source.warnings if self.controller.source else ()
        self._say_notices(w for w in report.warnings if w not in source_warnings)  # the recording's own were said
        self._set_export_available(True)
        self._request_ended(True)

    @Slot(int, str)
    def _on_failed(self, rid: int, message: str) -> None:
        if not self.controller.owns(rid):
            return
        if self._live:
            self.player.end_of_input()
        self.controller.fail()
        self.waveform.clear_audio()
        self._request_failed(message)

    @Slot(int)
    def _on_cancelled(self, rid: int) -> None:
        if not self.controller.owns(rid):
            return
        if self._live:
            self.player.end_of_input()
        self._set_export_available(self.controller.stop())
        self._show_busy(False)

    @Slot(int)
    def _on_player_taken(self, _rid: int) -> None:
        """A Speak started (it cancelled a conversion of this tab, if one ran): the player is Speak's now."""
        self._live, self._playing = False, ""
        self._play_timer.stop()
        self._show_playing()

    def _show_busy(self, busy: bool) -> None:
        super()._show_busy(busy)
        self._show_source()

    @Slot()
    def export_converted(self) -> bool:
        voice = self.voices.title(has_default_voice(self.bridge.model))
        return self._export(self.controller.converted, export_name(self.controller.source, voice))

    # --- A/B ---------------------------------------------------------------------------------------------------
    def play(self, which: str) -> str:
        """Play the original or the re-voiced audio, from where the other one plays (from the start otherwise);
        pressing the one that plays stops it. Returns what it did."""
        source = self.controller.source
        audio = source.samples if which == "original" and source is not None else None
        if which == "converted":
            audio = self.controller.converted if self.controller.converted is not None else self.controller.audio()
        if self._playing.replace("live", "converted") == which and (self.player.playing or self._live):
            self.stop_playing()
            self.playback_status.emit("stopped")
            return "stopped"
        if audio is None or not audio.size:
            self._show_playing()
            self.messages.note("Nothing to play yet: re-voice the recording first.", 3000)
            return "nothing"
        at = self.position() if self._playing and self.player.playing else 0
        at = at if at < audio.size - SAMPLE_RATE // 10 else 0
        self._live, self._playing, self._offset = False, which, at
        self._play_all(audio[at:])
        self._show_playing()
        self._play_timer.start()
        return "played"

    def position(self) -> int:
        """The sample of the recording the player is at."""
        return self._offset + min(self.player.played, self.player.queued)

    def toggle_playback(self) -> str:
        """Space: pause or resume what plays; with nothing playing, play the re-voiced audio (or the original)."""
        if self._playing and (self.player.playing or self.busy):
            return self._pause_or_resume()
        return self.play("converted" if self.controller.converted is not None else "original")

    def _show_playing(self) -> None:
        self.original_button.setChecked(self._playing == "original")
        self.converted_button.setChecked(self._playing in ("converted", "live"))

    @Slot()
    def _on_play_tick(self) -> None:
        self._check_output()
        at = self.position()
        self.waveform.set_playhead(at)
        if self._played_out() and not (self.busy and self._live):
            playing = self._playing
            self._play_timer.stop()
            self._live, self._playing = False, ""
            self._show_playing()
            self.playback_status.emit(final_words(playing, at / SAMPLE_RATE, self.controller.ended))
            self.playback_finished.emit()
            return
        words = playback_words(
            self._playing, at / SAMPLE_RATE, self.busy, self.player.lost, self._no_output(), self._starved()
        )
        self.playback_status.emit(words)

    def shutdown(self) -> None:
        """The window closes: no more ticks; a file being read is waited for a moment."""
        self.stop_playback_timer()
        self.loader.shutdown()

    # --- drops -------------------------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        path = dropped_file(event)
        if path is not None:
            event.acceptProposedAction()
            self.open_source(path)
