"""The voice panel: the current reference (length, rate, warnings), a file picker, drops, and the voice library."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
)

from core.engine import VoiceReference
from core.voices import AUDIO_SUFFIXES
from core.wording import describe_notice

from .message_bar import warning_label_style

AUDIO_FILTER = "Audio (*.wav *.flac *.ogg *.mp3 *.aiff *.aif);;All files (*)"


class VoicePanel(QGroupBox):
    file_chosen = Signal(Path)
    """A file was picked or dropped: the window checks and selects it."""
    library_selected = Signal(str)
    default_selected = Signal()
    save_requested = Signal(str)
    remove_requested = Signal(str)
    """The user confirmed removing a library voice."""
    undo_requested = Signal()
    """Bring back the last removed voice."""
    record_requested = Signal()
    play_requested = Signal()
    trim_requested = Signal()

    def __init__(self, parent=None):
        super().__init__("Reference voice", parent)
        self.setAcceptDrops(True)
        self._build_ui()
        self._connect_signals()

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
        self.library = QListWidget(self)
        self.library.setToolTip("Your saved voices: click one to use it")
        self.remove = QPushButton("&Remove", self)
        self.remove.setEnabled(False)
        self.removed_label = QLabel(self)
        self.removed_label.setWordWrap(True)
        self.undo = QPushButton("Undo", self)
        self.undo.setToolTip("Put the removed voice back into the library")
        buttons = QHBoxLayout()
        for b in (self.choose, self.record, self.use_default):
            buttons.addWidget(b)
        listen = QHBoxLayout()
        for b in (self.play, self.trim):
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
        self.use_default.clicked.connect(self.default_selected.emit)
        self.record.clicked.connect(self.record_requested.emit)
        self.play.clicked.connect(self.play_requested.emit)
        self.trim.clicked.connect(self.trim_requested.emit)
        self.library.itemClicked.connect(lambda item: self.library_selected.emit(item.text()))
        self.library.currentItemChanged.connect(lambda cur, _prev: self.remove.setEnabled(cur is not None))
        self.save.clicked.connect(self._on_save_clicked)
        self.remove.clicked.connect(self._on_remove_clicked)
        self.undo.clicked.connect(self.undo_requested.emit)

    def set_library(self, names: list[str], current: str | None = None) -> None:
        self.library.clear()
        for name in names:
            self.library.addItem(QListWidgetItem(name))
        self.select_current(current)

    def select_current(self, name: str | None) -> None:
        """Highlight the library voice in use (none for the default voice or a file outside the library)."""
        matches = self.library.findItems(name, Qt.MatchFlag.MatchExactly) if name else []
        if matches:
            self.library.setCurrentItem(matches[0])
            self.library.scrollToItem(matches[0])
        else:
            self.library.setCurrentItem(None)
            self.library.clearSelection()

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
            self.details.setText("This model has no built-in voice: record 10 s of speech or choose a recording "
                                 "(5–10 s of clean speech).")  # fmt: skip
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
        """Ask for a recording; the window checks and selects it (Ctrl+O, the Choose file… button)."""
        path, _ = QFileDialog.getOpenFileName(self, "Choose a reference recording", "", AUDIO_FILTER)
        if path:
            self.file_chosen.emit(Path(path))

    @Slot()
    def _on_save_clicked(self) -> None:
        name, ok = QInputDialog.getText(self, "Save voice", "Name for this voice:", text=self.suggested_name())
        if ok and name.strip():
            self.save_requested.emit(name.strip())

    @Slot()
    def _on_remove_clicked(self) -> None:
        item = self.library.currentItem()
        if item is None:
            return
        answer = QMessageBox.question(
            self, "Remove voice",
            f"Remove “{item.text()}” from the library? Its saved recording is deleted when the app closes; "
            "until then, Undo brings it back.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Cancel,
        )  # fmt: skip
        if answer == QMessageBox.StandardButton.Yes:
            self.remove_requested.emit(item.text())

    # Drops on the panel; the main window accepts drops anywhere and routes them the same way.
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            self.file_chosen.emit(Path(urls[0].toLocalFile()))
            event.acceptProposedAction()


def dropped_file(event) -> Path | None:
    urls = [u for u in event.mimeData().urls() if u.isLocalFile()] if event.mimeData().hasUrls() else []
    return Path(urls[0].toLocalFile()) if urls else None
