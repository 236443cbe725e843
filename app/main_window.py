"""The main window: text, Speak/Stop, voice, plots, settings, history, models; status bar with what runs where."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import QByteArray, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.audio_io import FORMATS, write_audio
from core.constants import SAMPLE_RATE
from core.errors import ChatterboxError
from core.options import RuntimeOptions
from core.user_dirs import decoder_costs_dir
from core.voice import VoiceReference, load_voice
from core.voice_library import VoiceLibrary

from .audio.playback import Player
from .engine_bridge import EngineBridge
from .history import History
from .paths import AppPaths
from .settings import SESSION_KEYS, Key, Settings
from .widgets.latency_plot import LatencyPlot
from .widgets.model_dialog import ModelDialog
from .widgets.settings_panel import SettingsPanel
from .widgets.text_entry import TextEntry
from .widgets.voice_panel import VoicePanel, dropped_file
from .widgets.waveform_plot import WaveformPlot

log = logging.getLogger(__name__)
GRAPH_NAMES = {"speech_encoder": "voice encoder", "embed_tokens": "embeddings", "language_model": "language model",
               "conditional_decoder": "decoder"}  # fmt: skip


class MainWindow(QMainWindow):
    playback_finished = Signal()
    """The last request's audio has been played to the end (or could not be played)."""
    request_done = Signal(bool)
    """A request ended: True when it produced audio, False when it failed."""

    def __init__(self, settings: Settings, paths: AppPaths, player: Player | None = None,
                 bridge: EngineBridge | None = None, hub=None):  # fmt: skip
        super().__init__()
        self.settings, self.paths, self.hub = settings, paths, hub
        self.player = player or Player()
        self.bridge = bridge or EngineBridge(parent=self)
        self.library = VoiceLibrary(paths.voices)
        self.history = History(paths.history)
        self.voice: VoiceReference | None = None
        self.voice_name = ""
        self.last_audio: np.ndarray | None = None
        self.last_report = None
        self._chunks: list[np.ndarray] = []
        self._awaiting_playback = False
        self._playback_note_shown = False
        self.setWindowTitle("Chatterbox Desk")
        self.setAcceptDrops(True)
        self._build_ui()
        self._connect_signals()
        self._restore()

    # --- construction ------------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.text = TextEntry(self)
        self.speak_button = QPushButton("Speak", self)
        self.speak_button.setToolTip("Speak the text (Ctrl+Enter)")
        self.speak_button.setDefault(True)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setToolTip("Stop synthesis and playback (Esc)")
        self.export_button = QPushButton("Export…", self)
        self.export_button.setEnabled(False)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.hide()
        self.waveform = WaveformPlot(self)
        self.latency = LatencyPlot(self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.speak_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        left = QWidget(self)
        column = QVBoxLayout(left)
        column.addWidget(self.message)
        column.addWidget(self.text, 3)
        column.addLayout(buttons)
        column.addWidget(self.waveform, 2)
        column.addWidget(self.latency, 2)

        self.voice_panel = VoicePanel(self)
        self.settings_panel = SettingsPanel(self.settings, self)
        self.history_list = QListWidget(self)
        self.history_list.setToolTip("Double-click to play again")
        history_tab = QWidget(self)
        history_layout = QVBoxLayout(history_tab)
        history_layout.addWidget(self.history_list)
        self.history_play = QPushButton("Play", self)
        self.history_export = QPushButton("Export…", self)
        row = QHBoxLayout()
        row.addWidget(self.history_play)
        row.addWidget(self.history_export)
        history_layout.addLayout(row)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.voice_panel, "Voice")
        self.tabs.addTab(self.settings_panel, "Settings")
        self.tabs.addTab(history_tab, "History")
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(left)
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
        self.export_action = QAction("Export last result…", self, shortcut=QKeySequence.StandardKey.Save)
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
        self.voice_panel.save_requested.connect(self._on_save_voice)
        self.voice_panel.remove_requested.connect(self._on_remove_voice)
        self.settings_panel.changed.connect(self._on_setting_changed)
        self.history_list.itemDoubleClicked.connect(lambda _item: self._on_history_play())
        self.history_play.clicked.connect(self._on_history_play)
        self.history_export.clicked.connect(self._on_history_export)
        self.bridge.model_loaded.connect(self._on_model_loaded)
        self.bridge.model_failed.connect(self._on_model_failed)
        self.bridge.load_progress.connect(self._on_load_progress)
        self.bridge.chunk_ready.connect(self._on_chunk_ready)
        self.bridge.request_finished.connect(self._on_request_finished)
        self.bridge.request_failed.connect(self._on_request_failed)
        self._play_timer.timeout.connect(self._on_play_tick)

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
        if event.notice:
            self.show_message(event.notice, error=False)
        else:
            self.hide_message()

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

    # --- voice -------------------------------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        path = dropped_file(event)
        if path is not None:
            event.acceptProposedAction()
            self.select_voice_file(path)

    @Slot(Path)
    def select_voice_file(self, path: Path, name: str = "", quiet: bool = False) -> bool:
        """The drop / file-dialog path: check the recording; on a problem, say so and change nothing."""
        try:
            voice = load_voice(path)
        except ChatterboxError as exc:
            if not quiet:
                self.show_message(str(exc))
            return False
        self.voice, self.voice_name = voice, name
        self.settings.set(Key.VOICE, name or str(path))
        self._update_voice_panel()
        if not quiet:
            self.hide_message()
        return True

    def _update_voice_panel(self) -> None:
        if self.voice is None:
            self.voice_panel.show_voice("Default voice", None, saveable=False)
        else:
            title = self.voice_name or Path(self.voice.source).name
            self.voice_panel.show_voice(title, self.voice, saveable=not self.voice_name)

    def _refresh_library(self) -> None:
        self.voice_panel.set_library([v.name for v in self.library.voices()], self.voice_name or None)

    @Slot(str)
    def _on_library_selected(self, name: str) -> None:
        entry = self.library.get(name)
        if entry is None:
            self.show_message(f"The voice “{name}” is no longer in the library (its recording was removed).")
            self._refresh_library()
            return
        self.select_voice_file(entry.path, name=name)

    @Slot()
    def _on_default_voice_selected(self) -> None:
        self.voice, self.voice_name = None, ""
        self.settings.set(Key.VOICE, "")
        self._update_voice_panel()
        self._refresh_library()

    @Slot(str)
    def _on_save_voice(self, name: str) -> None:
        if self.voice is None:
            return
        try:
            entry, voice = self.library.add(name, Path(self.voice.source))
        except (ChatterboxError, OSError) as exc:
            self.show_message(f"Cannot save the voice: {exc}")
            return
        self.voice, self.voice_name = voice, entry.name
        self.settings.set(Key.VOICE, entry.name)
        self._refresh_library()
        self._update_voice_panel()

    @Slot(str)
    def _on_remove_voice(self, name: str) -> None:
        self.library.remove(name)
        if self.voice_name == name:
            self._on_default_voice_selected()
        self._refresh_library()

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
        self.latency.start_request()
        self._chunks = []
        self._awaiting_playback = True
        self._playback_note_shown = False
        self.playback_label.setText("generating…")
        self.bridge.speak(text, self.voice, self.settings.synthesis_options(variant), self.runtime_options())
        self._play_timer.start()

    @Slot()
    def _on_stop_clicked(self) -> None:
        self.bridge.cancel()
        self.player.stop()
        self.player.end_of_input()
        if self._chunks:
            self.last_audio = np.concatenate(self._chunks)
            self.export_button.setEnabled(True)
            self.export_action.setEnabled(True)
        self.playback_label.setText("stopped")

    @Slot(object)
    def _on_chunk_ready(self, chunk) -> None:
        self._chunks.append(chunk.samples)
        if not self.player.feed(chunk.samples) and chunk.samples.size and not self._playback_note_shown:
            self._playback_note_shown = True
            self.show_message(self.player.error or "Audio cannot be played on this computer.", error=False)
        self.waveform.append(chunk.samples)
        if chunk.kind == "speech":
            self.latency.add_chunk(chunk.lm_ms, chunk.decode_ms, chunk.rtf)

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
            self.show_message(warning, error=False)
        if self.last_audio.size:
            try:
                self.history.add(
                    self.last_audio, SAMPLE_RATE, text=report.text, voice=self.voice_name or (
                        Path(self.voice.source).name if self.voice else "default"),
                    variant=self.bridge.model.variant if self.bridge.model else "", seed=report.seed,
                    settings={k.value: self.settings.get(k) for k in Key if k not in (Key.GEOMETRY, Key.SPLITTER)},
                    timings={k: round(v, 2) for k, v in t.items()},
                )  # fmt: skip
                self._refresh_history()
            except (OSError, ChatterboxError) as exc:
                self.show_message(f"The result could not be added to the history: {exc}", error=False)
        self.request_done.emit(True)

    @Slot(int, str)
    def _on_request_failed(self, _rid: int, message: str) -> None:
        self.player.end_of_input()
        self.show_message(message)
        self.playback_label.setText("")
        self.request_done.emit(False)

    @Slot()
    def _on_play_tick(self) -> None:
        p = self.player
        lost = p.check()
        if lost:
            self.show_message(lost, error=False)
        self.waveform.set_playhead(p.played)
        text = f"played {p.played / SAMPLE_RATE:.1f} s · underruns {p.underruns}"
        if p.lost:
            text = "audio output lost"
        elif p.error and p.stream is None:
            text = "no audio output"
        self.playback_label.setText(text)
        idle = not self.bridge.busy
        if self._awaiting_playback and idle and (p.finished or p.stream is None):
            self._awaiting_playback = False
            self._play_timer.stop()
            self.playback_finished.emit()

    # --- results -----------------------------------------------------------------------------------------------
    def _refresh_history(self) -> None:
        self.history_list.clear()
        for entry in self.history.entries:
            self.history_list.addItem(entry.title)

    def _selected_history(self):
        row = self.history_list.currentRow()
        return self.history.entries[row] if 0 <= row < len(self.history.entries) else None

    @Slot()
    def _on_history_play(self) -> None:
        entry = self._selected_history()
        if entry is None:
            return
        audio, _rate = self.history.audio(entry)
        self.bridge.cancel()
        self.player.begin()
        self.waveform.clear_audio()
        self.waveform.append(audio)
        self.player.feed(audio)
        self.player.end_of_input()
        self.last_audio = audio
        self._play_timer.start()

    @Slot()
    def _on_history_export(self) -> None:
        entry = self._selected_history()
        if entry is not None:
            self.export(self.history.audio(entry)[0], default_name=f"{entry.id}.wav")

    @Slot()
    def _on_export_clicked(self) -> None:
        if self.last_audio is not None and self.last_audio.size:
            self.export(self.last_audio)

    def export(self, audio: np.ndarray, default_name: str = "narration.wav", path: Path | None = None) -> bool:
        if path is None:
            filters = ";;".join(f"{fmt.name} (*{suffix})" for suffix, fmt in FORMATS.items())
            chosen, chosen_filter = QFileDialog.getSaveFileName(self, "Export audio", default_name, filters)
            if not chosen:
                return False
            path = Path(chosen)
            if path.suffix.lower() not in FORMATS:  # a typed extension picks the format; none takes the filter's
                path = path.with_name(path.name + chosen_filter[chosen_filter.find("*") + 1 : -1])
        try:
            write_audio(path, audio, SAMPLE_RATE)
        except ChatterboxError as exc:
            self.show_message(str(exc))
            return False
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    # --- settings, messages, closing -------------------------------------------------------------------------
    @Slot(object)
    def _on_setting_changed(self, key) -> None:
        if key in SESSION_KEYS and self.bridge.model is not None:
            self.statusBar().showMessage("The model reloads with this setting on the next request.", 4000)

    def show_message(self, text: str, error: bool = True) -> None:
        color = "#d9534f" if error else "#f0ad4e"
        self.message.setStyleSheet(f"border: 1px solid {color}; border-radius: 4px; padding: 6px;")
        self.message.setText(text)
        self.message.show()
        log.info("message shown: %s", text)

    def hide_message(self) -> None:
        self.message.hide()

    def closeEvent(self, event) -> None:
        self.settings.set(Key.GEOMETRY, self.saveGeometry())
        self.settings.sync()
        self._play_timer.stop()
        self.player.stop()
        if not self.bridge.shutdown(timeout=5.0):
            log.warning("the inference thread did not stop within 5 s")
        super().closeEvent(event)
