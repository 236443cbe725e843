"""Where a project lives on disk: ``project.sqlite``, one SQLite database per project folder.

The book (title, model, settings, voices, lexicon, chapters, the cast of characters), its segments (with their
speakers), their takes and the undo history are rows of tables, so saving a take is one ``UPDATE`` of its segment and
one ``INSERT`` of the take in one transaction, whatever the length of the book: the cost of the bookkeeping stays
flat from a short story to a 10,000-segment novel. The journal is SQLite's write-ahead log (WAL): a reader (the
window, while the command line renders) sees the last committed state and never blocks the writer; ``kill -9`` or a
power cut leaves the last committed transaction; a full disk fails the transaction and leaves the database as it was.

The store keeps the rows it last wrote (:class:`StoredRows`) and writes only what differs: a take writes one
segment, an edit of one sentence one segment, a merge the segments whose position moved. Every transaction that
changes segments numbers itself (``book.change``) and stamps the rows it wrote with that number, so a reader asks
for the rows newer than the last it saw (:meth:`ProjectStore.changes_since`); a change of the book's shape (segments
added, removed or moved, chapters) bumps ``book.shape`` too, and a reader then reloads the whole book.

Opening is careful with files that were not written by this app or that were damaged: a file that is not an SQLite
database, a database of another program (its ``application_id``), one from a newer version (``user_version``), one
that fails ``PRAGMA integrity_check``, are refused with :class:`StoreRefused` and never written to. The rows are then
read back into the same plain structure ``project.json`` held (:meth:`ProjectStore.read`), which
:mod:`core.narration.projects.project` validates as it always has (paths inside the folder, voices known, ranges).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STORE_FILE = "project.sqlite"
STORE_SCHEMA = 5
"""``PRAGMA user_version`` of the tables below; a larger one was written by a newer app. 2 added the takes' screen,
3 their ``performed`` (a take re-voiced from a person's recording, and where that recording is kept), 4 the cast
(``characters``) and each segment's speaker, 5 the takes' ``alignment`` (each word's time); :data:`UPGRADES`
brings an older project up to date when it is opened."""
APPLICATION_ID = 0x43424F58
"""``PRAGMA application_id``: ``CBOX``, so another program's SQLite file is told apart from a project."""
SQLITE_HEADER = b"SQLite format 3\x00"
BOOK_KEYS = (
    "title",
    "source",
    "model",
    "seed",
    "finishing",
    "next_id",
    "bundle",
    "language",
    "dialogue_voice",
    "author",
    "screening",
)
"""The book's own fields (JSON values in the ``book`` table), beside the counters ``change`` and ``shape``."""
SEGMENT_COLUMNS = (
    "id",
    "position",
    "chapter",
    "paragraph",
    "kind",
    "text",
    "voice",
    "settings",
    "pause_after",
    "pause_exact",
    "speed",
    "chosen",
    "error",
    "error_code",
    "error_data",
    "skipped",
    "spoken",
    "dialogue",
    "own_voice",
    "source",
    "speaker",
    "speaker_confidence",
    "speaker_fixed",
)
JSON_SEGMENT_COLUMNS = ("settings", "error_data", "source")
BOOL_SEGMENT_COLUMNS = ("pause_exact", "skipped", "dialogue", "own_voice", "speaker_fixed")
TAKE_COLUMNS = ("file", "seed", "tokens", "seconds", "key", "timings", "created", "screen", "performed", "alignment")

SCHEMA = """
CREATE TABLE book (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE voices (name TEXT PRIMARY KEY, file TEXT NOT NULL);
CREATE TABLE lexicon (word TEXT PRIMARY KEY, spoken TEXT NOT NULL, match_case INTEGER NOT NULL);
CREATE TABLE chapters (
    position INTEGER PRIMARY KEY, title TEXT NOT NULL, skipped INTEGER NOT NULL, voice TEXT
);
CREATE TABLE segments (
    id INTEGER PRIMARY KEY, position INTEGER NOT NULL, chapter INTEGER NOT NULL, paragraph INTEGER NOT NULL,
    kind TEXT NOT NULL, text TEXT NOT NULL, voice TEXT, settings TEXT, pause_after REAL NOT NULL,
    pause_exact INTEGER NOT NULL, speed REAL, chosen INTEGER, error TEXT, error_code TEXT, error_data TEXT,
    skipped INTEGER NOT NULL, spoken TEXT, dialogue INTEGER NOT NULL, own_voice INTEGER NOT NULL, source TEXT,
    changed INTEGER NOT NULL DEFAULT 0, speaker TEXT, speaker_confidence REAL, speaker_fixed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX segments_by_position ON segments (position);
CREATE INDEX segments_by_change ON segments (changed);
CREATE TABLE takes (
    segment INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    number INTEGER NOT NULL, file TEXT NOT NULL, seed INTEGER NOT NULL, tokens TEXT NOT NULL, seconds REAL NOT NULL,
    key TEXT NOT NULL, timings TEXT NOT NULL, created TEXT NOT NULL, screen TEXT, performed TEXT, alignment TEXT,
    PRIMARY KEY (segment, number)
);
CREATE TABLE characters (
    position INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, aliases TEXT NOT NULL, gender TEXT, voice TEXT
);
CREATE TABLE history (
    id INTEGER PRIMARY KEY AUTOINCREMENT, stack TEXT NOT NULL CHECK (stack IN ('undo', 'redo')), record TEXT NOT NULL
);
"""


UPSERT_SEGMENT = (
    f"INSERT INTO segments ({', '.join(SEGMENT_COLUMNS)}, changed) VALUES ({', '.join('?' * len(SEGMENT_COLUMNS))}, ?) "
    f"ON CONFLICT (id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in (*SEGMENT_COLUMNS[1:], 'changed'))}"
)
"""An upsert, not ``INSERT OR REPLACE``: a replace deletes the row first, and the foreign key would delete its takes."""
_TAKE_PLACES = ", ".join("?" * (2 + len(TAKE_COLUMNS)))
INSERT_TAKE = f"INSERT INTO takes (segment, number, {', '.join(TAKE_COLUMNS)}) VALUES ({_TAKE_PLACES})"
_SCREEN = 1 + TAKE_COLUMNS.index("screen")
"""Where a take's screen is in a row of ``SELECT segment, <TAKE_COLUMNS>``."""
_ALIGNMENT = 1 + TAKE_COLUMNS.index("alignment")
UPGRADES: dict[int, tuple[str, ...]] = {
    1: ("ALTER TABLE takes ADD COLUMN screen TEXT",),
    2: ("ALTER TABLE takes ADD COLUMN performed TEXT",),
    3: (
        "ALTER TABLE segments ADD COLUMN speaker TEXT",
        "ALTER TABLE segments ADD COLUMN speaker_confidence REAL",
        "ALTER TABLE segments ADD COLUMN speaker_fixed INTEGER NOT NULL DEFAULT 0",
        "CREATE TABLE characters (position INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, aliases TEXT NOT NULL, "
        "gender TEXT, voice TEXT)",
    ),
    4: ("ALTER TABLE takes ADD COLUMN alignment TEXT",),
}
"""Schema version → the statements that bring it to the next one (one transaction)."""


class StoreRefused(Exception):
    """The database cannot be used (``code`` says why: ``not_a_database``, ``foreign``, ``newer``, ``damaged``,
    ``unreadable``); nothing was written to it."""

    def __init__(self, code: str, reason: str, schema: int = 0):
        super().__init__(reason)
        self.code, self.reason, self.schema = code, reason, schema


class StoreWriteFailed(Exception):
    """A transaction failed (a full disk, a read-only medium): it was rolled back, the database is as it was."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class StoredRows:
    """What the database holds, as last written or read by this connection: the rows to compare a save against."""

    book: dict[str, str] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    voices: dict[str, str] = field(default_factory=dict)
    lexicon: dict[str, tuple[str, int]] = field(default_factory=dict)
    chapters: list[tuple] = field(default_factory=list)
    cast: list[tuple] = field(default_factory=list)
    """The characters' rows in order: name, aliases (JSON), gender, voice."""
    segments: dict[int, tuple] = field(default_factory=dict)
    """Segment id → its row (the values of :data:`SEGMENT_COLUMNS`)."""
    takes: dict[int, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """Segment id → its takes' :func:`take_signature` in order (a take's audio never changes once made, new files
    mean new takes; its screen may change: screened again, accepted)."""
    order: list[int] = field(default_factory=list)
    change: int = 0
    shape: int = 0


@dataclass
class Changes:
    """What a reader finds changed since it last looked (:meth:`ProjectStore.changes_since`)."""

    shape: bool
    """Segments were added, removed or moved, or chapters changed: reload the whole book."""
    book: dict[str, Any]
    """The book's fields and tables as :meth:`ProjectStore.read` returns them, less ``segments``."""
    segments: list[dict]
    """The segments whose rows changed (each as :meth:`ProjectStore.read` returns it), with ``position``."""
    change: int


def segment_values(segment: Any, position: int) -> tuple:
    """A segment (a :class:`core.narration.projects.project.Segment`) → its row's values as Python values (dicts
    copied, so that a later change in place is seen), the form :class:`StoredRows` compares."""
    values: list[Any] = []
    for column in SEGMENT_COLUMNS:
        if column == "position":
            values.append(position)
        elif column in JSON_SEGMENT_COLUMNS:
            value = getattr(segment, column)
            values.append(dict(value) if value else None)
        elif column in BOOL_SEGMENT_COLUMNS:
            values.append(bool(getattr(segment, column)))
        else:
            values.append(getattr(segment, column))
    return tuple(values)


_JSON_INDEXES = tuple(SEGMENT_COLUMNS.index(c) for c in JSON_SEGMENT_COLUMNS)
_BOOL_INDEXES = tuple(SEGMENT_COLUMNS.index(c) for c in BOOL_SEGMENT_COLUMNS)


def _to_row(values: tuple) -> list:
    row = list(values)
    for index in _JSON_INDEXES:
        if row[index] is not None:
            row[index] = json.dumps(row[index], sort_keys=True, ensure_ascii=False)
    for index in _BOOL_INDEXES:
        row[index] = int(row[index])
    return row


def _from_row(row: tuple) -> tuple:
    values = list(row)
    for index in _JSON_INDEXES:
        values[index] = json.loads(values[index]) if values[index] else None
    for index in _BOOL_INDEXES:
        values[index] = bool(values[index])
    return tuple(values)


def take_row(segment_id: int, number: int, take: Any) -> tuple:
    """A take (a :class:`core.narration.projects.project.Take` or its dict) → its row."""
    return (
        segment_id,
        number,
        _field(take, "file"),
        _field(take, "seed"),
        json.dumps(_field(take, "tokens")),
        _field(take, "seconds"),
        _field(take, "key"),
        json.dumps(_field(take, "timings") or {}, sort_keys=True),
        _field(take, "created") or "",
        _screen_json(take),
        _performed_json(take),
        _alignment_json(take),
    )


def take_signature(take: Any) -> tuple[str, str]:
    """What tells a stored take from a changed one: its file, its screen and its words' times."""
    return _field(take, "file"), _signed(_screen_json(take), _alignment_json(take))


def _signed(screen: str | None, alignment: str | None) -> str:
    return (screen or "") + "\n" + (alignment or "")


def _alignment_json(take: Any) -> str | None:
    alignment = take.get("alignment") if isinstance(take, dict) else take.alignment
    return json.dumps(alignment, sort_keys=True, ensure_ascii=False) if alignment is not None else None


def _screen_json(take: Any) -> str | None:
    screen = take.get("screen") if isinstance(take, dict) else take.screen
    return json.dumps(screen, sort_keys=True, ensure_ascii=False) if screen is not None else None


def _performed_json(take: Any) -> str | None:
    performed = take.get("performed") if isinstance(take, dict) else take.performed
    return json.dumps(performed, sort_keys=True, ensure_ascii=False) if performed is not None else None


def _field(take: Any, name: str) -> Any:
    return take[name] if isinstance(take, dict) else getattr(take, name)


class ProjectStore:
    """One project's database: opened (checked) with :meth:`open`, made with :meth:`create`."""

    def __init__(self, path: Path, connection: sqlite3.Connection, rows: StoredRows):
        self.path = path
        self._db = connection
        self.rows = rows
        self._lock = threading.RLock()
        """The window's studio and the render it starts share one project (and this connection) across threads."""
        self.final_path = path
        """Where :meth:`publish` puts a database made by :meth:`create`."""

    # --- opening ------------------------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: Path) -> ProjectStore:
        """The database at ``path``, checked before anything is written to it (:class:`StoreRefused`); its rows
        are known once :meth:`read`."""
        try:
            with open(path, "rb") as file:
                header = file.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise StoreRefused("unreadable", str(exc.strerror or exc)) from exc
        if header != SQLITE_HEADER:
            raise StoreRefused("not_a_database", "it is not an SQLite database")
        try:
            db = _connect(path)
        except sqlite3.Error as exc:
            raise StoreRefused("unreadable", str(exc)) from exc
        try:
            application_id = db.execute("PRAGMA application_id").fetchone()[0]
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if application_id != APPLICATION_ID:
                raise StoreRefused("foreign", "it is an SQLite database of another program, not a project")
            if version > STORE_SCHEMA:
                raise StoreRefused("newer", f"project format {version}", schema=version)
            problems = [row[0] for row in db.execute("PRAGMA integrity_check(5)")]
            if problems != ["ok"]:
                raise StoreRefused("damaged", "; ".join(problems))
            db.execute("PRAGMA foreign_keys = ON")
            _upgrade(db, version)
        except sqlite3.Error as exc:
            db.close()
            raise StoreRefused("damaged", str(exc)) from exc
        except StoreRefused:
            db.close()
            raise
        return cls(path, db, StoredRows())

    @classmethod
    def create(cls, path: Path) -> ProjectStore:
        """A new, empty database for ``path``, made under a temporary name beside it: write the project into it,
        then :meth:`publish` puts it in place (a crash before that leaves no half-made project)."""
        temporary = path.with_name(f".{path.name}.partial")
        for leftover in (temporary, Path(f"{temporary}-wal"), Path(f"{temporary}-shm"), Path(f"{temporary}-journal")):
            leftover.unlink(missing_ok=True)
        db = _connect(temporary)
        try:
            db.executescript(SCHEMA)
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {STORE_SCHEMA}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            db.close()
            raise StoreWriteFailed(_reason(exc)) from exc
        store = cls(temporary, db, StoredRows())
        store.final_path = path
        return store

    def publish(self) -> ProjectStore:
        """Move a database made by :meth:`create` to its place; the store opened there, ready for writing, with
        the rows written here."""
        with self._lock:
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise StoreWriteFailed(_reason(exc)) from exc
            finally:
                self._db.close()
        self.path.replace(self.final_path)
        try:
            store = ProjectStore.open(self.final_path)
        except StoreRefused as exc:
            raise StoreWriteFailed(exc.reason) from exc
        store.rows = self.rows
        store.prepare_for_writing()
        return store

    def prepare_for_writing(self) -> None:
        """WAL journal and durable commits, set once the database passed its checks (these write its header)."""
        with self._lock:
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = FULL")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- reading ------------------------------------------------------------------------------------------------
    def read(self) -> dict:
        """The whole project in the shape ``project.json`` held (validated by the caller), plus ``history``; the
        rows read become the stored rows a save compares with."""
        with self._lock:
            try:
                self._db.execute("BEGIN")  # one consistent view, whatever another process commits meanwhile
                try:
                    return self._read_all()
                finally:
                    self._db.execute("COMMIT")
            except (sqlite3.Error, ValueError) as exc:
                raise StoreRefused("damaged", str(exc)) from exc

    def _read_all(self) -> dict:
        rows = StoredRows()
        self._load_book_rows(rows)
        data = self._read_book()
        takes: dict[int, list[dict]] = {}
        for row in self._db.execute(f"SELECT segment, {', '.join(TAKE_COLUMNS)} FROM takes ORDER BY segment, number"):
            takes.setdefault(row[0], []).append(_take(row[1:]))
            rows.takes[row[0]] = (*rows.takes.get(row[0], ()), (row[1], _signed(row[_SCREEN], row[_ALIGNMENT])))
        segments = []
        for row in self._db.execute(f"SELECT {', '.join(SEGMENT_COLUMNS)} FROM segments ORDER BY position"):
            values = _from_row(row)
            rows.segments[row[0]] = values
            rows.order.append(row[0])
            segments.append(_segment(values, takes.get(row[0], [])))
        data["segments"] = segments
        data["history"] = self.history()
        self.rows = rows
        return data

    def _read_book(self) -> dict:
        book = {key: json.loads(value) for key, value in self._db.execute("SELECT key, value FROM book")}
        data: dict[str, Any] = {"schema": 1, "app": "Chatterbox Desk"}
        data.update({key: book[key] for key in BOOK_KEYS if key in book})
        data["settings"] = {k: json.loads(v) for k, v in self._db.execute("SELECT key, value FROM settings")}
        data["voices"] = dict(self._db.execute("SELECT name, file FROM voices"))
        data["lexicon"] = {
            word: {"spoken": spoken, "match_case": bool(case)}
            for word, spoken, case in self._db.execute("SELECT word, spoken, match_case FROM lexicon")
        }
        data["chapters"] = [
            {"title": title, "skipped": bool(skipped), "voice": voice}
            for title, skipped, voice in self._db.execute(
                "SELECT title, skipped, voice FROM chapters ORDER BY position"
            )
        ]
        data["cast"] = [
            {"name": name, "aliases": json.loads(aliases), "gender": gender, "voice": voice}
            for name, aliases, gender, voice in self._db.execute(
                "SELECT name, aliases, gender, voice FROM characters ORDER BY position"
            )
        ]
        return data

    def history(self) -> dict[str, list]:
        """The undo and redo records (oldest first)."""
        with self._lock:
            out: dict[str, list] = {"undo": [], "redo": []}
            for stack, record in self._db.execute("SELECT stack, record FROM history ORDER BY id"):
                out[stack].append(json.loads(record))
            return out

    def counters(self) -> tuple[int, int]:
        """``change`` and ``shape`` as committed now (a reader compares them with what it loaded)."""
        with self._lock:
            values = dict(self._db.execute("SELECT key, value FROM book WHERE key IN ('change', 'shape')"))
            return int(values.get("change", 0)), int(values.get("shape", 0))

    def changes_since(self, change: int, shape: int) -> Changes | None:
        """What others committed after ``change`` (``None``: nothing); read in one transaction (a consistent view)."""
        with self._lock:
            try:
                self._db.execute("BEGIN")
                try:
                    now_change, now_shape = self.counters()
                    if now_change == change and now_shape == shape:
                        return None
                    if now_shape != shape:
                        return Changes(True, {}, [], now_change)
                    book = self._read_book()
                    rows = list(
                        self._db.execute(
                            f"SELECT {', '.join(SEGMENT_COLUMNS)} FROM segments WHERE changed > ? ORDER BY position",
                            (change,),
                        )
                    )
                    segments = []
                    for row in rows:
                        takes = [
                            _take(t)
                            for t in self._db.execute(
                                f"SELECT {', '.join(TAKE_COLUMNS)} FROM takes WHERE segment = ? ORDER BY number",
                                (row[0],),
                            )
                        ]
                        segment = _segment(_from_row(row), takes)
                        segment["position"] = row[1]
                        segments.append(segment)
                finally:
                    self._db.execute("COMMIT")
            except (sqlite3.Error, ValueError) as exc:
                raise StoreRefused("damaged", str(exc)) from exc
            return Changes(False, book, segments, now_change)

    # --- writing ------------------------------------------------------------------------------------------------
    def write(
        self,
        book: dict[str, Any],
        segments: Iterable[tuple[int, Any]],
        order: list[int] | None,
        history: dict[str, list] | None = None,
    ) -> None:
        """One transaction: the book's fields (``to_dict`` of the project, less its segments) and the given segments
        (position, segment); with ``order`` (every segment id in order) ``segments`` are all of them, and those no
        longer in it are removed. Only rows that differ from the stored ones are written. A failed transaction
        (:class:`StoreWriteFailed`) leaves database and :attr:`rows` as they were."""
        with self._lock:
            rows = self.rows
            plan = _Plan(rows)
            plan.book(book)
            for position, data in segments:
                plan.segment(position, data)
            if order is not None:
                plan.order(order)
            if history is not None:
                plan.history = history
            if plan.empty():
                return
            try:
                with self._transaction():
                    plan.apply(self._db)
            except sqlite3.Error as exc:
                raise StoreWriteFailed(_reason(exc)) from exc
            plan.commit()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._db.in_transaction:  # SQLite itself rolls back on some errors (a full disk)
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def set_page_limit(self, pages: int | None) -> None:
        """Cap the database's size in pages (tests: a full disk); ``None``: the current size."""
        with self._lock:
            if pages is None:
                pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            self._db.execute(f"PRAGMA max_page_count = {int(pages)}")

    def referenced_files(self) -> set[str]:
        """Every take file the database names: its takes (and the recordings performed takes were made from), and
        those of segments the undo history can bring back."""
        with self._lock:
            files = set()
            for file, performed in self._db.execute("SELECT file, performed FROM takes"):
                files.add(file)
                files.update(_performed_files(json.loads(performed) if performed else None))
            for (record,) in self._db.execute("SELECT record FROM history"):
                try:
                    edit = json.loads(record)
                    for segment in edit.get("segments") or []:
                        for take in segment.get("takes") or []:
                            files.add(str(take.get("file")))
                            files.update(_performed_files(take.get("performed")))
                except (ValueError, AttributeError, TypeError):
                    continue
            return files

    def follow(self, changes: Changes, segments: Iterable[tuple[int, Any]]) -> None:
        """Take a reader's view of the database to ``changes`` (the segments as the reader now holds them)."""
        with self._lock:
            rows = self.rows
            self._load_book_rows(rows)
            rows.change = changes.change
            for position, segment in segments:
                rows.segments[segment.id] = segment_values(segment, position)
                rows.takes[segment.id] = tuple(take_signature(t) for t in segment.takes)

    def _load_book_rows(self, rows: StoredRows) -> None:
        rows.book = {}
        for key, value in self._db.execute("SELECT key, value FROM book"):
            if key == "change":
                rows.change = int(value)
            elif key == "shape":
                rows.shape = int(value)
            else:
                rows.book[key] = value
        rows.settings = dict(self._db.execute("SELECT key, value FROM settings"))
        rows.voices = dict(self._db.execute("SELECT name, file FROM voices"))
        rows.lexicon = {w: (s, c) for w, s, c in self._db.execute("SELECT word, spoken, match_case FROM lexicon")}
        rows.chapters = list(self._db.execute("SELECT title, skipped, voice FROM chapters ORDER BY position"))
        rows.cast = list(self._db.execute("SELECT name, aliases, gender, voice FROM characters ORDER BY position"))


class _Plan:
    """The statements one save needs, found by comparing the project with :class:`StoredRows`; :meth:`commit`
    makes the rows the stored ones once the transaction committed."""

    def __init__(self, rows: StoredRows):
        self.rows = rows
        self.book_rows: dict[str, str] = {}
        self.settings: dict[str, str] | None = None
        self.voices: dict[str, str] | None = None
        self.lexicon: dict[str, tuple[str, int]] | None = None
        self.chapters: list[tuple] | None = None
        self.cast: list[tuple] | None = None
        self.segment_rows: dict[int, tuple] = {}
        self.take_rows: dict[int, tuple[tuple[tuple[str, str], ...], list[tuple]]] = {}
        self.removed: list[int] = []
        self.new_order: list[int] | None = None
        self.history: dict[str, list] | None = None

    def book(self, data: dict[str, Any]) -> None:
        for key in BOOK_KEYS:
            value = json.dumps(data.get(key), sort_keys=True, ensure_ascii=False)
            if self.rows.book.get(key) != value:
                self.book_rows[key] = value
        settings = {k: json.dumps(v) for k, v in (data.get("settings") or {}).items()}
        if settings != self.rows.settings:
            self.settings = settings
        voices = dict(data.get("voices") or {})
        if voices != self.rows.voices:
            self.voices = voices
        lexicon = {
            word: (entry["spoken"], int(bool(entry.get("match_case"))))
            for word, entry in (data.get("lexicon") or {}).items()
        }
        if lexicon != self.rows.lexicon:
            self.lexicon = lexicon
        chapters = [(c["title"], int(bool(c.get("skipped"))), c.get("voice")) for c in data.get("chapters") or []]
        if chapters != self.rows.chapters:
            self.chapters = chapters
        cast = [
            (c["name"], json.dumps(c.get("aliases") or [], ensure_ascii=False), c.get("gender"), c.get("voice"))
            for c in data.get("cast") or []
        ]
        if cast != self.rows.cast:
            self.cast = cast

    def segment(self, position: int, segment: Any) -> None:
        row = segment_values(segment, position)
        if self.rows.segments.get(row[0]) != row:
            self.segment_rows[row[0]] = row
        takes = segment.takes
        signatures = tuple(take_signature(t) for t in takes)
        stored = self.rows.takes.get(row[0], ())
        if signatures != stored:
            self.take_rows[row[0]] = (signatures, [take_row(row[0], n, t) for n, t in enumerate(takes, 1)])

    def order(self, order: list[int]) -> None:
        if order != self.rows.order:
            self.new_order = list(order)
            kept = set(order)
            self.removed = [i for i in self.rows.order if i not in kept]

    def empty(self) -> bool:
        return not (
            self.book_rows
            or self.settings is not None
            or self.voices is not None
            or self.lexicon is not None
            or self.chapters is not None
            or self.cast is not None
            or self.segment_rows
            or self.take_rows
            or self.new_order is not None
            or self.history is not None
        )

    @property
    def shape_changed(self) -> bool:
        return self.new_order is not None or self.chapters is not None

    def apply(self, db: sqlite3.Connection) -> None:
        rows = self.rows
        change = rows.change + 1
        shape = rows.shape + 1 if self.shape_changed else rows.shape
        for key, value in self.book_rows.items():
            db.execute("INSERT OR REPLACE INTO book (key, value) VALUES (?, ?)", (key, value))
        db.execute("INSERT OR REPLACE INTO book (key, value) VALUES ('change', ?)", (str(change),))
        db.execute("INSERT OR REPLACE INTO book (key, value) VALUES ('shape', ?)", (str(shape),))
        if self.settings is not None:
            db.execute("DELETE FROM settings")
            db.executemany("INSERT INTO settings (key, value) VALUES (?, ?)", self.settings.items())
        if self.voices is not None:
            db.execute("DELETE FROM voices")
            db.executemany("INSERT INTO voices (name, file) VALUES (?, ?)", self.voices.items())
        if self.lexicon is not None:
            db.execute("DELETE FROM lexicon")
            db.executemany(
                "INSERT INTO lexicon (word, spoken, match_case) VALUES (?, ?, ?)",
                [(w, s, c) for w, (s, c) in self.lexicon.items()],
            )
        if self.chapters is not None:
            db.execute("DELETE FROM chapters")
            db.executemany(
                "INSERT INTO chapters (position, title, skipped, voice) VALUES (?, ?, ?, ?)",
                [(i, *c) for i, c in enumerate(self.chapters)],
            )
        if self.cast is not None:
            db.execute("DELETE FROM characters")
            db.executemany(
                "INSERT INTO characters (position, name, aliases, gender, voice) VALUES (?, ?, ?, ?, ?)",
                [(i, *c) for i, c in enumerate(self.cast)],
            )
        if self.removed:
            db.executemany("DELETE FROM segments WHERE id = ?", [(i,) for i in self.removed])
        db.executemany(UPSERT_SEGMENT, [(*_to_row(row), change) for row in self.segment_rows.values()])
        for segment_id, (_files, takes) in self.take_rows.items():
            db.execute("DELETE FROM takes WHERE segment = ?", (segment_id,))
            db.executemany(INSERT_TAKE, takes)
            if segment_id not in self.segment_rows:
                db.execute("UPDATE segments SET changed = ? WHERE id = ?", (change, segment_id))
        if self.history is not None:
            db.execute("DELETE FROM history")
            db.executemany(
                "INSERT INTO history (stack, record) VALUES (?, ?)",
                [
                    (stack, json.dumps(record, ensure_ascii=False))
                    for stack in ("undo", "redo")
                    for record in self.history.get(stack, [])
                ],
            )

    def commit(self) -> None:
        rows = self.rows
        rows.change += 1
        if self.shape_changed:
            rows.shape += 1
        rows.book.update(self.book_rows)
        if self.settings is not None:
            rows.settings = self.settings
        if self.voices is not None:
            rows.voices = self.voices
        if self.lexicon is not None:
            rows.lexicon = self.lexicon
        if self.chapters is not None:
            rows.chapters = self.chapters
        if self.cast is not None:
            rows.cast = self.cast
        for segment_id in self.removed:
            rows.segments.pop(segment_id, None)
            rows.takes.pop(segment_id, None)
        rows.segments.update(self.segment_rows)
        if self.new_order is not None:
            rows.order = self.new_order
        for segment_id, (signatures, _takes) in self.take_rows.items():
            rows.takes[segment_id] = signatures


def _upgrade(db: sqlite3.Connection, version: int) -> None:
    """Bring a project written by an older app up to :data:`STORE_SCHEMA`, one transaction per step (an app of that
    older version then refuses it as newer, rather than misreading it)."""
    for step in range(version, STORE_SCHEMA):
        if step not in UPGRADES:
            raise StoreRefused("damaged", f"project format {version} is not one this app wrote")
        try:
            db.execute("BEGIN IMMEDIATE")
            for statement in UPGRADES[step]:
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {step + 1}")
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            reason = f"it needs updating to format {step + 1} and cannot be written: {exc}"
            raise StoreRefused("unreadable", reason) from exc


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=10.0)
    db.execute("PRAGMA busy_timeout = 10000")
    return db


def _segment(values: tuple, takes: list[dict]) -> dict:
    data = dict(zip(SEGMENT_COLUMNS, values))
    data.pop("position")
    data["settings"] = data["settings"] or {}
    data["error_data"] = data["error_data"] or {}
    data["takes"] = takes
    return data


def _performed_files(performed: Any) -> list[str]:
    source = performed.get("source") if isinstance(performed, dict) else None
    return [source] if isinstance(source, str) else []


def _take(row) -> dict:
    file, seed, tokens, seconds, key, timings, created, screen, performed, alignment = row
    return {
        "file": file,
        "seed": seed,
        "tokens": json.loads(tokens),
        "seconds": seconds,
        "key": key,
        "timings": json.loads(timings),
        "created": created,
        "screen": json.loads(screen) if screen else None,
        "performed": json.loads(performed) if performed else None,
        "alignment": json.loads(alignment) if alignment else None,
    }


def _reason(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "full" in text.lower():
        return "No space left on device"
    return text
