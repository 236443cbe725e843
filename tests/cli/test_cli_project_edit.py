"""``python -m core project``: structural edits with --undo/--redo, --import without rendering, the remembered model."""

from __future__ import annotations

import json
import shutil

import pytest

from core.cli.main import main
from tests.narration_support import BOOK, make_epub, stored_state

# BOOK: chapter 1 "Morning" is segments 1-5 (1 its heading), chapter 2 "Evening" segments 6-10 (6 its heading)


def run_cli(capsys, *args):
    """Exit code, the parsed JSON (or the stdout text), and stderr."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    try:
        return code, json.loads(out), err
    except ValueError:
        return code, out, err


@pytest.fixture
def imported(capsys, tmp_path):
    book = tmp_path / "book.txt"
    book.write_text(BOOK, encoding="utf-8")
    folder = tmp_path / "Book.cbproj"
    code, out, err = run_cli(capsys, "project", folder, "--import", book, "--json")
    assert code == 0, err
    return folder, out


def shape(out) -> list[tuple]:
    return [(s["id"], s["text"], s["chapter"], s["status"], s["skipped"]) for s in out["segments"]]


def test_import_creates_the_project_renders_nothing_and_prints_chapters_and_segments(capsys, imported, tmp_path):
    folder, out = imported
    assert out["chapters"] == [
        {"number": 1, "title": "Morning", "skipped": False, "segments": 5, "voice": None},
        {"number": 2, "title": "Evening", "skipped": False, "segments": 5, "voice": None},
    ]
    first = out["segments"][1]
    assert {"id", "chapter", "text", "spoken", "status"} <= set(first)
    assert first["text"] == first["spoken"] == "The sun rose over the hills." and first["chapter"] == 1
    assert {s["status"] for s in out["segments"]} == {"pending"} and out["counts"]["pending"] == 10
    assert not any((folder / "takes").iterdir())
    code, again, _ = run_cli(capsys, "project", folder, "--import", tmp_path / "book.txt", "--json")
    assert code == 0 and shape(again) == shape(out)  # the same book: the project is kept as it is
    code, text, _ = run_cli(capsys, "project", folder, "--import", tmp_path / "book.txt")
    assert code == 0 and "chapter   2      5 segment(s)  Evening" in text and "10 pending" in text


def test_import_of_an_epub_lists_its_chapters(capsys, tmp_path):
    book = make_epub(tmp_path / "b.epub", ["One", "Two", "Three"])
    code, out, err = run_cli(capsys, "project", tmp_path / "E.cbproj", "--import", book, "--json")
    assert code == 0, err
    contents, *chapters = out["chapters"]  # the book's contents page is kept, skipped
    assert contents["title"] == "A Test Book" and contents["skipped"] is True
    assert [c["title"] for c in chapters] == ["One", "Two", "Three"] and not any(c["skipped"] for c in chapters)
    assert all(c["segments"] > 0 for c in out["chapters"])
    assert sum(c["segments"] for c in out["chapters"]) == len(out["segments"])


EDITS = [
    (("--delete", "3"), lambda b, a: len(a) == 9 and b[2] not in a),
    (("--skip", "4"), lambda b, a: a[3][3] == "skipped" and a[3][4] is True),
    (("--merge", "2"), lambda b, a: a[1][1] == "The sun rose over the hills. Birds began to sing."),
    (("--split", "2", "--at", "12"), lambda b, a: [s[1] for s in a[1:3]] == ["The sun rose", "over the hills."]),
    (("--chapter-starts", "4", "--title", "Noon"), lambda b, a: [s[2] for s in a[3:6]] == [2, 2, 3]),
    (("--chapter-joins", "6"), lambda b, a: {s[2] for s in a} == {1}),
    (("--edit", "5", "--text", "He carried nothing."), lambda b, a: a[4][1] == "He carried nothing."),
    (("--skip-chapter", "2"), lambda b, a: [s[3] for s in a[5:]] == ["skipped"] * 5 and a[0][3] == "pending"),
]


@pytest.mark.parametrize(("argv", "check"), EDITS)
def test_every_edit_prints_the_new_list_and_undo_and_redo_round_trip(capsys, imported, argv, check):
    folder, out = imported
    before = shape(out)
    code, edited, err = run_cli(capsys, "project", folder, *argv, "--json")
    assert code == 0, err
    after = shape(edited)
    assert after != before and check(before, after)
    code, undone, _ = run_cli(capsys, "project", folder, "--undo", "--json")
    assert code == 0 and shape(undone) == before
    code, redone, _ = run_cli(capsys, "project", folder, "--redo", "--json")
    assert code == 0 and shape(redone) == after
    code, undone, _ = run_cli(capsys, "project", folder, "--undo", "--json")
    assert code == 0 and shape(undone) == before


def test_rename_and_unskip_and_several_undos_in_a_row(capsys, imported):
    folder, out = imported
    code, renamed, _ = run_cli(capsys, "project", folder, "--rename-chapter", "2", "--text", "Night", "--json")
    assert code == 0 and [c["title"] for c in renamed["chapters"]] == ["Morning", "Night"]
    run_cli(capsys, "project", folder, "--skip", "7")
    code, unskipped, _ = run_cli(capsys, "project", folder, "--unskip", "7", "--json")
    assert code == 0 and unskipped["segments"][6]["status"] == "pending"
    for _ in range(3):
        code, undone, err = run_cli(capsys, "project", folder, "--undo", "--json")
        assert code == 0, err
    assert shape(undone) == shape(out) and undone["chapters"] == out["chapters"]
    code, _, err = run_cli(capsys, "project", folder, "--undo")
    assert code == 2 and "nothing to undo" in err


def test_an_undo_after_the_book_was_imported_again_is_refused_and_forgotten(capsys, imported, tmp_path):
    folder, _ = imported
    run_cli(capsys, "project", folder, "--merge", "2")
    changed = tmp_path / "changed.txt"
    changed.write_text(BOOK.replace("Birds began to sing.", "Birds sang."), encoding="utf-8")
    code, reimported, _ = run_cli(capsys, "project", folder, "--import", changed, "--json")
    assert code == 0
    code, _, err = run_cli(capsys, "project", folder, "--undo")
    assert code == 2 and "cannot be undone or redone any more" in err
    code, listed, _ = run_cli(capsys, "project", folder, "--list", "--json")
    assert shape(listed) == shape(reimported)  # nothing was applied
    code, _, err = run_cli(capsys, "project", folder, "--undo")
    assert code == 2 and "nothing to undo" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--delete", "99"), "no segment 99"),
        (("--skip", "0"), "no segment 0"),
        (("--merge", "10"), "no next segment"),
        (("--merge", "5"), "different chapters"),
        (("--split", "2"), "needs --at"),
        (("--split", "2", "--at", "0"), "cannot be split at character 0"),
        (("--rename-chapter", "5", "--text", "X"), "no chapter 5"),
        (("--rename-chapter", "1"), "needs --text"),
        (("--chapter-starts", "6"), "already starts chapter 2"),
        (("--chapter-joins", "3"), "does not start a chapter"),
        (("--delete", "three"), "invalid int value"),
        (("--redo",), "nothing to redo"),
        (("--unskip-chapter", "3"), "no chapter 3"),
    ],
)
def test_a_bad_edit_exits_2_with_one_line_and_changes_nothing(capsys, imported, argv, message):
    folder, _ = imported
    before = stored_state(folder)
    code, _, err = run_cli(capsys, "project", folder, *argv)
    assert code == 2 and message in err, err
    assert stored_state(folder) == before


def test_edits_keep_the_takes_of_unchanged_text_and_the_model_folder_is_remembered(
    capsys, tmp_path, bundles, voice_wav
):
    book = tmp_path / "b.txt"
    book.write_text("One sentence here. Two sentences here. Three sentences here.", encoding="utf-8")
    model = shutil.copytree(bundles["original"], tmp_path / "model")
    folder = tmp_path / "P.cbproj"
    args = ("narrate", book, "--project", folder, "--bundle", model, "--voice", voice_wav, "--json")
    code, first, err = run_cli(capsys, *args)
    assert code == 0, err
    assert first["bundle"] == str(model.resolve()) and first["counts"]["rendered"] == 3
    seeds = {s["id"]: s["seed"] for s in first["segments"]}

    code, merged, _ = run_cli(capsys, "project", folder, "--merge", "1", "--json")
    assert code == 0 and [s["status"] for s in merged["segments"]] == ["pending", "rendered"]
    assert merged["segments"][1]["id"] == first["segments"][2]["id"]
    code, rendered, err = run_cli(capsys, "project", folder, "--render", "--json")  # no --bundle: the remembered one
    assert code == 0, err
    assert rendered["render"]["rendered"] == 1 and rendered["counts"]["rendered"] == 2
    assert rendered["segments"][1]["seed"] == seeds[rendered["segments"][1]["id"]]
    code, regenerated, err = run_cli(capsys, "project", folder, "--regenerate", "2", "--json")
    assert code == 0 and regenerated["segments"][1]["takes"] == 2, err

    moved = shutil.copytree(model, tmp_path / "moved")
    code, out, err = run_cli(capsys, "project", folder, "--regenerate", "1", "--bundle", moved, "--json")
    assert code == 0 and out["bundle"] == str(moved.resolve()), err
    shutil.rmtree(moved)
    code, _, err = run_cli(capsys, "project", folder, "--render")
    assert code == 2 and f"{moved.resolve()}, is not there any more; add --bundle DIR" in err


def test_import_says_which_files_of_the_book_are_missing_and_imports_the_rest(capsys, tmp_path):
    from tests.epub_fixtures import Nav, write_epub, xhtml

    documents = [(f"c{n}.xhtml", xhtml(f"<h2>Chapter {n}</h2><p>Text of chapter {n}.</p>")) for n in (1, 3)]
    toc = [Nav(f"Chapter {n}", f"c{n}.xhtml") for n in (1, 2, 3)]
    spine = ["c1.xhtml", "c2.xhtml", "c3.xhtml"]
    book = write_epub(tmp_path / "gap.epub", documents, toc, missing=("c2.xhtml",), spine=spine)
    code, out, err = run_cli(capsys, "project", tmp_path / "G.cbproj", "--import", book, "--json")
    assert code == 0, err
    said = "OEBPS/c2.xhtml is missing from gap.epub; the rest of the book was imported without it."
    assert out["warnings"] == [said] and f"warning: {said}" in err
    assert [c["title"] for c in out["chapters"] if not c["skipped"]] == ["Chapter 1", "Chapter 3"]
