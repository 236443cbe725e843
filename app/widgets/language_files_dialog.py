"""Models → Language files: the Multilingual model's 23 languages, the steps their text goes through before it is
tokenized, which of their files are missing and what the optional ones would add; downloads of the files the app can
fetch (the window's ``python -m core languages``).

- Chinese: the Cangjie table (required; into the Multilingual model's folder, or into the language data folder when
  no Multilingual model is open, where every Multilingual model finds it) and the word segmenter (optional).
- Russian: the RUAccent stress model, once the optional ``stressonnx`` package is installed (the button says so
  until then).

Downloads run on their own threads (pinned, checked, with progress and cancel); the dialog polls them on a timer, as
the model dialog does, and reads the table again when one ends.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QBrush, QCloseEvent, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.engine import (
    CANGJIE_FILE,
    COMMON_STEPS,
    DOWNLOADS,
    LanguageSupport,
    after_download,
    all_languages,
    cangjie_downloader,
    language_data,
    language_label,
    pkuseg_downloader,
    stress_downloader,
)

log = logging.getLogger(__name__)

LANGUAGE, STEPS, STATE, ADDS = range(4)
COLUMNS = ("Language", "Its own steps", "Files", "What the optional part adds")
POLL_MS = 100
STRESS_PACKAGE = (
    "Russian stress marks need the stressonnx package first: pip install --no-deps stressonnx (beside "
    "onnxruntime), then open this dialog again."
)
OFFLINE = "No internet connection: the language files cannot be downloaded now. Try again once this computer is online."
STATE_COLORS = {"ready": "#1b5e20", "optional": "#6d4c00", "missing": "#b71c1c"}
"""Dark text colours of the Files column, readable on a light row and, bold, on a dark one."""


def state_text(row: LanguageSupport) -> tuple[str, str]:
    """(words for the Files column, its kind: ``ready``, ``optional`` or ``missing``)."""
    optional = "optional, not installed: " + "; ".join(row.optional_missing) if row.optional_missing else ""
    if row.required_missing:
        return "✗ Needs " + ", ".join(row.required_missing) + (f" · {optional}" if optional else ""), "missing"
    if optional:
        return f"✓ Ready · {optional}", "optional"
    return "✓ Ready", "ready"


class LanguageFilesDialog(QDialog):
    """``bundle``: the open Multilingual model's folder (``None``: none is open); ``models_dir``: where the language
    data lives; ``hub`` and ``opener`` stand in for ``huggingface_hub`` and ``urlopen`` (tests)."""

    refreshed = Signal()
    """The table was read again (after a download)."""
    download_finished = Signal(str, str)
    """A language's download ended: its code and the error in words ("" when every file arrived)."""

    def __init__(
        self,
        bundle: Path | None,
        models_dir: Path | None = None,
        parent: QWidget | None = None,
        hub: Any = None,
        opener: Any = None,
    ) -> None:
        super().__init__(parent)
        self.bundle, self.models_dir, self.hub, self.opener = bundle, models_dir, hub, opener
        self.rows: list[LanguageSupport] = []
        self._code: str | None = None
        """The language whose files are downloading."""
        self._queue: list[tuple[str, Any]] = []
        self.downloader: Any = None
        self._label = ""
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._on_progress)
        self._build_ui()
        self.refresh()

    # --- construction ------------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.setWindowTitle("Language files")
        self.setSizeGripEnabled(True)
        self.resize(900, 640)
        intro = QLabel(
            "Text in every language goes through "
            + ", ".join(COMMON_STEPS)
            + " before it is tokenized. Some languages take a step of their own, and some steps need files: a "
            "language whose files are missing cannot be read; optional files bring its text closer to what the model "
            "was trained on.",
            self,
        )
        intro.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(True)
        self.table.setAlternatingRowColors(True)
        self.table.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(LANGUAGE, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(STEPS, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(STATE, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(ADDS, QHeaderView.ResizeMode.Stretch)
        header.sectionResized.connect(self._fit_rows)  # a column dragged wider or narrower: rows as tall as needed

        downloads = QGroupBox("Download", self)
        grid = QGridLayout(downloads)
        grid.setColumnStretch(1, 1)
        self.buttons: dict[str, QPushButton] = {}
        self.notes: dict[str, QLabel] = {}
        for line, (code, what) in enumerate(DOWNLOADS.items()):
            name = QLabel(f"<b>{language_label(code)}</b>", downloads)
            note = QLabel(what, downloads)
            note.setWordWrap(True)
            button = QPushButton(f"Download {language_label(code).split(' (')[0]}", downloads)
            button.clicked.connect(lambda _checked=False, c=code: self.download(c))
            grid.addWidget(name, line, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(note, line, 1)
            grid.addWidget(button, line, 2, Qt.AlignmentFlag.AlignTop)
            self.buttons[code], self.notes[code] = button, note
        self.progress = QProgressBar(downloads)
        self.progress.hide()
        self.cancel_button = QPushButton("&Cancel download", downloads)
        self.cancel_button.hide()
        self.status = QLabel("", downloads)
        self.status.setWordWrap(True)
        self.status.hide()
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)
        grid.addLayout(progress_row, len(DOWNLOADS), 0, 1, 3)
        grid.addWidget(self.status, len(DOWNLOADS) + 1, 0, 1, 3)

        self.close_buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.close_buttons.rejected.connect(self.reject)
        self.cancel_button.clicked.connect(self.cancel)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(downloads)
        layout.addWidget(self.close_buttons)

    # --- the table ---------------------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Read every language's steps and files again, and say what each download would fetch."""
        self.rows = sorted(all_languages(self.bundle, self.models_dir), key=lambda r: r.name)  # as people look
        self.table.setRowCount(len(self.rows))
        for index, row in enumerate(self.rows):
            words, kind = state_text(row)
            cells = (
                language_label(row.code),
                "\n".join(row.steps) or "—",
                words,
                row.improves if row.optional_missing else "",
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                item.setTextAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
                if column == STATE:
                    item.setForeground(QBrush(QColor(STATE_COLORS[kind])))
                    font = item.font()
                    font.setBold(kind == "missing")
                    item.setFont(font)
                item.setData(Qt.ItemDataRole.UserRole, row.code)
                self.table.setItem(index, column, item)
        self.table.resizeRowsToContents()
        self.table.setCurrentIndex(QModelIndex())  # no cell framed as if chosen
        self._update_downloads()
        self.refreshed.emit()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_columns()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Steps and files take a share of the width they are given (the optional part's words the rest), and each
        row is as tall as its wrapped words: no cell is cut short at any width of the dialog."""
        width = self.table.viewport().width()
        header = self.table.horizontalHeader()
        header.blockSignals(True)
        header.resizeSection(STEPS, max(150, width * 22 // 100))
        header.resizeSection(STATE, max(170, width * 28 // 100))
        header.blockSignals(False)
        QTimer.singleShot(0, self._fit_rows)  # once the stretched column has its new width

    @Slot()
    def _fit_rows(self, *_args: object) -> None:
        self.table.resizeRowsToContents()

    def row(self, code: str) -> LanguageSupport:
        return next(r for r in self.rows if r.code == code)

    def cell(self, code: str, column: int) -> str:
        index = next(i for i, r in enumerate(self.rows) if r.code == code)
        item = self.table.item(index, column)
        return item.text() if item is not None else ""

    def _update_downloads(self) -> None:
        busy = self._code is not None
        for code, button in self.buttons.items():
            plan, note = self._plan(code)
            self.notes[code].setText(note)
            button.setEnabled(bool(plan) and not busy)
            button.setToolTip(note)

    def _plan(self, code: str) -> tuple[list[str], str]:
        """What a download of ``code`` would fetch now (names of its parts), and a note saying so."""
        row = self.row(code)
        if code == "zh":
            parts = []
            if row.required_missing:
                parts.append("table")
            if row.optional_missing:
                parts.append("segmenter")
            if not parts:
                return [], "Installed: the Cangjie table and the word segmenter."
            where = (
                f"into the model folder {self.bundle.name}"
                if self.bundle is not None
                else f"into {language_data(self.models_dir)}, for every Multilingual model (none is open)"
            )
            words = {
                "table": f"the Cangjie table ({CANGJIE_FILE}, 1.9 MB, needed to read Chinese) {where}",
                "segmenter": "the word segmenter (7 MB, optional: word boundaries)",
            }
            return parts, "Fetches " + " and ".join(words[p] for p in parts) + "."
        if code == "ru":
            if not row.optional_missing:
                return [], "Installed: the RUAccent stress model."
            try:
                stress_downloader(self.models_dir, self.hub)
            except ImportError:
                return [], STRESS_PACKAGE
            return ["stress"], "Fetches the RUAccent stress model (optional: stress marks on every word)."
        return [], DOWNLOADS.get(code, "")

    # --- downloading -------------------------------------------------------------------------------------------
    @property
    def downloading(self) -> bool:
        return self._code is not None

    def download(self, code: str) -> bool:
        """Fetch what ``code`` lacks, one file set after the other; ``False`` when there is nothing to fetch."""
        if self.downloading:
            return False
        plan, note = self._plan(code)
        if not plan:
            self._say(note)
            return False
        self._queue = []
        for part in plan:
            if part == "table":
                target = self.bundle if self.bundle is not None else language_data(self.models_dir)
                self._queue.append(("Cangjie table", cangjie_downloader(target, self.hub)))
            elif part == "segmenter":
                self._queue.append(("Word segmenter", pkuseg_downloader(self.models_dir, self.opener)))
            else:
                self._queue.append(("RUAccent stress model", stress_downloader(self.models_dir, self.hub)))
        self._code = code
        self._update_downloads()
        self.cancel_button.show()
        self.cancel_button.setEnabled(True)
        self.progress.show()
        self._next()
        self._timer.start()
        return True

    def _next(self) -> None:
        self._label, self.downloader = self._queue.pop(0)
        self.progress.setRange(0, 0)  # busy until the size is known
        self._say(f"{self._label}: connecting…")
        self.downloader.start()

    @Slot()
    def cancel(self) -> None:
        if self.downloader is not None and not self.downloader.finished:
            self.downloader.cancel()
            self.cancel_button.setEnabled(False)
            self._say(f"{self._label}: cancelling…")

    @Slot()
    def _on_progress(self) -> None:
        d = self.downloader
        if d is None:
            return
        if d.total_bytes:
            done = d.progress()
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(done, d.total_bytes) / d.total_bytes))
            self._say(f"{self._label}: {done / 1e6:,.1f} of {d.total_bytes / 1e6:,.1f} MB")
        if not d.finished:
            return
        d.join(5.0)  # it has finished: its thread ends now
        if d.error is None and self._queue:
            self._next()
            return
        self._end(d)

    def _end(self, d: Any) -> None:
        code, self._code, self.downloader, self._queue = self._code or "", None, None, []
        self._timer.stop()
        self.cancel_button.hide()
        after_download()  # what did arrive is used from the next sentence on
        if d.error is None:
            self.progress.hide()
            message = ""
            done = f"{language_label(code)}: the files are installed."
        else:
            message = "Download cancelled." if d.error == "cancelled" else OFFLINE if d.offline else str(d.error)
            self.progress.hide()
            done = f"{self._label}: {message}" if d.error != "cancelled" else message
        self.refresh()
        self._say(done)
        self.download_finished.emit(code, message)

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    # --- closing -----------------------------------------------------------------------------------------------
    def done(self, result: int) -> None:
        self._stop()
        super().done(result)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._stop()
        super().closeEvent(event)

    def _stop(self) -> None:
        """A download still running is cancelled and waited for (its staging is kept: the next one resumes)."""
        d = self.downloader
        if d is not None and not d.finished:
            d.cancel()
            d.join(10.0)
        if d is not None:
            self._timer.stop()
            self._code, self.downloader, self._queue = None, None, []
            after_download()
