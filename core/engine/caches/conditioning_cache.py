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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.audio.voice_reference import VoiceReference
from core.engine.caches.conditioning import Conditioning, encode_voice
from core.engine.files.atomic import atomic_path, remove_partial_files
from core.engine.model.model_info import GraphNames

log = logging.getLogger(__name__)
FORMAT_VERSION = 1


def bundle_identity(encoder_path: Path, variant: str) -> str:
    parts = [variant, encoder_path.name]
    for path in (encoder_path, encoder_path.with_name(encoder_path.name + "_data")):
        if path.exists():
            st = path.stat()
            parts += [str(st.st_size), str(st.st_mtime_ns)]
    return "|".join(parts)


def cache_key(identity: str, voice_digest: str) -> str:
    """One voice's key for one bundle (it also keys the voice-prefix KV cache, with the cache on or off)."""
    return hashlib.sha256(f"v{FORMAT_VERSION}|{identity}|{voice_digest}".encode()).hexdigest()[:40]


class ConditioningCache:
    def __init__(self, directory: Path | None, identity: str, hidden: int, capacity: int = 16):
        self.directory = directory
        if directory is not None:
            remove_partial_files(directory)  # left by a process killed while writing
        self.identity = identity
        self.hidden = hidden
        self.capacity = capacity
        self._memory: OrderedDict[str, Conditioning] = OrderedDict()

    def key(self, voice_digest: str) -> str:
        return cache_key(self.identity, voice_digest)

    def get(self, key: str) -> tuple[Conditioning | None, str]:
        """The entry and where it came from: ``memory``, ``disk``, or ``(None, "miss")``."""
        if key in self._memory:
            self._memory.move_to_end(key)
            return self._memory[key], "memory"
        cond = self._read(key)
        if cond is not None:
            self._remember(key, cond)
            return cond, "disk"
        return None, "miss"

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
                np.savez(fh, **cond.arrays())  # type: ignore[arg-type]  # numpy's stub: no ** of arrays
        except OSError as exc:
            log.warning("cannot write the conditioning cache in %s (%s); continuing without it", path.parent, exc)
            return f"{path.parent}: {exc.strerror or exc}"
        return None


@dataclass(frozen=True)
class ConditioningLookup:
    """The conditioning of one voice and how it was obtained."""

    conditioning: Conditioning
    key: str
    """The voice's cache key (also keys the voice-prefix KV cache)."""
    source: str
    """``memory``, ``disk``, ``miss`` (the encoder ran and the result was cached) or ``off`` (cache switched off)."""
    write_error: str | None = None
    """Why the result could not be written to disk (it stays in memory)."""


class VoiceConditioner:
    """The speech encoder behind the conditioning cache: ``lookup(voice)`` runs the encoder only when it must."""

    def __init__(self, session: Any, names: GraphNames, identity: str, hidden: int):
        self.session, self.names, self.identity, self.hidden = session, names, identity, hidden
        self.cache: ConditioningCache | None = None
        self.encoder_runs = 0
        """How many times ``speech_encoder`` ran (the cache keeps this low)."""
        self.adopted: dict[str, Conditioning] = {}
        """Conditioning computed elsewhere (a cluster render's owner) by key: used before the cache, on or off."""

    def configure(self, enabled: bool, directory: Path | None) -> None:
        """Switch the cache on (memory + ``directory``) or off; a new directory starts a new cache."""
        current = self.cache.directory if self.cache else None
        if not enabled:
            self.cache = None
        elif self.cache is None or current != directory:
            self.cache = ConditioningCache(directory, self.identity, self.hidden)

    def encode(self, voice: VoiceReference) -> Conditioning:
        """Run the speech encoder (uncached)."""
        self.encoder_runs += 1
        return encode_voice(self.session, voice, self.names)

    def key(self, voice: VoiceReference) -> str:
        """The voice's cache key for this bundle (the same whether the cache is on or off)."""
        return cache_key(self.identity, voice.digest)

    def adopt(self, voice: VoiceReference, cond: Conditioning) -> str:
        """Use ``cond`` for ``voice`` from now on instead of running the encoder; the voice's key."""
        key = self.key(voice)
        self.adopted[key] = cond
        return key

    def lookup(self, voice: VoiceReference) -> ConditioningLookup:
        cache = self.cache
        key = self.key(voice)
        if key in self.adopted:
            return ConditioningLookup(self.adopted[key], key, "memory")
        if cache is None:
            return ConditioningLookup(self.encode(voice), key, "off")
        cond, source = cache.get(key)
        if cond is not None:
            return ConditioningLookup(cond, key, source)
        cond = self.encode(voice)
        return ConditioningLookup(cond, key, "miss", cache.put(key, cond))
