"""A narration project: a folder with ``project.sqlite`` (segments, takes, voices, settings, the undo history) and the
audio of every take.

The folder is self-contained: voices are copied into ``voices/``, takes are FLAC files in ``takes/``, and every path
the project names is relative and checked to stay inside the folder, so a hand-edited or foreign file can never make
the project read or write elsewhere. The state lives in an SQLite database (:mod:`core.narration.projects.store`):
:meth:`Project.save` writes only the rows that changed, one transaction per save, so saving a take costs the same in
a short story and in a 10,000-segment book. A database that is not one, damaged, from a newer version or edited into
an invalid state is refused with a message saying what is wrong, and is never written to. A project of an earlier
version (``project.json``) is moved into a database on its first open and its file kept beside it, renamed.

A segment is *rendered* when its chosen take was made from its current text, voice and settings (the take's
``key``), *failed* when its last render failed, and *pending* otherwise: editing a segment, its voice or a setting
that changes its audio makes exactly that segment pending again. Old takes are kept.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from core.engine import ChatterboxError, SynthesisOptions, file_stamp, write_json_atomic
from core.narration.projects.characters import Character, cast_from_list, character_to_dict
from core.narration.projects.store import (
    STORE_FILE,
    STORE_SCHEMA,
    ProjectStore,
    StoreRefused,
    StoreWriteFailed,
)
from core.narration.text.sentences import base_language
from core.narration.text.speech_text import LexiconEntry, apply_lexicon, spoken_form

SCHEMA_VERSION = 1
"""The format of ``project.json`` (earlier versions' projects, and ``--dump-json``)."""
PROJECT_FILE = STORE_FILE
LEGACY_FILE = "project.json"
MIGRATED_SUFFIX = ".migrated"
"""A ``project.json`` moved into the database is kept as ``project.json.migrated``."""
TAKES_DIR = "takes"
VOICES_DIR = "voices"
LOCK_FILE = ".project.lock"
HOLDER_FILE = ".project-lock.json"
"""The lock of :mod:`core.narration.projects.lock` (a folder that holds only these is still empty for a new project)."""
DEFAULT_VOICE = None
"""A segment whose voice is ``None`` speaks in the model's built-in voice (Original and Multilingual only)."""
SPEED_RANGE = (0.5, 2.0)
MAX_PAUSE_S = 30.0
AUDIO_SETTINGS = tuple(f.name for f in fields(SynthesisOptions) if f.name != "seed")
"""Settings that change a segment's audio (with the model's variant and precision); the seed is kept per take."""
STATUSES = ("pending", "rendered", "failed", "skipped")
"""``skipped``: the segment or its chapter is skipped (it is neither rendered nor exported, whatever its takes)."""
STALE_PARTIAL_S = 600.0


class ProjectError(ChatterboxError):
    """The project folder or its ``project.json`` cannot be used (nothing was changed)."""


@dataclass
class Take:
    file: str
    """Relative to the project folder, inside ``takes/``."""
    seed: int
    tokens: list[int]
    seconds: float
    key: str
    """The render key of the segment when this take was made (a later edit makes the take outdated)."""
    timings: dict = field(default_factory=dict)
    created: str = ""
    screen: dict | None = None
    """What the take screen found (:mod:`core.narration.screening`): ``score``, ``reasons``, ``measures``,
    ``accepted`` (a person listened and kept it) and, after speech recognition, ``asr`` (``None``: not screened)."""
    performed: dict | None = None
    """A take re-voiced from a person's recording of the line (:mod:`core.narration.rendering.perform`), not spoken
    by the model (``None``): ``source``, the recording as it was given, kept beside the take in ``takes/`` (so it can
    be re-voiced into another voice later), and ``name``, the file name it had. Such a take has no speech tokens."""
    alignment: dict | None = None
    """Each word's time in the take (``None``: not aligned yet): ``words``, ``[[word, start, end], ...]`` — the words
    as the segment's text writes them, in order, seconds from the start of the take's audio (only the words the
    aligner placed); ``placed``, their share of the text's words (0–1); ``aligner``, which one placed them; ``error``,
    why none could be placed (a code :mod:`core.wording` words; ``words`` then empty), else ``None``. A take without
    words keeps its sentence's timing everywhere (read-along books, subtitles)."""

    @property
    def is_performed(self) -> bool:
        return self.performed is not None


@dataclass
class Segment:
    id: int
    text: str
    chapter: int
    paragraph: int
    kind: str = "sentence"
    """``sentence`` or ``heading``."""
    voice: str | None = DEFAULT_VOICE
    settings: dict = field(default_factory=dict)
    """Overrides of the project's audio settings for this segment (keys from :data:`AUDIO_SETTINGS`)."""
    pause_after: float = 0.0
    pause_exact: bool = False
    """The pause was set exactly (by the user, or by a ``[pause]`` tag): it keeps its length whatever the pace, where
    a default gap between sentences scales with the pace (:func:`pause_seconds`). ``False`` in older projects."""
    speed: float | None = None
    """Pace of this segment (``None``: the project's)."""
    takes: list[Take] = field(default_factory=list)
    chosen: int | None = None
    error: str | None = None
    """Why the last render of this segment failed, as a technical line (``None``: it did not fail)."""
    error_code: str | None = None
    """The failure's code (:mod:`core.wording` words it); ``None`` in projects saved before codes existed."""
    error_data: dict = field(default_factory=dict)
    """The failure's facts."""
    skipped: bool = False
    """Left out of rendering and export (kept in the project, shown as skipped, can be taken back)."""
    spoken: str | None = None
    """The user's own spoken form of this segment (``None``: the automatic one, :meth:`Project.spoken_text`)."""
    dialogue: bool = False
    """The segment is quoted speech (read by the project's dialogue voice, if it has one)."""
    own_voice: bool = False
    """The voice was chosen for this segment itself (a ``[voice:Name]`` tag, ``--set-voice``): neither the
    dialogue voice nor its chapter's voice replaces it."""
    source: dict | None = None
    """Where the segment's words stand in the imported EPUB: ``file``, ``block`` and ``path`` of its block
    (:attr:`core.narration.importing.document.Block.source`) and ``start``/``end``, character offsets in the block's
    text; ``None`` for text and Markdown, and in projects imported before it was recorded."""
    speaker: str | None = None
    """Who says this segment: a character's name (:attr:`Project.cast`); ``None``: the narrator (or quoted speech
    whose speaker is not known, when :attr:`speaker_confidence` is set)."""
    speaker_confidence: float | None = None
    """How sure the attribution is of :attr:`speaker` (0-1; ``None``: narration, never in a quote)."""
    speaker_fixed: bool = False
    """A person set the speaker: attributing the book again keeps it."""

    def fail(self, code: str, data: dict, line: str) -> None:
        """Record why the segment failed (the data as plain JSON values, so the project file can always hold them)."""
        self.error, self.error_code = line, code
        self.error_data = json.loads(json.dumps(data, default=str))

    def clear_error(self) -> None:
        self.error, self.error_code, self.error_data = None, None, {}


@dataclass
class Chapter:
    title: str
    skipped: bool = False
    """Kept in the project but not narrated (a book's cover or table of contents): its segments are neither rendered
    nor exported."""
    voice: str | None = None
    """The voice of this chapter's segments that have no voice of their own (``None``: the narrator's)."""


@dataclass(frozen=True)
class Refresh:
    """What :meth:`Project.refresh` took in."""

    shape: bool
    """The book's shape changed (segments added, removed or moved, chapters): everything was read again."""
    numbers: list[int]
    """The segments whose state changed (1-based)."""


@dataclass
class Project:
    folder: Path
    title: str
    chapters: list[Chapter]
    segments: list[Segment]
    voices: dict[str, str] = field(default_factory=dict)
    """Voice name → file inside ``voices/``."""
    settings: dict = field(default_factory=dict)
    """Audio settings for every segment (keys from :data:`AUDIO_SETTINGS`)."""
    model: dict = field(default_factory=dict)
    """``variant`` and ``precision`` of the model the project renders with (part of every render key)."""
    seed: int | None = None
    """Fixed seed for first renders (``None``: a new one each time; every take records its own)."""
    finishing: dict = field(default_factory=lambda: {"speed": 1.0, "loudness": None, "true_peak": -1.0})
    source: dict = field(default_factory=dict)
    """``name`` and ``sha256`` of the imported text, so that narrating the same file again continues the project."""
    next_id: int = 1
    bundle: str | None = None
    """The model folder the project was last rendered with (``None``: never rendered, or rendered before this was
    remembered): rendering again needs no model folder."""
    language: str = "en"
    """The book's language (ISO 639-1): sentences, numbers and abbreviations are read in it."""
    lexicon: dict[str, LexiconEntry] = field(default_factory=dict)
    """Word → how to say it, applied to every segment's spoken form (whole words)."""
    dialogue_voice: str | None = None
    """The voice of quoted speech (``None``: the narrator's)."""
    author: str | None = None
    """The book's author (an EPUB's ``dc:creator``; ``None``: not known): every export's artist unless overridden."""
    screening: dict = field(default_factory=dict)
    """The take screen's thresholds set for this book (name → value; the others are the defaults,
    :class:`core.narration.screening.Thresholds`)."""
    cast: list[Character] = field(default_factory=list)
    """The book's characters in order (:mod:`core.narration.projects.cast` finds and edits them)."""
    positions: dict[int, int] = field(default_factory=dict, repr=False, compare=False)
    """Segment id → index in :attr:`segments`, as last seen (:meth:`number` checks it before it trusts it)."""
    store: ProjectStore | None = field(default=None, repr=False, compare=False)
    """The open database (``None``: a new project not saved yet)."""
    history_records: dict = field(default_factory=lambda: {"undo": [], "redo": []}, repr=False, compare=False)
    """The undo and redo records as the store held them when the project was opened (:class:`History` reads them)."""

    # --- queries ----------------------------------------------------------------------------------------------
    def number(self, segment: Segment) -> int:
        """1-based position of a segment (what the command line and the window show); found through an index of
        positions that is made again only when the list changed under it (a render asks for every segment)."""
        index = self.positions.get(segment.id)
        if index is None or index >= len(self.segments) or self.segments[index].id != segment.id:
            self.positions = {s.id: i for i, s in enumerate(self.segments)}
            index = self.positions.get(segment.id)
            if index is None:
                raise ValueError(f"segment {segment.id} is not in the project")
        return index + 1

    def segment(self, number: int) -> Segment:
        if not 1 <= number <= len(self.segments):
            raise ProjectError("project.no_segment", number=number, count=len(self.segments))
        return self.segments[number - 1]

    def audio_settings(self, segment: Segment) -> dict:
        return {**self.settings, **segment.settings}

    def model_language(self, segment: Segment, variant: str | None = None) -> str | None:
        """The language the model speaks a segment in: the settings' own (``--language``), else, on the
        Multilingual model, the book's (an EPUB's ``dc:language``); ``None`` is the model's default (English).
        ``variant``: the model's that will read it (default: the one that rendered the project)."""
        given = self.audio_settings(segment).get("language")
        if given is not None:
            return str(given)
        if (variant or self.model.get("variant")) != "multilingual":
            return None  # an English model reads any book as English, as it always has
        language = base_language(self.language)
        return None if language == "en" else language

    def synthesis_options(self, segment: Segment, seed: int) -> SynthesisOptions:
        settings = self.audio_settings(segment)
        if "language" not in settings and (language := self.model_language(segment)) is not None:
            settings = {**settings, "language": language}
        return SynthesisOptions(**settings, seed=seed)

    def automatic_spoken(self, segment: Segment) -> str:
        """The spoken form derived from the written text (numbers, abbreviations, ...), before the lexicon."""
        return spoken_form(segment.text, self.language, segment.kind)

    def spoken_text(self, segment: Segment) -> str:
        """What the model says for this segment: the user's override, or the automatic form; then the lexicon."""
        base = segment.spoken if segment.spoken is not None else self.automatic_spoken(segment)
        return apply_lexicon(base, self.lexicon)

    def voice_of(self, segment: Segment) -> str | None:
        """The voice that reads a segment: its own, else its speaker's for speech, else the dialogue voice for
        speech, else its chapter's, else the narrator's it was imported with. Speech is a quoted segment, unless a
        person said who reads it: a character (speech, even where it mixes a quote and narration, which otherwise
        stays the narrator's), or the narrator (not speech, even in quotes)."""
        if segment.own_voice:
            return segment.voice
        speech = segment.speaker is not None if segment.speaker_fixed else segment.dialogue
        if speech and segment.speaker is not None:
            character = self.character(segment.speaker)
            if character is not None and character.voice is not None:
                return character.voice
        if speech and self.dialogue_voice is not None:
            return self.dialogue_voice
        chapter = self.chapters[segment.chapter] if 0 <= segment.chapter < len(self.chapters) else None
        if chapter is not None and chapter.voice is not None:
            return chapter.voice
        return segment.voice

    def character(self, name: str | None) -> Character | None:
        """The character of the cast named ``name`` (``None``: narration, or no such character)."""
        if name is None:
            return None
        return next((c for c in self.cast if c.name == name), None)

    def render_key(self, segment: Segment) -> str:
        voice = self.voice_of(segment)
        voice_file = self.voices.get(voice) if voice is not None else None
        identity = {
            "text": self.spoken_text(segment),
            "voice": _file_digest(self.folder / voice_file) if voice_file else "model-default",
            "settings": dict(sorted(self.audio_settings(segment).items())),
            "model": dict(sorted(self.model.items())),
        }
        if "language" not in identity["settings"] and (language := self.model_language(segment)) is not None:
            identity["language"] = language  # the book's language, spoken by the Multilingual model
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:32]

    def is_skipped(self, segment: Segment) -> bool:
        """Skipped by itself or with its chapter: not rendered, not exported."""
        if segment.skipped:
            return True
        return 0 <= segment.chapter < len(self.chapters) and self.chapters[segment.chapter].skipped

    def audible(self) -> list[Segment]:
        """The segments an export narrates (every one that is not skipped), in order."""
        return [s for s in self.segments if not self.is_skipped(s)]

    def status(self, segment: Segment) -> str:
        if self.is_skipped(segment):
            return "skipped"
        take = self.chosen_take(segment)
        if take is not None and take.key == self.render_key(segment):
            return "rendered"
        return "failed" if segment.error else "pending"

    def chosen_take(self, segment: Segment) -> Take | None:
        return segment.takes[segment.chosen] if segment.chosen is not None else None

    def rendered_take(self, segment: Segment) -> Take:
        """The chosen take of a segment that export or playback needs rendered (:class:`ProjectError` if none)."""
        take = self.chosen_take(segment)
        if take is None:
            raise ProjectError("export.not_rendered", pending=[self.number(segment)], total=len(self.segments))
        return take

    def pending(self) -> list[Segment]:
        return [s for s in self.segments if self.status(s) not in ("rendered", "skipped")]

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATUSES, 0)
        for segment in self.segments:
            out[self.status(segment)] += 1
        return out

    def speed_of(self, segment: Segment) -> float:
        return float(self.finishing.get("speed") or 1.0) * (segment.speed or 1.0)

    def path(self, relative: str) -> Path:
        try:
            return _inside(self.folder, relative, "a path")
        except _Invalid as exc:
            raise ProjectError("project.bad_path", problem=str(exc)) from exc

    # --- edits (each one makes only the affected segments pending) ---------------------------------------------
    def edit_text(self, segment: Segment, text: str) -> None:
        from core.engine import clean_text, is_speakable

        text = " ".join(clean_text(text).split())
        if not is_speakable(text):
            raise ProjectError("project.edit_empty", segment=self.number(segment))
        if text != segment.text:
            segment.spoken = None  # an own spoken form was for the old words
        segment.text = text
        segment.clear_error()

    def choose(self, segment: Segment, take_number: int) -> None:
        if not 1 <= take_number <= len(segment.takes):
            raise ProjectError(
                "project.no_take", segment=self.number(segment), takes=len(segment.takes), take=take_number
            )
        if segment.takes[take_number - 1].key != self.render_key(segment):
            raise ProjectError("project.take_outdated", segment=self.number(segment), take=take_number)
        segment.chosen = take_number - 1
        segment.clear_error()

    def set_pause(self, segment: Segment, seconds: float) -> None:
        if not 0.0 <= seconds <= MAX_PAUSE_S:
            raise ProjectError("project.pause_range", seconds=seconds, low=0.0, high=MAX_PAUSE_S)
        segment.pause_after = float(seconds)
        segment.pause_exact = True

    def set_speed(self, segment: Segment | None, speed: float | None) -> None:
        """Pace of one segment (``None`` clears it) or, with ``segment=None``, of the whole project."""
        if speed is not None and not SPEED_RANGE[0] <= speed <= SPEED_RANGE[1]:
            raise ProjectError("project.speed_range", speed=speed, low=SPEED_RANGE[0], high=SPEED_RANGE[1])
        if segment is None:
            self.finishing["speed"] = float(speed or 1.0)
        else:
            segment.speed = speed

    def set_voice(self, segment: Segment, name: str | None) -> None:
        self._check_voice(name)
        segment.voice = name
        segment.own_voice = True

    def _check_voice(self, name: str | None) -> None:
        if name is not None and name not in self.voices:
            raise ProjectError("project.unknown_voice", name=name, voices=sorted(self.voices))

    def set_spoken(self, segment: Segment, spoken: str | None) -> None:
        """The user's spoken form of a segment (``None`` or the automatic form itself: back to automatic)."""
        if spoken is not None:
            from core.engine import clean_text, is_speakable

            spoken = " ".join(clean_text(spoken).split())
            if not is_speakable(spoken):
                raise ProjectError("project.spoken_empty", segment=self.number(segment))
            if spoken == self.automatic_spoken(segment):
                spoken = None
        segment.spoken = spoken
        segment.clear_error()

    def set_language(self, language: str) -> None:
        code = language.strip().replace("_", "-")
        if not re.fullmatch(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*", code):
            raise ProjectError("project.bad_language", language=language)
        self.language = code

    def set_lexicon(self, word: str, spoken: str, match_case: bool = False) -> list[Segment]:
        """Add or replace a lexicon entry; the segments whose spoken form it changes (now pending)."""
        word, spoken = " ".join(word.split()), " ".join(spoken.split())
        if not word or not any(ch.isalnum() for ch in word) or not spoken:
            raise ProjectError("lexicon.bad_entry", word=word, spoken=spoken)
        before = {s.id: self.spoken_text(s) for s in self.segments}
        self.lexicon[word] = LexiconEntry(spoken, match_case)
        return [s for s in self.segments if self.spoken_text(s) != before[s.id]]

    def remove_lexicon(self, word: str) -> list[Segment]:
        """Remove a lexicon entry; the segments whose spoken form changes back."""
        if word not in self.lexicon:
            raise ProjectError("lexicon.no_entry", word=word, words=sorted(self.lexicon))
        before = {s.id: self.spoken_text(s) for s in self.segments}
        del self.lexicon[word]
        return [s for s in self.segments if self.spoken_text(s) != before[s.id]]

    def set_dialogue_voice(self, name: str | None) -> None:
        self._check_voice(name)
        self.dialogue_voice = name

    def mixed_speech(self) -> list[Segment]:
        """Segments that hold quoted speech and narration together (imported without a dialogue voice): the
        dialogue voice does not read them until the book is imported again with one, which cuts them."""
        from core.narration.text.dialogue import quote_spans

        return [s for s in self.segments if not s.dialogue and s.kind == "sentence" and quote_spans(s.text)]

    def set_chapter_voice(self, number: int, name: str | None) -> None:
        """The voice of chapter ``number`` (1-based; ``None``: the narrator's again)."""
        if not 1 <= number <= len(self.chapters):
            raise ProjectError("project.no_chapter", number=number, count=len(self.chapters))
        self._check_voice(name)
        self.chapters[number - 1].voice = name

    # --- files -------------------------------------------------------------------------------------------------
    def save(self, changed: Iterable[Segment] | None = None, history: dict | None = None) -> None:
        """Store what changed since the last save, in one transaction: the book's own fields and chapters, and with
        ``changed`` only those segments (a take, a failed render), without it every segment and their order.
        ``history``: the undo records to keep with it
        (:class:`core.narration.projects.editing.History`)."""
        try:
            for sub in (TAKES_DIR, VOICES_DIR):
                (self.folder / sub).mkdir(parents=True, exist_ok=True)
            book = self._book_data()
            if changed is not None and self.store is not None and len(self.store.rows.order) == len(self.segments):
                self.store.write(book, [(self.number(s) - 1, s) for s in changed], None, history)
            else:
                whole, order = list(enumerate(self.segments)), [s.id for s in self.segments]
                if self.store is None:  # the first save: the whole project, in place only once it is complete
                    made = ProjectStore.create(self.folder / STORE_FILE)
                    made.write(book, whole, order, history)
                    self.store = made.publish()
                else:
                    self.store.write(book, whole, order, history)
            if history is not None:
                self.history_records = history
        except StoreWriteFailed as exc:
            raise ProjectError("project.save_failed", folder=str(self.folder), reason=exc.reason) from exc
        except OSError as exc:
            raise ProjectError("project.save_failed", folder=str(self.folder), reason=str(exc.strerror or exc)) from exc

    def _book_data(self) -> dict:
        return {
            "title": self.title,
            "source": self.source,
            "model": self.model,
            "seed": self.seed,
            "settings": self.settings,
            "finishing": self.finishing,
            "voices": self.voices,
            "chapters": [{"title": c.title, "skipped": c.skipped, "voice": c.voice} for c in self.chapters],
            "next_id": self.next_id,
            "bundle": self.bundle,
            "language": self.language,
            "lexicon": {w: {"spoken": e.spoken, "match_case": e.match_case} for w, e in self.lexicon.items()},
            "dialogue_voice": self.dialogue_voice,
            "author": self.author,
            "screening": self.screening,
            "cast": [character_to_dict(c) for c in self.cast],
        }

    def refresh(self) -> Refresh | None:
        """Take in what another process committed since this project was read or last refreshed (a window that
        follows a render on the command line); ``None`` when nothing changed. A project that this object itself
        changes must not be refreshed with unsaved changes: they would be replaced."""
        if self.store is None:
            return None
        file = self.folder / STORE_FILE
        try:
            changes = self.store.changes_since(self.store.rows.change, self.store.rows.shape)
        except StoreRefused as exc:
            raise refused(file, exc) from exc
        if changes is None:
            return None
        if changes.shape:  # read again whole, through this connection
            try:
                data = self.store.read()
            except StoreRefused as exc:
                raise refused(file, exc) from exc
            fresh = _parse(self.folder, data, file)
            for name in (f.name for f in fields(Project)):
                if name not in ("store", "history_records"):
                    setattr(self, name, getattr(fresh, name))
            self.history_records = data["history"]
            return Refresh(True, list(range(1, len(self.segments) + 1)))
        book = parse_project(self.folder, {**changes.book, "segments": []}, file)
        for name in (f.name for f in fields(Project)):
            if name not in ("folder", "segments", "store", "history_records"):
                setattr(self, name, getattr(book, name))
        changed = []
        for data in changes.segments:
            position = data.pop("position")
            index = position if 0 <= position < len(self.segments) else -1
            if index < 0 or self.segments[index].id != data["id"]:
                continue  # moved meanwhile: a change of shape follows, which reloads everything
            self.segments[index] = segment_from_dict(self, data, index)
            changed.append(index)
        self.store.follow(changes, [(i, self.segments[i]) for i in changed])
        return Refresh(False, [i + 1 for i in changed])

    def close(self) -> None:
        """Close the database (a project object is not used after this)."""
        if self.store is not None:
            self.store.close()
            self.store = None

    def dump_json(self, out: Path) -> None:
        """A readable copy of the project (the format ``project.json`` had, with the undo history) at ``out``."""
        try:
            write_json_atomic(out, {**self.to_dict(), "history": self.history_records})
        except OSError as exc:
            raise ProjectError("project.save_failed", folder=str(out), reason=str(exc.strerror or exc)) from exc

    def to_dict(self) -> dict:
        """The project as ``project.json`` held it (plain JSON values)."""
        return {
            "schema": SCHEMA_VERSION,
            "app": "Chatterbox Desk",
            **self._book_data(),
            "segments": [asdict(s) for s in self.segments],
        }

    def new_take_file(self, segment: Segment) -> str:
        """A free name in ``takes/`` for the next take of ``segment`` (its performed source, if any, beside it:
        :func:`performance_file`)."""
        number = len(segment.takes) + 1
        while (self.folder / TAKES_DIR / f"{segment.id:05d}-{number}.flac").exists():
            number += 1
        return f"{TAKES_DIR}/{segment.id:05d}-{number}.flac"


SOURCE_MARK = ".source"
"""A performed take's recording is kept beside it: ``takes/00012-3.flac`` and ``takes/00012-3.source.wav``."""


def performance_file(take_file: str, suffix: str) -> str:
    """Where the recording a take was performed from is kept: beside the take, its own suffix (``.flac`` for a
    recording that came as samples)."""
    stem = take_file[: -len(".flac")] if take_file.endswith(".flac") else take_file
    return f"{stem}{SOURCE_MARK}{suffix.lower()}"


def pause_seconds(project: Project, segment: Segment) -> float:
    """Seconds of silence after ``segment`` in the exported audio: a pause set exactly (by the user or a ``[pause]``
    tag) as it was set; a default gap between sentences scaled with the segment's pace, as its speech is (at pace
    2× a 0.3 s gap becomes 0.15 s)."""
    if segment.pause_exact:
        return segment.pause_after
    return segment.pause_after / project.speed_of(segment)


def is_project(folder: Path) -> bool:
    folder = Path(folder)
    return (folder / STORE_FILE).is_file() or (folder / LEGACY_FILE).is_file()


def create_project(folder: Path, title: str) -> Project:
    """A new, empty project for ``folder`` (which must not exist, or be empty); the folder is made by the first save."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ProjectError("project.is_a_file", folder=str(folder))
    if (
        folder.is_dir()
        and any(p.name not in (LOCK_FILE, HOLDER_FILE) for p in folder.iterdir())
        and not is_project(folder)
    ):
        raise ProjectError("project.folder_not_empty", folder=str(folder), file=PROJECT_FILE)
    return Project(folder=folder, title=title, chapters=[], segments=[])


def refused(file: Path, exc: StoreRefused) -> ProjectError:
    """The error a database refused for ``exc`` is to the user."""
    if exc.code == "newer":
        return ProjectError("project.newer_format", path=str(file), schema=exc.schema, supported=STORE_SCHEMA)
    if exc.code == "unreadable":
        return ProjectError("project.unreadable", path=str(file), reason=exc.reason)
    return ProjectError("project.store_damaged", path=str(file), reason=exc.reason)


# --- validation of a file that may have been edited by hand ---------------------------------------------------------
class _Invalid(Exception):
    pass


def _parse(folder: Path, data, file: Path) -> Project:
    try:
        if not isinstance(data, dict):
            raise _Invalid("the file does not hold a project object")
        schema = data.get("schema")
        if not isinstance(schema, int) or isinstance(schema, bool):
            raise _Invalid("'schema' is missing")
        if schema > SCHEMA_VERSION:
            raise ProjectError("project.newer_format", path=str(file), schema=schema, supported=SCHEMA_VERSION)
        voices = _typed(data, "voices", dict)
        for name, rel in voices.items():
            _check(isinstance(name, str) and isinstance(rel, str), f"voices[{name!r}] must name a file")
            _inside(folder, rel, f"voices[{name!r}]", under=VOICES_DIR)
        chapters = [_chapter(c, i, voices) for i, c in enumerate(_typed(data, "chapters", list))]
        segments = [_segment(folder, s, i, len(chapters), voices) for i, s in enumerate(_typed(data, "segments", list))]
        ids = [s.id for s in segments]
        _check(len(set(ids)) == len(ids), "two segments have the same id")
        next_id = _typed(data, "next_id", int)
        _check(next_id > max(ids, default=0), "'next_id' must be larger than every segment id")
        settings = _settings(_typed(data, "settings", dict), "settings")
        finishing = _typed(data, "finishing", dict)
        bundle = data.get("bundle")
        _check(bundle is None or isinstance(bundle, str), "'bundle' must be a folder name")
        seed = data.get("seed")
        _check(seed is None or (isinstance(seed, int) and 0 <= seed < 2**31), "'seed' must be a whole number ≥ 0")
        return Project(
            folder=folder,
            title=str(_typed(data, "title", str)),
            chapters=chapters,
            segments=segments,
            voices=voices,
            settings=settings,
            model={k: str(v) for k, v in _typed(data, "model", dict).items()},
            seed=seed,
            finishing={"speed": 1.0, "loudness": None, "true_peak": -1.0, **finishing},
            source=_typed(data, "source", dict),
            next_id=next_id,
            bundle=bundle,
            language=_language(data),
            lexicon=_lexicon(data),
            dialogue_voice=_voice_name(data.get("dialogue_voice"), voices, "'dialogue_voice'"),
            author=_author(data.get("author")),
            screening=_screening(data.get("screening")),
            cast=cast_from_list(data.get("cast"), voices),
        )
    except (_Invalid, KeyError, TypeError, ValueError) as exc:
        raise ProjectError("project.invalid", path=str(file), problem=str(exc)) from exc


def _segment(folder: Path, data, index: int, chapter_count: int, voices: dict) -> Segment:
    where = f"segments[{index}]"
    _check(isinstance(data, dict), f"{where} must be an object")
    segment = Segment(
        id=_typed(data, "id", int, where),
        text=_typed(data, "text", str, where),
        chapter=_typed(data, "chapter", int, where),
        paragraph=_typed(data, "paragraph", int, where),
        kind=_typed(data, "kind", str, where),
        voice=data.get("voice"),
        settings=_settings(_typed(data, "settings", dict, where), f"{where}.settings"),
        pause_after=float(_typed(data, "pause_after", (int, float), where)),
        pause_exact=data.get("pause_exact", False),
        speed=data.get("speed"),
        chosen=data.get("chosen"),
        error=data.get("error"),
        error_code=data.get("error_code"),
        error_data=data.get("error_data") or {},
        skipped=data.get("skipped", False),
        spoken=data.get("spoken"),
        dialogue=bool(data.get("dialogue", False)),
        own_voice=bool(data.get("own_voice", False)),
        source=_source(data.get("source"), where),
        speaker=data.get("speaker"),
        speaker_confidence=data.get("speaker_confidence"),
        speaker_fixed=data.get("speaker_fixed", False),
    )
    _check(segment.speaker is None or isinstance(segment.speaker, str), f"{where}.speaker must be a name")
    _check(
        segment.speaker_confidence is None
        or (isinstance(segment.speaker_confidence, (int, float)) and 0 <= segment.speaker_confidence <= 1),
        f"{where}.speaker_confidence must be between 0 and 1",
    )
    _check(isinstance(segment.speaker_fixed, bool), f"{where}.speaker_fixed must be true or false")
    _check(segment.spoken is None or isinstance(segment.spoken, str), f"{where}.spoken must be text")
    _check(0 <= segment.chapter < max(chapter_count, 1), f"{where}.chapter is not a chapter of the project")
    _check(segment.voice is None or segment.voice in voices, f"{where}.voice {segment.voice!r} is not a project voice")
    _check(0 <= segment.pause_after <= MAX_PAUSE_S, f"{where}.pause_after is out of range")
    _check(isinstance(segment.pause_exact, bool), f"{where}.pause_exact must be true or false")
    _check(
        segment.speed is None
        or (isinstance(segment.speed, (int, float)) and SPEED_RANGE[0] <= segment.speed <= SPEED_RANGE[1]),
        f"{where}.speed is out of range",
    )
    _check(segment.error is None or isinstance(segment.error, str), f"{where}.error must be text")
    _check(segment.error_code is None or isinstance(segment.error_code, str), f"{where}.error_code must be text")
    _check(isinstance(segment.error_data, dict), f"{where}.error_data must be an object")
    _check(isinstance(segment.skipped, bool), f"{where}.skipped must be true or false")
    for number, take in enumerate(_typed(data, "takes", list, where), 1):
        at = f"{where}.takes[{number - 1}]"
        _check(isinstance(take, dict), f"{at} must be an object")
        rel = _typed(take, "file", str, at)
        _inside(folder, rel, f"{at}.file", under=TAKES_DIR)
        tokens = _typed(take, "tokens", list, at)
        _check(all(isinstance(t, int) for t in tokens), f"{at}.tokens must be whole numbers")
        segment.takes.append(
            Take(
                rel,
                _typed(take, "seed", int, at),
                tokens,
                float(_typed(take, "seconds", (int, float), at)),
                _typed(take, "key", str, at),
                dict(take.get("timings") or {}),
                str(take.get("created") or ""),
                _screen(take.get("screen"), at),
                _performed(folder, take.get("performed"), at),
                _alignment(take.get("alignment"), at),
            )
        )
    _check(
        segment.chosen is None or (isinstance(segment.chosen, int) and 0 <= segment.chosen < len(segment.takes)),
        f"{where}.chosen is not one of its takes",
    )
    return segment


def _alignment(data, at: str) -> dict | None:
    """A take's stored word times, checked: ``None``, or ``words`` as ``[word, start, end]`` rows in order."""
    if data is None:
        return None
    _check(isinstance(data, dict), f"{at}.alignment must be an object")
    words = data.get("words", [])
    _check(isinstance(words, list), f"{at}.alignment.words must be a list")
    for row in words:
        _check(
            isinstance(row, list)
            and len(row) == 3
            and isinstance(row[0], str)
            and all(isinstance(t, (int, float)) and not isinstance(t, bool) and t >= 0 for t in row[1:])
            and row[1] <= row[2],
            f"{at}.alignment.words holds [word, start, end] rows",
        )
    _check(all(a[2] <= b[1] + 1e-6 for a, b in zip(words, words[1:])), f"{at}.alignment.words must be in order")
    checked = {
        "words": [[w, float(s), float(e)] for w, s, e in words],
        "placed": float(data.get("placed", 1.0 if words else 0.0)),
        "aligner": str(data.get("aligner", "")),
        "error": data.get("error") if isinstance(data.get("error"), str) else None,
    }
    if checked["error"] and isinstance(data.get("error_data"), dict):
        checked["error_data"] = dict(data["error_data"])  # the error's facts, for its wording
    return checked


def _screening(data) -> dict:
    _check(data is None or isinstance(data, dict), "'screening' must be an object")
    values = dict(data or {})
    _check(
        all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values()),
        "'screening' holds numbers",
    )
    return values


