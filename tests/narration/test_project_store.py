"""The project in SQLite: what a save writes, migration of earlier versions' project.json, damaged and hostile
database files, a reader that follows a render, and the undo history across restarts."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from core.engine.pipeline import Pipeline
from core.narration.importing.book_import import parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects.editing import History, delete, merge
from core.narration.projects.opening import open_project
from core.narration.projects.project import (
    LEGACY_FILE,
    PROJECT_FILE,
    Chapter,
    ProjectError,
    Segment,
    Take,
    create_project,
)
from core.narration.projects.store import STORE_SCHEMA
from core.narration.rendering.render import render_pending, store_take
from core.wording import describe_error
from tests.narration_support import BOOK


@pytest.fixture(scope="module")
def pipe(bundles):
    return Pipeline.from_bundle(bundles["original"])


def new_project(tmp_path, name="Book.cbproj"):
    project = create_project(tmp_path / name, "Book")
    import_document(project, parse_text(BOOK, "Book"), None, None, tmp_path, source_identity("b", BOOK, None))
    project.save()
    return project


def big_project(folder: Path, count: int):
    project = create_project(folder, "Big")
    project.chapters = [Chapter(f"Chapter {c + 1}") for c in range(max(1, count // 100))]
    project.segments = [
        Segment(id=i + 1, text=f"Sentence {i + 1} of a long book.", chapter=i // 100, paragraph=i) for i in range(count)
    ]
    project.next_id = count + 1
    project.save()
    return project


def statements(project) -> list[str]:
    """Record every SQL statement the project's connection runs from now on."""
    seen: list[str] = []
    project.store._db.set_trace_callback(seen.append)
    return seen


def fake_take(project, segment) -> None:
    path = project.folder / "takes" / f"{segment.id:05d}-1.flac"
    path.write_bytes(b"not really audio")
    segment.takes.append(Take(f"takes/{path.name}", 7, [1, 2, 3], 0.12, project.render_key(segment), {}, "now"))
    segment.chosen = len(segment.takes) - 1


