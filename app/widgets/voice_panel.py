"""The voice panel: the current reference (length, rate, warnings), a file picker, drops, and the voice library."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
)

from core.voice import VoiceReference

AUDIO_FILTER = "Audio (*.wav *.flac *.ogg *.mp3 *.aiff *.aif);;All files (*)"


class VoicePanel(QGroupBox):
    file_chosen = Signal(Path)
    """A file was picked or dropped: the window checks and selects it."""
    library_selected = Signal(str)
    default_selected = Signal()
    save_requested = Signal(str)
    remove_requested = Signal(str)

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
        self.warning.setStyleSheet("color: #f0ad4e;")
        self.warning.hide()
        self.choose = QPushButton("Choose file…", self)
        self.use_default = QPushButton("Default voice", self)
        self.save = QPushButton("Save to library…", self)
        self.save.setEnabled(False)
        self.library = QListWidget(self)
        self.library.setToolTip("Your saved voices: click one to use it")
        self.remove = QPushButton("Remove", self)
        self.remove.setEnabled(False)
        buttons = QHBoxLayout()
        for b in (self.choose, self.use_default):
            buttons.addWidget(b)
        lib_buttons = QHBoxLayout()
        lib_buttons.addWidget(self.save)
        lib_buttons.addWidget(self.remove)
        layout = QVBoxLayout(self)
        layout.addWidget(self.name)
        layout.addWidget(self.details)
        layout.addWidget(self.warning)
        layout.addLayout(buttons)
        layout.addWidget(QLabel("Library", self))
        layout.addWidget(self.library, 1)
        layout.addLayout(lib_buttons)

    def _connect_signals(self) -> None:
        self.choose.clicked.connect(self._on_choose_clicked)
        self.use_default.clicked.connect(self.default_selected.emit)
        self.library.itemClicked.connect(lambda item: self.library_selected.emit(item.text()))
        self.library.currentItemChanged.connect(lambda cur, _prev: self.remove.setEnabled(cur is not None))
        self.save.clicked.connect(self._on_save_clicked)
        self.remove.clicked.connect(self._on_remove_clicked)

    def set_library(self, names: list[str], current: str | None = None) -> None:
        self.library.clear()
        for name in names:
            item = QListWidgetItem(name)
            self.library.addItem(item)
            if name == current:
                self.library.setCurrentItem(item)

    def show_voice(self, title: str, voice: VoiceReference | None, saveable: bool) -> None:
        self.name.setText(title)
        if voice is None:
            self.details.setText("The model's built-in voice.")
            self.warning.hide()
        else:
            channels = "mono" if voice.channels == 1 else f"{voice.channels} channels, mixed to mono"
            self.details.setText(f"{voice.duration_s:.1f} s · {voice.source_rate:,} Hz · {channels}")
            self.warning.setText("\n".join(voice.warnings))
            self.warning.setVisible(bool(voice.warnings))
        self.save.setEnabled(saveable)

    @Slot()
    def _on_choose_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a reference recording", "", AUDIO_FILTER)
        if path:
            self.file_chosen.emit(Path(path))

    @Slot()
    def _on_save_clicked(self) -> None:
        name, ok = QInputDialog.getText(self, "Save voice", "Name for this voice:", text=self.name.text())
        if ok and name.strip():
            self.save_requested.emit(name.strip())

    @Slot()
    def _on_remove_clicked(self) -> None:
        item = self.library.currentItem()
        if item is not None:
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
