"""A history of generations (text, voice, settings, seed, timings and the audio), kept across restarts."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from dataclasses import fields as dataclass_fields
from pathlib import Path

import numpy as np
import soundfile as sf

from core.engine import remove_partial_files, write_audio, write_json_atomic

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
    # Added later: entries written before them read with these defaults.
    model: str = ""
    """The bundle's folder name."""
    precision: str = ""
    """The language model's precision (``q4``, ``fp32``…)."""
    voice_source: str = ""
    """What selects the voice again: a voice-library name or a file path; empty for the model's default voice."""
    partial: bool = False
    """Stopped before the end: the audio is what had been generated."""

    @property
    def when(self) -> str:
        """``Today 14:03``, ``Yesterday 09:15`` or ``2025-03-12 14:03``."""
        day = time.strftime("%Y-%m-%d", time.localtime(self.created))
        today = time.strftime("%Y-%m-%d")
        yesterday = time.strftime("%Y-%m-%d", time.localtime(time.time() - 86400))
        day = {today: "Today", yesterday: "Yesterday"}.get(day, day)
        return f"{day} {time.strftime('%H:%M', time.localtime(self.created))}"

    @property
    def when_full(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.created))

    @property
    def excerpt(self) -> str:
        return " ".join(self.text.split())

    @property
    def model_label(self) -> str:
        return " ".join(p for p in (self.variant.capitalize(), self.precision) if p) or "unknown model"

    @property
    def status(self) -> str:
        return "stopped (partial)" if self.partial else ""

    @property
    def title(self) -> str:
        parts = [self.when, f"{self.seconds:.1f} s", self.status, self.excerpt[:48]]
        return " · ".join(p for p in parts if p)

    @property
    def details(self) -> str:
        """Voice, model and seed, on one line."""
        return f"{self.voice or 'default'} · {self.model_label} · seed {self.seed}"


_FIELDS = {f.name for f in dataclass_fields(HistoryEntry)}


def _entry(item) -> HistoryEntry | None:
    """One entry of history.json; unknown keys (a newer version) are ignored, a broken entry is skipped."""
    if not isinstance(item, dict):
        return None
    try:
        entry = HistoryEntry(**{k: v for k, v in item.items() if k in _FIELDS})
    except TypeError:
        return None
    texts = (entry.id, entry.text, entry.voice, entry.variant, entry.model, entry.precision, entry.voice_source)
    numbers = (entry.created, entry.seconds, entry.seed)
    if not all(isinstance(t, str) for t in texts) or not all(isinstance(n, int | float) for n in numbers):
        return None
    if not isinstance(entry.seed, int) or not isinstance(entry.partial, bool):
        return None
    return entry


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
        except (OSError, ValueError):
            return []
        entries = [e for e in map(_entry, raw if isinstance(raw, list) else []) if e is not None]
        return [e for e in entries if _plain_flac(e.audio_file) and (self.directory / e.audio_file).is_file()]

    def _save(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self._index(), [asdict(e) for e in self.entries])

    def add(self, audio: np.ndarray, sample_rate: int, **fields) -> HistoryEntry:
        base = time.strftime("%Y%m%d-%H%M%S") + f"-{int(time.time() * 1000) % 1000:03d}"
        entry_id, counter, taken = base, 1, {e.id for e in self.entries}
        while entry_id in taken or (self.directory / f"{entry_id}.flac").exists():  # two results within 1 ms
            counter += 1
            entry_id = f"{base}-{counter}"
        audio_file = f"{entry_id}.flac"
        self.directory.mkdir(parents=True, exist_ok=True)
        write_audio(self.directory / audio_file, audio, sample_rate)
        entry = HistoryEntry(
            id=entry_id, created=time.time(), audio_file=audio_file, seconds=audio.size / sample_rate, **fields
        )
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

    def remove(self, entry: HistoryEntry) -> None:
        """Delete one entry and its audio (the index is saved first: a crash leaves no entry without audio)."""
        self._forget([e for e in self.entries if e.id == entry.id])

    def clear(self) -> None:
        self._forget(list(self.entries))

    def _forget(self, gone: list[HistoryEntry]) -> None:
        if not gone:
            return
        kept = [e for e in self.entries if e not in gone]
        before, self.entries = self.entries, kept
        try:
            self._save()
        except OSError:
            self.entries = before
            raise
        for entry in gone:
            if _plain_flac(entry.audio_file):
                (self.directory / entry.audio_file).unlink(missing_ok=True)

    def audio(self, entry: HistoryEntry) -> tuple[np.ndarray, int]:
        data, rate = sf.read(self.directory / entry.audio_file, dtype="float32")
        return data, rate
