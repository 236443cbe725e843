"""Editing the shape of a project: delete, skip, merge, split, move a chapter boundary, rename a chapter — undoable.

Each operation changes the project in memory (the caller saves it) and returns an :class:`Edit`, the undo record: the
segments it replaced as they were (with their takes), the chapters when it changed them, and the cast and the
speakers of the segments it changed for the cast's edits (:mod:`core.narration.projects.cast`). :func:`revert` puts an
edit back and returns the record that does the edit again, so undo and redo are one operation. The records are
kept in the project's database (:class:`History`, bounded), so ``--undo`` works in the next invocation and after a
restart.

Edits keep every take whose text is unchanged: untouched segments keep their ids, takes and choices; a merged or a
split segment is new text, so it gets a new id and is pending. Deleting a segment never deletes its take files, so
undo brings its takes back. Every record carries a fingerprint of the project's structure right after the edit: a
project changed since in another way (a new import, say) refuses the stale record rather than scrambling segments.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from core.engine import clean_text, is_speakable
from core.narration.projects.characters import cast_from_list, character_to_dict
from core.narration.projects.project import (
    PROJECT_FILE,
    Chapter,
    Project,
    ProjectError,
    Segment,
    chapter_from_dict,
    segment_from_dict,
)
from core.narration.text.dialogue import PART_PAUSE_S, sentence_parts
from core.narration.text.locator import merged_place, split_place

HISTORY_FILE = "history.json"
"""Where earlier versions kept the command line's records (moved into the database with the project)."""
CAST_OPERATIONS = (
    "attribute",
    "set_speaker",
    "merge_character",
    "rename_character",
    "add_character",
    "cast_voice",
)
"""The cast's edits (:mod:`core.narration.projects.cast`): records of the cast and of segments' speakers."""
HISTORY_LIMIT = 100
"""Undo records kept (older ones are dropped)."""
OPERATIONS = (
    "delete",
    "skip",
    "unskip",
    "merge",
    "split",
    "chapter_starts",
    "chapter_joins",
    "rename_chapter",
    "skip_chapter",
    "unskip_chapter",
    "edit",
    "cut_quotes",
    *CAST_OPERATIONS,
)
TITLE_WIDTH = 80


@dataclass
class Edit:
    """One undo (or redo) record; plain JSON values only, so the database can hold it."""

    op: str
    """Which operation (one of :data:`OPERATIONS`) made the change this record takes back."""
    number: int
    """The segment (or, for ``rename_chapter``, chapter) number the operation was given."""
    start: int
    """Index of the first segment the record puts back."""
    count: int
    """How many segments stand at ``start`` now (they are replaced by ``segments``)."""
    segments: list[dict] = field(default_factory=list)
    chapters: list[dict] | None = None
    """Every chapter as it was, when the operation changed chapters."""
    chapter_of: list[int] | None = None
    """Every segment's chapter index as it was (after ``segments`` are back), when chapters were renumbered."""
    fingerprint: str = ""
    """The structure the project has while this record applies (:func:`fingerprint`)."""
    cast: list[dict] | None = None
    """The whole cast as it was, when the operation changed characters."""
    speakers: list[list] | None = None
    """``[id, speaker, confidence, fixed]`` as they were, of each segment whose speaker the operation changed (a
    re-attribution of a whole book records only these, not the segments)."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Edit:
        if not isinstance(data, dict):
            raise TypeError("an undo record must be an object")
        edit = cls(**data)
        if not isinstance(edit.start, int) or not isinstance(edit.count, int) or edit.start < 0 or edit.count < 0:
            raise ValueError("an undo record has a bad position")
        return edit


def fingerprint(project: Project) -> str:
    """The project's structure: segment ids, their chapters, and the chapters (not the texts or takes)."""
    shape = [[s.id, s.chapter] for s in project.segments], [[c.title, c.skipped] for c in project.chapters]
    return hashlib.sha256(json.dumps(shape).encode()).hexdigest()[:24]


# --- operations (1-based numbers, as the command line and the window show them) ---------------------------------------
def delete(project: Project, number: int) -> Edit:
    project.segment(number)
    if len(project.segments) == 1:
        raise ProjectError("project.delete_only", number=number)
    edit = _begin(project, "delete", number, number - 1, number)
    del project.segments[number - 1]
    return _end(project, edit, 0)


def set_skipped(project: Project, number: int, skipped: bool) -> Edit:
    segment = project.segment(number)
    edit = _begin(project, "skip" if skipped else "unskip", number, number - 1, number)
    segment.skipped = skipped
    return _end(project, edit, 1)


