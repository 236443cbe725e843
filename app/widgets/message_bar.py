"""An inline message bar with a close button, laid over the bottom of its host: it never pushes the editor down.

The host is any widget; for a main window the bar lies over the bottom of the central widget, just above the
status bar, whichever page (Speak or Project) is showing.

Errors and notices share it; their colours are fixed pairs of dark text on a light background (not the palette's
text on a tint), so they stay readable in light and dark mode. :func:`contrast_ratio` is the WCAG formula the
pairs are checked with.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, Qt, Signal, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QMainWindow, QToolButton, QWidget

ERROR_COLORS = ("#58151c", "#f8d7da", "#d9534f")
"""Text, background and border of an error."""
WARNING_COLORS = ("#533f03", "#fff3cd", "#e0a800")
"""Text, background and border of a notice or warning."""
MARGIN = 8


def box_style(colors: tuple[str, str, str], selector: str = "") -> str:
    text, background, border = colors
    body = f"color: {text}; background-color: {background}; border: 1px solid {border}; border-radius: 4px;"
    return f"{selector} {{ {body} }}" if selector else body


def warning_label_style() -> str:
    """For a QLabel that shows a warning (e.g. a short voice reference): readable dark text on light amber."""
    return box_style(WARNING_COLORS) + " padding: 4px 6px;"


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours (4.5 is the minimum for body text)."""

    def luminance(color: str) -> float:
        channels = [int(color.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


class MessageBar(QFrame):
    """``show_message`` shows one message; the ✕ (or :meth:`dismiss`) hides it and emits :attr:`dismissed`."""

    dismissed = Signal(str)
    """The user closed the message; the argument is the message's ``key`` (its text when none was given)."""

    def __init__(self, host: QWidget):
        super().__init__(host)
        self.setObjectName("messageBar")
        self.setAutoFillBackground(True)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Dismiss this message")
        self.close_button.setAccessibleName("Dismiss message")
        self.close_button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.error = False
        self.key = ""
        self.close_button.clicked.connect(self.dismiss)
        self._host = host
        host.installEventFilter(self)
        self.hide()

    def text(self) -> str:
        return self.label.text()

    def show_message(self, text: str, error: bool = True, key: str = "") -> None:
        self.error, self.key = error, key or text
        colors = ERROR_COLORS if error else WARNING_COLORS
        self.setStyleSheet(
            box_style(colors, "QFrame#messageBar")
            + f" QLabel {{ color: {colors[0]}; background: transparent; border: none; }}"
            + f" QToolButton {{ color: {colors[0]}; border: none; }}"
        )
        self.label.setText(text)
        self.show()
        self.place()
        self.raise_()

    @Slot()
    def dismiss(self) -> None:
        was_shown = self.isVisible()
        self.hide()
        if was_shown:
            self.dismissed.emit(self.key)

    def area(self) -> QRect:
        """The rectangle (in host coordinates) the bar lies over the bottom of."""
        central = self._host.centralWidget() if isinstance(self._host, QMainWindow) else None
        return central.geometry() if central is not None else self._host.rect()

    def place(self) -> None:
        """Over the bottom of the area, full width less a margin; as tall as the wrapped text needs."""
        area = self.area()
        width = max(area.width() - 2 * MARGIN, 100)
        layout = self.layout()
        fits = layout is not None and layout.hasHeightForWidth()
        height = layout.heightForWidth(width) if layout is not None and fits else self.sizeHint().height()
        height = min(max(height, self.sizeHint().height()), max(area.height() // 2, 40))
        self.setGeometry(area.left() + MARGIN, area.bottom() + 1 - height - MARGIN, width, height)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self._host
            and event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest)
            and (self.isVisible())
        ):
            self.place()
        return False