# --- what a save writes -----------------------------------------------------------------------------------------------
def test_a_take_is_one_update_and_one_insert_whatever_the_length_of_the_book(tmp_path):
    writes = {}
    for count in (100, 3000):
        project = big_project(tmp_path / f"B{count}", count)
        segment = project.segments[count // 2]
        fake_take(project, segment)
        seen = statements(project)
        project.save([segment])
        changing = [s for s in seen if s.split()[0] in ("INSERT", "UPDATE", "DELETE")]
        writes[count] = changing
        segment_writes = [s for s in changing if "segments" in s.split("(")[0]]
        take_writes = [s for s in changing if s.startswith("INSERT INTO takes")]
        assert len(segment_writes) == 1 and len(take_writes) == 1, changing
        assert str(segment.id) in segment_writes[0]
    assert len(writes[100]) == len(writes[3000])  # the same statements for a short and a long book


def test_a_save_without_changes_writes_nothing_and_an_edit_writes_its_segment(tmp_path):
    project = big_project(tmp_path / "B", 500)
    seen = statements(project)
    project.save()
    assert not [s for s in seen if s.split()[0] in ("INSERT", "UPDATE", "DELETE", "BEGIN")]
    project.edit_text(project.segments[10], "A new sentence for this place.")
    project.save()
    rows = [s for s in seen if "INTO segments" in s]
    assert len(rows) == 1 and "A new sentence" in rows[0]
    assert open_project(project.folder).segments[10].text == "A new sentence for this place."


def test_a_take_s_word_times_are_stored_with_it_and_adding_them_later_writes_only_that_take(tmp_path):
    project = big_project(tmp_path / "B", 50)
    segment = project.segments[7]
    fake_take(project, segment)
    project.save([segment])
    assert open_project(project.folder).segments[7].takes[0].alignment is None  # not aligned yet
    words = [["Sentence", 0.05, 0.61], ["8", 0.66, 0.9], ["of", 0.93, 1.0], ["a", 1.02, 1.05]]
    segment.takes[0].alignment = {"words": words, "placed": 4 / 7, "aligner": "pocketsphinx", "error": None}
    seen = statements(project)
    project.save([segment])
    assert [s for s in seen if s.startswith("INSERT INTO takes")], seen  # the new words count as a change
    again = open_project(project.folder)
    assert again.segments[7].takes[0].alignment == segment.takes[0].alignment
    assert again.to_dict() == project.to_dict()


@pytest.mark.parametrize(
    "alignment",
    [
        {"words": [["a", 0.5, 0.2]]},  # ends before it starts
        {"words": [["a", 0.1, 0.5], ["b", 0.3, 0.6]]},  # out of order
        {"words": [["a", -1, 0.5]]},
        {"words": "a b"},
        [],
    ],
)
def test_word_times_that_make_no_sense_are_refused_on_open(tmp_path, alignment):
    project = big_project(tmp_path / "B", 5)
    fake_take(project, project.segments[0])
    project.save()
    db = sqlite3.connect(project.folder / "project.sqlite")
    db.execute("UPDATE takes SET alignment = ?", (json.dumps(alignment),))
    db.commit()
    db.close()
    project.close()
    with pytest.raises(ProjectError) as refused:
        open_project(project.folder)
    assert "alignment" in describe_error(refused.value)


def test_structural_edits_round_trip_through_the_database(tmp_path):
    project = new_project(tmp_path)
    merge(project, 1)
    delete(project, 3)
    project.save()
    again = open_project(project.folder)
    assert again.to_dict() == project.to_dict()


def test_a_full_disk_fails_the_transaction_and_keeps_the_project(tmp_path, pipe):
    project = new_project(tmp_path)
    render_pending(project, pipe, numbers=[1])
    before = open_project(project.folder).to_dict()
    project.store.set_page_limit(None)  # the database cannot grow: SQLite's own "database or disk is full"
    segment = project.segments[1]
    take_files = sorted(p.name for p in (project.folder / "takes").iterdir())
    big = np.zeros(24000, np.float32)
    with pytest.raises(ProjectError) as caught:
        for _ in range(50):  # fills the few free pages the limit leaves, then fails
            store_take(project, segment, big, 1, list(range(2000)), {})
    assert caught.value.code == "project.save_failed" and "No space left" in describe_error(caught.value)
    kept = open_project(project.folder)
    stored_files = {t.file.split("/")[1] for s in kept.segments for t in s.takes}
    on_disk = {p.name for p in (project.folder / "takes").iterdir()}
    assert on_disk == stored_files  # the failed take's file went with its row
    assert set(take_files) <= on_disk
    assert kept.counts()["rendered"] >= before["segments"][0]["chosen"] + 1


# --- migration of earlier versions ------------------------------------------------------------------------------------
EARLIEST = {
    "schema": 1,
    "app": "Chatterbox Desk",
    "title": "Old Book",
    "source": {"name": "old.txt", "sha256": "ab"},
    "model": {},
    "seed": None,
    "settings": {},
    "finishing": {"speed": 1.0, "loudness": None},
    "voices": {},
    "chapters": [{"title": "One"}],
    "next_id": 3,
    "segments": [
        {
            "id": 1,
            "text": "The first sentence.",
            "chapter": 0,
            "paragraph": 0,
            "kind": "sentence",
            "voice": None,
            "settings": {},
            "pause_after": 0.3,
            "speed": None,
            "takes": [],
            "chosen": None,
            "error": None,
        },
        {
            "id": 2,
            "text": "The second one.",
            "chapter": 0,
            "paragraph": 0,
            "kind": "sentence",
            "voice": None,
            "settings": {},
            "pause_after": 0.0,
            "speed": 1.2,
            "takes": [
                {"file": "takes/00002-1.flac", "seed": 5, "tokens": [4, 5], "seconds": 0.08, "key": "k"},
            ],
            "chosen": 0,
            "error": "model failed",
        },
    ],
}
"""The first project.json: no pause_exact, error codes, skipping, spoken forms, dialogue, sources, bundle,
language, lexicon or author; takes without timings."""


def latest_shape() -> dict:
    data = json.loads(json.dumps(EARLIEST))
    data.update(
        bundle="/models/turbo",
        language="de",
        lexicon={"Moby": {"spoken": "Mo bee", "match_case": True}},
        dialogue_voice="Anna",
        voices={"Anna": "voices/Anna.wav"},
        settings={"temperature": 0.7},
        seed=42,
        author="Herman Melville",
    )
    data["chapters"] = [{"title": "One", "skipped": False, "voice": "Anna"}, {"title": "Contents", "skipped": True}]
    first, second = data["segments"]
    first.update(
        pause_exact=True,
        error_code=None,
        error_data={},
        skipped=True,
        spoken="The first sentence said.",
        dialogue=True,
        own_voice=True,
        voice="Anna",
        source={"file": "c1.xhtml", "block": 2, "path": "/1/2", "start": 0, "end": 19},
        settings={"cfg_weight": 0.3},
    )
    second.update(error_code="render.internal", error_data={"kind": "X", "detail": "y"}, chapter=1)
    second["takes"][0].update(timings={"ttfa_ms": 12.5}, created="2026-01-01T00:00:00+00:00")
    return data


@pytest.mark.parametrize("shape", ["earliest", "latest"])
def test_an_earlier_versions_project_is_moved_into_the_database_on_first_open(tmp_path, shape):
    data = EARLIEST if shape == "earliest" else latest_shape()
    folder = tmp_path / "Old.cbproj"
    (folder / "takes").mkdir(parents=True)
    (folder / "voices").mkdir()
    (folder / "voices" / "Anna.wav").write_bytes(b"RIFF")
    (folder / "takes" / "00002-1.flac").write_bytes(b"fLaC")
    text = json.dumps(data)
    (folder / LEGACY_FILE).write_text(text, encoding="utf-8")
    (folder / "history.json").write_text(
        json.dumps(
            {"schema": 1, "undo": [{"op": "delete", "number": 1, "start": 0, "count": 0, "segments": []}], "redo": []}
        ),
        encoding="utf-8",
    )
    project = open_project(folder)
    assert (folder / PROJECT_FILE).is_file() and not (folder / LEGACY_FILE).exists()
    assert (folder / "project.json.migrated").read_text(encoding="utf-8") == text  # kept beside it, unchanged
    assert (folder / "history.json.migrated").is_file()
    reopened = open_project(folder)
    assert reopened.to_dict() == project.to_dict()
    assert [s.text for s in reopened.segments] == ["The first sentence.", "The second one."]
    assert reopened.segments[1].takes[0].tokens == [4, 5] and reopened.segments[1].chosen == 0
    assert History.load(reopened).undo_records[0].op == "delete"
    if shape == "latest":
        assert reopened.author == "Herman Melville" and reopened.lexicon["Moby"].match_case
        assert reopened.segments[0].source["path"] == "/1/2" and reopened.segments[0].spoken
        assert reopened.chapters[1].skipped and reopened.chapters[0].voice == "Anna"
        assert reopened.segments[1].error_data == {"kind": "X", "detail": "y"}
    else:
        assert reopened.segments[0].pause_exact is False and reopened.language == "en"


def test_a_project_json_that_fails_validation_is_refused_and_not_moved(tmp_path):
    folder = tmp_path / "Old.cbproj"
    folder.mkdir()
    data = json.loads(json.dumps(EARLIEST))
    data["segments"][1]["takes"][0]["file"] = "../../outside.flac"
    (folder / LEGACY_FILE).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ProjectError) as caught:
        open_project(folder)
    assert caught.value.code == "project.invalid"
    assert (folder / LEGACY_FILE).is_file() and not (folder / PROJECT_FILE).exists()