def edit_text(project: Project, number: int, text: str) -> Edit:
    segment = project.segment(number)
    edit = _begin(project, "edit", number, number - 1, number)
    project.edit_text(segment, text)
    return _end(project, edit, 1)


def merge(project: Project, number: int) -> Edit:
    """Segment ``number`` and the next become one new (pending) segment in the first one's chapter."""
    first = project.segment(number)
    if number == len(project.segments):
        raise ProjectError("project.merge_last", number=number)
    second = project.segments[number]
    if second.chapter != first.chapter:
        raise ProjectError("project.merge_chapters", number=number, next=number + 1)
    edit = _begin(project, "merge", number, number - 1, number + 1)
    merged = _derived(project, first, f"{first.text} {second.text}")
    merged.kind = first.kind if first.kind == second.kind else "sentence"
    merged.pause_after, merged.pause_exact = second.pause_after, second.pause_exact
    merged.skipped = first.skipped and second.skipped
    merged.source = merged_place(first.source, second.source)  # the read-along export finds it in the book
    project.segments[number - 1 : number + 1] = [merged]
    return _end(project, edit, 1)


def split(project: Project, number: int, at: int) -> Edit:
    """Segment ``number`` becomes two new (pending) segments: its first ``at`` characters, and the rest."""
    segment = project.segment(number)
    head, tail = _clean(segment.text[: max(at, 0)]), _clean(segment.text[max(at, 0) :])
    if not 0 < at < len(segment.text) or not is_speakable(head) or not is_speakable(tail):
        raise ProjectError("project.split_position", number=number, at=at, length=len(segment.text))
    edit = _begin(project, "split", number, number - 1, number)
    first, second = _derived(project, segment, head), _derived(project, segment, tail)
    first.pause_after, first.pause_exact = 0.0, False
    first.source, second.source = split_place(segment.source, segment.text, at)
    project.segments[number - 1 : number] = [first, second]
    return _end(project, edit, 2)


def cut_at_quotes(project: Project) -> Edit:
    """Every sentence that holds quoted speech and narration together (:meth:`Project.mixed_speech`, a book imported
    without a dialogue voice or a cast) becomes its parts, as an import with one cuts it: the speech (read by its
    speaker or the dialogue voice) and the narration around it (the narrator's). The parts are new, pending
    segments; every other segment keeps its takes. One record covers all the cuts."""
    cuts: dict[int, list[tuple[str, bool]]] = {}
    index = 0
    while index < len(project.segments):
        first = project.segments[index]
        stop = index + 1
        while stop < len(project.segments) and _same_paragraph(first, project.segments[stop]):
            stop += 1
        group = project.segments[index:stop]
        if first.kind == "sentence":
            parts = sentence_parts(" ".join(s.text for s in group), [s.text for s in group])
            for offset, (segment, pieces) in enumerate(zip(group, parts)):
                if len(pieces) > 1 and not segment.dialogue and segment.kind == "sentence":
                    cuts[index + offset] = pieces
        index = stop
    if not cuts:
        raise ProjectError("project.no_mixed_speech")
    start, stop = min(cuts), max(cuts) + 1
    edit = _begin(project, "cut_quotes", start + 1, start, stop)
    made: list[Segment] = []
    for index in range(start, stop):
        segment = project.segments[index]
        if index not in cuts:
            made.append(segment)
            continue
        cursor = 0
        for number, (words, speech) in enumerate(cuts[index], 1):
            part = _derived(project, segment, _clean(words))
            part.dialogue = speech
            if not speech:
                part.speaker, part.speaker_confidence, part.speaker_fixed = None, None, False
            if number < len(cuts[index]):
                part.pause_after, part.pause_exact = PART_PAUSE_S, False
            at = segment.text.find(words.strip(), cursor)
            part.source = _part_place(segment, at, len(words.strip()))
            cursor = max(cursor, at)
            made.append(part)
    project.segments[start:stop] = made
    return _end(project, edit, len(made))


def _same_paragraph(first: Segment, other: Segment) -> bool:
    return (other.chapter, other.paragraph, other.kind) == (first.chapter, first.paragraph, first.kind)


def _part_place(segment: Segment, at: int, length: int) -> dict | None:
    """The place in the book of ``length`` characters of ``segment``'s text from ``at`` (its own place when the
    part is not found or the place does not match the text)."""
    source = segment.source
    if source is None or at < 0 or source["end"] - source["start"] != len(segment.text):
        return dict(source) if source is not None else None
    return {**source, "start": source["start"] + at, "end": source["start"] + at + length}


