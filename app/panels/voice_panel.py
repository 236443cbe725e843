"""The Voice tab: the current reference (length, rate, warnings), a file picker, drops, recording and trimming, and
the voice library (save, switch, remove with undo). The choice itself lives in :class:`VoiceController`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.engine import ChatterboxError, ModelLoaded, VoiceReference
from core.voices import AUDIO_SUFFIXES
from core.wording import describe_error, describe_notice

from ..controllers.voices import VoiceController, has_default_voice
from ..messages import Messages
from ..widgets.message_bar import warning_label_style
from ..widgets.record_dialog import RecordDialog, TrimDialog
from ..widgets.voice_picker import GENDER_WORDS, VoiceLibraryList, item_name

AUDIO_FILTER = "Audio (*.wav *.flac *.ogg *.mp3 *.aiff *.aif);;All files (*)"
NEEDS_RECORDING = (
    "This model (Turbo) has no built-in voice: it needs a recording of the voice to clone. Record 10 s "
    "of speech (Voice → Record…) or choose a recording of 5–10 s of clean speech (Ctrl+O)."
)


class VoicePanel(QGroupBox):
    play_requested = Signal(object)
    """Listen to the reference (a :class:`VoiceReference`): the Speak panel plays it."""
    voice_changed = Signal()
    """The voice in use or the library changed (the Re-voice tab's :class:`VoicePicker` shows the same choice)."""

    def __init__(
        self, controller: VoiceController, messages: Messages, recordings: Path, parent: QWidget | None = None
    ) -> None:
        super().__init__("Reference voice", parent)
        self.controller, self.messages, self.recordings = controller, messages, recordings
        self.model: ModelLoaded | None = None
        self.input_device: Any = None
        """The ``sounddevice`` module for recording (tests inject a fake microphone)."""
        self.setAcceptDrops(True)
        self._build_ui()
        self._connect_signals()

    @property
    def voice(self) -> VoiceReference | None:
        return self.controller.voice

    @property
    def voice_name(self) -> str:
        return self.controller.name

    def _build_ui(self) -> None:
        self.name = QLabel("Default voice", self)
        self.name.setStyleSheet("font-weight: 600;")
        self.details = QLabel("Drop a recording here (5–10 s of clean speech) or choose a file.", self)
        self.details.setWordWrap(True)
        self.warning = QLabel(self)
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet(warning_label_style())  # dark text on light amber: readable in any theme
        self.warning.hide()
        self.choose = QPushButton("&Choose file…", self)
        self.choose.setToolTip("Choose a reference recording (Ctrl+O)")
        self.use_default = QPushButton("&Default voice", self)
        self.record = QPushButton("● Rec&ord…", self)
        self.record.setToolTip("Record 10 s of your voice from the microphone")
        self.play = QPushButton("▶ P&lay", self)
        self.play.setToolTip("Listen to the reference recording")
        self.trim = QPushButton("&Trim…", self)
        self.trim.setToolTip("Keep only part of the recording (saved as a new recording)")
        self.save = QPushButton("Save to &library…", self)
        self.save.setEnabled(False)
        self.library = VoiceLibraryList(self)
        self.library.setToolTip("Your saved voices: click one to use it; right-click to say whose voice it is")
        self.library.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.remove = QPushButton("&Remove", self)
        self.remove.setEnabled(False)
        self.removed_label = QLabel(self)
        self.removed_label.setWordWrap(True)
        self.undo = QPushButton("Undo", self)
        self.undo.setToolTip("Put the removed voice back into the library")
        # Two short rows rather than one long one: the side panel stays narrow enough for a 1024×600 screen at 150 %.
        buttons = QHBoxLayout()
        for b in (self.choose, self.record):
            buttons.addWidget(b)
        buttons.addStretch(1)
        listen = QHBoxLayout()
        for b in (self.play, self.trim, self.use_default):
            listen.addWidget(b)
        listen.addStretch(1)
        lib_buttons = QHBoxLayout()
        lib_buttons.addWidget(self.save)
        lib_buttons.addWidget(self.remove)
        layout = QVBoxLayout(self)
        layout.addWidget(self.name)
        layout.addWidget(self.details)
        layout.addWidget(self.warning)
        layout.addLayout(buttons)
        layout.addLayout(listen)
        layout.addWidget(QLabel("Library", self))
        layout.addWidget(self.library, 1)
        layout.addLayout(lib_buttons)
        undo_row = QHBoxLayout()
        undo_row.addWidget(self.removed_label, 1)
        undo_row.addWidget(self.undo)
        layout.addLayout(undo_row)
        self.show_undo("")

    def _connect_signals(self) -> None:
        self.choose.clicked.connect(self.choose_file)
        self.use_default.clicked.connect(self.use_default_voice)
        self.record.clicked.connect(self.record_voice)
        self.play.clicked.connect(self._on_play_clicked)
        self.trim.clicked.connect(self.trim_voice)
        self.library.chosen.connect(self.choose_voice)
        self.library.currentItemChanged.connect(self._on_library_current_changed)
        self.library.customContextMenuRequested.connect(self._library_menu)
        self.save.clicked.connect(self._on_save_clicked)
        self.remove.clicked.connect(self._on_remove_clicked)
        self.undo.clicked.connect(self.undo_remove)

    # --- choosing a voice ----------------------------------------------------------------------------------------
    def restore(self) -> None:
        """The library, and the voice of the last session when its recording is still there."""
        self.refresh_library()
        remembered = self.controller.remembered()
        if remembered is not None:
            self.select_file(remembered[0], name=remembered[1], quiet=True)
        self.refresh_voice()

    @Slot(Path)
    def select_file(self, path: Path, name: str = "", quiet: bool = False) -> bool:
        """A dropped or chosen recording: check it; on a problem, say so and change nothing."""
        try:
            self.controller.select_file(path, name)
        except ChatterboxError as exc:
            if not quiet:
                self.messages.show(describe_error(exc))
            return False
        self.refresh_voice()
        if not quiet:
            self.messages.hide()
        return True

    @Slot(str, str)
    def choose_voice(self, kind: str, value: str = "") -> None:
        """A voice picker's choice (:class:`VoiceChoice`): the default voice, a library voice or a file asked for."""
        if kind == "default":
            self.use_default_voice()
        elif kind == "library":
            self.select_library_voice(value)
        elif kind == "choose":
            self.choose_file()

    @Slot(str)
    def select_library_voice(self, name: str) -> bool:
        entry = self.controller.get(name)
        if entry is None:
            self.messages.show(f"The voice “{name}” is no longer in the library (its recording was removed).")
            self.refresh_library()
            return False
        return self.select_file(entry.path, name=name)

    @Slot()
    def use_default_voice(self) -> None:
        self.controller.use_default()
        self.refresh_voice()
        self.refresh_library()

    @Slot()
    def record_voice(self) -> bool:
        """Record a reference from the microphone (the dialog checks the level and trims); select it."""
        dialog = RecordDialog(self.recordings, self.input_device, self.window())
        if dialog.exec() and dialog.path is not None:
            return self.select_file(dialog.path)
        return False

    @Slot()
    def trim_voice(self) -> bool:
        voice = self.controller.voice
        if voice is None:
            return False
        name = self.controller.name or Path(voice.source).stem
        dialog = TrimDialog(voice.samples, self.recordings, name, self.window())
        if dialog.exec() and dialog.path is not None:
            return self.select_file(dialog.path)
        return False

    def set_model(self, model: ModelLoaded | None) -> None:
        """The loaded model: Turbo ships no built-in voice, so its panel offers none."""
        self.model = model
        self.refresh_voice()

    def offer_recording(self) -> bool:
        """A model without a built-in voice and no recording chosen: say a recording is needed (True when said)."""
        if not self.controller.needs_recording(self.model):
            return False
        self.messages.show(NEEDS_RECORDING, error=False)
        return True

    # --- the library -------------------------------------------------------------------------------------------
    @Slot(str)
    def save_voice(self, name: str) -> None:
        try:
            saved = self.controller.save(name)
        except (ChatterboxError, OSError) as exc:
            self.messages.show(f"Cannot save the voice: {describe_error(exc)}")
            return
        if saved:
            self.refresh_library()
            self.refresh_voice()

    @Slot(str)
    def remove_voice(self, name: str) -> None:
        """Remove a library voice (asked first); its recording waits in the trash so Undo can restore it."""
        try:
            self.controller.remove(name)
        except OSError as exc:
            self.messages.show(f"Cannot remove the voice: {describe_error(exc)}")
            return
        self.refresh_voice()
        self.refresh_library()
        self.show_undo(self.controller.undo_text())

    @Slot()
    def undo_remove(self) -> None:
        name = self.controller.last_removed()
        try:
            restored = self.controller.undo()
        except (OSError, ChatterboxError) as exc:
            self.messages.show(f"The voice “{name}” cannot be restored: {describe_error(exc)}")
            restored = None
        if restored is not None:
            entry, was_current = restored
            if was_current:
                self.select_file(entry.path, name=entry.name, quiet=True)
            self.messages.note(f"Restored the voice “{entry.name}”.", 4000)
        self.refresh_library()
        self.show_undo(self.controller.undo_text())

    # --- display -----------------------------------------------------------------------------------------------
    def refresh_voice(self) -> None:
        has_default = has_default_voice(self.model)
        self.set_default_available(has_default)
        voice = self.controller.voice
        self.show_voice(
            self.controller.title(has_default), voice, saveable=voice is not None and not self.controller.name
        )
        self.library.select(self.controller.name or None)
        self.voice_changed.emit()

    def refresh_library(self) -> None:
        self.library.show_choices(self.controller.choices(has_default_voice(self.model)))
        self.voice_changed.emit()

    def gender_menu(self, name: str) -> QMenu:
        """Whose voice ``name`` is: a man's, a woman's, or not said (the one it is now checked)."""
        entry = self.controller.get(name)
        current = entry.gender if entry is not None else None
        menu = QMenu(self)
        for gender in ("m", "f", None):
            action = menu.addAction(GENDER_WORDS[gender].capitalize())
            action.setCheckable(True)
            action.setChecked(gender == current)
            action.triggered.connect(lambda _=False, g=gender: self.set_gender(name, g))
        return menu

    def set_gender(self, name: str, gender: str | None) -> bool:
        try:
            self.controller.set_gender(name, gender)
        except (OSError, KeyError) as exc:
            self.messages.show(f"Cannot change the voice “{name}”: {describe_error(exc)}")
            return False
        self.refresh_library()
        return True

    def _library_menu(self, position) -> None:
        item = self.library.itemAt(position)
        if item is not None:
            self.gender_menu(item_name(item)).exec(self.library.viewport().mapToGlobal(position))

    def show_undo(self, text: str) -> None:
        """``"Removed “X”."`` beside an Undo button; empty hides both."""
        self.removed_label.setText(text)
        self.removed_label.setVisible(bool(text))
        self.undo.setVisible(bool(text))

    def suggested_name(self) -> str:
        """The name the save prompt offers: the title without an audio file's extension."""
        title = self.name.text().strip()
        path = Path(title)
        return path.stem if path.suffix.lower() in AUDIO_SUFFIXES and path.stem else title

    def set_default_available(self, available: bool) -> None:
        """Turbo ships no built-in voice: its panel does not offer one."""
        self.use_default.setVisible(available)

    def show_voice(self, title: str, voice: VoiceReference | None, saveable: bool) -> None:
        self.name.setText(title)
        self.play.setEnabled(voice is not None)
        self.trim.setEnabled(voice is not None)
        if voice is None and not self.use_default.isVisible() and title == "No voice":
            self.details.setText(
                "This model has no built-in voice: record 10 s of speech or choose a recording "
                "(5–10 s of clean speech)."
            )
            self.warning.hide()
        elif voice is None:
            self.details.setText("The model's built-in voice.")
            self.warning.hide()
        else:
            channels = "mono" if voice.channels == 1 else f"{voice.channels} channels, mixed to mono"
            self.details.setText(f"{voice.duration_s:.1f} s · {voice.source_rate:,} Hz · {channels}")
            self.warning.setText("\n".join(describe_notice(w) or "" for w in voice.warnings))
            self.warning.setVisible(bool(voice.warnings))
        self.save.setEnabled(saveable)

    @Slot()
    def choose_file(self) -> None:
        """Ask for a recording, check and select it (Ctrl+O, the Choose file… button)."""
        path, _ = QFileDialog.getOpenFileName(self, "Choose a reference recording", "", AUDIO_FILTER)
        if path:
            self.select_file(Path(path))

    @Slot()
    def _on_play_clicked(self) -> None:
        if self.controller.voice is not None:
            self.play_requested.emit(self.controller.voice)

    def _on_library_current_changed(self, current: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        self.remove.setEnabled(current is not None)

    @Slot()
    def _on_save_clicked(self) -> None:
        name, ok = QInputDialog.getText(self, "Save voice", "Name for this voice:", text=self.suggested_name())
        if ok and name.strip():
            self.save_voice(name.strip())

    @Slot()
    def _on_remove_clicked(self) -> None:
        item = self.library.currentItem()
        if item is None:
            return
        answer = QMessageBox.question(
            self,
            "Remove voice",
            f"Remove “{item_name(item)}” from the library? Its saved recording is deleted when the app closes; "
            "until then, Undo brings it back.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.remove_voice(item_name(item))

    # Drops on the panel; the main window accepts drops anywhere and routes them to :meth:`select_file` too.
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        path = dropped_file(event)
        if path is not None:
            event.acceptProposedAction()
            self.select_file(path)


def dropped_file(event: QDropEvent) -> Path | None:
    urls = [u for u in event.mimeData().urls() if u.isLocalFile()] if event.mimeData().hasUrls() else []
    return Path(urls[0].toLocalFile()) if urls else None