def test_dump_json_writes_a_readable_copy_that_opens_as_an_earlier_project(tmp_path):
    from tests.narration.test_narration import run_cli

    project = new_project(tmp_path)
    out = tmp_path / "copy.json"
    code, text = run_cli("project", str(project.folder), "--dump-json", str(out), "--json")
    assert code == 0 and text["segments"] == len(project.segments)
    dumped = json.loads(out.read_text(encoding="utf-8"))
    assert dumped["title"] == "Book" and len(dumped["segments"]) == len(project.segments)
    copy = tmp_path / "Copy.cbproj"
    copy.mkdir()
    shutil.copy(out, copy / LEGACY_FILE)
    assert open_project(copy).to_dict() == project.to_dict()


# --- damaged and hostile database files -------------------------------------------------------------------------------
def _refused(folder: Path) -> ProjectError:
    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name.startswith("project")}
    with pytest.raises(ProjectError) as caught:
        open_project(folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.name in files} == files  # never written
    return caught.value


def _closed(project) -> Path:
    """The folder of ``project``, its database closed (as another process finds it)."""
    project.close()
    return project.folder


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    folder = tmp_path / "P"
    folder.mkdir()
    (folder / PROJECT_FILE).write_text('{"title": "this is JSON, not SQLite"}', encoding="utf-8")
    error = _refused(folder)
    assert error.code == "project.store_damaged" and "not an SQLite database" in describe_error(error)


