"""After an export with the store check: one row per file with its figures and whether it passes, and under the
table the reasons a file fails, in the wording catalog's sentences (the words the command line prints too).

The checks are the export result's ``checks`` (``FileCheck.to_dict()``: ``path``, ``rms_db``, ``peak_db``,
``noise_floor_db``, ``head_s``, ``tail_s``, ``sample_rate``, ``bitrate``, ``cbr``, ``failures``, ``passed``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.wording import describe

COLUMNS = ("File", "RMS", "Peak", "Noise floor", "Head", "Tail", "Encoding", "Result")
PASSED, FAILED = "✓ passes", "✗ fails"


def figures(check: Mapping[str, Any]) -> list[str]:
    """The row of one file: its name, the measured figures, its encoding, pass or fail."""

    def db(key: str) -> str:
        value = check.get(key)
        return "–" if value is None else f"{value:.1f} dB"

    def seconds(key: str) -> str:
        value = check.get(key)
        return "–" if value is None else f"{value:.2f} s"

    rate, bitrate = check.get("sample_rate"), check.get("bitrate")
    encoding = " · ".join(
        part
        for part in (
            f"{rate / 1000:g} kHz" if rate else "",
            f"{round(bitrate / 1000)} kb/s" if bitrate else "",
            ("CBR" if check.get("cbr") else "VBR") if check.get("cbr") is not None and bitrate else "",
        )
        if part
    )
    return [
        Path(str(check.get("path", ""))).name,
        db("rms_db"),
        db("peak_db"),
        db("noise_floor_db"),
        seconds("head_s"),
        seconds("tail_s"),
        encoding or "–",
        PASSED if check.get("passed") else FAILED,
    ]


def failure_sentences(check: Mapping[str, Any]) -> list[str]:
    """Why one file fails, one sentence per rule it breaks (``problems``: each a ``code`` and its figures; else
    ``failures``, the codes alone)."""
    sentences = []
    for failure in check.get("problems") or check.get("failures") or ():
        if isinstance(failure, Mapping):
            data = {k: v for k, v in failure.items() if k != "code"}
            sentences.append(describe(str(failure.get("code")), data))
        else:
            sentences.append(describe(str(failure), dict(check)))
    return sentences


def summary(checks: Sequence[Mapping[str, Any]], rules: str = "ACX") -> str:
    passed = sum(bool(c.get("passed")) for c in checks)
    if passed == len(checks):
        return f"Every file ({len(checks)}) passes {rules}'s rules."
    return f"{len(checks) - passed} of {len(checks)} file(s) fail {rules}'s rules: the reasons are under the table."


def reasons_text(checks: Sequence[Mapping[str, Any]]) -> str:
    """What fails, file by file (what the dialog shows under the table)."""
    lines: list[str] = []
    for check in checks:
        reasons = failure_sentences(check)
        if reasons:
            name = Path(str(check.get("path", ""))).name + ":"
            lines += ["", name] if lines else [name]
            lines += [f"  • {reason}" for reason in reasons]
    return "\n".join(lines)


def report_text(checks: Sequence[Mapping[str, Any]], rules: str = "ACX") -> str:
    """The summary and the reasons, as plain text."""
    reasons = reasons_text(checks)
    return summary(checks, rules) + ("\n\n" + reasons if reasons else "")


class CheckReport(QDialog):
    def __init__(self, checks: Sequence[Mapping[str, Any]], rules: str = "ACX", parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"Store check: {rules}")
        self.table = QTableWidget(len(checks), len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        for row, check in enumerate(checks):
            for column, text in enumerate(figures(check)):
                item = QTableWidgetItem(text)
                if column == 0:
                    item.setToolTip(str(check.get("path", "")))
                if column == len(COLUMNS) - 1:
                    item.setForeground(QColor("#2e7d32" if check.get("passed") else "#c62828"))
                    item.setToolTip("\n".join(failure_sentences(check)) or "Every rule is met.")
                self.table.setItem(row, column, item)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.summary = QLabel(summary(checks, rules), self)
        self.summary.setWordWrap(True)
        self.reasons = QPlainTextEdit(reasons_text(checks) or "Every rule is met.", self)
        self.reasons.setReadOnly(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 2)
        layout.addWidget(self.reasons, 1)
        layout.addWidget(buttons)
        self.resize(820, 420)
