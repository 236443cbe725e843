"""Named voices kept in the user data directory (a copy of each reference recording plus a small JSON file).

Their conditioning is cached by the core (keyed by the audio itself), so switching voices costs no encoder run after
the first use, across restarts too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from core.engine import (
    ChatterboxError,
    VoiceReference,
    copy_file_atomic,
    load_voice,
    remove_partial_files,
    write_json_atomic,
)

AUDIO_SUFFIXES = {".wav", ".flac", ".ogg", ".mp3", ".aiff", ".aif"}
TRASH = ".trash"
"""A removed voice's recording waits here until :meth:`VoiceLibrary.empty_trash` (the app calls it when it starts
and when it closes), so a removal can be undone."""


def safe_stem(name: str, default: str = "voice") -> str:
    """A file-name stem from a voice's name: letters, digits, ``_`` and ``-`` only (``default`` when none is left)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or default


class VoiceLibraryError(ChatterboxError):
    """A removed voice cannot be restored (its recording is gone)."""


GENDERS = ("m", "f")


@dataclass(frozen=True)
class LibraryVoice:
    name: str
    path: Path
    seconds: float
    gender: str | None = None
    """``m`` or ``f`` where the voice's entry says so (``None``: not said; voices saved before it was kept)."""


@dataclass(frozen=True)
class RemovedVoice:
    """What :meth:`VoiceLibrary.restore` needs to undo a removal."""

    name: str
    entry: dict = field(hash=False)
    trashed: Path | None = None
    """Where the recording waits (``None``: another voice still uses it, or it could not be moved)."""


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
                gender = entry.get("gender")
                out.append(LibraryVoice(name, path, seconds, gender if gender in GENDERS else None))
        return out

    def get(self, name: str) -> LibraryVoice | None:
        return next((v for v in self.voices() if v.name == name), None)

    def add(self, name: str, source: Path) -> tuple[LibraryVoice, VoiceReference]:
        """Check the recording (raises VoiceReferenceError) and keep a copy under ``name``."""
        name = " ".join(name.split())[:60] or Path(source).stem
        reference = load_voice(source)
        stem = safe_stem(name)
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

    def set_gender(self, name: str, gender: str | None) -> None:
        """Say whose voice ``name`` is (``m``, ``f``; ``None`` forgets it): a cast's characters are offered voices
        of their gender. An unknown name or gender raises ``KeyError`` / ``ValueError``."""
        if gender is not None and gender not in GENDERS:
            raise ValueError(f"gender must be one of {GENDERS} or None, not {gender!r}")
        index = self._index()
        entry = index[name]
        if gender is None:
            entry.pop("gender", None)
        else:
            entry["gender"] = gender
        self._save_index(index)

    def remove(self, name: str) -> RemovedVoice | None:
        """Take ``name`` out of the library; its recording goes to the trash folder until :meth:`empty_trash`."""
        index = self._index()
        entry = index.pop(name, None)
        if entry is None:
            return None
        self._save_index(index)
        path = self._file(entry)
        trashed = None
        if path is not None and all(self._file(e) != path for e in index.values()):
            trashed = self._to_trash(path)
        return RemovedVoice(name, dict(entry), trashed)

    def _trash(self) -> Path | None:
        trash = self.directory / TRASH
        if trash.is_symlink() or (trash.exists() and not trash.is_dir()):
            return None  # never move a recording to wherever a planted link points
        return trash

    def _to_trash(self, path: Path) -> Path | None:
        if not path.is_file():
            return None
        trash = self._trash()
        try:
            if trash is None:
                raise OSError("no trash folder")
            trash.mkdir(exist_ok=True)
            target = _free_name(trash, path.stem, path.suffix)
            os.replace(path, target)
            return target
        except OSError:  # the trash is unusable: the recording is deleted as before, and cannot be restored
            path.unlink(missing_ok=True)
            return None

    def restore(self, removed: RemovedVoice) -> LibraryVoice:
        """Undo :meth:`remove` (raises :class:`VoiceLibraryError` when the recording is gone, e.g. after
        :meth:`empty_trash`; ``OSError`` when the disk refuses)."""
        index = self._index()
        name, counter = removed.name, 1
        while name in index:
            counter += 1
            name = f"{removed.name} ({counter})"
        entry = dict(removed.entry)
        if removed.trashed is not None:
            if not removed.trashed.is_file():
                raise VoiceLibraryError("library.not_in_trash", name=removed.name)
            original = self._file(entry)
            target = original if original is not None and not original.exists() else None
            if target is None:
                taken = Path(str(entry.get("file") or "voice.wav"))
                suffix = taken.suffix.lower() if taken.suffix.lower() in AUDIO_SUFFIXES else removed.trashed.suffix
                target = _free_name(self.directory, taken.stem or "voice", suffix)
            os.replace(removed.trashed, target)
            entry["file"] = target.name
        else:
            path = self._file(entry)
            if path is None or not path.is_file():
                raise VoiceLibraryError("library.recording_gone", name=removed.name)
        index[name] = entry
        self._save_index(index)
        restored = self.get(name)
        if restored is None:
            raise VoiceLibraryError("library.recording_gone", name=removed.name)
        return restored

    def empty_trash(self) -> None:
        """Delete the recordings of removed voices for good."""
        trash = self._trash()
        if trash is not None and trash.is_dir():
            shutil.rmtree(trash, ignore_errors=True)


def _free_name(folder: Path, stem: str, suffix: str) -> Path:
    target, counter = folder / f"{stem}{suffix}", 1
    while target.exists():
        counter += 1
        target = folder / f"{stem}_{counter}{suffix}"
    return target
