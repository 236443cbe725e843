"""The question before rendering a range of chapters: from which chapter to which (1-based, both included)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QWidget

from core.narration import Project


class ChapterRangeDialog(QDialog):
    def __init__(self, project: Project, first: int = 1, last: int | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Render chapters")
        self.first, self.last = QComboBox(self), QComboBox(self)
        for box in (self.first, self.last):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(24)
            for number, chapter in enumerate(project.chapters, 1):
                skipped = " (skipped)" if chapter.skipped else ""
                box.addItem(f"{number}. {chapter.title}{skipped}", number)
        count = len(project.chapters)
        self.first.setCurrentIndex(min(max(first, 1), count) - 1)
        self.last.setCurrentIndex(min(max(last or first, first, 1), count) - 1)
        self.first.currentIndexChanged.connect(self._keep_order)
        form = QFormLayout(self)
        form.addRow("&From:", self.first)
        form.addRow("&To:", self.last)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        buttons.addButton("&Render", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _keep_order(self) -> None:
        if self.last.currentIndex() < self.first.currentIndex():
            self.last.setCurrentIndex(self.first.currentIndex())

    def chapters(self) -> tuple[int, int]:
        first = self.first.currentIndex() + 1
        return first, max(first, self.last.currentIndex() + 1)
