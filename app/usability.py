"""Keyboard use and notices of the main window, kept out of :mod:`app.main_window`.

- Focus: the plots take no focus, Tab goes text → Insert tag → Speak → Stop → Export → the side tabs; clicking a plot
  or an empty spot takes the focus out of the editor (so Space reaches the window).
- Keys: Space pauses / resumes playback (or plays the last result again) wherever the focused control does not use
  Space itself (the editor types it, a focused button is pressed); Ctrl+O opens a voice recording; F1 lists every
  shortcut (Help → Keyboard shortcuts), read from the menus so the list stays true.
- Notices: the provider notice ("CUDA … could not be loaded") is shown in the dismissable message bar; once the user
  closes it, the same notice is not shown again (it stays in the status bar's tooltip).

The window is what :class:`UsableWindow` names (the main window passes itself): this module never imports
:mod:`app.main_window`, which imports it.
"""

from __future__ import annotations

import logging
from functools import partial
from itertools import pairwise
from typing import Protocol

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QLabel, QMenu, QMenuBar, QTabWidget, QWidget

from core.engine import ModelLoaded
from core.wording import describe_notice

from .panels.speak_panel import SpeakPanel
from .panels.voice_panel import VoicePanel
from .resources import docs_path
from .settings import Key, Settings
from .widgets.guide_dialog import GuideDialog
from .widgets.message_bar import MessageBar
from .widgets.shortcuts_dialog import FIXED_SHORTCUTS, ShortcutsDialog

log = logging.getLogger(__name__)
PROVIDER_NOTICE = "provider:"
"""Prefix of the message-bar key of a provider notice: closing such a notice is remembered."""
SIDE_TAB_TITLES = {"Voice": "&Voice", "Settings": "Setti&ngs", "History": "Histor&y", "Cast": "C&ast"}


class UsableWindow(Protocol):
    """What this module uses of the main window: its panels, tabs, message bar and settings, the actions it names,
    and what it adds (the voice entry, the shortcuts entry, the Help menu, the shortcuts dialog)."""

    settings: Settings
    speak_panel: SpeakPanel
    voice_panel: VoicePanel
    tabs: QTabWidget
    message: MessageBar
    choose_model_action: QAction
    quit_action: QAction
    open_voice_action: QAction
    shortcuts_action: QAction
    guide_action: QAction
    help_menu: QMenu
    shortcuts_dialog: ShortcutsDialog | None
    guide_dialog: GuideDialog | None

    @property
    def provider_label(self) -> QLabel: ...

    def window(self) -> QWidget:
        """The window as a Qt widget (Qt's own ``QWidget.window()``: the main window is its own window)."""
        ...

    def menuBar(self) -> QMenuBar: ...

    def toggle_playback(self) -> str: ...

    def show_message(self, text: str, error: bool = True, key: str = "") -> None: ...


def install(window: UsableWindow) -> None:
    """Add the keyboard behaviour, the Help menu and the notice memory to a built main window."""
    _focus(window)
    _actions(window)
    window.message.dismissed.connect(partial(_on_message_dismissed, window))
    window.window().installEventFilter(_SpaceKey(window))


# --- focus -------------------------------------------------------------------------------------------------------
def _focus(window: UsableWindow) -> None:
    for view in window.window().findChildren(pg.GraphicsView):  # every plot, wherever it sits
        view.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    # Clicking a plot (or the space between controls) focuses the page instead, not nothing: the editor lets go.
    speak = window.speak_panel
    speak.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
    # Buttons clicked with the mouse leave the focus where it was (typing goes on; Space is not "click again").
    for button in (speak.speak_button, speak.stop_button, speak.export_button):
        button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
    for index in range(window.tabs.count()):  # mnemonics for the side tabs, matched by title (not by position)
        title = window.tabs.tabText(index)
        window.tabs.setTabText(index, SIDE_TAB_TITLES.get(title, title))
    # Text, its buttons, the plots' own controls (not the plots), then the side tabs. The tab widget, not its tab bar:
    # Qt substitutes the bar as the focus proxy, and ordering the bar itself cuts the side panel into a closed loop.
    plot_controls = [w for w in speak.latency.findChildren(QWidget) if _takes_tab(w) and w.window() is window]
    chain = [
        speak.text.editor,
        speak.text.tag_button,
        speak.speak_button,
        speak.stop_button,
        speak.export_button,
        *plot_controls,
        window.tabs,
    ]
    for first, second in pairwise(chain):
        QWidget.setTabOrder(first, second)
    speak.text.editor.setFocus()


def _takes_tab(widget: QWidget) -> bool:
    """Tab can stop here (as Qt decides: a widget whose focus goes to a proxy is passed by)."""
    return bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus) and widget.focusProxy() is None


