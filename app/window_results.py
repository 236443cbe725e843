"""The main window's results: history entries (add, stopped partial results, play, load back, delete, clear) and
exporting audio."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import (
    QFileDialog,
)

from core.engine import FORMATS, SAMPLE_RATE, ChatterboxError, write_audio
from core.voices import AUDIO_SUFFIXES
from core.wording import describe_error

from .history import HistoryEntry
from .settings import Key
from .studio.export_dialog import default_folder, export_name

log = logging.getLogger(__name__)


class ResultActions:
    """Mixed into :class:`app.main_window.MainWindow` (uses its widgets, settings, bridge and player)."""

    def _history_fields(self, text: str, seed: int | None) -> dict:
        """What a history entry records about a request besides its audio (voice, model, seed, settings)."""
        model = self.bridge.model
        return {
            "text": text, "seed": seed or 0,
            "voice": self.voice_name or (Path(self.voice.source).name if self.voice else "default"),
            "voice_source": (self.voice_name or str(self.voice.source)) if self.voice else "",
            "variant": model.variant if model else "", "model": model.bundle.name if model else "",
            "precision": model.capabilities.lm_precision if model else "",
            "settings": {k.value: self.settings.get(k) for k in Key
                         if k.value.startswith(("model/", "runtime/", "sampling/", "voice/"))},
        }  # fmt: skip

    def _add_to_history(self, audio: np.ndarray, fields: dict, partial: bool = False,
                        timings=None) -> HistoryEntry | None:  # fmt: skip
        try:
            entry = self.history.add(audio, SAMPLE_RATE, partial=partial, timings=timings or {}, **fields)
        except (OSError, ChatterboxError) as exc:
            self.show_message(f"The result could not be added to the history: {describe_error(exc)}", error=False)
            return None
        self._refresh_history()
        return entry

    def _save_stopped(self) -> None:
        """The request being stopped keeps what it produced: into the history, marked "stopped (partial)"."""
        request, self._request = self._request, None
        if request is None or request.pop("rid") != self.bridge.current or not self._chunks:
            return
        self._add_to_history(np.concatenate(self._chunks), request, partial=True,
                             timings={"chunks": self.latency.chunk_rows()})  # fmt: skip

    def _refresh_history(self) -> None:
        self.history_panel.set_entries(self.history.entries)

    def _selected_history(self, entry_id: str | None = None):
        entry_id = entry_id or self.history_panel.current_id()
        return next((e for e in self.history.entries if e.id == entry_id), None)

    def _history_audio(self, entry) -> np.ndarray | None:
        try:
            return self.history.audio(entry)[0]
        except (OSError, RuntimeError) as exc:  # soundfile's errors are RuntimeErrors
            self.show_message(f"The audio of this result cannot be read: {exc}")
            return None

    @Slot(str)
    def _on_history_play(self, entry_id: str | None = None) -> None:
        entry = self._selected_history(entry_id)
        audio = self._history_audio(entry) if entry is not None else None
        if audio is None:
            return
        self._save_stopped()
        self.bridge.cancel()
        self.player.begin()
        self.waveform.clear_audio()
        self.waveform.append(audio)
        self.latency.show_replay(entry.id, entry.timings, entry.created)
        self.player.feed(audio)
        self.player.end_of_input()
        self.last_audio = audio
        self._play_timer.start()

    @Slot(str)
    def _on_history_export(self, entry_id: str | None = None) -> None:
        entry = self._selected_history(entry_id)
        audio = self._history_audio(entry) if entry is not None else None
        if audio is not None:
            self.export(audio, default_name=export_name(entry.text))

    @Slot(str)
    def _on_history_load(self, entry_id: str | None = None) -> None:
        """Put a result's text back into the editor, with its voice and seed where they can still be used."""
        entry = self._selected_history(entry_id)
        if entry is None:
            return
        speak_tab = self.modes.indexOf(self.text.parentWidget())
        if speak_tab >= 0:
            self.modes.setCurrentIndex(speak_tab)
        self.text.set_text(entry.text)
        done = ["text"]
        source = entry.voice_source or (entry.voice if self.library.get(entry.voice) else "")
        library_voice = self.library.get(source) if source else None
        if library_voice is not None:
            if self.select_voice_file(library_voice.path, name=library_voice.name):
                done.append(f"voice “{library_voice.name}”")
        elif source and Path(source).suffix.lower() in AUDIO_SUFFIXES and Path(source).is_file():
            if self.select_voice_file(Path(source)):
                done.append(f"voice “{Path(source).name}”")
        elif not source and entry.voice == "default":
            self._on_default_voice_selected()
            done.append("the default voice")
        if entry.seed:
            self.settings.set(Key.RANDOM_SEED, False)
            self.settings.set(Key.SEED, int(entry.seed))
            self.settings_panel.load()
            done.append(f"seed {entry.seed} (Random seed is now off)")
        self.statusBar().showMessage("Loaded the " + ", ".join(done) + ".", 8000)
        self.text.editor.setFocus()

    @Slot(str)
    def _on_history_delete(self, entry_id: str | None = None) -> None:
        entry = self._selected_history(entry_id)
        if entry is None:
            return
        row = self.history_list.currentRow()
        try:
            self.history.remove(entry)
        except OSError as exc:
            self.show_message(f"The result could not be deleted: {exc}")
            return
        self._refresh_history()
        if self.history_list.count():
            self.history_list.setCurrentRow(min(row, self.history_list.count() - 1))

    @Slot()
    def _on_history_clear(self) -> None:
        try:
            self.history.clear()
        except OSError as exc:
            self.show_message(f"The history could not be cleared: {exc}")
            return
        self._refresh_history()

    def _restore_session(self) -> None:
        """The typed text and the selected tabs come back as they were; the text is saved as it changes."""
        self.text.set_text(self.settings.get(Key.TEXT) or "")
        for tabs, key in ((self.tabs, Key.TAB), (self.modes, Key.MODE)):
            index = self.settings.get(key)
            if 0 <= index < tabs.count():
                tabs.setCurrentIndex(index)
            tabs.currentChanged.connect(lambda i, k=key: self.settings.set(k, i))
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(1500)
        self._draft_timer.timeout.connect(self.save_draft)
        self.text.editor.textChanged.connect(self._draft_timer.start)

    def save_draft(self) -> None:
        """Keep the typed text (a moment after each change, and on closing)."""
        self._draft_timer.stop()
        if self.text.text != self.settings.get(Key.TEXT):
            self.settings.set(Key.TEXT, self.text.text)

    @Slot()
    def _on_export_clicked(self) -> None:
        if self.last_audio is not None and self.last_audio.size:
            self.export(self.last_audio, default_name=export_name(self.last_report.text if self.last_report else ""))

    def export(self, audio: np.ndarray, default_name: str = "narration.wav", path: Path | None = None) -> bool:
        """Save audio; the dialog starts in the last export folder (or Music / Documents), named after the text."""
        if path is None:
            filters = ";;".join(f"{fmt.name} (*{suffix})" for suffix, fmt in FORMATS.items())
            start = default_folder(self.settings.get(Key.EXPORT_FOLDER)) / default_name
            chosen, chosen_filter = QFileDialog.getSaveFileName(self, "Export audio", str(start), filters)
            if not chosen:
                return False
            path = Path(chosen)
            if path.suffix.lower() not in FORMATS:  # a typed extension picks the format; none takes the filter's
                path = path.with_name(path.name + chosen_filter[chosen_filter.find("*") + 1 : -1])
        try:
            write_audio(path, audio, SAMPLE_RATE)
        except ChatterboxError as exc:
            self.show_message(describe_error(exc))
            return False
        self.settings.set(Key.EXPORT_FOLDER, str(path.parent))
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True
