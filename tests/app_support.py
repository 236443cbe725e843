"""Helpers for the app tests: a main window on a virtual sound device, speaking, dropping files."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent

from app.audio.playback import Player
from app.audio.virtual_device import VirtualSoundDevice
from app.main_window import MainWindow
from app.paths import AppPaths
from app.settings import Settings


def make_window(qtbot, tmp_path, bundle, sd=None, load=True, bridge=None):
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    player = Player(sd if sd is not None else VirtualSoundDevice(speed=40))
    window = MainWindow(settings, AppPaths.under(tmp_path / "home"), player=player, bridge=bridge)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    if load:
        with qtbot.waitSignal(window.bridge.model_loaded, timeout=30000):
            window.load_model(bundle)
    return window


def speak_and_wait(qtbot, window, text="Hello there, this is a test."):
    window.speak_panel.text.set_text(text)
    with qtbot.waitSignal(window.speak_panel.playback_finished, timeout=60000):
        qtbot.mouseClick(window.speak_panel.speak_button, Qt.MouseButton.LeftButton)


def drop(window, path: Path):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(
        QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    window.dropEvent(event)
