"""The voices of a project: copies of reference recordings inside its ``voices/`` folder, found by name.

A ``[voice:Name]`` tag or a ``--voice`` option names a voice of the project, of the user's voice library, or a
recording file (relative to the text file). Every name is resolved and every recording checked before any rendering;
an unknown name fails with the list of known ones.
"""

from __future__ import annotations

from pathlib import Path

from core.engine import VoiceReference, copy_file_atomic, load_voice
from core.narration.projects.project import VOICES_DIR, Project, ProjectError
from core.voices import AUDIO_SUFFIXES, VoiceLibrary, safe_stem

MODEL_VOICE_NAMES = ("default", "model")
"""``--voice default`` speaks in the model's built-in voice (Original and Multilingual bundles ship one)."""


def add_voice(project: Project, name: str, source: Path) -> str:
    """Check ``source`` (raises :class:`VoiceReferenceError`) and copy it into the project as ``name``."""
    load_voice(source)
    stem = safe_stem(name)
    suffix = Path(source).suffix.lower()
    taken = {p for n, p in project.voices.items() if n != name}
    rel, counter = f"{VOICES_DIR}/{stem}{suffix}", 1
    while rel in taken:
        counter += 1
        rel = f"{VOICES_DIR}/{stem}_{counter}{suffix}"
    target = project.folder / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if Path(source).resolve() != target.resolve():
        copy_file_atomic(source, target)
    project.voices[name] = rel
    return name


def resolve_voices(
    project: Project, names: list[str | None], library: VoiceLibrary | None, base: Path | None
) -> dict[str | None, str | None]:
    """Each requested name → a project voice name (copied in when new); ``None`` stays the model's voice."""
    resolved: dict[str | None, str | None] = {}
    unknown: list[str] = []
    for name in names:
        if name is None or name.lower() in MODEL_VOICE_NAMES:
            resolved[name] = None
        elif name in project.voices:
            resolved[name] = name
        elif library is not None and (saved := library.get(name)) is not None:
            resolved[name] = add_voice(project, name, saved.path)
        elif (file := _voice_file(name, base)) is not None:
            resolved[name] = add_voice(project, file.stem if name == str(file) or "/" in name else name, file)
        else:
            unknown.append(name)
    if unknown:
        known = sorted({*project.voices, *(v.name for v in (library.voices() if library else []))})
        raise ProjectError("voices.unknown", names=unknown, known=known)
    return resolved


def _voice_file(name: str, base: Path | None) -> Path | None:
    for candidate in (Path(name).expanduser(), (base or Path(".")) / name):
        if candidate.suffix.lower() in AUDIO_SUFFIXES and candidate.is_file():
            return candidate
    return None


def voice_reference(project: Project, name: str | None, cache: dict) -> VoiceReference | None:
    """The loaded recording of a project voice (``None`` for the model's voice), loaded once per render."""
    if name is None:
        return None
    if name not in cache:
        rel = project.voices.get(name)
        if rel is None:
            raise ProjectError("project.unknown_voice", name=name, voices=sorted(project.voices))
        cache[name] = load_voice(project.path(rel))
    return cache[name]
