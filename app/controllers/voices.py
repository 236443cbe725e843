"""The current reference voice and the voice library's changes (save, remove with undo), remembered in the settings."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from core.engine import ModelLoaded, VoiceReference, load_voice
from core.voices import LibraryVoice, RemovedVoice, VoiceLibrary

from ..settings import Key, Settings


@dataclass(frozen=True)
class VoiceChoice:
    """A voice one can choose: ``kind`` "default" (the model's built-in voice), "library" (``value``: its name),
    "file" (``value``: the recording in use outside the library), "none" (no voice chosen, the model has none of its
    own) or "choose" (another recording, asked for)."""

    kind: str
    value: str
    label: str
    gender: str | None = None
    """A library voice's ``m`` / ``f`` (``None``: not said)."""
    current: bool = False
    """The voice in use."""

    @property
    def key(self) -> str:
        """``kind:value``: the choice as a picker's item keeps it."""
        return f"{self.kind}:{self.value}"


def has_default_voice(model: ModelLoaded | None) -> bool:
    """The model has a built-in voice (Turbo has none); with no model loaded yet, one is assumed."""
    return model is None or model.capabilities.has_default_voice


class VoiceController:
    """The voice Speak uses (None: the model's built-in one), its library name, and this session's removals."""

    def __init__(self, library: VoiceLibrary, settings: Settings) -> None:
        self.library, self.settings = library, settings
        self.voice: VoiceReference | None = None
        self.name = ""
        """The library name of :attr:`voice` ("" for a recording outside the library or the default voice)."""
        self.removed: list[tuple[RemovedVoice, bool]] = []
        """(removed voice, was the current voice) of this session's removals, newest last: Undo restores them."""

    # --- choosing ----------------------------------------------------------------------------------------------
    def select_file(self, path: Path, name: str = "") -> VoiceReference:
        """Check a recording and use it (``ChatterboxError`` says what is wrong; nothing changes then)."""
        voice = load_voice(path)
        self.voice, self.name = voice, name
        self.settings.set(Key.VOICE, name or str(path))
        return voice

    def use_default(self) -> None:
        self.voice, self.name = None, ""
        self.settings.set(Key.VOICE, "")

    def remembered(self) -> tuple[Path, str] | None:
        """The voice of the last session: (recording, library name or "") when its recording still exists."""
        current = self.settings.get(Key.VOICE)
        if not current:
            return None
        entry = self.library.get(current)
        path = entry.path if entry else Path(current)
        return (path, current if entry else "") if path.is_file() else None

    # --- the library -------------------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return [v.name for v in self.library.voices()]

    def get(self, name: str) -> LibraryVoice | None:
        return self.library.get(name)

    def set_gender(self, name: str, gender: str | None) -> None:
        """Say whose voice a library voice is (``m``, ``f``, ``None``: not said): a cast's characters are offered
        the voices of their gender first. ``OSError`` when the library cannot be written."""
        self.library.set_gender(name, gender)

    def save(self, name: str) -> bool:
        """Save the current recording in the library as ``name`` and use it from there (``ChatterboxError`` or
        ``OSError`` when it cannot be saved). False when there is no recording to save."""
        if self.voice is None:
            return False
        entry, voice = self.library.add(name, Path(self.voice.source))
        self.voice, self.name = voice, entry.name
        self.settings.set(Key.VOICE, entry.name)
        return True

    def remove(self, name: str) -> None:
        """Remove a library voice (its recording waits in the trash so that :meth:`undo` can restore it); the current
        voice falls back to the default one. ``OSError`` when it cannot be removed."""
        removed = self.library.remove(name)
        was_current = self.name == name
        if removed is not None:
            self.removed.append((removed, was_current))
        if was_current:
            self.use_default()

    def undo(self) -> tuple[LibraryVoice, bool] | None:
        """Restore the last removed voice: (its entry, whether it was the current voice); None when nothing was
        removed. ``OSError`` or :class:`~core.voices.VoiceLibraryError` when it cannot be restored (it is forgotten
        then)."""
        if not self.removed:
            return None
        removed, was_current = self.removed.pop()
        return self.library.restore(removed), was_current

    def last_removed(self) -> str:
        return self.removed[-1][0].name if self.removed else ""

    def undo_text(self) -> str:
        """What the panel shows beside Undo ("" hides it)."""
        last = self.last_removed()
        return f"Removed “{last}”." if last else ""

    # --- what is offered ---------------------------------------------------------------------------------------
    def choices(self, has_default: bool) -> list[VoiceChoice]:
        """What the voice pickers offer, in order: the built-in voice (when the model has one), the library's voices,
        the recording in use when it is not in the library, "No voice chosen" when there is nothing else to show,
        and another recording; the voice in use marked :attr:`VoiceChoice.current`."""
        if self.voice is None:
            current = "default:" if has_default else "none:"
        else:
            current = f"library:{self.name}" if self.name else f"file:{self.voice.source}"
        choices = [VoiceChoice("default", "", "Default voice")] if has_default else []
        choices += [VoiceChoice("library", v.name, v.name, v.gender) for v in self.library.voices()]
        if self.voice is not None and not self.name:
            choices.append(VoiceChoice("file", self.voice.source, Path(self.voice.source).name))
        if self.voice is None and not has_default:
            choices.append(VoiceChoice("none", "", "No voice chosen"))
        choices.append(VoiceChoice("choose", "", "Choose a recording…"))
        return [replace(c, current=c.key == current) for c in choices]

    # --- how others name it ------------------------------------------------------------------------------------
    def title(self, has_default: bool) -> str:
        if self.voice is None:
            return "Default voice" if has_default else "No voice"
        return self.name or Path(self.voice.source).name

    def project_voice(self) -> str | None:
        """The current voice as a project names it: a library name, a recording's path, or None (the model's)."""
        if self.voice is None:
            return None
        return self.name or self.voice.source

    def history_label(self) -> tuple[str, str]:
        """(voice, voice_source) as a history entry records them."""
        if self.voice is None:
            return "default", ""
        return self.name or Path(self.voice.source).name, self.name or str(self.voice.source)

    def needs_recording(self, model: ModelLoaded | None) -> bool:
        """A model without a built-in voice is loaded and no recording is chosen."""
        return self.voice is None and model is not None and not model.capabilities.has_default_voice
