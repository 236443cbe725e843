"""Whether the window, and every control a user can see in it, lies inside the screen's available area.

Each view is checked in turn (every mode: Speak, Project, Re-voice; every side tab). A control counts when it is
visible and not inside a scroll area (what scrolls can be reached by scrolling); it must lie wholly inside the
available geometry, and wholly inside its window (a control cut off by a layout that does not fit is not usable
either).
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QAbstractScrollArea, QWidget


def _scrolls(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea) and parent.viewport().isAncestorOf(widget):
            return True
        parent = parent.parentWidget()
    return False


def _name(widget: QWidget) -> str:
    text = getattr(widget, "text", None)
    label = text() if callable(text) else ""
    return f"{type(widget).__name__}{' ' + repr(label[:30]) if isinstance(label, str) and label else ''}"


def controls_outside(window: QWidget, available: QRect) -> list[str]:
    inside = QRect(window.mapToGlobal(QPoint(0, 0)), window.size()).intersected(available)
    outside = []
    for widget in window.findChildren(QWidget):
        if widget.isWindow() or not widget.isVisible() or widget.width() <= 0 or widget.height() <= 0:
            continue
        if _scrolls(widget):
            continue
        rect = QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())
        if not inside.contains(rect):
            outside.append(f"{_name(widget)} at {rect.x()},{rect.y()} {rect.width()}x{rect.height()}")
    return outside


def window_fit(window) -> dict:
    """Check every view of the main window; the views are put back as they were."""
    screen = window.screen()
    available = screen.availableGeometry()
    frame = window.frameGeometry()
    outside: list[str] = []
    if not available.contains(frame):
        outside.append(f"the window {frame.width()}x{frame.height()} at {frame.x()},{frame.y()}")
    modes, tabs = window.modes.currentIndex(), window.tabs.currentIndex()
    for mode in range(window.modes.count()):
        window.modes.setCurrentIndex(mode)
        for tab in range(window.tabs.count()):
            window.tabs.setCurrentIndex(tab)
            for found in controls_outside(window, available):
                where = f"{window.modes.tabText(mode)} / {window.tabs.tabText(tab)}: {found}".replace("&", "")
                if where not in outside:
                    outside.append(where)
    window.modes.setCurrentIndex(modes)
    window.tabs.setCurrentIndex(tabs)
    hint = window.minimumSizeHint()
    return {
        "fits": not outside,
        "available": f"{available.width()}x{available.height()}",
        "minimum": f"{hint.width()}x{hint.height()}",
        "outside": outside,
    }