# --- menus and shortcuts -----------------------------------------------------------------------------------------
def _actions(window: UsableWindow) -> None:
    widget = window.window()
    file_menu = next((m for m in _menus(window) if m.title().replace("&", "") == "File"), None)
    window.open_voice_action = QAction("Open &voice recording…", widget)
    window.open_voice_action.setShortcut(QKeySequence.StandardKey.Open)
    window.open_voice_action.setToolTip("Choose a reference recording to clone (Ctrl+O)")
    window.open_voice_action.triggered.connect(partial(open_voice, window))
    if file_menu is not None:
        first = file_menu.actions()[0] if file_menu.actions() else None
        if first is not None:
            file_menu.insertAction(first, window.open_voice_action)
            file_menu.insertSeparator(first)
        else:
            file_menu.addAction(window.open_voice_action)
    else:
        widget.addAction(window.open_voice_action)
    for action in (window.choose_model_action, window.quit_action):
        if "&" not in action.text():
            action.setText("&" + action.text())
    help_menu = window.menuBar().addMenu("&Help")
    window.guide_action = QAction("&Guide", widget)
    window.guide_action.setToolTip("From a fresh install to a finished audiobook, step by step, with pictures")
    window.guide_action.triggered.connect(partial(show_guide, window))
    help_menu.addAction(window.guide_action)
    window.guide_dialog = None
    window.shortcuts_action = QAction("&Keyboard shortcuts", widget)
    window.shortcuts_action.setShortcut(QKeySequence(Qt.Key.Key_F1))
    window.shortcuts_action.triggered.connect(partial(show_shortcuts, window))
    help_menu.addAction(window.shortcuts_action)
    window.help_menu = help_menu
    window.shortcuts_dialog = None


def _menus(window: UsableWindow) -> list[QMenu]:
    return [menu for a in window.menuBar().actions() if isinstance(menu := a.menu(), QMenu)]


def open_voice(window: UsableWindow, _checked: bool = False) -> None:
    window.tabs.setCurrentWidget(window.voice_panel)
    window.voice_panel.choose_file()


def menu_shortcuts(window: UsableWindow) -> list[tuple[str, str]]:
    """(keys, action) of every menu entry with a shortcut, as the menus say it now."""
    rows: list[tuple[str, str]] = []
    for menu in _menus(window):
        _menu_rows(menu, menu.title().replace("&", ""), rows)
    return rows


def _menu_rows(menu: QMenu, path: str, rows: list[tuple[str, str]]) -> None:
    """Add (keys, "Menu → Entry") of ``menu``'s entries with a shortcut to ``rows``, submenus included."""
    for action in menu.actions():
        submenu = action.menu()
        if isinstance(submenu, QMenu):
            _menu_rows(submenu, path, rows)
        elif action.shortcuts():
            keys = ", ".join(s.toString(QKeySequence.SequenceFormat.PortableText) for s in action.shortcuts())
            rows.append((keys, f"{path} → {action.text().replace('&', '').rstrip('…')}"))


def show_guide(window: UsableWindow, _checked: bool = False) -> GuideDialog:
    if window.guide_dialog is None:
        window.guide_dialog = GuideDialog(docs_path("GUIDE.md"), window.window())
    window.guide_dialog.show()
    window.guide_dialog.raise_()
    return window.guide_dialog


def show_shortcuts(window: UsableWindow, _checked: bool = False) -> ShortcutsDialog:
    if window.shortcuts_dialog is None:
        window.shortcuts_dialog = ShortcutsDialog(FIXED_SHORTCUTS + tuple(menu_shortcuts(window)), window.window())
    window.shortcuts_dialog.show()
    window.shortcuts_dialog.raise_()
    return window.shortcuts_dialog


# --- Space: play / pause -----------------------------------------------------------------------------------------
class _SpaceKey(QObject):
    """Space that reaches the window (no focused control used it) pauses, resumes or plays again."""

    def __init__(self, window: UsableWindow) -> None:
        super().__init__(window.window())
        self.window = window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.window
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() == Qt.Key.Key_Space
            and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            and not event.isAutoRepeat()
        ):
            toggle_playback(self.window)
            return True
        return False


def toggle_playback(window: UsableWindow) -> str:
    """Pause or resume what plays; with nothing playing, play the last result again. Returns what it did."""
    return window.toggle_playback()


# --- notices -----------------------------------------------------------------------------------------------------
def show_model_notice(window: UsableWindow, event: ModelLoaded) -> bool:
    """Show a model's notice in the message bar unless it is a provider notice the user closed before."""
    if not event.notice:
        return False
    notice = describe_notice(event.notice) or ""
    caps = event.capabilities
    if event.notice == caps.provider_notice:
        window.provider_label.setToolTip((window.provider_label.toolTip() + "\n\n" + notice).strip())
        if window.settings.get(Key.DISMISSED_NOTICE) == notice:
            log.info("provider notice not shown again (dismissed): %s", notice)
            return False
        window.show_message(notice, error=False, key=PROVIDER_NOTICE + notice)
    else:
        window.show_message(notice, error=False)
    return True


def _on_message_dismissed(window: UsableWindow, key: str) -> None:
    if key.startswith(PROVIDER_NOTICE):
        window.settings.set(Key.DISMISSED_NOTICE, key[len(PROVIDER_NOTICE) :])
