"""The conditioning cache: the speech encoder runs once per voice and bundle, then never again, even after a restart.

Key: SHA-256 of the decoded, resampled reference audio plus the bundle's identity (the encoder file's name, size and
modification time, and the variant). Entries live in a small in-memory LRU and as ``.npz`` files (no pickle) in the
user cache directory, written atomically. A file that cannot be read or does not look like conditioning for this
bundle is deleted and rebuilt; a cache directory that cannot be written only costs speed.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from pathlib import Path

import numpy as np

from .atomic import atomic_path, remove_partial_files
from .conditioning import Conditioning

log = logging.getLogger(__name__)
FORMAT_VERSION = 1


def bundle_identity(encoder_path: Path, variant: str) -> str:
    parts = [variant, encoder_path.name]
    for path in (encoder_path, encoder_path.with_name(encoder_path.name + "_data")):
        if path.exists():
            st = path.stat()
            parts += [str(st.st_size), str(st.st_mtime_ns)]
    return "|".join(parts)


class ConditioningCache:
    def __init__(self, directory: Path | None, identity: str, hidden: int, capacity: int = 16):
        self.directory = directory
        if directory is not None:
            remove_partial_files(directory)  # left by a process killed while writing
        self.identity = identity
        self.hidden = hidden
        self.capacity = capacity
        self._memory: OrderedDict[str, Conditioning] = OrderedDict()
        self.last_lookup = "off"
        """``memory``, ``disk`` or ``miss`` for the last lookup."""

    def key(self, voice_digest: str) -> str:
        return hashlib.sha256(f"v{FORMAT_VERSION}|{self.identity}|{voice_digest}".encode()).hexdigest()[:40]

    def get(self, key: str) -> Conditioning | None:
        if key in self._memory:
            self._memory.move_to_end(key)
            self.last_lookup = "memory"
            return self._memory[key]
        cond = self._read(key)
        if cond is not None:
            self._remember(key, cond)
            self.last_lookup = "disk"
            return cond
        self.last_lookup = "miss"
        return None

    def put(self, key: str, cond: Conditioning) -> str | None:
        """Keep ``cond`` in memory and on disk; returns why the disk write failed (the entry stays in memory)."""
        self._remember(key, cond)
        return self._write(key, cond)

    def _remember(self, key: str, cond: Conditioning) -> None:
        self._memory[key] = cond
        self._memory.move_to_end(key)
        while len(self._memory) > self.capacity:
            self._memory.popitem(last=False)

    def _path(self, key: str) -> Path | None:
        return self.directory / f"{key}.npz" if self.directory else None

    def _read(self, key: str) -> Conditioning | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            with path.open("rb") as fh, np.load(fh, allow_pickle=False) as data:
                cond = Conditioning(**{name: np.array(data[name]) for name in Conditioning.FIELDS})
            self._check(cond)
            return cond
        except Exception as exc:  # noqa: BLE001 - whatever is wrong with a cache file, it is rebuilt, never fatal
            log.warning("discarding unreadable conditioning cache file %s (%s)", path.name, exc)
            path.unlink(missing_ok=True)
            return None

    def _check(self, cond: Conditioning) -> None:
        f, t, e, s = cond.audio_features, cond.audio_tokens, cond.speaker_embeddings, cond.speaker_features
        if f.ndim != 3 or f.shape[0] != 1 or f.shape[2] != self.hidden or t.ndim != 2 or e.ndim != 2 or s.ndim != 3:
            raise ValueError("shapes do not match this model")
        if t.dtype != np.int64 or not all(np.all(np.isfinite(a)) for a in (f, e, s)):
            raise ValueError("invalid values")

    def _write(self, key: str, cond: Conditioning) -> str | None:
        path = self._path(key)
        if path is None:
            return None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as tmp, open(tmp, "wb") as fh:
                np.savez(fh, **cond.arrays())
        except OSError as exc:
            log.warning("cannot write the conditioning cache in %s (%s); continuing without it", path.parent, exc)
            return f"{path.parent}: {exc.strerror or exc}"
        return None
