"""``python -m core voices``: the library listed, and whose voice a saved voice is, said from the command line; a
project's cast is then suggested the voices of each character's gender."""

from __future__ import annotations

from core.voices import VoiceLibrary
from tests.cli.test_cli_cast import NOVEL
from tests.cli.test_cli_project_edit import run_cli


def test_voices_lists_the_library_and_gender_says_whose_voice_it_is(capsys, tmp_path, voice_wav, other_voice_wav):
    library = VoiceLibrary(tmp_path / "voices")
    library.add("Clara", voice_wav)
    library.add("Bruno", other_voice_wav)
    code, listed, err = run_cli(capsys, "voices", "--library", tmp_path / "voices", "--json")
    assert code == 0, err
    assert [(v["name"], v["gender"]) for v in listed["voices"]] == [("Bruno", None), ("Clara", None)]
    assert listed["voices"][0]["seconds"] > 0 and listed["library"] == str(tmp_path / "voices")
    for name, gender in (("Clara", "f"), ("Bruno", "M")):
        code, _, err = run_cli(capsys, "voices", "--library", tmp_path / "voices", "--gender", name, gender)
        assert code == 0, err
    assert [v.gender for v in library.voices()] == ["m", "f"]
    code, text, _ = run_cli(capsys, "voices", "--library", tmp_path / "voices")
    assert "Bruno" in text and "a man's voice" in text and "a woman's voice" in text

    book = tmp_path / "novel.txt"
    book.write_text(NOVEL, encoding="utf-8")
    folder = tmp_path / "Novel.cbproj"
    assert run_cli(capsys, "project", folder, "--import", book)[0] == 0
    code, report, err = run_cli(capsys, "project", folder, "--cast", "--json", "--library", tmp_path / "voices")
    assert code == 0, err
    suggested = {c["name"]: c["suggested_voices"] for c in report["characters"]}
    assert suggested == {"Mr. Knightley": ["Bruno"], "Emma": ["Clara"], "Harriet": ["Clara"]}

    code, _, err = run_cli(capsys, "voices", "--library", tmp_path / "voices", "--gender", "Clara", "none")
    assert code == 0 and library.get("Clara").gender is None


def test_a_bad_gender_or_an_unknown_voice_exits_2_and_says_why(capsys, tmp_path, voice_wav):
    VoiceLibrary(tmp_path / "voices").add("Clara", voice_wav)
    code, _, err = run_cli(capsys, "voices", "--library", tmp_path / "voices", "--gender", "Clara", "x")
    assert code == 2 and "needs m, f or none" in err
    code, _, err = run_cli(capsys, "voices", "--library", tmp_path / "voices", "--gender", "Nobody", "f")
    assert code == 2 and "no voice 'Nobody'" in err and "Clara" in err
    code, text, _ = run_cli(capsys, "voices", "--library", tmp_path / "empty")
    assert code == 0 and "No voices saved" in text
