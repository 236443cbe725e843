"""The streaming export is safe: the destination is checked before any work, a cancel or a kill -9 leaves no file
under the final name and the project unchanged, progress is told, and a re-export encodes only what changed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import namedtuple
from pathlib import Path

import pytest

from core.narration import ExportCancelled, ExportRequest, ProjectError, export_project
from core.narration.exporting import stream as stream
from core.wording import describe_error
from tests.narration_support import stored_state

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(book_copy):
    """The rendered three-chapter book (tests/conftest.py), a copy for each test."""
    return book_copy


@pytest.fixture
def no_reading(monkeypatch):
    """Fail the test if the export reads any take (it was meant to stop before)."""

    def refuse(project, segment):
        raise AssertionError("a take was read")

    monkeypatch.setattr(stream, "read_take", refuse)


def test_a_missing_folder_is_refused_at_once(project, tmp_path, no_reading):
    with pytest.raises(ProjectError) as caught:
        export_project(project, ExportRequest(out=tmp_path / "nowhere" / "book.m4b"))
    assert caught.value.code == "export.folder_missing"
    assert "does not exist" in describe_error(caught.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_folder_without_permission_is_refused_at_once(project, tmp_path, no_reading):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(ProjectError) as caught:
            export_project(project, ExportRequest(out=locked / "book.mp3"))
        assert caught.value.code == "export.no_permission"
    finally:
        locked.chmod(0o700)


def test_a_folder_the_check_may_not_write_to_is_refused(project, tmp_path, no_reading, monkeypatch):
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == tmp_path else real(path, mode))
    with pytest.raises(ProjectError) as caught:
        export_project(project, ExportRequest(out=tmp_path / "book.mp3"))
    assert caught.value.code == "export.no_permission"
    assert "You may not write" in describe_error(caught.value)


def test_too_little_free_space_is_refused_at_once(project, tmp_path, no_reading, monkeypatch):
    import shutil

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 50_000, 50_000))
    with pytest.raises(ProjectError) as caught:
        export_project(project, ExportRequest(out=tmp_path / "book.wav"))
    assert caught.value.code == "export.no_space" and caught.value.data["needed"] > 50_000
    assert "50.0 kB free" in describe_error(caught.value)


def test_a_cancel_leaves_no_file_under_the_final_name_and_the_project_unchanged(project, tmp_path):
    before = stored_state(project.folder)
    out = tmp_path / "book.m4b"
    out.write_bytes(b"the previous export")
    seen = []

    def cancel_while_encoding():
        return any(p.stage == "encoding" for p in seen)

    with pytest.raises(ExportCancelled) as caught:
        export_project(project, ExportRequest(out=out, loudness=-19.0), seen.append, cancel_while_encoding)
    assert caught.value.code == "export.cancelled"
    assert out.read_bytes() == b"the previous export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Book.cbproj", "book.m4b"]  # no spool, no partial file
    assert stored_state(project.folder) == before


def test_progress_goes_forward_to_the_end_with_the_time_left(project, tmp_path):
    seen = []
    result = export_project(project, ExportRequest(out=tmp_path / "book.mp3", loudness=-16.0), seen.append)
    fractions = [p.fraction for p in seen]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    assert {p.stage for p in seen} == {"finishing", "encoding"}
    assert seen[-1].total == pytest.approx(2 * result.seconds, rel=0.02)
    assert all(p.seconds_left is None or p.seconds_left >= 0 for p in seen)
    assert seen[-1].seconds_left == pytest.approx(0.0, abs=1e-6)
    assert all(p.file == str(tmp_path / "book.mp3") for p in seen)


def test_a_re_export_per_chapter_encodes_only_the_chapter_that_changed(project, tmp_path):
    folder = tmp_path / "chapters"
    request = ExportRequest(per_chapter=folder, chapter_format=".m4b", chapter_subtitles=".srt")
    first = export_project(project, request)
    audio = [f for f in first.files if f["kind"] == "audio"]
    assert len(audio) == 3 and not any(f["kept"] for f in audio)
    stamps = {f["path"]: Path(f["path"]).stat().st_mtime_ns for f in audio}
    middle = next(s for s in project.segments if s.chapter == 1)
    project.set_pause(middle, 1.25)  # one fixed pause in chapter 2
    again = export_project(project, request)
    kept = {Path(f["path"]).name: f["kept"] for f in again.files if f["kind"] == "audio"}
    assert kept == {"01 - Arrival.m4b": True, "02 - The Middle.m4b": False, "03 - Departure.m4b": True}
    for file in again.files:
        if file["kind"] == "audio" and file["kept"]:
            assert Path(file["path"]).stat().st_mtime_ns == stamps[file["path"]]
    assert again.timeline[2].start > first.timeline[2].start or again.seconds > first.seconds
    assert [c["title"] for c in again.chapters] == ["Arrival", "The Middle", "Departure"]
    (folder / "01 - Arrival.m4b").unlink()  # a file removed by hand is made again
    third = export_project(project, request)
    assert [f["kept"] for f in third.files if f["kind"] == "audio"] == [False, True, True]


def test_kill_9_during_a_cli_export_leaves_no_file_under_the_final_name(tmp_path):
    from core.bench.export_bench import standin_project

    project = standin_project(tmp_path / "Long.cbproj", 0.1)
    project.set_speed(None, 1.1)
    project.finishing["loudness"] = -19.0
    project.save()
    before = stored_state(project.folder)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "book.m4b"
    argv = [sys.executable, "-m", "core", "project", str(project.folder), "--export", "--out", str(out)]
    child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    encoding = False
    while time.monotonic() < deadline and not encoding and child.poll() is None:
        time.sleep(0.02)  # the encoder's temporary file appears when pass 2 begins
        encoding = any(p.name.endswith(".partial.m4b") for p in out_dir.iterdir())
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert encoding and child.returncode == -signal.SIGKILL, "the export ended before it could be killed"
    assert not out.exists()
    assert all(p.name.startswith(".") and ".partial" in p.name for p in out_dir.iterdir())
    assert stored_state(project.folder) == before
    again = export_project(project, ExportRequest(out=out))  # and the next export writes the file
    assert out.is_file() and again.seconds > 0
