"""Editing a project's cast, each edit undoable like the edits of its shape (:mod:`core.narration.projects.editing`):
who says a segment, merging one character into another, renaming one, adding one, the voice a character reads in.

Each operation changes the project in memory (the caller saves it) and returns an
:class:`~core.narration.projects.editing.Edit` that holds the cast as it was (when it changed) and, for each segment
whose speaker changed, its speaker as it was, so undo costs the same in a short story and in a long book. A speaker a
person sets is *fixed*: attributing the book again (:mod:`core.narration.projects.attributing`) keeps it.
"""

from __future__ import annotations

from core.narration.projects.characters import NARRATOR_WORDS, Character, character_to_dict, clean_name, key
from core.narration.projects.editing import Edit, fingerprint
from core.narration.projects.project import Project, ProjectError, Segment

PERSON = 1.0
"""The confidence of a speaker a person set."""


class SpeakerChanges:
    """The speakers an edit changes, with what they were (the ``speakers`` of its undo record)."""

    def __init__(self) -> None:
        self.before: list[list] = []

    def set(self, segment: Segment, speaker: str | None, confidence: float | None, fixed: bool) -> None:
        if (segment.speaker, segment.speaker_confidence, segment.speaker_fixed) == (speaker, confidence, fixed):
            return
        self.before.append([segment.id, segment.speaker, segment.speaker_confidence, segment.speaker_fixed])
        segment.speaker, segment.speaker_confidence, segment.speaker_fixed = speaker, confidence, fixed


def record(project: Project, op: str, number: int, cast: list[dict] | None, changes: SpeakerChanges | None) -> Edit:
    """The undo record of a cast edit done to ``project`` (``cast``: the cast as it was, when it changed)."""
    edit = Edit(op=op, number=number, start=0, count=0, cast=cast, speakers=changes.before if changes else None)
    edit.fingerprint = fingerprint(project)
    return edit


def is_empty(edit: Edit) -> bool:
    """The edit changed nothing (an attribution that found what the project already had)."""
    return edit.cast is None and not edit.speakers


def cast_as_it_is(project: Project) -> list[dict]:
    return [character_to_dict(c) for c in project.cast]


def find_character(project: Project, name: str) -> Character:
    """The character ``name`` names: its name, else its name in another case, else one of its aliases."""
    wanted = key(name)
    exact = project.character(clean_name(name))
    if exact is not None:
        return exact
    for matches in (
        [c for c in project.cast if key(c.name) == wanted],
        [c for c in project.cast if any(key(a) == wanted for a in c.aliases)],
    ):
        if len(matches) == 1:
            return matches[0]
    raise ProjectError("cast.unknown_character", name=name, names=[c.name for c in project.cast])


def is_narrator(name: str) -> bool:
    """``narrator`` (or ``none``) in place of a character's name: the segment is narration."""
    return key(name) in NARRATOR_WORDS


# --- operations -------------------------------------------------------------------------------------------------------
def set_speaker(project: Project, number: int, name: str | None) -> Edit:
    """Segment ``number`` is said by character ``name`` (``None``: the narrator), as a person set it."""
    segment = project.segment(number)
    speaker = find_character(project, name).name if name is not None else None
    changes = SpeakerChanges()
    changes.set(segment, speaker, PERSON, True)
    return record(project, "set_speaker", number, None, changes)


def merge_character(project: Project, name: str, into: str) -> Edit:
    """Character ``name`` and ``into`` are one person: ``into`` gets the other's names as aliases and its lines."""
    gone, kept = find_character(project, name), find_character(project, into)
    if gone is kept:
        raise ProjectError("cast.same_character", name=gone.name)
    before = cast_as_it_is(project)
    kept.aliases = _aliases(kept.name, [*kept.aliases, *gone.names()])
    kept.gender = kept.gender or gone.gender
    project.cast = [c for c in project.cast if c is not gone]
    changes = _rename_lines(project, gone.name, kept.name)
    return record(project, "merge_character", project.cast.index(kept) + 1, before, changes)


def rename_character(project: Project, name: str, new: str) -> Edit:
    """Character ``name`` is called ``new``; its old name stays an alias (attribution finds it under it)."""
    character = find_character(project, name)
    new_name = _free_name(project, new, character)
    before = cast_as_it_is(project)
    old = character.name
    character.name = new_name
    character.aliases = _aliases(new_name, [*character.aliases, old])
    changes = _rename_lines(project, old, new_name)
    return record(project, "rename_character", project.cast.index(character) + 1, before, changes)


def add_character(project: Project, name: str, gender: str | None = None) -> Edit:
    """A new character (one the attribution did not find), at the end of the cast."""
    if gender is not None and gender not in ("m", "f"):
        raise ProjectError("cast.bad_gender", gender=gender)
    before = cast_as_it_is(project)
    project.cast.append(Character(_free_name(project, name, None), gender=gender))
    return record(project, "add_character", len(project.cast), before, None)


def set_character_voice(project: Project, name: str, voice: str | None) -> Edit:
    """Character ``name`` reads in project voice ``voice`` (``None``: the dialogue voice, else the narrator's)."""
    character = find_character(project, name)
    if voice is not None and voice not in project.voices:
        raise ProjectError("project.unknown_voice", name=voice, voices=sorted(project.voices))
    before = cast_as_it_is(project)
    character.voice = voice
    return record(project, "cast_voice", project.cast.index(character) + 1, before, None)


# --- helpers ----------------------------------------------------------------------------------------------------------
def _rename_lines(project: Project, old: str, new: str) -> SpeakerChanges:
    changes = SpeakerChanges()
    for segment in project.segments:
        if segment.speaker == old:
            changes.set(segment, new, segment.speaker_confidence, segment.speaker_fixed)
    return changes


def _aliases(name: str, names: list[str]) -> list[str]:
    """``names`` without ``name`` and without repeats (case aside), in order."""
    seen, out = {key(name)}, []
    for alias in names:
        if key(alias) not in seen:
            seen.add(key(alias))
            out.append(clean_name(alias))
    return out


def _free_name(project: Project, name: str, character: Character | None) -> str:
    """``name`` cleaned, checked to be a name no other character has (as its name or an alias)."""
    cleaned = clean_name(name)
    if not cleaned or is_narrator(cleaned):
        raise ProjectError("cast.bad_name", name=name)
    for other in project.cast:
        if other is not character and key(cleaned) in {key(n) for n in other.names()}:
            raise ProjectError("cast.name_taken", name=cleaned, owner=other.name)
    return cleaned
