"""The project's export dialog: file and format (bit rate, sample rate, CBR/VBR), what to export (the book, a range
of chapters, the selected segments), one file or one per chapter, subtitles, word timing (of the subtitles, or of a
read-along book's highlight), loudness, cover, the book's credits, the audiobook store's mastering and check, and the
takes that still need review among what is exported (how many, which and why, in a list; with "Refuse while takes need
review", Export waits until none does).

Typing a file name with an extension picks that format; the dialog starts with the choices of the last export
(remembered across restarts) in the last export folder (or the user's Music/Documents folder), named after the
project. What would stop the export at its end (a missing folder, no permission, too little free space) is said
while choosing, and Export waits until it is fixed.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QStandardPaths, Qt
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
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QWidget,
)

from core.engine import ChatterboxError
from core.narration import ExportRequest, Project, check_request, check_space, reasons_of, segment_flagged
from core.wording import describe, describe_error, describe_reasons

from ..controllers.review import short_text
from .export_choices import (
    ACX,
    BITRATE_FORMATS,
    BITRATES,
    EXPORT_FORMATS,
    READALONG,
    SAMPLE_RATES,
    ExportChoices,
)

SUBTITLES = {"None": None, "SRT (.srt)": ".srt", "WebVTT (.vtt)": ".vtt"}
LOUDNESS = (
    ("Off (as rendered)", None),
    ("Podcast, −16 LUFS", -16.0),
    ("Audiobook, −19 LUFS", -19.0),
    ("Broadcast, −23 LUFS", -23.0),
)
SCOPE_WORDS = {"book": "The whole book", "chapters": "Chapters", "segments": "The selected segments"}
COVER_WORDS = {"book": "The book's own (if it has one)", "file": "An image…"}
IMAGE_FILTER = "Images (*.jpg *.jpeg *.png);;All files (*)"
FLAGGED_SHOWN = 200
"""The list of takes that need review shows this many (and says how many more)."""
SHORT_TEXT = 60


def default_folder(remembered: str | None) -> Path:
    if remembered and Path(remembered).is_dir():
        return Path(remembered)
    for location in (QStandardPaths.StandardLocation.MusicLocation, QStandardPaths.StandardLocation.DocumentsLocation):
        folder = QStandardPaths.writableLocation(location)
        if folder and Path(folder).is_dir():
            return Path(folder)
    return Path.home()


def _row(*widgets: QWidget, stretch: int | None = None) -> QHBoxLayout:
    row = QHBoxLayout()
    row.setContentsMargins(0, 0, 0, 0)
    for index, widget in enumerate(widgets):
        row.addWidget(widget, 1 if index == stretch else 0)
    if stretch is None:
        row.addStretch(1)
    return row


class ExportDialog(QDialog):
    def __init__(
        self,
        project: Project,
        folder: Path,
        choices: ExportChoices | None = None,
        selected: tuple[int, ...] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export narration")
        self.project, self.selected = project, tuple(selected)
        choices = choices or ExportChoices(loudness=project.finishing.get("loudness"))
        self._build(folder / f"{_safe(project.title)}{choices.format}")
        self.set_choices(choices)
        self._connect()
        self.validate()

    # --- construction ------------------------------------------------------------------------------------------
    def _build(self, path: Path) -> None:
        self.path = QLineEdit(str(path), self)
        browse = QPushButton("&Browse…", self)
        browse.clicked.connect(self._browse)
        self.format = QComboBox(self)
        for suffix, words in EXPORT_FORMATS.items():
            self.format.addItem(f"{words} ({suffix})", suffix)
        self.bitrate = QComboBox(self)
        for rate in BITRATES:
            self.bitrate.addItem(f"{rate} kb/s", rate)
        self.sample_rate = QComboBox(self)
        for rate in SAMPLE_RATES:
            self.sample_rate.addItem(f"{rate / 1000:g} kHz", rate)
        self.vbr = QComboBox(self)
        self.vbr.addItem("CBR", False)
        self.vbr.addItem("VBR", True)
        self.vbr.setToolTip("Constant bit rate (what audiobook stores ask for) or variable (smaller files)")
        self.scope = QComboBox(self)
        for scope, words in SCOPE_WORDS.items():
            count = f" ({len(self.selected)})" if scope == "segments" else ""
            self.scope.addItem(words + count, scope)
        self.first, self.last = QComboBox(self), QComboBox(self)
        for box in (self.first, self.last):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(14)
            for number, chapter in enumerate(self.project.chapters, 1):
                skipped = " (skipped)" if chapter.skipped else ""
                box.addItem(f"{number}. {chapter.title}{skipped}", number)
        self.to_label = QLabel("to", self)
        self.per_chapter = QCheckBox("One file per &chapter (in a folder of that name, with a chapter list)", self)
        self.subtitles = QComboBox(self)
        self.subtitles.addItems(list(SUBTITLES))
        self.word_timing = QCheckBox("&Word timing", self)
        self.word_timing.setToolTip(
            "Each word's time, where the takes have word times: subtitles get a timestamp before each word (WebVTT) "
            "or a cue per word (SRT); a read-along book highlights word by word. Other sentences stay whole."
        )
        self.loudness = QComboBox(self)
        for label, value in LOUDNESS:
            self.loudness.addItem(label, value)
        self.loudness.setToolTip("Integrated loudness (ITU-R BS.1770) with true peaks held under −1 dBTP")
        self.cover = QComboBox(self)
        for cover, words in COVER_WORDS.items():
            self.cover.addItem(words, cover)
        self.cover_file = QLineEdit(self)
        self.cover_file.setPlaceholderText("an image file (JPEG or PNG)")
        self.cover_browse = QPushButton("Choose…", self)
        self.cover_browse.clicked.connect(self._choose_cover)
        self.author, self.narrator, self.year = QLineEdit(self), QLineEdit(self), QLineEdit(self)
        self.author.setPlaceholderText("Author")
        self.narrator.setPlaceholderText("Narrator")
        self.year.setPlaceholderText("Year")
        self.year.setMaximumWidth(70)
        self.year.setInputMask("0000;")
        self.master_acx = QCheckBox("&Master for ACX", self)
        self.master_acx.setToolTip(
            "Loudness, peaks and room tone made to pass ACX/Audible's rules; 192 kb/s CBR MP3 at 44.1 kHz, "
            "one file per chapter"
        )
        self.check_acx = QCheckBox("C&heck against ACX", self)
        self.check_acx.setToolTip(
            "Measure every file (RMS, peak, noise floor, room tone, bit rate) and report what passes ACX/Audible's "
            "rules"
        )
        self.strict = QCheckBox("Refuse while takes need review", self)
        self.strict.setToolTip(
            "Export nothing while a take to export is flagged by the take screen and not accepted (Review, F7, in "
            "the studio)"
        )
        self.flagged_note = QLabel("", self)
        self.flagged_note.setWordWrap(True)
        self.flagged = QListWidget(self)
        self.flagged.setAccessibleName("Takes that need review")
        self.flagged.setWordWrap(True)  # every reason readable, none cut off at the right
        self.flagged.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.flagged.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.flagged.setMaximumHeight(6 * self.flagged.fontMetrics().height() + 8)
        self._flagged_numbers: list[int] | None = None
        self.note = QLabel("", self)
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.export_button = self.buttons.addButton("&Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout(self)
        form.addRow(self._label("&File:", self.path), _row(self.path, browse, stretch=0))
        form.addRow(self._label("F&ormat:", self.format), _row(self.format, self.bitrate, self.sample_rate, self.vbr))
        form.addRow(self._label("E&xport:", self.scope), _row(self.scope, self.first, self.to_label, self.last))
        form.addRow("", self.per_chapter)
        form.addRow(
            self._label("&Subtitles:", self.subtitles),
            _row(self.subtitles, self.word_timing, self._label("&Loudness:", self.loudness), self.loudness),
        )
        form.addRow(self._label("Co&ver:", self.cover), _row(self.cover, self.cover_file, self.cover_browse, stretch=1))
        form.addRow(self._label("C&redits:", self.author), _row(self.author, self.narrator, self.year, stretch=0))
        form.addRow("Store:", _row(self.master_acx, self.check_acx))
        form.addRow("Review:", _row(self.strict))
        form.addRow(self.flagged_note)
        form.addRow(self.flagged)
        form.addRow(self.note)
        form.addRow(self.buttons)

    def _label(self, text: str, buddy: QWidget) -> QLabel:
        label = QLabel(text, self)
        label.setBuddy(buddy)
        return label

    def _connect(self) -> None:
        self.path.textEdited.connect(self._on_path_edited)
        self.format.currentIndexChanged.connect(self._on_format_changed)
        self.master_acx.toggled.connect(self._on_master_toggled)
        boxes = (self.scope, self.first, self.last, self.cover, self.bitrate, self.sample_rate, self.vbr)
        for box in (*boxes, self.subtitles):
            box.currentIndexChanged.connect(self._update)
        for check in (self.per_chapter, self.strict, self.word_timing):
            check.toggled.connect(self._update)
        self.path.textChanged.connect(self._update)
        self.cover_file.textChanged.connect(self._update)

    # --- the choices -------------------------------------------------------------------------------------------
    def set_choices(self, choices: ExportChoices) -> None:
        _select(self.format, choices.format)
        _select(self.bitrate, choices.bitrate)
        _select(self.sample_rate, choices.sample_rate)
        _select(self.vbr, choices.vbr)
        _select(self.scope, choices.scope if choices.scope != "segments" or self.selected else "book")
        count = len(self.project.chapters)
        first = min(max(1, choices.first), count)
        _select(self.first, first)
        _select(self.last, min(max(first, choices.last), count))
        self.per_chapter.setChecked(choices.per_chapter)
        self.subtitles.setCurrentIndex(list(SUBTITLES.values()).index(choices.subtitles))
        self.loudness.setCurrentIndex(max(0, self.loudness.findData(choices.loudness)))
        _select(self.cover, choices.cover)
        self.cover_file.setText(choices.cover_file)
        self.author.setText(choices.author)
        self.narrator.setText(choices.narrator)
        self.year.setText(choices.year)
        self.master_acx.setChecked(choices.master_acx)
        self.check_acx.setChecked(choices.check_acx)
        self.strict.setChecked(choices.strict)
        self.word_timing.setChecked(choices.word_timing)
        self._update()

    def choices(self) -> ExportChoices:
        return ExportChoices(
            format=self.format.currentData(),
            bitrate=self.bitrate.currentData(),
            sample_rate=self.sample_rate.currentData(),
            vbr=self.vbr.currentData(),
            scope=self.scope.currentData(),
            first=self.first.currentData(),
            last=max(self.first.currentData(), self.last.currentData()),
            per_chapter=self.per_chapter.isChecked(),
            subtitles=SUBTITLES[self.subtitles.currentText()],
            loudness=self.loudness.currentData(),
            cover=self.cover.currentData(),
            cover_file=self.cover_file.text().strip(),
            author=self.author.text().strip(),
            narrator=self.narrator.text().strip(),
            year=self.year.text().strip(),
            master_acx=self.master_acx.isChecked(),
            check_acx=self.check_acx.isChecked(),
            strict=self.strict.isChecked(),
            word_timing=self.word_timing.isChecked(),
        )

    def target(self) -> Path:
        """The file (or, one file per chapter, the folder) to write; a name without the format's suffix gets it."""
        path = Path(self.path.text().strip()).expanduser()
        if path.suffix.lower() not in EXPORT_FORMATS:
            path = path.with_name(path.name + self.format.currentData())
        return path

    def request(self) -> ExportRequest:
        """What to write (the file's suffix wins over the format list; a name without one gets the list's)."""
        path = self.target()
        choices = replace(self.choices(), format=path.suffix.lower())
        return choices.request(path, self.project, self.selected)

    # --- checks while choosing ---------------------------------------------------------------------------------
    def problem(self) -> str | None:
        """What would stop this export, in words (``None``: it can start)."""
        choices = self.choices()
        if choices.scope == "segments" and not self.selected:
            return "No segment is selected in the studio: select some, or export the book or chapters."
        pending = self._not_rendered(choices)
        if pending:
            return describe("export.not_rendered", {"pending": pending, "total": len(self.project.segments)})
        flagged = self._flagged_numbers or []
        if choices.strict and flagged:
            return (
                f"{_takes(len(flagged))} to export need{'s' if len(flagged) == 1 else ''} review: accept or "
                "regenerate each (Review, F7, in the studio), or clear “Refuse while takes need review”."
            )
        if choices.cover == "file" and not Path(choices.cover_file).expanduser().is_file():
            return "Choose the cover image (a JPEG or PNG file)."
        text = self.path.text().strip()
        name = Path(text).expanduser().name
        if not name or name.startswith(".") or text.endswith(("/", os.sep)):  # "", "/", "folder/", ".mp3"
            return "Choose a file name."
        try:  # the export's own checks (folder, permission, cover, free space), before any audio is read
            request = self.request()
            check_request(request)
            check_space(self.project, request)
        except ChatterboxError as exc:
            return describe_error(exc)
        return None

    def _chosen(self, choices: ExportChoices):
        """The segments to export (number, segment), skipped ones left out."""
        project, chosen = self.project, set(self.selected)
        first, last = choices.first - 1, choices.last - 1
        return (
            (number, segment)
            for number, segment in enumerate(project.segments, 1)
            if not project.is_skipped(segment)
            and (choices.scope != "chapters" or first <= segment.chapter <= last)
            and (choices.scope != "segments" or number in chosen)
        )

    def _not_rendered(self, choices: ExportChoices) -> list[int]:
        """The numbers of the chosen segments that have no current take (the export would stop on them)."""
        return [number for number, segment in self._chosen(choices) if self.project.status(segment) != "rendered"]

    def _show_flagged(self, choices: ExportChoices) -> None:
        """How many takes to export need review, and which (number, the start of the text, the reasons in words)."""
        project = self.project
        numbers = [number for number, segment in self._chosen(choices) if segment_flagged(project, segment)]
        if numbers == self._flagged_numbers:
            return
        self._flagged_numbers = numbers
        count = len(numbers)
        self.flagged_note.setText(
            f"{_takes(count)} among what will be exported need{'s' if count == 1 else ''} review (flagged by the "
            "take screen, not accepted):"
            if count
            else ""
        )
        self.flagged_note.setVisible(bool(count))
        self.flagged.setVisible(bool(count))
        self.flagged.clear()
        for number in numbers[:FLAGGED_SHOWN]:
            segment = project.segments[number - 1]
            reasons = reasons_of(project.chosen_take(segment))
            item = QListWidgetItem(f"{number} · {short_text(segment.text, SHORT_TEXT)} — {describe_reasons(reasons)}")
            item.setToolTip(f"Segment {number}: {segment.text}\n\n{describe_reasons(reasons, chr(10))}")
            self.flagged.addItem(item)
        if count > FLAGGED_SHOWN:
            self.flagged.addItem(f"… and {count - FLAGGED_SHOWN} more")

    def validate(self) -> bool:
        problem = self.problem()
        self.note.setText(problem or "")
        self.note.setStyleSheet("color: #c62828;" if problem else "")
        self.export_button.setEnabled(problem is None)
        return problem is None

    def _update(self, *_args) -> None:
        scope = self.scope.currentData()
        first, last = self.first.currentData() or 1, self.last.currentData() or 1
        self._show_flagged(ExportChoices(scope=scope, first=first, last=max(first, last)))
        for widget in (self.first, self.to_label, self.last):
            widget.setVisible(scope == "chapters")
        if self.last.currentData() is not None and self.last.currentData() < self.first.currentData():
            _select(self.last, self.first.currentData())
        coded = self.format.currentData() in BITRATE_FORMATS
        book = self.format.currentData() == READALONG
        self.per_chapter.setEnabled(not book)
        self.subtitles.setEnabled(not book)
        self.word_timing.setEnabled(book or self.subtitles.currentText() != "None")
        for store in (self.master_acx, self.check_acx):  # ACX takes MP3 files, not a book
            store.setEnabled(not book)
            if book:
                store.setChecked(False)
        self.bitrate.setEnabled(coded)
        self.vbr.setEnabled(coded)
        chosen = self.cover.currentData() == "file"
        self.cover_file.setEnabled(chosen)
        self.cover_browse.setEnabled(chosen)
        self.loudness.setEnabled(not self.master_acx.isChecked())
        if hasattr(self, "export_button"):
            self.validate()

    def accept(self) -> None:
        if self.validate():
            super().accept()

    # --- reactions ---------------------------------------------------------------------------------------------
    def _on_path_edited(self, text: str) -> None:
        """A typed extension picks the format."""
        suffix = Path(text).suffix.lower()
        if suffix in EXPORT_FORMATS:
            self.format.blockSignals(True)
            _select(self.format, suffix)
            self.format.blockSignals(False)
            self._update()

    def _on_format_changed(self) -> None:
        path = Path(self.path.text() or "narration")
        if path.suffix.lower() in EXPORT_FORMATS:
            path = path.with_suffix("")
        self.path.setText(str(path.with_name(path.name + self.format.currentData())))
        self._update()

    def _on_master_toggled(self, on: bool) -> None:
        """Mastering for ACX sets what ACX takes (192 kb/s CBR MP3, 44.1 kHz, one chapter per file) and checks it."""
        if on:
            _select(self.format, ACX["format"])
            _select(self.bitrate, ACX["bitrate"])
            _select(self.sample_rate, ACX["sample_rate"])
            _select(self.vbr, ACX["vbr"])
            self.per_chapter.setChecked(bool(ACX["per_chapter"]))
            self.check_acx.setChecked(True)
        self._update()

    def _browse(self) -> None:
        filters = ";;".join(f"{words} (*{suffix})" for suffix, words in EXPORT_FORMATS.items())
        chosen, _ = QFileDialog.getSaveFileName(self, "Export narration", self.path.text(), filters)
        if chosen:
            self.path.setText(chosen)
            self._on_path_edited(chosen)

    def _choose_cover(self) -> None:
        start = self.cover_file.text() or str(Path(self.path.text()).parent)
        chosen, _ = QFileDialog.getOpenFileName(self, "Cover image", start, IMAGE_FILTER)
        if chosen:
            self.cover_file.setText(chosen)


def _select(box: QComboBox, data) -> None:
    index = box.findData(data)
    if index >= 0:
        box.setCurrentIndex(index)


def export_name(text: str, suffix: str = ".wav", words: int = 6) -> str:
    """A file name from the first words of what was said ("Hello there this is.wav"), never a timestamp."""
    return f"{_safe(' '.join(text.split()[:words]))[:60].strip()}{suffix}"


def _takes(count: int) -> str:
    return f"{count} take{'' if count == 1 else 's'}"


def _safe(title: str) -> str:
    keep = "".join(ch if ch.isalnum() or ch in " -_." else " " for ch in title)
    return " ".join(keep.split()) or "Narration"
