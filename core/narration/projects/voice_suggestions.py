"""Voices of the user's library that could read a character: those whose gender is the character's.

A library voice says its gender only where its entry holds one (``LibraryVoice.gender``, set with
:meth:`core.voices.VoiceLibrary.set_gender`); a voice that says none, or a character whose gender the book does not
give, gets no suggestion rather than a guess."""

from __future__ import annotations

from core.narration.projects.characters import Character
from core.narration.projects.project import Project
from core.voices import VoiceLibrary


def suggest_voices(project: Project, character: Character, library: VoiceLibrary | None) -> list[str]:
    """Library voice names for ``character``: its gender's, those no other character reads in first."""
    if library is None or character.gender is None:
        return []
    taken = {c.voice for c in project.cast if c is not character and c.voice is not None}
    fitting = [v.name for v in library.voices() if v.gender == character.gender]
    return sorted(fitting, key=lambda name: name in taken)
