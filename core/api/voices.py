"""Voices for the local speech API: library names, uploaded reference recordings, and OpenAI's voice names.

No path from a request is ever opened: a ``voice`` is a voice-library name (the library only reads files inside its
own folder), and an uploaded recording is written to a fresh staging folder inside the library folder, checked with
:func:`core.engine.audio.voice_reference.load_voice` as the app checks a dropped file, and removed again.
"""

from __future__ import annotations

import secrets
import shutil
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.engine import ChatterboxError, VoiceReference, VoiceReferenceError, load_voice
from core.voices import AUDIO_SUFFIXES, LibraryVoice, VoiceLibrary, safe_stem

OPENAI_VOICES = frozenset(
    ("alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse", "marin", "cedar")
)
"""OpenAI's built-in voice names: without a library voice of that name they mean the model's own voice."""
DEFAULT_NAMES = frozenset({"", "default"})
STAGING = ".uploads"
_CACHED = 32


class UnknownVoice(ChatterboxError):
    """No library voice of that name, and no built-in voice to use instead (code ``api.unknown_voice``)."""

    def __init__(self, name: str, known: list[str]):
        builtin_name = name.lower() in OPENAI_VOICES | DEFAULT_NAMES
        super().__init__("api.unknown_voice", name=name, known=list(known), builtin_name=builtin_name)
        self.known = known


class ApiVoices:
    def __init__(self, library: VoiceLibrary):
        self.library = library
        self._cache: OrderedDict[tuple, VoiceReference] = OrderedDict()

    def names(self) -> list[str]:
        return [v.name for v in self.library.voices()]

    def list(self) -> list[LibraryVoice]:
        return self.library.voices()

    def find(self, name: str) -> LibraryVoice | None:
        """The library voice called ``name``: exactly, else ignoring case and spacing (``narrator one`` finds
        ``Narrator One``)."""
        key = " ".join(name.split())
        if not key:
            return None
        voices = self.library.voices()
        exact = next((v for v in voices if v.name == key), None)
        return exact or next((v for v in voices if v.name.casefold() == key.casefold()), None)

    def resolve(self, name: str | None, has_default_voice: bool) -> VoiceReference | None:
        """The reference for ``name`` (``None``: the model's own voice); :class:`UnknownVoice` when there is none."""
        key = (name or "").strip()
        entry = self.find(key)
        if entry is not None:
            return self._load(entry.path)
        if (key.lower() in DEFAULT_NAMES or key.lower() in OPENAI_VOICES) and has_default_voice:
            return None
        raise UnknownVoice(key or "default", self.names())

    def _load(self, path: Path) -> VoiceReference:
        try:
            stat = path.stat()
        except OSError as exc:
            reason = str(exc.strerror or exc)
            raise VoiceReferenceError("voice.library_unreadable", name=path.name, reason=reason) from exc
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        reference = load_voice(path)
        self._cache[key] = reference
        while len(self._cache) > _CACHED:
            self._cache.popitem(last=False)
        return reference

    # --- uploads -----------------------------------------------------------------------------------------------
    def check_upload_name(self, filename: str | None) -> str:
        """A safe file name for an upload (its suffix must be an audio format the library keeps)."""
        base = Path(filename or "").name
        suffix = Path(base).suffix.lower()
        if suffix not in AUDIO_SUFFIXES:
            raise VoiceReferenceError("voice.upload_suffix", name=base, suffixes=sorted(AUDIO_SUFFIXES))
        stem = safe_stem(Path(base).stem, "reference")[:60]
        return stem + suffix

    @contextmanager
    def staged(self, filename: str, data: bytes) -> Iterator[Path]:
        """``data`` as the file ``filename`` (a safe name) in a fresh staging folder inside the library folder, for
        the loaders that read files; removed again afterwards."""
        folder = self.library.directory / STAGING / secrets.token_hex(8)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / filename
            path.write_bytes(data)
            yield path
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def load_upload(self, filename: str | None, data: bytes) -> VoiceReference:
        """Check an uploaded reference for one request (it is not kept)."""
        with self.staged(self.check_upload_name(filename), data) as path:
            return load_voice(path)

    def add_upload(self, name: str, filename: str | None, data: bytes) -> tuple[LibraryVoice, VoiceReference]:
        """Check an uploaded reference and keep it in the library under ``name``."""
        with self.staged(self.check_upload_name(filename), data) as path:
            return self.library.add(name, path)
