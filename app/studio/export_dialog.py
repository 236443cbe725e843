"""The project's export dialog: file and format, whole book or one file per chapter, subtitles, pace and loudness.

Typing a file name with an extension picks that format; the dialog starts in the last export folder (or the
user's Music/Documents folder) with the project's title as the name.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from core.engine import FORMATS
from core.narration import ExportRequest

SUBTITLES = {"None": None, "SRT (.srt)": ".srt", "WebVTT (.vtt)": ".vtt"}


def default_folder(remembered: str | None) -> Path:
    if remembered and Path(remembered).is_dir():
        return Path(remembered)
    for location in (QStandardPaths.StandardLocation.MusicLocation, QStandardPaths.StandardLocation.DocumentsLocation):
        folder = QStandardPaths.writableLocation(location)
        if folder and Path(folder).is_dir():
            return Path(folder)
    return Path.home()


class ExportDialog(QDialog):
    def __init__(self, title: str, folder: Path, loudness: float | None, true_peak: float, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Export narration")
        self.true_peak = true_peak
        self.format = QComboBox(self)
        for suffix, fmt in FORMATS.items():
            self.format.addItem(f"{fmt.name} ({suffix})", suffix)
        self.format.setCurrentIndex(list(FORMATS).index(".mp3"))
        self.path = QLineEdit(str(folder / f"{_safe(title)}.mp3"), self)
        browse = QPushButton("&Browse…", self)
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        path_row = QWidget(self)
        path_row.setLayout(row)
        row.setContentsMargins(0, 0, 0, 0)
        self.per_chapter = QCheckBox("One file per &chapter (in a folder of that name, with a chapter list)", self)
        self.subtitles = QComboBox(self)
        self.subtitles.addItems(list(SUBTITLES))
        self.loudness = QComboBox(self)
        for label, value in (
            ("Off (as rendered)", None),
            ("Podcast, −16 LUFS", -16.0),
            ("Audiobook, −19 LUFS", -19.0),
            ("Broadcast, −23 LUFS", -23.0),
        ):
            self.loudness.addItem(label, value)
        self.loudness.setCurrentIndex(max(0, self.loudness.findData(loudness)))
        self.loudness.setToolTip("Integrated loudness (ITU-R BS.1770) with true peaks held under −1 dBTP")
        self.note = QLabel("", self)
        self.note.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow("&File:", path_row)
        form.addRow("F&ormat:", self.format)
        form.addRow("", self.per_chapter)
        form.addRow("&Subtitles:", self.subtitles)
        form.addRow("&Loudness:", self.loudness)
        form.addRow(self.note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.path.textEdited.connect(self._on_path_edited)
        self.format.currentIndexChanged.connect(self._on_format_changed)

    def _on_path_edited(self, text: str) -> None:
        """A typed extension picks the format."""
        suffix = Path(text).suffix.lower()
        if suffix in FORMATS:
            self.format.blockSignals(True)
            self.format.setCurrentIndex(list(FORMATS).index(suffix))
            self.format.blockSignals(False)

    def _on_format_changed(self) -> None:
        path = Path(self.path.text() or "narration")
        self.path.setText(str(path.with_suffix(self.format.currentData())))

    def _browse(self) -> None:
        filters = ";;".join(f"{fmt.name} (*{suffix})" for suffix, fmt in FORMATS.items())
        chosen, _ = QFileDialog.getSaveFileName(self, "Export narration", self.path.text(), filters)
        if chosen:
            self.path.setText(chosen)
            self._on_path_edited(chosen)

    def request(self) -> ExportRequest:
        """What to write (the file's suffix wins over the format list; a name without one gets the list's)."""
        path = Path(self.path.text()).expanduser()
        if path.suffix.lower() not in FORMATS:
            path = path.with_name(path.name + self.format.currentData())
        suffix = path.suffix.lower()
        subtitles = SUBTITLES[self.subtitles.currentText()]
        if self.per_chapter.isChecked():
            return ExportRequest(
                per_chapter=path.with_suffix(""),
                chapter_format=suffix,
                chapter_subtitles=subtitles,
                loudness=self.loudness.currentData(),
                true_peak=self.true_peak,
            )
        return ExportRequest(
            out=path,
            subtitles=path.with_suffix(subtitles) if subtitles else None,
            loudness=self.loudness.currentData(),
            true_peak=self.true_peak,
        )


def export_name(text: str, suffix: str = ".wav", words: int = 6) -> str:
    """A file name from the first words of what was said ("Hello there this is.wav"), never a timestamp."""
    return f"{_safe(' '.join(text.split()[:words]))[:60].strip()}{suffix}"


def _safe(title: str) -> str:
    keep = "".join(ch if ch.isalnum() or ch in " -_." else " " for ch in title)
    return " ".join(keep.split()) or "Narration"
