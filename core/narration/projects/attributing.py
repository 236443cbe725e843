"""Who says each segment of a project: the book's paragraphs rebuilt from its segments, attributed
(:func:`core.narration.attribution.attribute`), the characters found merged into the project's cast, and every
segment given the speaker of the quote that covers most of it, as one undoable edit.

What a person decided stays: a speaker a person set (``speaker_fixed``) is never replaced; a character found under a
name or alias of the cast is that character (so a renamed or merged character keeps its lines, aliases and voice); a
character's gender is only filled in where the cast does not know it. Characters found who say no line are left out,
and characters of the cast are never removed (merging one into another is how a person does that).
"""

from __future__ import annotations

from core.narration.attribution import Attribution, attribute
from core.narration.projects.cast import SpeakerChanges, cast_as_it_is, is_narrator, record
from core.narration.projects.characters import Character, clean_name, key
from core.narration.projects.editing import Edit
from core.narration.projects.project import Project

Place = tuple[int, int, int]
"""A segment's place in the rebuilt book: its paragraph, and where its text starts and ends in it."""


def book_text(project: Project) -> tuple[list[str], list[Place]]:
    """The book's paragraphs (the texts of each paragraph's segments joined with single spaces; a heading is an
    empty paragraph, and an empty one stands between chapters, which ends a run of dialogue) and each segment's
    place in them, in the order of the segments."""
    paragraphs: list[str] = []
    places: list[Place] = []
    pieces: list[str] = []
    group: tuple[int, int] | None = None
    cursor = 0
    for segment in project.segments:
        here = (segment.chapter, segment.paragraph)
        if here != group:
            if group is not None:
                paragraphs.append(" ".join(pieces))
                if here[0] != group[0]:
                    paragraphs.append("")
            group, pieces, cursor = here, [], 0
        if segment.kind == "heading":
            places.append((len(paragraphs), cursor, cursor))
            continue
        start = cursor + (1 if pieces else 0)
        pieces.append(segment.text)
        cursor = start + len(segment.text)
        places.append((len(paragraphs), start, cursor))
    if group is not None:
        paragraphs.append(" ".join(pieces))
    return paragraphs, places


def attribute_project(project: Project) -> Edit:
    """Attribute every segment whose speaker no person set, keeping the cast's edits; the undo record (it may
    change nothing: :func:`core.narration.projects.cast.is_empty`)."""
    paragraphs, places = book_text(project)
    found = attribute(paragraphs, project.language)
    before = cast_as_it_is(project)
    names = _cast_names(project, found)
    quotes: dict[int, list[tuple[int, int, str | None, float]]] = {}
    for quote in found.quotes:
        speaker = names.get(quote.speaker) if quote.speaker is not None else None
        quotes.setdefault(quote.paragraph, []).append((quote.start, quote.end, speaker, quote.confidence))
    changes = SpeakerChanges()
    for segment, (paragraph, start, end) in zip(project.segments, places):
        if segment.speaker_fixed:
            continue
        speaker, confidence, most = None, None, 0
        for q_start, q_end, q_speaker, q_confidence in quotes.get(paragraph, ()):
            overlap = min(end, q_end) - max(start, q_start)
            if overlap > most:
                speaker, confidence, most = q_speaker, q_confidence, overlap
        changes.set(segment, speaker, confidence, False)
    cast = before if cast_as_it_is(project) != before else None
    return record(project, "attribute", 0, cast, changes)


def _cast_names(project: Project, found: Attribution) -> dict[int, str]:
    """Each character found (by id) → the name of its character in the cast, added to it when new and speaking."""
    index: dict[str, Character] = {}
    for character in project.cast:
        for alias in character.aliases:
            index.setdefault(key(alias), character)
    for character in project.cast:
        index[key(character.name)] = character  # a name wins over another character's alias
    speaking = {q.speaker for q in found.quotes if q.speaker is not None}
    names: dict[int, str] = {}
    for person in found.characters:
        own = [person.name, *sorted(a for a in person.aliases if key(a) != key(person.name))]
        match = next((index[key(n)] for n in own if key(n) in index), None)
        if match is None:
            if person.id not in speaking or is_narrator(person.name):
                continue
            match = Character(clean_name(person.name), gender=person.gender)
            project.cast.append(match)
            index[key(match.name)] = match
        elif match.gender is None and person.gender is not None:
            match.gender = person.gender
        for alias in own:
            if key(alias) not in index:
                match.aliases.append(clean_name(alias))
                index[key(alias)] = match
        names[person.id] = match.name
    return names
