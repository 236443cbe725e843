"""A history of generations (text, voice, settings, seed, timings and the audio), kept across restarts."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf

from core.atomic import remove_partial_files, write_json_atomic
from core.audio_io import write_audio

MAX_ENTRIES = 200


@dataclass
class HistoryEntry:
    id: str
    created: float
    text: str
    voice: str
    variant: str
    seed: int
    settings: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    audio_file: str = ""
    seconds: float = 0.0

    @property
    def title(self) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(self.created))
        snippet = " ".join(self.text.split())[:48]
        return f"{stamp} · {self.seconds:.1f} s · {snippet}"


def _plain_flac(name) -> bool:
    """history.json may be edited or copied: only plain ``.flac`` names inside the history folder are used."""
    return isinstance(name, str) and Path(name).name == name and name.endswith(".flac")


class History:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        remove_partial_files(self.directory)
        self.entries: list[HistoryEntry] = self._load()

    def _index(self) -> Path:
        return self.directory / "history.json"

    def _load(self) -> list[HistoryEntry]:
        try:
            raw = json.loads(self._index().read_text(encoding="utf-8"))
            entries = [HistoryEntry(**item) for item in raw]
        except (OSError, ValueError, TypeError):
            return []
        return [e for e in entries if _plain_flac(e.audio_file) and (self.directory / e.audio_file).is_file()]

    def _save(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self._index(), [asdict(e) for e in self.entries])

    def add(self, audio: np.ndarray, sample_rate: int, **fields) -> HistoryEntry:
        entry_id = time.strftime("%Y%m%d-%H%M%S") + f"-{int(time.time() * 1000) % 1000:03d}"
        audio_file = f"{entry_id}.flac"
        self.directory.mkdir(parents=True, exist_ok=True)
        write_audio(self.directory / audio_file, audio, sample_rate)
        entry = HistoryEntry(id=entry_id, created=time.time(), audio_file=audio_file,
                             seconds=audio.size / sample_rate, **fields)  # fmt: skip
        self.entries.insert(0, entry)
        try:
            self._save()
        except OSError:  # disk full or read-only: the history stays as it was
            self.entries.remove(entry)
            (self.directory / audio_file).unlink(missing_ok=True)
            raise
        for old in self.entries[MAX_ENTRIES:]:
            (self.directory / old.audio_file).unlink(missing_ok=True)
        del self.entries[MAX_ENTRIES:]
        return entry

    def audio(self, entry: HistoryEntry) -> tuple[np.ndarray, int]:
        data, rate = sf.read(self.directory / entry.audio_file, dtype="float32")
        return data, rate
