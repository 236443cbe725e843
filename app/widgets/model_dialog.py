"""Choose a model: download one from the hub (progress, size, cancel), open a folder, or build the test model."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from core.engine import HUB_MODELS, Downloader, model_downloader, nvidia_gpu_present

from ..model_speed import speed_estimate, variant_of

STANDIN_LABEL = "Test model — produces tones, for checking the setup"
TEST_MODELS = (("turbo", "Turbo (first)"), ("multilingual", "Multilingual"), ("original", "Original"))
"""The offline test models, Turbo first (the model to use on a CPU)."""


class ModelDialog(QDialog):
    """``chosen`` holds the bundle folder (or ``"standin:VARIANT"``, a test model to build) once accepted."""

    def __init__(self, models_dir: Path, parent=None, hub=None):
        super().__init__(parent)
        self.setWindowTitle("Choose a voice model")
        self.models_dir = models_dir
        self.hub = hub
        self.chosen: Path | str | None = None
        self.downloader: Downloader | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(200)
        self._timer.timeout.connect(self._on_progress)
        self._build_ui()

    def _build_ui(self) -> None:
        intro = QLabel("Chatterbox Desk runs the Chatterbox TTS models on this computer. Pick one:")
        intro.setWordWrap(True)
        download = QGroupBox("Download from the model hub")
        self.model_combo = QComboBox()
        for model in HUB_MODELS:
            self.model_combo.addItem(model.label)
        self.download_button = QPushButton("Download")
        self.cancel_button = QPushButton("Cancel download")
        self.cancel_button.hide()
        self.speed = QLabel()  # how long the model picked takes on this computer
        self.speed.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.hide()
        self.status = QLabel(f"Saved in {self.models_dir}")
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.model_combo, 1)
        row.addWidget(self.download_button)
        row.addWidget(self.cancel_button)
        box = QVBoxLayout(download)
        box.addLayout(row)
        box.addWidget(self.speed)
        box.addWidget(self.progress)
        box.addWidget(self.status)
        self.open_button = QPushButton("Open a model folder…")
        tests = QGroupBox(STANDIN_LABEL)
        self.standin_combo = QComboBox()
        for variant, label in TEST_MODELS:
            self.standin_combo.addItem(label, variant)
        self.standin_button = QPushButton("Build test model")
        tests_row = QHBoxLayout(tests)
        tests_row.addWidget(self.standin_combo, 1)
        tests_row.addWidget(self.standin_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(download)
        layout.addWidget(self.open_button)
        layout.addWidget(tests)
        self.model_combo.currentIndexChanged.connect(self._on_model_picked)
        self._on_model_picked(self.model_combo.currentIndex())
        self.download_button.clicked.connect(self._on_download_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.open_button.clicked.connect(self._on_open_clicked)
        self.standin_button.clicked.connect(self._on_standin_clicked)

    @Slot()
    def _on_open_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a Chatterbox ONNX model folder")
        if folder:
            self.chosen = Path(folder)
            self.accept()

    @Slot()
    def _on_standin_clicked(self) -> None:
        self.chosen = f"standin:{self.standin_combo.currentData()}"
        self.accept()

    @Slot(int)
    def _on_model_picked(self, index: int) -> None:
        self.speed.setText(speed_estimate(variant_of(HUB_MODELS[index].folder), gpu=nvidia_gpu_present()))

    @Slot()
    def _on_download_clicked(self) -> None:
        model = HUB_MODELS[self.model_combo.currentIndex()]
        self.downloader = model_downloader(model, self.models_dir, hub=self.hub)  # Multilingual: + the segmenter
        self.downloader.start()
        self.download_button.setEnabled(False)
        self.cancel_button.show()
        self.progress.show()
        self.progress.setRange(0, 0)
        self.status.setText(f"Contacting the hub for {model.repo}…")
        self._timer.start()

    @Slot()
    def _on_cancel_clicked(self) -> None:
        if self.downloader:
            self.downloader.cancel()
            self.status.setText("Cancelling after the current file…")

    @Slot()
    def _on_progress(self) -> None:
        d = self.downloader
        if d is None:
            return
        if d.total_bytes:
            done = d.progress()
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * done / d.total_bytes))
            self.status.setText(f"{done / 1e6:,.0f} of {d.total_bytes / 1e6:,.0f} MB → {d.target}")
        if not d.finished:
            return
        self._timer.stop()
        self.cancel_button.hide()
        self.download_button.setEnabled(True)
        if d.error:
            self.progress.hide()
            self.status.setText("Download cancelled." if d.error == "cancelled" else d.error)
            if d.offline:  # point at what works without a connection
                self.open_button.setDefault(True)
                self.open_button.setFocus()
            if d.error != "cancelled":
                QMessageBox.warning(self, "No internet connection" if d.offline else "Download failed", d.error)
            return
        self.chosen = d.target
        self.accept()

    def reject(self) -> None:
        if self.downloader and not self.downloader.finished:
            self.downloader.cancel()
        super().reject()