def chapter_starts(project: Project, number: int, title: str | None = None) -> Edit:
    """Segment ``number`` starts a new chapter (after its own), taking the rest of its chapter with it."""
    segment = project.segment(number)
    index, chapter = number - 1, segment.chapter
    if _starts_chapter(project, index):
        raise ProjectError("project.already_starts", number=number, chapter=chapter + 1)
    name = _title(title) if title is not None else _shorten(segment.text)
    edit = _begin(project, "chapter_starts", number, index, index, chapters=True)
    project.chapters.insert(
        chapter + 1, Chapter(name, skipped=project.chapters[chapter].skipped, voice=project.chapters[chapter].voice)
    )
    for later in project.segments[index:]:
        later.chapter += 1  # this chapter's rest moves into the new one, and every later chapter moves up one
    return _end(project, edit, 0)


def chapter_joins(project: Project, number: int) -> Edit:
    """The chapter that segment ``number`` starts joins the chapter before it (its title goes)."""
    segment = project.segment(number)
    index, chapter = number - 1, segment.chapter
    if not _starts_chapter(project, index) or chapter == 0:
        raise ProjectError("project.not_a_start", number=number)
    into = project.segments[index - 1].chapter if index > 0 else chapter - 1
    edit = _begin(project, "chapter_joins", number, index, index, chapters=True)
    del project.chapters[chapter]
    for later in project.segments[index:]:
        later.chapter = into if later.chapter == chapter else later.chapter - 1
    return _end(project, edit, 0)


def rename_chapter(project: Project, number: int, title: str) -> Edit:
    if not 1 <= number <= len(project.chapters):
        raise ProjectError("project.no_chapter", number=number, count=len(project.chapters))
    name = _title(title)
    edit = _begin(project, "rename_chapter", number, 0, 0, chapters=True)
    project.chapters[number - 1].title = name
    return _end(project, edit, 0)


def set_chapter_skipped(project: Project, number: int, skipped: bool) -> Edit:
    """Chapter ``number`` is (or is no longer) skipped with all its segments (a contents page, a cover)."""
    if not 1 <= number <= len(project.chapters):
        raise ProjectError("project.no_chapter", number=number, count=len(project.chapters))
    edit = _begin(project, "skip_chapter" if skipped else "unskip_chapter", number, 0, 0, chapters=True)
    project.chapters[number - 1].skipped = skipped
    return _end(project, edit, 0)


def revert(project: Project, edit: Edit) -> Edit:
    """Put ``edit`` back (undo, or redo with the record an undo returned); returns the record that reverses this."""
    if edit.fingerprint != fingerprint(project) or edit.start + edit.count > len(project.segments):
        raise ProjectError("project.history_stale", op=edit.op)
    now = project.segments[edit.start : edit.start + edit.count]
    inverse = Edit(
        op=edit.op,
        number=edit.number,
        start=edit.start,
        count=len(edit.segments),
        segments=[asdict(s) for s in now],
        chapters=[asdict(c) for c in project.chapters] if edit.chapters is not None else None,
        chapter_of=[s.chapter for s in project.segments] if edit.chapter_of is not None else None,
        cast=[character_to_dict(c) for c in project.cast] if edit.cast is not None else None,
    )
    chapters, cast = project.chapters, project.cast
    try:
        if edit.cast is not None:
            project.cast = _cast(project, edit.cast)
        if edit.chapters is not None:
            project.chapters = [chapter_from_dict(c, i) for i, c in enumerate(edit.chapters)]
        back = [segment_from_dict(project, s, edit.start + i) for i, s in enumerate(edit.segments)]
        if edit.speakers is not None:
            inverse.speakers = _put_speakers(project, edit)
    except ProjectError:
        project.chapters, project.cast = chapters, cast
        raise
    segments = project.segments[: edit.start] + back + project.segments[edit.start + edit.count :]
    if edit.chapter_of is not None:
        if len(edit.chapter_of) != len(segments):
            project.chapters = chapters
            raise ProjectError("project.history_stale", op=edit.op)
        for segment, chapter in zip(segments, edit.chapter_of):
            segment.chapter = chapter
    project.segments = segments
    inverse.fingerprint = fingerprint(project)
    return inverse


def _cast(project: Project, data: list[dict]) -> list:
    try:
        return cast_from_list(data, project.voices)
    except (ValueError, TypeError) as exc:
        raise ProjectError("project.invalid", path=PROJECT_FILE, problem=str(exc)) from exc


def _put_speakers(project: Project, edit: Edit) -> list[list]:
    """Give the segments of ``edit.speakers`` their speakers back; the entries that undo this."""
    by_id = {s.id: s for s in project.segments}
    entries = edit.speakers or []
    if not all(_speaker_entry(e) and e[0] in by_id for e in entries):
        raise ProjectError("project.history_stale", op=edit.op)
    inverse = []
    for segment_id, speaker, confidence, fixed in entries:
        segment = by_id[segment_id]
        inverse.append([segment_id, segment.speaker, segment.speaker_confidence, segment.speaker_fixed])
        segment.speaker, segment.speaker_confidence, segment.speaker_fixed = speaker, confidence, bool(fixed)
    return inverse


