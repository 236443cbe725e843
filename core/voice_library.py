"""Named voices kept in the user data directory (a copy of each reference recording plus a small JSON file).

Their conditioning is cached by the core (keyed by the audio itself), so switching voices costs no encoder run after
the first use, across restarts too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from .atomic import copy_file_atomic, remove_partial_files, write_json_atomic
from .voice import VoiceReference, load_voice

AUDIO_SUFFIXES = {".wav", ".flac", ".ogg", ".mp3", ".aiff", ".aif"}


@dataclass(frozen=True)
class LibraryVoice:
    name: str
    path: Path
    seconds: float


class VoiceLibrary:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        remove_partial_files(self.directory)

    def _index_path(self) -> Path:
        return self.directory / "voices.json"

    def _index(self) -> dict:
        try:
            data = json.loads(self._index_path().read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                return {}
            return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, dict)}
        except (OSError, ValueError):
            return {}

    def _save_index(self, index: dict) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self._index_path(), index)

    def _file(self, entry) -> Path | None:
        """The recording an index entry names, only if it is a plain audio file name inside the library folder.

        ``voices.json`` may come from elsewhere (a copied profile): an absolute or ``..`` path, or a file that is not
        audio, is ignored, so the library never reads or deletes anything outside its folder.
        """
        name = entry.get("file") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
            return None
        if Path(name).suffix.lower() not in AUDIO_SUFFIXES:
            return None
        return self.directory / name

    def voices(self) -> list[LibraryVoice]:
        out = []
        for name, entry in sorted(self._index().items(), key=lambda kv: kv[0].lower()):
            path = self._file(entry)
            if path is not None and path.is_file():
                try:
                    seconds = float(entry.get("seconds", 0.0))
                except (TypeError, ValueError):
                    seconds = 0.0
                out.append(LibraryVoice(name, path, seconds))
        return out

    def get(self, name: str) -> LibraryVoice | None:
        return next((v for v in self.voices() if v.name == name), None)

    def add(self, name: str, source: Path) -> tuple[LibraryVoice, VoiceReference]:
        """Check the recording (raises VoiceReferenceError) and keep a copy under ``name``."""
        name = " ".join(name.split())[:60] or Path(source).stem
        reference = load_voice(source)
        stem = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "voice"
        target = self.directory / f"{stem}{Path(source).suffix.lower()}"
        counter = 1
        index = self._index()
        taken = {entry.get("file") for key, entry in index.items() if key != name}
        while target.name in taken:
            counter += 1
            target = self.directory / f"{stem}_{counter}{Path(source).suffix.lower()}"
        self.directory.mkdir(parents=True, exist_ok=True)
        copying = Path(source).resolve() != target.resolve()
        copied = copying and not target.exists()  # a new file, removed again if the index cannot be saved
        if copying:
            copy_file_atomic(source, target)
        index[name] = {"file": target.name, "seconds": reference.duration_s, "source": str(source)}
        try:
            self._save_index(index)
        except OSError:  # disk full or read-only: no orphan copy is left behind
            if copied:
                target.unlink(missing_ok=True)
            raise
        return LibraryVoice(name, target, reference.duration_s), reference

    def remove(self, name: str) -> None:
        index = self._index()
        entry = index.pop(name, None)
        if entry is None:
            return
        self._save_index(index)
        path = self._file(entry)
        if path is not None and all(self._file(e) != path for e in index.values()):
            path.unlink(missing_ok=True)
