"""The main window: text, Speak/Stop, voice, plots, settings, history, models; status bar with what runs where."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import QByteArray, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.engine import SAMPLE_RATE, ChatterboxError, RuntimeOptions, VoiceReference, decoder_costs_dir, new_seed
from core.narration import is_project, open_project
from core.voices import VoiceLibrary
from core.wording import describe_error, describe_notice

from . import usability
from .audio.playback import Player
from .engine_bridge import EngineBridge
from .history import History
from .paths import AppPaths
from .settings import SESSION_KEYS, Key, Settings
from .settings_summary import describe_settings
from .studio.project_files import ProjectFiles
from .studio.studio_panel import StudioPanel
from .widgets.api_panel import ApiPanel
from .widgets.history_panel import HistoryPanel
from .widgets.latency_plot import LatencyPlot
from .widgets.message_bar import MessageBar
from .widgets.model_dialog import ModelDialog
from .widgets.settings_panel import SettingsPanel
from .widgets.text_entry import TextEntry
from .widgets.voice_panel import VoicePanel
from .widgets.waveform_plot import WaveformPlot
from .window_results import ResultActions
from .window_voice import VoiceActions

log = logging.getLogger(__name__)
GRAPH_NAMES = {"speech_encoder": "voice encoder", "embed_tokens": "embeddings", "language_model": "language model",
               "conditional_decoder": "decoder"}  # fmt: skip


class MainWindow(VoiceActions, ResultActions, QMainWindow):
    playback_finished = Signal()
    """The last request's audio has been played to the end (or could not be played)."""
    request_done = Signal(bool)
    """A request ended: True when it produced audio, False when it failed."""

    def __init__(self, settings: Settings, paths: AppPaths, player: Player | None = None,
                 bridge: EngineBridge | None = None, hub=None):  # fmt: skip
        super().__init__()
        self.settings, self.paths, self.hub = settings, paths, hub
        self.player = player or Player()
        self.input_device = None
        self._ended = ""
        """The ``sounddevice`` module for recording (tests inject a fake microphone)."""
        self.bridge = bridge or EngineBridge(parent=self)
        self.library = VoiceLibrary(paths.voices)
        self.history = History(paths.history)
        self.voice: VoiceReference | None = None
        self.voice_name = ""
        self._removed_voices: list = []
        """(RemovedVoice, was the current voice) of this session's removals, newest last: Undo restores them."""
        self.last_audio: np.ndarray | None = None
        self.last_report = None
        self._chunks: list[np.ndarray] = []
        self._request: dict | None = None
        """The running Speak request: its id and what its history entry records."""
        self._awaiting_playback = False
        self._playback_note_shown = False
        self.setWindowTitle("Chatterbox Desk")
        self.setAcceptDrops(True)
        self._build_ui()
        self._connect_signals()
        self._restore()
        usability.install(self)  # focus order, Space / Ctrl+O / F1, the Help menu, dismissed notices

    # --- construction ------------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.text = TextEntry(self)
        self.speak_button = QPushButton("Spea&k", self)
        self.speak_button.setToolTip("Speak the text (Ctrl+Enter)")
        self.speak_button.setDefault(True)
        self.stop_button = QPushButton("S&top", self)
        self.stop_button.setToolTip("Stop synthesis and playback (Esc)")
        self.export_button = QPushButton("&Export…", self)
        self.export_button.setToolTip("Save the last result as an audio file (Ctrl+E)")
        self.export_button.setEnabled(False)
        self.message = MessageBar(self)  # over the bottom of the central area: never pushes the editor down
        self.waveform = WaveformPlot(self)
        self.latency = LatencyPlot(self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.speak_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        left = QWidget(self)
        column = QVBoxLayout(left)
        column.addWidget(self.text, 3)
        column.addLayout(buttons)
        column.addWidget(self.waveform, 2)
        column.addWidget(self.latency, 2)

        self.voice_panel = VoicePanel(self)
        self.settings_panel = SettingsPanel(self.settings, self)
        self.api_panel = ApiPanel(self.bridge.worker, self.library, self)  # Settings → Local API
        self.settings_panel.add_section(self.api_panel)
        self.history_panel = history_tab = HistoryPanel(self)
        self.history_list = self.history_panel.list
        self.history_play, self.history_export = self.history_panel.play_button, self.history_panel.export_button
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.voice_panel, "Voice")
        self.settings_scroll = _scrolling(self.settings_panel)  # tall: it scrolls on small screens
        self.tabs.addTab(self.settings_scroll, "Settings")
        self.tabs.addTab(history_tab, "History")
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.studio = StudioPanel(self, self)
        self.modes = QTabWidget(self)
        self.modes.addTab(left, "&Speak")
        self.modes.addTab(self.studio, "&Project")
        self.modes.setTabToolTip(1, "The narration studio: a book as segments to render, fix one by one and export")
        self.splitter.addWidget(self.modes)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.setCentralWidget(self.splitter)

        self.model_label = QLabel("No model", self)
        self.load_label = QLabel("", self)
        self.load_label.hide()
        self._load_times: dict[str, float | None] = {}
        self.provider_label = QLabel("", self)
        self.rtf_label = QLabel("", self)
        self.playback_label = QLabel("", self)
        for label in (self.load_label, self.model_label, self.provider_label, self.rtf_label, self.playback_label):
            label.setStyleSheet("padding: 0 8px;")
            self.statusBar().addPermanentWidget(label)

        models = self.menuBar().addMenu("&Models")
        self.choose_model_action = QAction("Choose model…", self)
        models.addAction(self.choose_model_action)
        file_menu = self.menuBar().addMenu("&File")
        self.project_files = ProjectFiles(self, self.studio, file_menu)
        self.export_action = QAction("&Export last result…", self, shortcut=QKeySequence("Ctrl+E"))
        self.export_action.setEnabled(False)
        self.quit_action = QAction("Quit", self, shortcut=QKeySequence.StandardKey.Quit)
        file_menu.addAction(self.export_action)
        file_menu.addAction(self.quit_action)
        self._play_timer = QTimer(self)
        self._play_timer.setInterval(50)

    def _connect_signals(self) -> None:
        self.speak_button.clicked.connect(self._on_speak_clicked)
        self.text.speak_requested.connect(self._on_speak_clicked)
        self.stop_button.clicked.connect(self._on_stop_clicked)
        self.text.stop_requested.connect(self._on_stop_clicked)
        self.export_button.clicked.connect(self._on_export_clicked)
        self.export_action.triggered.connect(self._on_export_clicked)
        self.quit_action.triggered.connect(self.close)
        self.choose_model_action.triggered.connect(self.choose_model)
        self.voice_panel.file_chosen.connect(self.select_voice_file)
        self.voice_panel.library_selected.connect(self._on_library_selected)
        self.voice_panel.default_selected.connect(self._on_default_voice_selected)
        self.voice_panel.record_requested.connect(self.record_voice)
        self.voice_panel.play_requested.connect(self.play_voice)
        self.voice_panel.trim_requested.connect(self.trim_voice)
        self.voice_panel.save_requested.connect(self._on_save_voice)
        self.voice_panel.remove_requested.connect(self._on_remove_voice)
        self.settings_panel.changed.connect(self._on_setting_changed)
        self.history_panel.play_requested.connect(self._on_history_play)
        self.history_panel.export_requested.connect(self._on_history_export)
        self.history_panel.load_requested.connect(self._on_history_load)
        self.history_panel.delete_requested.connect(self._on_history_delete)
        self.history_panel.clear_requested.connect(self._on_history_clear)
        self.voice_panel.undo_requested.connect(self._on_undo_remove_voice)
        self.bridge.model_loaded.connect(self._on_model_loaded)
        self.bridge.model_failed.connect(self._on_model_failed)
        self.bridge.load_progress.connect(self._on_load_progress)
        self.bridge.chunk_ready.connect(self._on_chunk_ready)
        self.bridge.request_finished.connect(self._on_request_finished)
        self.bridge.request_failed.connect(self._on_request_failed)
        self._play_timer.timeout.connect(self._on_play_tick)
        self.studio.changed.connect(self._on_studio_changed)
        self.studio.message.connect(lambda text, error: self.show_message(text, error=error))

    def _restore(self) -> None:
        geometry = self.settings.get(Key.GEOMETRY)
        if isinstance(geometry, QByteArray | bytes):
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 800)
        self._refresh_library()
        self._refresh_history()
        current = self.settings.get(Key.VOICE)
        if current:
            entry = self.library.get(current)
            path = entry.path if entry else Path(current)
            if path.is_file():
                self.select_voice_file(path, name=current if entry else "", quiet=True)
        self._update_voice_panel()
        self.library.empty_trash()  # recordings of voices removed in an earlier session
        self._restore_session()
        self._restore_project()

    # --- models ------------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Load the remembered model, or ask for one."""
        bundle = self.settings.bundle
        if bundle is not None and bundle.is_dir():
            self.load_model(bundle)
        else:
            QTimer.singleShot(0, self.choose_model)

    @Slot()
    def choose_model(self) -> None:
        dialog = ModelDialog(self.paths.models, self, hub=self.hub)
        if dialog.exec() and dialog.chosen is not None:
            self.load_model(self.build_standin() if dialog.chosen == "standin" else Path(dialog.chosen))

    def build_standin(self) -> Path:
        from core.standin import make_standin

        target = self.paths.models / "test-model"
        if not (target / "standin.json").is_file():
            self.show_message("Building the test model…", error=False)
            make_standin(target, "original", "tiny")
        return target

    def runtime_options(self) -> RuntimeOptions:
        """The settings' switches, with the conditioning cache in this app's cache folder."""
        return replace(self.settings.runtime_options(), cache_dir=self.paths.conditioning,
                       costs_dir=decoder_costs_dir(self.paths.cache))  # fmt: skip

    def load_model(self, bundle: Path) -> None:
        self.model_label.setText(f"Loading {bundle.name}…")
        self._load_times = {}
        self.speak_button.setEnabled(False)
        self.bridge.load(bundle, self.runtime_options())

    @Slot(object)
    def _on_model_loaded(self, event) -> None:
        self.settings.set(Key.BUNDLE, str(event.bundle))
        caps = event.capabilities
        self.model_label.setText(f"{caps.variant.capitalize()} · {event.bundle.name} · LM {caps.lm_precision}")
        providers = sorted(set(caps.providers.values()))
        self.provider_label.setText("on " + " + ".join(p.upper() for p in providers))
        self.provider_label.setToolTip("\n".join(f"{g}: {p}" for g, p in caps.providers.items()))
        self.settings_panel.set_capabilities(caps)
        self.speak_button.setEnabled(True)
        self._update_voice_panel()
        self.text.set_tags(caps.tags)  # the Insert tag menu, and unknown tags flagged while typing
        if not usability.show_model_notice(self, event):  # a closed provider notice is not shown again
            self.hide_message()
        self._offer_voice_for_turbo()

    @Slot(str, object)
    def _on_load_progress(self, graph: str, seconds) -> None:
        """Per-graph load progress in the status bar; the decoder may finish after the model is usable."""
        self._load_times[graph] = seconds
        parts = [f"{GRAPH_NAMES.get(g, g)} {'…' if s is None else f'✓ {s:.1f} s'}" for g, s in self._load_times.items()]
        self.load_label.setText("Loading: " + " · ".join(parts))
        self.load_label.setVisible(any(s is None for s in self._load_times.values()))
        if not self.load_label.isVisible():
            self.model_label.setToolTip("Load times: " + ", ".join(parts))

    @Slot(str)
    def _on_model_failed(self, message: str) -> None:
        self.load_label.hide()  # a graph that failed never reports its end
        self.model_label.setText("No model")
        self.speak_button.setEnabled(self.bridge.model is not None)
        self.show_message(message)

    # --- speaking ----------------------------------------------------------------------------------------------
    @Slot()
    def _on_speak_clicked(self) -> None:
        text = self.text.text
        if not text.strip():
            self.show_message("Type some text to speak first.")
            return
        if self.bridge.model is None:
            self.show_message("No model is loaded: choose one in the Models menu.")
            return
        variant = self.bridge.model.variant
        if self.voice is None and not self.bridge.model.capabilities.has_default_voice:
            self.show_message("This model has no built-in voice: drop a recording of 5–10 s of speech on the window.")
            return
        self.hide_message()
        self.player.begin()
        self.waveform.clear_audio()
        self.latency.start_request(describe_settings({k.value: self.settings.get(k) for k in Key}))
        self._chunks = []
        self._awaiting_playback = True
        self._playback_note_shown = False
        self.playback_label.setText("generating…")
        self._speaking(True)
        options = self.settings.synthesis_options(variant)
        if options.seed is None:  # chosen here, so that a result stopped early is kept with its seed too
            options = replace(options, seed=new_seed())
        rid = self.bridge.speak(text, self.voice, options, self.runtime_options())
        self._request = {"rid": rid, **self._history_fields(text, options.seed)}
        self._play_timer.start()

    @Slot()
    def _on_stop_clicked(self) -> None:
        self._save_stopped()
        self.bridge.cancel()
        self.player.stop()
        self.player.end_of_input()
        if self._chunks:
            self.last_audio = np.concatenate(self._chunks)
            self.export_button.setEnabled(True)
            self.export_action.setEnabled(True)
        self.playback_label.setText("stopped")
        self._speaking(False, "stopped")

    @Slot(object)
    def _on_chunk_ready(self, chunk) -> None:
        self._chunks.append(chunk.samples)
        if not self.player.feed(chunk.samples) and chunk.samples.size and not self._playback_note_shown:
            self._playback_note_shown = True
            self.show_message(self.player.error or "Audio cannot be played on this computer.", error=False)
        self.waveform.append(chunk.samples)
        if chunk.kind == "speech":
            self.latency.add_chunk(chunk.lm_ms, chunk.decode_ms, chunk.rtf, at_ms=chunk.at_ms)

    @Slot(int, object)
    def _on_request_finished(self, _rid: int, report) -> None:
        self.player.end_of_input()
        self.last_report = report
        self.last_audio = np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.float32)
        t = report.timings
        self.rtf_label.setText(f"RTF {t['rtf']:.2f} · first audio {t['ttfa_ms'] / 1000:.2f} s")
        self.latency.add_request(t["ttfa_ms"], t["step_ms_median"], t["rtf"])
        self.export_button.setEnabled(self.last_audio.size > 0)
        self.export_action.setEnabled(self.last_audio.size > 0)
        for warning in report.warnings:
            self.show_message(describe_notice(warning), error=False)
        request, self._request = self._request, None
        if request is None or request.pop("rid") != _rid:
            request = self._history_fields(report.text, report.seed)
        if self.last_audio.size:
            request["seed"] = report.seed
            timings = {k: round(v, 2) for k, v in t.items()} | {"chunks": self.latency.chunk_rows()}
            entry = self._add_to_history(self.last_audio, request, timings=timings)
            if entry is not None:
                self.latency.name_last_request(entry.id)  # replaying it shows its chunks and marks its point
        self._speaking(False)
        self.request_done.emit(True)

    def _speaking(self, busy: bool, ended: str = "") -> None:
        """The Speak button says that work runs; the status line keeps "stopped" / "failed" until the next Speak."""
        self.speak_button.setText("Speaking…" if busy else "Spea&k")
        self.speak_button.setToolTip("Speaking: press again to start over, Stop (Esc) to stop" if busy
                                     else "Speak the text (Ctrl+Enter)")  # fmt: skip
        self._ended = ended

    @Slot(int, str)
    def _on_request_failed(self, _rid: int, message: str) -> None:
        self.player.end_of_input()
        self.show_message(message)
        self.playback_label.setText("failed")
        self._speaking(False, "failed")
        self.request_done.emit(False)

    @Slot()
    def _on_play_tick(self) -> None:
        p = self.player
        lost = p.check()
        if lost:
            self.show_message(lost, error=False)
        self.waveform.set_playhead(min(p.played, p.queued))  # never past what exists
        played = f"{p.played / SAMPLE_RATE:.1f} s"
        if p.lost:
            text = "audio output lost"
        elif p.error and p.stream is None:
            text = "no audio output"
        elif self._ended:
            text = f"{self._ended} · played {played}"
        elif self.bridge.busy and p.stream is not None and p.played and p.ring.available == 0:
            text = "buffering… (generation is behind playback)"
        elif self.bridge.busy:
            text = f"generating… · played {played}"
        elif p.finished or p.stream is None:
            text = f"finished · played {played}"
        else:
            text = f"playing · {played}"
        self.playback_label.setText(text)
        idle = not self.bridge.busy
        if self._awaiting_playback and idle and (p.finished or p.stream is None):
            self._awaiting_playback = False
            self._play_timer.stop()
            self.playback_finished.emit()

    # --- settings, messages, closing -------------------------------------------------------------------------
    @Slot(object)
    def _on_setting_changed(self, key) -> None:
        if key in SESSION_KEYS and self.bridge.model is not None:
            self.statusBar().showMessage("The model reloads with this setting on the next request.", 4000)

    def show_message(self, text: str, error: bool = True, key: str = "") -> None:
        """In the message bar (closed with its ✕); ``key`` names the message for :attr:`MessageBar.dismissed`."""
        self.message.show_message(text, error=error, key=key)
        log.info("message shown: %s", text)

    def hide_message(self) -> None:
        self.message.hide()

    # --- the studio ------------------------------------------------------------------------------------------
    def project_voice(self) -> str | None:
        """The current voice as a project names it: a library name, a recording's path, or None (the model's)."""
        if self.voice is None:
            return None
        return self.voice_name or self.voice.source

    def show_project(self) -> None:
        self.modes.setCurrentWidget(self.studio)

    def _on_studio_changed(self) -> None:
        project = self.studio.project
        title = "Chatterbox Desk"
        if project is not None:
            title = f"{project.title}{' *' if self.studio.dirty else ''} — {title}"
        self.setWindowTitle(title)
        self.project_files.refresh()

    def _restore_project(self) -> None:
        folder = self.settings.get(Key.PROJECT)
        if folder and is_project(Path(folder)):
            try:
                self.studio.set_project(open_project(Path(folder)))
            except ChatterboxError as exc:
                self.show_message(f"The last project could not be opened: {describe_error(exc)}", error=False)

    def closeEvent(self, event) -> None:
        if not self.project_files.confirm_discard():
            event.ignore()
            return
        if self.studio.rendering is not None:
            self.bridge.cancel()
        self.settings.set(Key.GEOMETRY, self.saveGeometry())
        self.save_draft()
        self.settings.sync()
        self.library.empty_trash()  # removed voices can no longer be restored
        self._play_timer.stop()
        self.player.stop()
        self.api_panel.shutdown()  # the local API's requests are cancelled before the worker stops
        if not self.bridge.shutdown(timeout=5.0):
            log.warning("the inference thread did not stop within 5 s")
        super().closeEvent(event)


def _scrolling(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    return area
