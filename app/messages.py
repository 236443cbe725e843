"""Where the panels tell the user something: the message bar over the window (kept until closed) and the status
bar's short notes. The window makes one and passes it to every panel that needs it."""

from __future__ import annotations

import logging

from PySide6.QtWidgets import QStatusBar

from .widgets.message_bar import MessageBar

log = logging.getLogger("app.main_window")


class Messages:
    def __init__(self, bar: MessageBar, status: QStatusBar) -> None:
        self.bar, self.status = bar, status

    def show(self, text: str, error: bool = True, key: str = "") -> None:
        """In the message bar (closed with its ✕); ``key`` names the message for :attr:`MessageBar.dismissed`."""
        self.bar.show_message(text, error=error, key=key)
        log.info("message shown: %s", text)

    def hide(self) -> None:
        self.bar.hide()

    def note(self, text: str, timeout_ms: int) -> None:
        """A passing note in the status bar."""
        self.status.showMessage(text, timeout_ms)
