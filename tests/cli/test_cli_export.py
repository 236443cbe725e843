"""``project DIR --export`` and ``narrate`` with the export's new flags: chapters, segments, cover, bitrate, sample
rate, CBR/VBR, metadata, the store check (exit 3 when a file fails) and mastering, the progress bar on stderr."""

from __future__ import annotations

import mutagen
import pytest

from core.narration.exporting.chapter_marks import read_chapter_marks
from core.narration.projects.opening import open_project
from tests.export_support import BOOK3, run_cli, tiny_png


@pytest.fixture
def project(book_copy):
    """The rendered three-chapter book (tests/conftest.py), a copy for each test."""
    return book_copy


def test_export_an_m4b_of_a_chapter_range_with_cover_and_metadata(project, tmp_path):
    cover = tmp_path / "cover.png"
    cover.write_bytes(tiny_png())
    out = tmp_path / "book.m4b"
    code, report, err = run_cli(
        "project", project.folder, "--export", "--out", out, "--chapters", "2-3", "--cover", cover,
        "--author", "Ann Author", "--narrator", "Ned", "--year", "2024", "--json",
    )  # fmt: skip
    assert code == 0, (report, err)
    assert [c["title"] for c in report["export"]["chapters"]] == ["The Middle", "Departure"]
    assert [t for t, _ in read_chapter_marks(out)] == ["The Middle", "Departure"]
    tags = mutagen.File(out).tags
    assert tags["©ART"] == ["Ann Author"] and tags["©wrt"] == ["Ned"] and tags["©gen"] == ["Audiobook"]
    assert "covr" in tags
    assert "encoding" in err and "%" in err  # the progress bar on stderr


def test_export_an_mp3_at_the_rate_and_bitrate_asked(project, tmp_path):
    out = tmp_path / "book.mp3"
    code, text, err = run_cli(
        "project", project.folder, "--export", "--out", out, "--bitrate", "192k", "--sample-rate", "44100", "--cbr"
    )
    assert code == 0, text + err
    info = mutagen.File(out).info
    assert (info.sample_rate, info.bitrate, info.channels) == (44100, 192_000, 1)
    assert f"wrote {out}" in text


def test_check_acx_prints_a_line_per_file_and_exits_3_when_one_fails(project, tmp_path):
    code, text, _ = run_cli("project", project.folder, "--export", "--out", tmp_path / "plain.mp3", "--check", "acx")
    assert code == 3
    line = next(line for line in text.splitlines() if line.startswith("check plain.mp3"))
    assert "RMS" in line and "peak" in line and "noise floor" in line and "FAIL" in line


def test_a_mastered_export_passes_the_check_file_by_file(project, tmp_path):
    folder = tmp_path / "acx"
    code, report, err = run_cli(
        "project", project.folder, "--export", "--per-chapter", folder, "--format", "mp3", "--master", "acx",
        "--check", "acx", "--json",
    )  # fmt: skip
    assert code == 0, err
    checks = report["export"]["checks"]
    assert len(checks) == 3 and all(c["passed"] for c in checks)
    assert {c["sample_rate"] for c in checks} == {44100} and all(c["cbr"] for c in checks)
    code, text, _ = run_cli(
        "project", project.folder, "--export", "--per-chapter", folder, "--format", "mp3", "--master", "acx",
        "--check", "acx",
    )  # fmt: skip
    assert code == 0 and text.count("PASS") == 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--chapters", "3-1"), "not a choice of chapters"),
        (("--chapters", "9"), "There is no chapter 9"),
        (("--bitrate", "fast"), "not a bitrate"),
        (("--out", "{tmp}/missing/book.m4b"), "does not exist"),
        (("--out", "{tmp}/book.m4b", "--sample-rate", "44000"), "44000"),
        (("--out", "{tmp}/book.m4b", "--cover", "{tmp}/cover.txt"), "not a JPEG or PNG"),
    ],
)
def test_bad_export_choices_exit_2_before_any_work(project, tmp_path, argv, message):
    (tmp_path / "cover.txt").write_text("no picture")
    argv = [a.format(tmp=tmp_path) for a in argv]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "book.m4b")]
    code, text, err = run_cli("project", project.folder, "--export", *argv)
    assert code == 2 and message in text + err, text + err
    assert not (tmp_path / "book.m4b").exists()


def test_render_and_narrate_take_a_chapter_range(tmp_path, bundles):
    book = tmp_path / "book.txt"
    book.write_text(BOOK3, encoding="utf-8")
    folder = tmp_path / "B.cbproj"
    code, _report, err = run_cli(
        "narrate", book, "--project", folder, "--bundle", bundles["original"], "--chapters", "2",
        "--out", tmp_path / "two.mp3", "--json",
    )  # fmt: skip
    assert code == 0, err
    project = open_project(folder)
    rendered = {s.chapter for s in project.segments if project.status(s) == "rendered"}
    assert rendered == {1}
    assert [t for t, _ in read_chapter_marks(tmp_path / "two.mp3")] == ["The Middle"]
    code, report, err = run_cli("project", folder, "--render", "--chapters", "1,3", "--json")
    assert code == 0, err
    assert report["counts"]["rendered"] == len(project.segments) and report["render"]["rendered"] > 0
