"""Help → Guide: ``docs/GUIDE.md``, shown in the app (offline: the desktop build carries the page and its pictures).

Qt reads the Markdown itself (:class:`QTextBrowser` with a ``.md`` source) and finds the pictures beside it; a link
to another page of the docs opens in the same browser, a web address in the system's browser.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTextBrowser, QVBoxLayout

PICTURE_WIDTH = 820
"""The pictures are screenshots of a 1280-pixel window: shown this wide, the page reads without scrolling sideways."""


class _Browser(QTextBrowser):
    def loadResource(self, kind: int, name: QUrl | str) -> object:  # Qt calls it for each picture
        loaded = super().loadResource(kind, name)
        if kind == QTextDocument.ResourceType.ImageResource and loaded is not None:
            image = loaded if isinstance(loaded, QImage) else QImage.fromData(loaded)
            if not image.isNull() and image.width() > PICTURE_WIDTH:
                return image.scaledToWidth(PICTURE_WIDTH, Qt.TransformationMode.SmoothTransformation)
            return image if not image.isNull() else loaded
        return loaded


class GuideDialog(QDialog):
    def __init__(self, page: Path, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Chatterbox Desk — Guide")
        self.resize(900, 760)
        layout = QVBoxLayout(self)
        self.browser = _Browser(self)
        self.browser.setOpenExternalLinks(True)  # http(s): the system's browser; a .md page: here
        self.missing = QLabel("", self)
        self.missing.setWordWrap(True)
        layout.addWidget(self.browser, 1)
        layout.addWidget(self.missing)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.show_page(page)

    def show_page(self, page: Path) -> bool:
        """Show ``page`` (``False``, and a sentence saying where it was looked for, when it is not there)."""
        if not page.is_file():
            self.browser.hide()
            self.missing.setText(
                f"The guide is not here ({page}). It is docs/GUIDE.md in the project's source and on its web page."
            )
            return False
        self.browser.setSearchPaths([str(page.parent)])
        self.browser.setSource(QUrl.fromLocalFile(str(page)))
        self.missing.setText("")
        return True
