"""Where the main window opens: sized and placed from the screen's available geometry, never larger than it.

The preferred first size is 1280×800 logical pixels; on a smaller screen (1024×600 at 150 % has 683×400) the window
takes what the screen offers, down to its own minimum size, and is centred. A remembered geometry is used only while
it still lies on a screen and fits it (a laptop moved from its large monitor gets a window it can see).
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QStyle, QWidget

PREFERRED = QSize(1280, 800)


def frame_margins(window: QWidget) -> QMargins:
    """The window manager's frame around the window (known once shown; before that, a title bar's height)."""
    window.winId()  # the native window exists from here on: its platform knows (or guesses) the frame
    handle = window.windowHandle()
    margins = handle.frameMargins() if handle is not None else QMargins()
    if not margins.isNull() or QGuiApplication.platformName() in ("offscreen", "minimal"):
        return margins
    title = window.style().pixelMetric(QStyle.PixelMetric.PM_TitleBarHeight)
    return QMargins(0, max(title, 0), 0, 0)


def initial_geometry(available: QRect, minimum: QSize, frame: QMargins, preferred: QSize = PREFERRED) -> QRect:
    """The window's client rectangle: ``preferred``, shrunk to the available area less the frame, never below
    ``minimum``, centred in the available area."""
    room = QSize(available.width() - frame.left() - frame.right(), available.height() - frame.top() - frame.bottom())
    width = max(minimum.width(), min(preferred.width(), room.width()))
    height = max(minimum.height(), min(preferred.height(), room.height()))
    outer = QSize(width + frame.left() + frame.right(), height + frame.top() + frame.bottom())
    left = available.x() + max(0, (available.width() - outer.width()) // 2) + frame.left()
    top = available.y() + max(0, (available.height() - outer.height()) // 2) + frame.top()
    return QRect(QPoint(left, top), QSize(width, height))


def _screen_of(window: QWidget):
    screen = QGuiApplication.screenAt(window.geometry().center())
    return screen or window.screen() or QGuiApplication.primaryScreen()


def fits_screen(window: QWidget) -> bool:
    """The window (with its frame) lies inside the available area of the screen it is on."""
    screen = QGuiApplication.screenAt(window.geometry().center())
    if screen is None:
        return False
    frame = frame_margins(window)
    outer = window.geometry().marginsAdded(frame)
    return screen.availableGeometry().contains(outer)


def place_on_screen(window: QWidget) -> QRect:
    """Size and centre the window on its screen; returns the client rectangle chosen."""
    screen = _screen_of(window)
    if screen is None:  # no screen at all (should not happen): Qt's defaults
        window.resize(PREFERRED)
        return window.geometry()
    rect = initial_geometry(screen.availableGeometry(), window.minimumSizeHint(), frame_margins(window))
    window.setGeometry(rect)
    return rect
