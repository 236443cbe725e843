"""``python -m core project DIR --cast`` and the cast's edits on the command line (each undone by --undo), ``--list
--json``'s speakers, ``narrate ... --cast``, and the errors of a cast edit."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_cli_project_edit import run_cli
from tests.narration_support import NOVEL, NOVEL_SPEAKERS

# NOVEL imported with --import (sentences not cut at their quotes): 13 segments, 1 and 9 headings; Mr. Knightley
# says 3 (“Good morning,” said Mr. Knightley.), 4 and 7, Emma 5, 6, 8 and 13, Harriet 11 and 12.
IMPORTED = {3: "Mr. Knightley", 4: "Mr. Knightley", 7: "Mr. Knightley", 5: "Emma", 6: "Emma", 8: "Emma"}
IMPORTED |= {13: "Emma", 11: "Harriet", 12: "Harriet"}


@pytest.fixture
def novel(capsys, tmp_path):
    book = tmp_path / "novel.txt"
    book.write_text(NOVEL, encoding="utf-8")
    folder = tmp_path / "Novel.cbproj"
    code, _, err = run_cli(capsys, "project", folder, "--import", book)
    assert code == 0, err
    return folder


def said(listing) -> dict[int, str]:
    return {s["number"]: s["speaker"] for s in listing["segments"] if s["speaker"] is not None}


def cast_of(folder, capsys) -> dict:
    code, listed, err = run_cli(capsys, "project", folder, "--cast", "--json")
    assert code == 0, err
    return listed


def test_cast_attributes_the_book_and_lists_its_characters(capsys, novel):
    code, listed, err = run_cli(capsys, "project", novel, "--list", "--json")
    assert code == 0 and all(s["speaker"] is None and s["speaker_confidence"] is None for s in listed["segments"])
    report = cast_of(novel, capsys)
    assert [(c["name"], c["gender"], c["lines"], c["voice"]) for c in report["characters"]] == [
        ("Mr. Knightley", "m", 3, None),
        ("Emma", "f", 4, None),
        ("Harriet", "f", 2, None),
    ]
    knightley = report["characters"][0]
    assert knightley["aliases"] == ["Knightley"] and knightley["suggested_voices"] == []
    assert report["changed"] is True and report["narration"] == 4 and report["mixed"] == 5
    code, listed, err = run_cli(capsys, "project", novel, "--list", "--json")
    assert code == 0 and said(listed) == IMPORTED
    assert {"speaker", "speaker_confidence"} <= set(listed["segments"][0])  # every segment has both
    assert listed["segments"][2]["speaker_confidence"] == 0.95 and listed["segments"][1]["speaker_confidence"] is None
    unsure = [s for s in listed["segments"] if s["speaker"] and s["speaker_confidence"] < report["unsure_below"]]
    assert report["unsure"] == len(unsure) == sum(c["unsure"] for c in report["characters"])
    assert cast_of(novel, capsys)["changed"] is False  # nothing new: no undo record either
    code, text, err = run_cli(capsys, "project", novel, "--cast")
    assert code == 0 and "Mr. Knightley  m     3 line(s)" in text and "voice: the narrator's  also Knightley" in text
    assert f"3 character(s) say 9 segment(s) ({len(unsure)} unsure, below 0.6)" in text
    assert "5 segment(s) hold speech and narration together" in err and "--cut-at-quotes cuts them" in err
    code, text, _ = run_cli(capsys, "project", novel, "--list")
    assert "“Good morning,” said Mr. Knightley.  [Mr. Knightley]" in text


def test_undo_takes_back_an_attribution(capsys, novel):
    cast_of(novel, capsys)
    code, undone, err = run_cli(capsys, "project", novel, "--undo", "--json")
    assert code == 0 and said(undone) == {}, err
    code, redone, _ = run_cli(capsys, "project", novel, "--redo", "--json")
    assert code == 0 and said(redone) == IMPORTED


EDITS = [
    (("--set-speaker", "7", "Emma"), lambda listing, cast: said(listing)[7] == "Emma"),
    (("--set-speaker", "3", "narrator"), lambda listing, cast: 3 not in said(listing)),
    (
        ("--merge-character", "Harriet", "--into", "Emma"),
        lambda listing, cast: said(listing)[11] == "Emma" and cast[1]["aliases"] == ["Harriet"] and len(cast) == 2,
    ),
    (
        ("--rename-character", "Mr. Knightley", "--to", "George"),
        lambda listing, cast: said(listing)[3] == "George" and cast[0]["aliases"] == ["Knightley", "Mr. Knightley"],
    ),
    (("--add-character", "Mr. Woodhouse", "--gender", "m"), lambda listing, cast: cast[3]["gender"] == "m"),
    (("--cast-voice", "Emma", "VOICE"), lambda listing, cast: cast[1]["voice"] == "voice"),
]


@pytest.mark.parametrize(("argv", "check"), EDITS)
def test_each_cast_edit_is_undone_and_redone(capsys, novel, voice_wav, argv, check):
    argv = tuple(str(voice_wav) if a == "VOICE" else a for a in argv)
    cast_of(novel, capsys)
    _, before, _ = run_cli(capsys, "project", novel, "--dump-json", novel / "before.json")
    code, edited, err = run_cli(capsys, "project", novel, *argv, "--json")
    assert code == 0, err
    characters = json.loads(_dump(capsys, novel, "after.json"))["cast"]
    assert check(edited, characters)
    code, undone, err = run_cli(capsys, "project", novel, "--undo", "--json")
    assert code == 0, err
    assert _state(novel / "before.json") == _state(novel / "undone.json", capsys, novel)
    code, redone, _ = run_cli(capsys, "project", novel, "--redo", "--json")
    assert code == 0 and said(redone) == said(edited)
    assert json.loads(_dump(capsys, novel, "redone.json"))["cast"] == characters


def test_cut_at_quotes_cuts_the_mixed_sentences_and_the_cast_then_reads_only_its_words(capsys, novel):
    cast_of(novel, capsys)
    code, _, err = run_cli(capsys, "project", novel, "--cut-at-quotes")
    assert code == 0, err
    report = cast_of(novel, capsys)
    assert report["mixed"] == 0 and report["narration"] == 9
    assert report["changed"] is False  # the speech keeps the speaker its sentence had, the tag is the narrator's
    _, listed, _ = run_cli(capsys, "project", novel, "--list", "--json")
    assert said(listed) == NOVEL_SPEAKERS and len(listed["segments"]) == 18
    code, _, err = run_cli(capsys, "project", novel, "--cut-at-quotes")
    assert code == 2 and "nothing to cut at its quotes" in err
    assert run_cli(capsys, "project", novel, "--undo")[0] == 0
    _, listed, _ = run_cli(capsys, "project", novel, "--list", "--json")
    assert said(listed) == IMPORTED and len(listed["segments"]) == 13


def test_a_line_a_person_gave_stays_when_the_book_is_attributed_again(capsys, novel):
    cast_of(novel, capsys)
    code, _, err = run_cli(capsys, "project", novel, "--set-speaker", "7", "emma")
    assert code == 0 and "segment 7: Emma (kept when the book is attributed again)" in err
    report = cast_of(novel, capsys)
    assert report["changed"] is False and report["characters"][1]["fixed"] == 1
    _, listed, _ = run_cli(capsys, "project", novel, "--list", "--json")
    assert said(listed)[7] == "Emma" and listed["segments"][6]["speaker_confidence"] == 1.0


def test_narrate_with_a_cast_attributes_on_import_and_keeps_fixed_speakers_when_the_book_changes(
    capsys, tmp_path, bundles
):
    book = tmp_path / "novel.txt"
    book.write_text(NOVEL, encoding="utf-8")
    folder = tmp_path / "Novel.cbproj"
    args = ("narrate", book, "--project", folder, "--bundle", bundles["original"], "--cast", "--json")
    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    assert "cast: 3 character(s) say 9 segment(s)" in err
    assert said(out) == NOVEL_SPEAKERS and out["counts"]["rendered"] == 18  # cut at the quotes: 18 segments
    code, _, err = run_cli(capsys, "project", folder, "--set-speaker", "9", "Emma")
    assert code == 0, err
    book.write_text(NOVEL.replace("Harriet came running", "Harriet Smith came running"), encoding="utf-8")
    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    assert said(out)[9] == "Emma" and said(out)[14] == "Harriet"
    assert out["counts"]["rendered"] == 18  # the changed sentence rendered; every other take kept


ERRORS = [
    (("--set-speaker", "99", "Emma"), "There is no segment 99"),
    (("--set-speaker", "x", "Emma"), "'x' is not a segment number"),
    (("--set-speaker", "3", "Jane"), "The cast has no character 'Jane'. Its characters: Mr. Knightley, Emma, Harriet"),
    (("--merge-character", "Emma"), "--merge-character A needs --into B"),
    (("--merge-character", "Jane", "--into", "Emma"), "no character 'Jane'"),
    (("--merge-character", "Emma", "--into", "Emma"), "cannot be merged into itself"),
    (("--rename-character", "Emma"), "--rename-character A needs --to B"),
    (("--rename-character", "Emma", "--to", "Harriet"), "--merge-character A --into B"),
    (("--add-character", "narrator"), "means narration"),
    (("--cast-voice", "Jane", "default"), "no character 'Jane'"),
    (("--cast-voice", "Emma", "Nobody"), "Unknown voice 'Nobody'"),
]


@pytest.mark.parametrize(("argv", "message"), ERRORS)
def test_a_refused_cast_edit_exits_2_says_why_and_changes_nothing(capsys, novel, argv, message):
    cast_of(novel, capsys)
    before = _dump(capsys, novel, "before.json")
    code, _, err = run_cli(capsys, "project", novel, *argv)
    assert code == 2 and message in err, err
    assert _dump(capsys, novel, "after.json") == before


def _dump(capsys, folder, name: str) -> str:
    code, _, err = run_cli(capsys, "project", folder, "--dump-json", folder / name)
    assert code == 0, err
    return (folder / name).read_text(encoding="utf-8")


def _state(path, capsys=None, folder=None) -> dict:
    """The project as ``--dump-json`` wrote it, less the undo history (an undo moves its record to redo) and its
    voices (a voice copied in for a character stays in the project when the edit is undone, as with --set-voice)."""
    if capsys is not None:
        _dump(capsys, folder, path.name)
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("history")
    data.pop("voices")
    return data


def test_subtitles_name_the_speakers_with_name_speakers(capsys, tmp_path, bundles):
    book = tmp_path / "novel.txt"
    book.write_text(NOVEL, encoding="utf-8")
    folder = tmp_path / "Novel.cbproj"
    vtt = tmp_path / "novel.vtt"
    code, _, err = run_cli(capsys, "narrate", book, "--project", folder, "--bundle", bundles["original"], "--cast")
    assert code == 0, err
    code, _, err = run_cli(capsys, "project", folder, "--export", "--subtitles", vtt, "--name-speakers")
    assert code == 0, err
    text = vtt.read_text("utf-8")
    assert "<v Emma>" in text and "<v Mr. Knightley>" in text