def _screen(data, where: str) -> dict | None:
    _check(data is None or isinstance(data, dict), f"{where}.screen must be an object")
    return dict(data) if data is not None else None


def _performed(folder: Path, data, where: str) -> dict | None:
    if data is None:
        return None
    _check(isinstance(data, dict) and isinstance(data.get("source"), str), f"{where}.performed must name its source")
    _inside(folder, data["source"], f"{where}.performed.source", under=TAKES_DIR)
    _check(isinstance(data.get("name", ""), str), f"{where}.performed.name must be text")
    return dict(data)


def _source(data, where: str) -> dict | None:
    if data is None:
        return None
    _check(
        isinstance(data, dict)
        and isinstance(data.get("file"), str)
        and all(isinstance(data.get(k), int) and not isinstance(data.get(k), bool) for k in ("block", "start", "end")),
        f"{where}.source must name a file, a block and a start and end",
    )
    return dict(data)


def _chapter(data, index: int, voices: dict | None = None) -> Chapter:
    """A chapter of ``project.json`` (its voice checked against the project's ``voices`` when given)."""
    where = f"chapters[{index}]"
    chapter = Chapter(str(_typed(data, "title", str, where)), skipped=data.get("skipped", False))
    _check(isinstance(chapter.skipped, bool), f"{where}.skipped must be true or false")
    voice = data.get("voice")
    if voices is not None:
        voice = _voice_name(voice, voices, f"{where}.voice")
    chapter.voice = voice
    return chapter


