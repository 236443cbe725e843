"""What the self-test and the screenshots share to drive the real window without a person: Qt's offscreen platform
where there is no display, waiting while Qt runs, and saying the result (a frozen app may have no console)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable


def offscreen_without_display() -> None:
    """Qt's offscreen platform when there is neither an X nor a Wayland display (before Qt starts)."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def wait_until(app, condition: Callable[..., object], timeout: float) -> bool:
    """Run Qt's events until ``condition()`` holds (``True``) or ``timeout`` seconds pass (``False``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        app.processEvents()
        if condition():
            return True
        time.sleep(0.005)
    return False


def say(text: str, stream) -> None:
    if stream is not None:  # a frozen app without a console has neither stdout nor stderr
        print(text, file=stream)
