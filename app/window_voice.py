"""The main window's voice actions: drops, file choice, recording, playing and trimming the reference, the voice
library (save, switch, remove with undo) and Turbo's missing built-in voice."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import Slot

from core.engine import ChatterboxError, load_voice
from core.wording import describe_error

from .settings import Key
from .widgets.record_dialog import RecordDialog, TrimDialog
from .widgets.voice_panel import dropped_file

log = logging.getLogger(__name__)


class VoiceActions:
    """Mixed into :class:`app.main_window.MainWindow` (uses its widgets, settings, bridge and player)."""

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        path = dropped_file(event)
        if path is not None:
            event.acceptProposedAction()
            self.select_voice_file(path)

    @Slot(Path)
    def select_voice_file(self, path: Path, name: str = "", quiet: bool = False) -> bool:
        """The drop / file-dialog path: check the recording; on a problem, say so and change nothing."""
        try:
            voice = load_voice(path)
        except ChatterboxError as exc:
            if not quiet:
                self.show_message(describe_error(exc))
            return False
        self.voice, self.voice_name = voice, name
        self.settings.set(Key.VOICE, name or str(path))
        self._update_voice_panel()
        if not quiet:
            self.hide_message()
        return True

    @Slot()
    def record_voice(self) -> bool:
        """Record a reference from the microphone (the dialog checks the level and trims); select it."""
        dialog = RecordDialog(self.paths.recordings, self.input_device, self)
        if dialog.exec() and dialog.path is not None:
            return self.select_voice_file(dialog.path)
        return False

    @Slot()
    def play_voice(self) -> None:
        if self.voice is None:
            return
        self.bridge.cancel()
        self.player.begin()
        if not self.player.feed(self.voice.samples):
            self.show_message(self.player.error or "Audio cannot be played on this computer.", error=False)
        self.player.end_of_input()
        self.playback_label.setText("playing the reference")

    @Slot()
    def trim_voice(self) -> bool:
        if self.voice is None:
            return False
        name = self.voice_name or Path(self.voice.source).stem
        dialog = TrimDialog(self.voice.samples, self.paths.recordings, name, self)
        if dialog.exec() and dialog.path is not None:
            return self.select_voice_file(dialog.path)
        return False

    def _offer_voice_for_turbo(self) -> None:
        """First start with a model that has no built-in voice: say a recording is needed and offer one."""
        if self.voice is not None or self.bridge.model is None or self.bridge.model.capabilities.has_default_voice:
            return
        self.show_message(
            "This model (Turbo) has no built-in voice: it needs a recording of the voice to clone. Record 10 s "
            "of speech (Voice → Record…) or choose a recording of 5–10 s of clean speech (Ctrl+O).",
            error=False,
        )
        self.tabs.setCurrentWidget(self.voice_panel)

    def _update_voice_panel(self) -> None:
        model = self.bridge.model
        has_default = model is None or model.capabilities.has_default_voice
        self.voice_panel.set_default_available(has_default)
        if self.voice is None:
            self.voice_panel.show_voice("Default voice" if has_default else "No voice", None, saveable=False)
        else:
            title = self.voice_name or Path(self.voice.source).name
            self.voice_panel.show_voice(title, self.voice, saveable=not self.voice_name)
        self.voice_panel.select_current(self.voice_name or None)

    def _refresh_library(self) -> None:
        self.voice_panel.set_library([v.name for v in self.library.voices()], self.voice_name or None)

    @Slot(str)
    def _on_library_selected(self, name: str) -> None:
        entry = self.library.get(name)
        if entry is None:
            self.show_message(f"The voice “{name}” is no longer in the library (its recording was removed).")
            self._refresh_library()
            return
        self.select_voice_file(entry.path, name=name)

    @Slot()
    def _on_default_voice_selected(self) -> None:
        self.voice, self.voice_name = None, ""
        self.settings.set(Key.VOICE, "")
        self._update_voice_panel()
        self._refresh_library()

    @Slot(str)
    def _on_save_voice(self, name: str) -> None:
        if self.voice is None:
            return
        try:
            entry, voice = self.library.add(name, Path(self.voice.source))
        except (ChatterboxError, OSError) as exc:
            self.show_message(f"Cannot save the voice: {describe_error(exc)}")
            return
        self.voice, self.voice_name = voice, entry.name
        self.settings.set(Key.VOICE, entry.name)
        self._refresh_library()
        self._update_voice_panel()

    @Slot(str)
    def _on_remove_voice(self, name: str) -> None:
        """Remove a library voice (the panel asked first); its recording waits in the trash so Undo can restore it."""
        try:
            removed = self.library.remove(name)
        except OSError as exc:
            self.show_message(f"Cannot remove the voice: {exc}")
            return
        was_current = self.voice_name == name
        if removed is not None:
            self._removed_voices.append((removed, was_current))
        if was_current:
            self._on_default_voice_selected()
        self._refresh_library()
        self._show_voice_undo()

    @Slot()
    def _on_undo_remove_voice(self) -> None:
        if not self._removed_voices:
            return
        removed, was_current = self._removed_voices.pop()
        try:
            entry = self.library.restore(removed)
        except (OSError, ChatterboxError) as exc:
            self.show_message(f"The voice “{removed.name}” cannot be restored: {describe_error(exc)}")
        else:
            if was_current:
                self.select_voice_file(entry.path, name=entry.name, quiet=True)
            self.statusBar().showMessage(f"Restored the voice “{entry.name}”.", 4000)
        self._refresh_library()
        self._show_voice_undo()

    def _show_voice_undo(self) -> None:
        last = self._removed_voices[-1][0].name if self._removed_voices else ""
        self.voice_panel.show_undo(f"Removed “{last}”." if last else "")
