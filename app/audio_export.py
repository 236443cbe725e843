"""Saving audio to a file (the last result, a history entry): the dialog starts in the last export folder (or Music /
Documents), named after the text; a typed extension picks the format."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtWidgets import QFileDialog, QWidget

from core.engine import FORMATS, SAMPLE_RATE, ChatterboxError, write_audio
from core.wording import describe_error

from .messages import Messages
from .settings import Key, Settings
from .studio.export_dialog import default_folder


class AudioExport:
    def __init__(self, settings: Settings, messages: Messages, parent: QWidget) -> None:
        self.settings, self.messages, self.parent = settings, messages, parent

    def export(self, audio: np.ndarray, default_name: str = "narration.wav", path: Path | None = None) -> bool:
        """Save ``audio`` to ``path``, or where the user chooses; False when nothing was saved."""
        if path is None:
            path = self.ask_path(default_name)
            if path is None:
                return False
        try:
            write_audio(path, audio, SAMPLE_RATE)
        except ChatterboxError as exc:
            self.messages.show(describe_error(exc))
            return False
        self.settings.set(Key.EXPORT_FOLDER, str(path.parent))
        self.messages.note(f"Saved {path}", 5000)
        return True

    def ask_path(self, default_name: str) -> Path | None:
        filters = ";;".join(f"{fmt.name} (*{suffix})" for suffix, fmt in FORMATS.items())
        start = default_folder(self.settings.get(Key.EXPORT_FOLDER)) / default_name
        chosen, chosen_filter = QFileDialog.getSaveFileName(self.parent, "Export audio", str(start), filters)
        if not chosen:
            return None
        path = Path(chosen)
        if path.suffix.lower() not in FORMATS:  # a typed extension picks the format; none takes the filter's
            path = path.with_name(path.name + chosen_filter[chosen_filter.find("*") + 1 : -1])
        return path
