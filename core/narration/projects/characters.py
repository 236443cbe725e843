"""The characters of a project's cast: a name (unique in the project), the other names the book calls them by, a
gender where the book gives one, and the voice that reads their lines (``None``: the dialogue voice, else the
narrator's). A segment names its speaker by the character's name (``Segment.speaker``)."""

from __future__ import annotations

from dataclasses import dataclass, field

GENDERS = ("m", "f")
NARRATOR_WORDS = ("narrator", "narration", "none")
"""What ``--set-speaker N narrator`` says instead of a name: these are never a character's name."""


@dataclass
class Character:
    name: str
    aliases: list[str] = field(default_factory=list)
    """Other names of the same person (``Miss Woodhouse`` for ``Emma``): attribution finds them as this character."""
    gender: str | None = None
    """``m``, ``f`` or ``None`` (not known)."""
    voice: str | None = None
    """A project voice (``None``: the dialogue voice, else the narrator's)."""

    def names(self) -> list[str]:
        return [self.name, *self.aliases]


def clean_name(name: str) -> str:
    """A name as the cast keeps it: its words separated by single spaces."""
    return " ".join(str(name).split())


def key(name: str) -> str:
    """What two names that are the same name share (case and spacing aside)."""
    return clean_name(name).casefold()


def character_to_dict(character: Character) -> dict:
    return {
        "name": character.name,
        "aliases": list(character.aliases),
        "gender": character.gender,
        "voice": character.voice,
    }


def character_from_dict(data, where: str, voices: dict | None) -> Character:
    """A character as :func:`character_to_dict` writes it, checked (``ValueError`` saying what is wrong); its voice
    against the project's ``voices`` when given."""
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be an object")
    name, aliases, gender, voice = data.get("name"), data.get("aliases", []), data.get("gender"), data.get("voice")
    if not isinstance(name, str) or not clean_name(name) or name != clean_name(name):
        raise ValueError(f"{where}.name must be a name")
    if not isinstance(aliases, list) or not all(isinstance(a, str) and clean_name(a) for a in aliases):
        raise ValueError(f"{where}.aliases must be names")
    if gender is not None and gender not in GENDERS:
        raise ValueError(f"{where}.gender must be 'm', 'f' or null")
    if voice is not None and (not isinstance(voice, str) or (voices is not None and voice not in voices)):
        raise ValueError(f"{where}.voice {voice!r} is not a project voice")
    return Character(name, [clean_name(a) for a in aliases], gender, voice)


def cast_from_list(data, voices: dict | None) -> list[Character]:
    """The cast of a project file (missing in projects saved before casts: none), names unique."""
    if data is None:
        return []
    if not isinstance(data, list):
        raise ValueError("'cast' must be a list of characters")
    cast = [character_from_dict(c, f"cast[{i}]", voices) for i, c in enumerate(data)]
    if len({key(c.name) for c in cast}) != len(cast):
        raise ValueError("two characters of the cast have the same name")
    return cast
