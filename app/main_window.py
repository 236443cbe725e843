"""The main window: it builds the panels over their controllers and connects them, with the menus, the tabs and the
status bar (model, providers, speed, playback). What each panel does lives in the panel and its controller:

- :class:`SpeakPanel` (text, Speak/Stop, waveform and latency plots) over :class:`SpeakController`;
- :class:`RevoicePanel` (a recording spoken again in the chosen voice, A/B, export) over :class:`RevoiceController`;
- :class:`StudioPanel` (the narration project) with :class:`ProjectFiles` in the File menu, and its Cast panel (the
  book's characters and their voices) as the last side tab;
- :class:`VoicePanel` (reference recording, library) over :class:`VoiceController`;
- :class:`HistoryPanel` over :class:`HistoryController`; :class:`SettingsPanel` with :class:`ApiPanel` and
  :class:`RenderOnPanel` (this computer or a Ray cluster) in it.

Keyboard use (focus order, Space, Ctrl+O, F1) and the model notices are :mod:`app.usability`.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QScrollArea, QSplitter, QTabWidget, QWidget

from core.engine import ChatterboxError, ModelLoaded, RuntimeOptions, decoder_costs_dir
from core.narration import is_project, open_project
from core.voices import VoiceLibrary
from core.wording import describe_error

from . import usability
from .audio.playback import Player
from .audio_export import AudioExport
from .controllers.history import HistoryController
from .controllers.models import load_progress_text
from .controllers.voices import VoiceController
from .engine_bridge import EngineBridge
from .history import History
from .messages import Messages
from .panels.api_panel import ApiPanel
from .panels.history_panel import HistoryPanel
from .panels.render_on_panel import RenderOnPanel
from .panels.revoice_panel import RevoicePanel
from .panels.settings_panel import SettingsPanel
from .panels.speak_panel import SpeakPanel
from .panels.voice_panel import VoicePanel
from .paths import AppPaths
from .settings import SESSION_KEYS, Key, Settings
from .studio.export_dialog import export_name
from .studio.project_files import ProjectFiles
from .studio.studio_panel import StudioPanel
from .widgets.elided_label import ElidedLabel
from .widgets.guide_dialog import GuideDialog
from .widgets.language_files_dialog import LanguageFilesDialog
from .widgets.message_bar import MessageBar
from .widgets.model_dialog import ModelDialog
from .widgets.shortcuts_dialog import ShortcutsDialog
from .window_placement import fits_screen, place_on_screen

log = logging.getLogger(__name__)
TITLE = "Chatterbox Desk"
PLAYBACK_NOTE_MS = 6000
FINAL_PLAYBACK = ("finished", "stopped", "failed")
"""Playback states that are over: said for :data:`PLAYBACK_NOTE_MS`, then cleared from the status bar."""


class MainWindow(QMainWindow):
    # Added by usability.install: the File menu's voice entry and the Help menu (the guide, the shortcuts).
    open_voice_action: QAction
    shortcuts_action: QAction
    guide_action: QAction
    help_menu: QMenu
    shortcuts_dialog: ShortcutsDialog | None
    guide_dialog: GuideDialog | None

    def __init__(
        self,
        settings: Settings,
        paths: AppPaths,
        player: Player | None = None,
        bridge: EngineBridge | None = None,
        hub: Any = None,
    ) -> None:
        super().__init__()
        self.settings, self.paths, self.hub = settings, paths, hub
        self.player = player or Player()
        self.bridge = bridge or EngineBridge(parent=self)
        self.library = VoiceLibrary(paths.voices)
        self.history = History(paths.history)
        self._load_times: dict[str, float | None] = {}
        self.setWindowTitle(TITLE)
        self.setAcceptDrops(True)
        self.message = MessageBar(self)  # over the bottom of the central area: never pushes the editor down
        self.messages = Messages(self.message, self.statusBar())
        self.exporter = AudioExport(settings, self.messages, self)
        self._build_panels()
        self._build_layout()
        self._build_status_bar()
        self._build_menus()
        self._connect_signals()
        self._restore()
        usability.install(self)  # focus order, Space / Ctrl+O / F1, the Help menu, dismissed notices

    # --- construction ------------------------------------------------------------------------------------------
    def _build_panels(self) -> None:
        self.voice_controller = VoiceController(self.library, self.settings)
        self.history_controller = HistoryController(self.history)
        self.speak_panel = SpeakPanel(
            self.bridge,
            self.player,
            self.settings,
            self.voice_controller,
            self.history_controller,
            self.messages,
            self.exporter,
            self.runtime_options,
            self,
        )
        self.voice_panel = VoicePanel(self.voice_controller, self.messages, self.paths.recordings, self)
        self.revoice_panel = RevoicePanel(
            self.bridge,
            self.player,
            self.settings,
            self.voice_panel,
            self.messages,
            self.exporter,
            self.runtime_options,
            self.paths.recordings,
            self,
        )
        self.settings_panel = SettingsPanel(self.settings, self)
        self.api_panel = ApiPanel(self.bridge.worker, self.library, self, self.settings)  # Settings → Local API
        self.settings_panel.add_section(self.api_panel)
        self.render_on_panel = RenderOnPanel(  # Settings → Render on (this computer, a cluster)
            self.settings, self, cluster_busy=lambda: self.studio_panel.on_cluster
        )
        self.settings_panel.add_section(self.render_on_panel)
        self.history_panel = HistoryPanel(self.history_controller, self.messages, self)
        self.studio_panel = StudioPanel(
            self.bridge, self.player, self.settings, self.runtime_options, self, library=self.library
        )

    def _build_layout(self) -> None:
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.voice_panel, "Voice")
        self.settings_scroll = _scrolling(self.settings_panel)  # tall: it scrolls on small screens
        self.tabs.addTab(self.settings_scroll, "Settings")
        self.tabs.addTab(self.history_panel, "History")
        self.tabs.addTab(self.studio_panel.cast_panel, "Cast")  # last: a remembered tab index keeps its tab
        self.tabs.setTabToolTip(
            self.tabs.count() - 1, "The project's characters: who says each line, and the voice that reads them"
        )
        self.modes = QTabWidget(self)
        self.modes.addTab(self.speak_panel, "&Speak")
        self.modes.addTab(self.studio_panel, "&Project")
        self.modes.setTabToolTip(1, "The narration studio: a book as segments to render, fix one by one and export")
        self.modes.addTab(self.revoice_panel, "Re-vo&ice")  # after Project: a remembered tab index keeps its tab
        self.modes.setTabToolTip(2, "A recording spoken again in another voice: same words and timing, new voice")
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.modes)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.setCentralWidget(self.splitter)

    def _build_status_bar(self) -> None:
        # Elided labels: a long model name or work status shortens (whole in its tooltip), never widens the window.
        self.model_label = ElidedLabel("No model", self)
        self.load_label = ElidedLabel("", self)
        self.load_label.hide()
        self.provider_label = ElidedLabel("", self)
        self.rtf_label = ElidedLabel("", self)
        self.playback_label = ElidedLabel("", self)
        self.work_label = ElidedLabel("", self)  # what the inference thread runs and what waits (the API's too)
        labels = (self.work_label, self.load_label, self.model_label, self.provider_label, self.rtf_label)
        for label in (*labels, self.playback_label):
            label.setContentsMargins(8, 0, 8, 0)
            self.statusBar().addPermanentWidget(label, 1 if label is self.work_label else 0)

        # A finished or stopped playback is said for a few seconds, then cleared: the status bar never shows a
        # playback that is long over (or the Speak panel's while the studio plays).
        self._playback_expiry = QTimer(self)
        self._playback_expiry.setSingleShot(True)
        self._playback_expiry.setInterval(PLAYBACK_NOTE_MS)
        self._playback_expiry.timeout.connect(self._expire_playback_status)
        self._playback_shown = ""
        self._playback_expired: str | None = None

    @Slot(str)
    def _on_playback_status(self, text: str) -> None:
        if text in (self._playback_shown, self._playback_expired):
            return  # the playback timer repeats the same words: an expired final state stays cleared
        self._playback_shown, self._playback_expired = text, None
        self.playback_label.setText(text)
        if text.startswith(FINAL_PLAYBACK):
            self._playback_expiry.start()
        else:
            self._playback_expiry.stop()

    @Slot()
    def _expire_playback_status(self) -> None:
        self._playback_expired, self._playback_shown = self._playback_shown, ""
        self.playback_label.setText("")

    def _build_menus(self) -> None:
        models = self.menuBar().addMenu("&Models")
        self.choose_model_action = QAction("Choose model…", self)
        models.addAction(self.choose_model_action)
        self.language_files_action = QAction("&Language files…", self)
        self.language_files_action.setToolTip("The 23 languages' text steps and files; download Chinese and Russian")
        models.addAction(self.language_files_action)
        file_menu = self.menuBar().addMenu("&File")
        self.project_files = ProjectFiles(
            self.studio_panel,
            file_menu,
            self.settings,
            self.library,
            self.messages,
            self,
            self.voice_controller.project_voice,
            self._editor_text,
            self.show_project,
        )
        self.export_action = QAction("&Export last result…", self, shortcut=QKeySequence("Ctrl+E"))
        self.export_action.setEnabled(False)
        self.quit_action = QAction("Quit", self, shortcut=QKeySequence(QKeySequence.StandardKey.Quit))
        file_menu.addAction(self.export_action)
        file_menu.addAction(self.quit_action)

    def _connect_signals(self) -> None:
        self.export_action.triggered.connect(self.export_last)
        self.quit_action.triggered.connect(self.close)
        self.choose_model_action.triggered.connect(self.choose_model)
        self.language_files_action.triggered.connect(self.show_language_files)
        speak = self.speak_panel
        speak.export_available.connect(self._update_export_action)
        speak.playback_status.connect(self._on_playback_status)
        speak.timing_status.connect(self.rtf_label.setText)
        revoice = self.revoice_panel
        revoice.export_available.connect(self._update_export_action)
        revoice.playback_status.connect(self._on_playback_status)
        revoice.timing_status.connect(self.rtf_label.setText)
        self.voice_panel.play_requested.connect(speak.play_reference)
        self.settings_panel.changed.connect(self._on_setting_changed)
        self.render_on_panel.changed.connect(self.studio_panel.render_on_changed)
        self.history_panel.play_requested.connect(self.replay_history)
        self.history_panel.export_requested.connect(self.export_history)
        self.history_panel.load_requested.connect(self.load_history)
        self.bridge.model_loaded.connect(self._on_model_loaded)
        self.bridge.model_failed.connect(self._on_model_failed)
        self.bridge.load_progress.connect(self._on_load_progress)
        self.bridge.work_changed.connect(self.work_label.setText)
        self.studio_panel.changed.connect(self._on_studio_changed)
        self.studio_panel.message.connect(self._on_studio_message)
        self.studio_panel.show_cast_requested.connect(self.show_cast)
        self.studio_panel.cast_panel.show_lines.connect(lambda _name: self.modes.setCurrentWidget(self.studio_panel))

    def show_cast(self) -> None:
        """The Cast side tab, beside the studio."""
        self.tabs.setCurrentWidget(self.studio_panel.cast_panel)

    def _restore(self) -> None:
        geometry = self.settings.get(Key.GEOMETRY)
        restored = isinstance(geometry, QByteArray | bytes) and self.restoreGeometry(geometry)
        if not restored or not fits_screen(self):
            place_on_screen(self)  # first start, or a remembered place that is off this screen or too large for it
        self.voice_panel.restore()
        self.history_panel.refresh()
        self.library.empty_trash()  # recordings of voices removed in an earlier session
        self._restore_session()
        self._restore_project()

    def _restore_session(self) -> None:
        """The typed text and the selected tabs come back as they were; the text is saved as it changes."""
        self.speak_panel.text.set_text(self.settings.get(Key.TEXT) or "")
        for tabs, key in ((self.tabs, Key.TAB), (self.modes, Key.MODE)):
            index = self.settings.get(key)
            if 0 <= index < tabs.count():
                tabs.setCurrentIndex(index)
        self.tabs.currentChanged.connect(self._on_side_tab_changed)
        self.modes.currentChanged.connect(self._on_mode_changed)
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(1500)
        self._draft_timer.timeout.connect(self.save_draft)
        self.speak_panel.text.editor.textChanged.connect(self._draft_timer.start)

    def _restore_project(self) -> None:
        folder = self.settings.get(Key.PROJECT)
        if not folder:
            return
        if not is_project(Path(folder)):  # moved, renamed or deleted since the last session
            self.show_message(
                f"The last project, {folder}, is no longer there (moved, renamed or deleted). "
                "Open it from its new place with File → Open project.",
                error=False,
            )
            self.settings.set(Key.PROJECT, "")
            return
        try:
            self.studio_panel.set_project(open_project(Path(folder)))
        except ChatterboxError as exc:
            self.show_message(f"The last project could not be opened: {describe_error(exc)}", error=False)

    @Slot(int)
    def _on_side_tab_changed(self, index: int) -> None:
        self.settings.set(Key.TAB, index)

    @Slot(int)
    def _on_mode_changed(self, index: int) -> None:
        self.settings.set(Key.MODE, index)
        self._update_export_action()

    def _update_export_action(self, _available: bool = False) -> None:
        """File → Export last result exports the Re-voice tab's audio while it shows, else the last Speak's."""
        if self.modes.currentWidget() is self.revoice_panel:
            self.export_action.setEnabled(self.revoice_panel.export_button.isEnabled())
        else:
            self.export_action.setEnabled(self.speak_panel.export_button.isEnabled())

    @Slot()
    def export_last(self) -> None:
        if self.modes.currentWidget() is self.revoice_panel:
            self.revoice_panel.export_converted()
        else:
            self.speak_panel.export_last()

    def save_draft(self) -> None:
        """Keep the typed text (a moment after each change, and on closing)."""
        self._draft_timer.stop()
        text = self.speak_panel.text.text
        if text != self.settings.get(Key.TEXT):
            self.settings.set(Key.TEXT, text)

    def _editor_text(self) -> str:
        return self.speak_panel.text.text

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
            chosen = str(dialog.chosen)
            if chosen.startswith("standin"):
                self.load_model(self.build_standin(chosen.partition(":")[2] or "original"))
            else:
                self.load_model(Path(chosen))

    @Slot()
    def show_language_files(self) -> LanguageFilesDialog:
        """Models → Language files; the Chinese table goes into the open model's folder when it is Multilingual."""
        model = self.bridge.model
        bundle = model.bundle if model is not None and model.capabilities.variant == "multilingual" else None
        dialog = LanguageFilesDialog(bundle, self.paths.models, self, hub=self.hub)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def build_standin(self, variant: str = "original") -> Path:
        """The offline test model of ``variant`` (the Original one keeps its first folder name, ``test-model``)."""
        from core.standin import make_standin

        target = self.paths.models / ("test-model" if variant == "original" else f"test-model-{variant}")
        if not (target / "standin.json").is_file():
            self.statusBar().showMessage(f"Building the {variant.capitalize()} test model…", 10000)
            make_standin(target, variant, "tiny")
            self.statusBar().clearMessage()  # done: the note must not stay behind
        return target

    def runtime_options(self) -> RuntimeOptions:
        """The settings' switches, with the conditioning cache in this app's cache folder."""
        return replace(
            self.settings.runtime_options(),
            cache_dir=self.paths.conditioning,
            costs_dir=decoder_costs_dir(self.paths.cache),
        )

    def load_model(self, bundle: Path) -> None:
        self.model_label.setText(f"Loading {bundle.name}…")
        self._load_times = {}
        self.speak_panel.model_loading()
        self.revoice_panel.model_loading()
        self.bridge.load(bundle, self.runtime_options())

    @Slot(object)
    def _on_model_loaded(self, event: ModelLoaded) -> None:
        self.settings.set(Key.BUNDLE, str(event.bundle))
        caps = event.capabilities
        self.model_label.setText(f"{caps.variant.capitalize()} · {event.bundle.name} · LM {caps.lm_precision}")
        providers = sorted(set(caps.providers.values()))
        self.provider_label.setText("on " + " + ".join(p.upper() for p in providers))
        self.provider_label.setToolTip("\n".join(f"{g}: {p}" for g, p in caps.providers.items()))
        self.settings_panel.set_capabilities(caps)
        self.speak_panel.model_loaded(caps)
        self.revoice_panel.model_loaded(caps)
        self.voice_panel.set_model(event)
        if not usability.show_model_notice(self, event):  # a closed provider notice is not shown again
            self.hide_message()
        if self.voice_panel.offer_recording():  # first start with a model that has no built-in voice
            self.tabs.setCurrentWidget(self.voice_panel)

    @Slot(str, object)
    def _on_load_progress(self, graph: str, seconds: float | None) -> None:
        """Per-graph load progress in the status bar; the decoder may finish after the model is usable."""
        self._load_times[graph] = seconds
        text = load_progress_text(self._load_times)
        self.load_label.setText("Loading: " + text)
        self.load_label.setVisible(any(s is None for s in self._load_times.values()))
        if not self.load_label.isVisible():
            self.model_label.setToolTip("Load times: " + text)

    @Slot(str)
    def _on_model_failed(self, message: str) -> None:
        self.load_label.hide()  # a graph that failed never reports its end
        self.model_label.setText("No model")
        self.speak_panel.model_failed()
        self.revoice_panel.model_failed()
        self.show_message(message)

    # --- the history: routed to the panels that play, export and edit ------------------------------------------
    @Slot(str)
    def replay_history(self, entry_id: str) -> None:
        entry = self.history_panel.selected(entry_id)
        audio = self._history_audio(entry) if entry is not None else None
        if entry is not None and audio is not None:
            self.speak_panel.replay(entry, audio)

    @Slot(str)
    def export_history(self, entry_id: str) -> None:
        entry = self.history_panel.selected(entry_id)
        audio = self._history_audio(entry) if entry is not None else None
        if entry is not None and audio is not None:
            self.exporter.export(audio, default_name=export_name(entry.text))

    def _history_audio(self, entry: Any) -> Any:
        try:
            return self.history_controller.audio(entry)
        except (OSError, RuntimeError) as exc:  # soundfile's errors are RuntimeErrors
            self.show_message(f"The audio of this result cannot be read: {describe_error(exc)}")
            return None

    @Slot(str)
    def load_history(self, entry_id: str) -> None:
        """Put a result's text back into the editor, with its voice and seed where they can still be used."""
        entry = self.history_panel.selected(entry_id)
        if entry is None:
            return
        plan = self.history_controller.load_back(entry, self.library)
        self.modes.setCurrentWidget(self.speak_panel)
        self.speak_panel.text.set_text(plan.text)
        done = ["text"]
        if plan.library_voice is not None:
            if self.voice_panel.select_library_voice(plan.library_voice):
                done.append(f"voice “{plan.library_voice}”")
        elif plan.recording is not None:
            if self.voice_panel.select_file(plan.recording):
                done.append(f"voice “{plan.recording.name}”")
        elif plan.default_voice:
            self.voice_panel.use_default_voice()
            done.append("the default voice")
        if plan.seed:
            self.settings.set(Key.RANDOM_SEED, False)
            self.settings.set(Key.SEED, plan.seed)
            self.settings_panel.load()
            done.append(f"seed {plan.seed} (Random seed is now off)")
        self.statusBar().showMessage("Loaded the " + ", ".join(done) + ".", 8000)
        self.speak_panel.text.editor.setFocus()

    # --- settings, messages, the studio ------------------------------------------------------------------------
    @Slot(object)
    def _on_setting_changed(self, key: Key) -> None:
        if key in SESSION_KEYS and self.bridge.model is not None:
            self.statusBar().showMessage("The model reloads with this setting on the next request.", 4000)

    def show_message(self, text: str, error: bool = True, key: str = "") -> None:
        """In the message bar (closed with its ✕); ``key`` names the message for :attr:`MessageBar.dismissed`."""
        self.messages.show(text, error=error, key=key)

    def hide_message(self) -> None:
        self.messages.hide()

    @Slot(str, bool)
    def _on_studio_message(self, text: str, error: bool) -> None:
        self.show_message(text, error=error)

    def show_project(self) -> None:
        self.modes.setCurrentWidget(self.studio_panel)

    def _on_studio_changed(self) -> None:
        project = self.studio_panel.project
        title = TITLE
        if project is not None:
            title = f"{project.title}{' *' if self.studio_panel.dirty else ''} — {title}"
        self.setWindowTitle(title)
        self.project_files.refresh()

    def toggle_playback(self) -> str:
        """Space: the studio's Play / Pause / Resume in the Project view, the Re-voice tab's in its view, else the
        Speak panel's playback."""
        if self.modes.currentWidget() is self.studio_panel:
            return self.studio_panel.toggle_from_key()
        if self.modes.currentWidget() is self.revoice_panel:
            return self.revoice_panel.toggle_playback()
        return self.speak_panel.toggle_playback()

    # --- drops and closing -------------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        self.voice_panel.dragEnterEvent(event)  # a recording dropped anywhere on the window is the voice panel's

    def dropEvent(self, event: QDropEvent) -> None:
        self.voice_panel.dropEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.project_files.confirm_discard():
            event.ignore()
            return
        if self.studio_panel.rendering is not None:
            self.bridge.cancel_render()
        self.studio_panel.shutdown()  # an export is cancelled and waited for; the project's lock is given back
        self.settings.set(Key.GEOMETRY, self.saveGeometry())
        self.save_draft()
        self.settings.sync()
        self.library.empty_trash()  # removed voices can no longer be restored
        self.speak_panel.stop_playback_timer()
        self.speak_panel.spoken_words.close()  # a sentence being aligned is finished, later ones are dropped
        self.revoice_panel.shutdown()
        self.player.stop()
        self.api_panel.shutdown()  # the local API's requests are cancelled before the worker stops
        self.render_on_panel.shutdown()
        if not self.bridge.shutdown(timeout=5.0):
            log.warning("the inference thread did not stop within 5 s")
        super().closeEvent(event)


def _scrolling(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    return area