def _speaker_entry(entry) -> bool:
    if not isinstance(entry, list) or len(entry) != 4:
        return False
    _id, speaker, confidence, fixed = entry
    number = isinstance(confidence, (int, float)) and not isinstance(confidence, bool) and 0 <= confidence <= 1
    return (speaker is None or isinstance(speaker, str)) and (confidence is None or number) and isinstance(fixed, bool)


# --- the history the command line keeps -------------------------------------------------------------------------------
@dataclass
class History:
    """Undo and redo records of a project, kept in its database (a damaged record list is an empty history)."""

    undo_records: list[Edit] = field(default_factory=list)
    redo_records: list[Edit] = field(default_factory=list)
    stale: bool = False
    """An undo or redo found the history stale and emptied it (save it so that the next command knows)."""

    @classmethod
    def load(cls, project: Project) -> History:
        data = project.history_records
        try:
            return cls([Edit.from_dict(e) for e in data["undo"]], [Edit.from_dict(e) for e in data["redo"]])
        except (ValueError, TypeError, KeyError):
            return cls()

    def records(self) -> dict:
        """The records as the project stores them."""
        return {"undo": [e.to_dict() for e in self.undo_records], "redo": [e.to_dict() for e in self.redo_records]}

    def save(self, project: Project) -> None:
        """Store the project with these records (one transaction)."""
        project.save(history=self.records())

    def record(self, edit: Edit) -> None:
        self.undo_records = [*self.undo_records, edit][-HISTORY_LIMIT:]
        self.redo_records = []

    def undo(self, project: Project) -> Edit:
        """Take back the latest edit; returns the record of what was undone. A stale record (the project changed in
        another way since) empties the history: every older record was made against an even older project."""
        if not self.undo_records:
            raise ProjectError("project.nothing_to_undo")
        edit = self.undo_records[-1]
        redo = self._revert(project, edit)
        self.undo_records.pop()
        self.redo_records.append(redo)
        return edit

    def redo(self, project: Project) -> Edit:
        if not self.redo_records:
            raise ProjectError("project.nothing_to_redo")
        edit = self.redo_records[-1]
        undo = self._revert(project, edit)
        self.redo_records.pop()
        self.undo_records.append(undo)
        return edit

    def _revert(self, project: Project, edit: Edit) -> Edit:
        try:
            return revert(project, edit)
        except ProjectError as exc:
            if exc.code == "project.history_stale":
                self.undo_records, self.redo_records = [], []
                self.stale = True
            raise


# --- helpers ----------------------------------------------------------------------------------------------------------
def _begin(project: Project, op: str, number: int, start: int, stop: int, chapters: bool = False) -> Edit:
    return Edit(
        op=op,
        number=number,
        start=start,
        count=0,
        segments=[asdict(s) for s in project.segments[start:stop]],
        chapters=[asdict(c) for c in project.chapters] if chapters else None,
        chapter_of=[s.chapter for s in project.segments] if chapters else None,
    )


def _end(project: Project, edit: Edit, count: int) -> Edit:
    edit.count = count
    edit.fingerprint = fingerprint(project)
    return edit


def _derived(project: Project, source: Segment, text: str) -> Segment:
    """A new segment with ``source``'s place, voice, settings and speaker and new text (no takes: it is pending)."""
    segment = Segment(
        id=project.next_id,
        text=text,
        chapter=source.chapter,
        paragraph=source.paragraph,
        kind=source.kind,
        voice=source.voice,
        settings=dict(source.settings),
        pause_after=source.pause_after,
        pause_exact=source.pause_exact,
        speed=source.speed,
        skipped=source.skipped,
        dialogue=source.dialogue,
        own_voice=source.own_voice,
        speaker=source.speaker,
        speaker_confidence=source.speaker_confidence,
        speaker_fixed=source.speaker_fixed,
    )
    project.next_id += 1
    return segment


def _starts_chapter(project: Project, index: int) -> bool:
    return index == 0 or project.segments[index - 1].chapter != project.segments[index].chapter


def _clean(text: str) -> str:
    return " ".join(clean_text(text).split())


def _title(title: str) -> str:
    name = " ".join(title.split())
    if not name:
        raise ProjectError("project.title_empty")
    return name


def _shorten(text: str) -> str:
    return text if len(text) <= TITLE_WIDTH else text[: TITLE_WIDTH - 1].rstrip() + "…"