def parse_project(folder: Path, data, file: Path) -> Project:
    """A project from the plain structure ``project.json`` held, validated (:class:`ProjectError` if invalid)."""
    return _parse(folder, data, file)


def segment_from_dict(project: Project, data: dict, index: int = 0) -> Segment:
    """A segment as :meth:`Project.to_dict` writes it, checked as :func:`open_project` checks it (for undo)."""
    try:
        return _segment(project.folder, data, index, len(project.chapters), project.voices)
    except (_Invalid, KeyError, TypeError, ValueError) as exc:
        raise ProjectError("project.invalid", path=str(project.folder / PROJECT_FILE), problem=str(exc)) from exc


def chapter_from_dict(data: dict, index: int = 0) -> Chapter:
    try:
        return _chapter(data, index)
    except (_Invalid, KeyError, TypeError, ValueError) as exc:
        raise ProjectError("project.invalid", path=PROJECT_FILE, problem=str(exc)) from exc


def _voice_name(name, voices: dict, where: str) -> str | None:
    _check(name is None or (isinstance(name, str) and name in voices), f"{where} {name!r} is not a project voice")
    return name


def _author(author) -> str | None:
    _check(author is None or isinstance(author, str), "'author' must be text")
    return " ".join(author.split()) or None if isinstance(author, str) else None