def test_a_truncated_database_is_refused(tmp_path):
    folder = _closed(big_project(tmp_path / "P", 2000))
    file = folder / PROJECT_FILE
    data = file.read_bytes()
    file.write_bytes(data[: len(data) // 3])
    error = _refused(folder)
    assert error.code == "project.store_damaged" and "left as it is" in describe_error(error)


def test_a_database_that_fails_its_integrity_check_is_refused(tmp_path):
    folder = _closed(big_project(tmp_path / "P", 2000))
    file = folder / PROJECT_FILE
    db = sqlite3.connect(file)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'segments_by_position'").fetchone()[0]
    db.close()
    data = bytearray(file.read_bytes())
    start = (root - 1) * page_size
    data[start + 8 : start + 200] = bytes(range(192))  # the index's page scrambled, the table's still readable
    file.write_bytes(bytes(data))
    error = _refused(folder)
    assert error.code == "project.store_damaged"


def test_a_database_from_a_newer_version_is_refused(tmp_path):
    folder = _closed(big_project(tmp_path / "P", 10))
    db = sqlite3.connect(folder / PROJECT_FILE)
    db.execute(f"PRAGMA user_version = {STORE_SCHEMA + 1}")
    db.close()
    error = _refused(folder)
    assert error.code == "project.newer_format" and "newer version" in describe_error(error)


def test_another_programs_database_is_refused(tmp_path):
    folder = tmp_path / "P"
    folder.mkdir()
    db = sqlite3.connect(folder / PROJECT_FILE)
    db.execute("CREATE TABLE photos (name TEXT)")
    db.commit()
    db.close()
    error = _refused(folder)
    assert error.code == "project.store_damaged" and "another program" in describe_error(error)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE takes SET file = '../../../etc/passwd'",
        "UPDATE takes SET file = '/etc/passwd'",
        "UPDATE voices SET file = '../secret.wav'",
        "UPDATE segments SET chosen = 7",
        "UPDATE segments SET voice = 'Nobody' WHERE position = 0",
    ],
)
def test_a_database_edited_into_an_invalid_project_is_refused(tmp_path, statement):
    project = new_project(tmp_path)
    fake_take(project, project.segments[0])
    project.voices["Anna"] = "voices/Anna.wav"
    project.save()
    folder = _closed(project)
    db = sqlite3.connect(folder / PROJECT_FILE)
    db.execute(statement)
    db.commit()
    db.close()
    error = _refused(folder)
    assert error.code == "project.invalid" and "left as it is" in describe_error(error)


# --- readers, orphans, history ----------------------------------------------------------------------------------------
def test_a_reader_follows_what_a_render_stores(tmp_path, pipe):
    writer = new_project(tmp_path)
    reader = open_project(writer.folder)
    assert reader.refresh() is None
    render_pending(writer, pipe, numbers=[2, 4])
    seen = reader.refresh()
    assert seen is not None and not seen.shape and seen.numbers == [2, 4]
    assert [reader.status(s) for s in reader.segments] == [writer.status(s) for s in writer.segments]
    assert reader.segments[1].takes[0].tokens == writer.segments[1].takes[0].tokens
    merge(writer, 1)
    writer.save()
    seen = reader.refresh()
    assert seen is not None and seen.shape and len(reader.segments) == len(writer.segments)
    assert reader.to_dict() == writer.to_dict()


def test_a_take_file_without_its_row_is_removed_on_open(tmp_path):
    project = new_project(tmp_path)
    fake_take(project, project.segments[0])
    project.save()
    orphan = project.folder / "takes" / "00002-1.flac"  # written, then the process died before its row
    orphan.write_bytes(b"fLaC")
    project.close()
    reopened = open_project(project.folder)
    assert not orphan.exists() and (project.folder / reopened.segments[0].takes[0].file).exists()


def test_take_files_the_undo_history_can_bring_back_are_not_orphans(tmp_path):
    project = new_project(tmp_path)
    fake_take(project, project.segments[0])
    history = History.load(project)
    history.record(delete(project, 1))
    history.save(project)
    project.close()
    reopened = open_project(project.folder)
    kept = History.load(reopened)
    kept.undo(reopened)
    reopened.save(history=kept.records())
    assert (reopened.folder / reopened.segments[0].takes[0].file).exists()
    assert open_project(reopened.folder).segments[0].takes[0].tokens == [1, 2, 3]


def test_the_project_bench_measures_a_take_and_a_render_per_tenth(tmp_path, bundles):
    from core.bench.project_bench import book, flat_render, per_take

    row = per_take(book(tmp_path / "B", 300), takes=20)
    assert row["takes"] == 20 and 0 < row["save_ms_median"] <= row["take_ms_median"]
    render = flat_render(tmp_path / "R", 30, bundles["original"], tokens=4)
    assert render["rendered"] == 30 and len(render["tenths_s"]) == 10 and render["last_over_first"] > 0
