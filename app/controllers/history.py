"""The History tab's logic: the entries, reading a result's audio, deleting, and what "Load text back" restores."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.engine import SAMPLE_RATE
from core.voices import AUDIO_SUFFIXES, VoiceLibrary

from ..history import History, HistoryEntry


@dataclass(frozen=True)
class LoadBack:
    """What loading a result back into the editor restores besides its text."""

    text: str
    library_voice: str | None = None
    """A library voice by name."""
    recording: Path | None = None
    """A recording outside the library that still exists."""
    default_voice: bool = False
    seed: int | None = None


class HistoryController:
    """Wraps :class:`History`; whoever shows the entries subscribes to hear when they change."""

    def __init__(self, history: History) -> None:
        self.history = history
        self._listeners: list[Callable[[], None]] = []

    @property
    def entries(self) -> list[HistoryEntry]:
        return self.history.entries

    def subscribe(self, listener: Callable[[], None]) -> None:
        """``listener()`` runs after every change (an entry added, deleted, or the history cleared)."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()

    def find(self, entry_id: str | None) -> HistoryEntry | None:
        return next((e for e in self.history.entries if e.id == entry_id), None) if entry_id else None

    def audio(self, entry: HistoryEntry) -> np.ndarray:
        """The result's samples (``OSError`` or soundfile's ``RuntimeError`` when they cannot be read)."""
        return self.history.audio(entry)[0]

    def add(
        self, audio: np.ndarray, fields: dict[str, Any], partial: bool = False, timings: dict[str, Any] | None = None
    ) -> HistoryEntry:
        """Keep a result (``OSError`` or ``ChatterboxError`` when it cannot be written: nothing changes then)."""
        entry = self.history.add(audio, SAMPLE_RATE, partial=partial, timings=timings or {}, **fields)
        self._changed()
        return entry

    def delete(self, entry: HistoryEntry) -> None:
        self.history.remove(entry)
        self._changed()

    def clear(self) -> None:
        self.history.clear()
        self._changed()

    @staticmethod
    def load_back(entry: HistoryEntry, library: VoiceLibrary) -> LoadBack:
        """The result's text, with its voice and seed where they can still be used."""
        source = entry.voice_source or (entry.voice if library.get(entry.voice) else "")
        seed = int(entry.seed) if entry.seed else None
        library_voice = library.get(source) if source else None
        if library_voice is not None:
            return LoadBack(entry.text, library_voice=library_voice.name, seed=seed)
        if source and Path(source).suffix.lower() in AUDIO_SUFFIXES and Path(source).is_file():
            return LoadBack(entry.text, recording=Path(source), seed=seed)
        return LoadBack(entry.text, default_voice=not source and entry.voice == "default", seed=seed)