def _language(data: dict) -> str:
    language = data.get("language", "en")
    _check(
        isinstance(language, str) and bool(re.fullmatch(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*", language)),
        "'language' must be a language code such as 'en'",
    )
    return language


def _lexicon(data: dict) -> dict[str, LexiconEntry]:
    raw = data.get("lexicon", {})
    _check(isinstance(raw, dict), "'lexicon' must be an object")
    out = {}
    for word, entry in raw.items():
        _check(isinstance(entry, dict) and isinstance(entry.get("spoken"), str), f"lexicon[{word!r}] needs 'spoken'")
        out[word] = LexiconEntry(entry["spoken"], bool(entry.get("match_case", False)))
    return out


def _settings(data: dict, where: str) -> dict:
    if not data:
        return {}
    unknown = set(data) - set(AUDIO_SETTINGS)
    _check(not unknown, f"{where} has unknown settings {sorted(unknown)}")
    SynthesisOptions(**data)  # the types are checked when a segment renders; a wrong field name fails here
    return dict(data)


def _typed(data: dict, key: str, kind, where: str = "the project"):
    if not isinstance(data, dict) or key not in data:
        raise _Invalid(f"{where} has no '{key}'")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, (int, float))):
        raise _Invalid(f"'{key}' in {where} has the wrong type")
    return value


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise _Invalid(message)


_SAFE_PART = re.compile(r"^[^/\\:\x00]+$")


def _inside(folder: Path, relative: str, what: str, under: str | None = None) -> Path:
    """``folder / relative`` if ``relative`` is a plain relative path (under ``under``) that stays in the folder."""
    parts = relative.split("/")
    ok = (
        bool(relative)
        and not relative.startswith("/")
        and all(_SAFE_PART.match(p) and p not in (".", "..") for p in parts)
        and (under is None or (len(parts) == 2 and parts[0] == under))
    )
    if ok:
        path = folder / relative
        try:
            ok = path.resolve().is_relative_to(folder.resolve())
        except OSError:
            ok = False
    if not ok:
        place = f"{under}/" if under else "the project folder"
        raise _Invalid(f"{what} must be a file inside {place} ({relative!r} is not)")
    return path


_DIGESTS: dict[str, str] = {}


def _file_digest(path: Path) -> str:
    """SHA-256 of a voice file, cached by its :func:`~core.engine.file_stamp`: a replaced recording changes the keys."""
    try:
        stamp = file_stamp(path)
        if stamp not in _DIGESTS:
            _DIGESTS[stamp] = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "missing"
    return _DIGESTS[stamp]
