"""Narration projects on the tiny stand-ins: render, edit one segment, pace, loudness, export formats, subtitles,
chapters, resume after a crash, and bad project files."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from core.engine.audio import encoder
from core.engine.audio.finishing import integrated_loudness, stretch, true_peak_db
from core.engine.constants import SAMPLE_RATE
from core.engine.pipeline import Pipeline
from core.narration.exporting.chapter_marks import read_chapter_marks
from core.narration.exporting.export import ExportRequest, export_project
from core.narration.importing.book_import import parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects.opening import open_project
from core.narration.projects.project import LEGACY_FILE, PROJECT_FILE, ProjectError, create_project
from core.narration.rendering.render import regenerate, render_pending
from core.voices.library import VoiceLibrary
from core.wording import describe_error
from tests.narration_support import BOOK, make_epub, project_data, stored_state, write_legacy

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pipe(bundles):
    return Pipeline.from_bundle(bundles["original"])


@pytest.fixture(scope="module")
def turbo(bundles):
    """Seeds matter here (the tiny Original stand-in samples the same tokens whatever the seed)."""
    return Pipeline.from_bundle(bundles["turbo"])


def new_project(tmp_path, text=BOOK, voice=None, library=None, name="Book.cbproj"):
    project = create_project(tmp_path / name, "Book")
    import_document(project, parse_text(text, "Book"), voice, library, tmp_path, source_identity("b", text, voice))
    project.save()
    return project


def export_wav(project, path, **kw):
    result = export_project(project, ExportRequest(out=path, **kw))
    audio, rate = sf.read(path, dtype="float32")
    assert rate == SAMPLE_RATE
    return audio, result


def segment_audio(audio, placement):
    return audio[round(placement.start * SAMPLE_RATE) : round(placement.end * SAMPLE_RATE)]


def dominant_hz(audio):
    spectrum = np.abs(np.fft.rfft(audio * np.hanning(audio.size)))
    return np.fft.rfftfreq(audio.size, 1 / SAMPLE_RATE)[np.argmax(spectrum)]


def centroid_hz(audio):
    """Power-weighted mean frequency: the stand-in's tones move it exactly as much as their pitch moves."""
    power = np.abs(np.fft.rfft(audio)) ** 2
    return float((power * np.fft.rfftfreq(audio.size, 1 / SAMPLE_RATE)).sum() / power.sum())


def test_render_saves_every_segment_and_exports_them_in_order(tmp_path, pipe):
    project = new_project(tmp_path)
    assert project.counts()["pending"] == len(project.segments) == 10
    events = []
    summary = render_pending(project, pipe, events.append)
    assert summary.rendered == 10 and not summary.failed and summary.audio_seconds > 0
    kinds = [e.kind for e in events]
    assert kinds.count("segment") == 10 and "chunk" in kinds
    last = [e for e in events if e.kind == "segment"][-1]
    assert last.done == last.total == 10 and last.eta_s == 0 and last.rtf > 0
    reopened = open_project(project.folder)
    assert reopened.counts() == {"pending": 0, "rendered": 10, "failed": 0, "skipped": 0}
    for segment in reopened.segments:
        take = reopened.chosen_take(segment)
        assert (reopened.folder / take.file).is_file() and take.tokens and take.seconds > 0
    audio, result = export_wav(reopened, tmp_path / "book.wav")
    assert abs(audio.size / SAMPLE_RATE - result.seconds) < 1e-3
    starts = [result.timeline[n].start for n in range(1, 11)]
    assert starts == sorted(starts)
    assert [c["title"] for c in result.chapters] == ["Morning", "Evening"]


def test_editing_or_regenerating_one_segment_changes_only_that_segment(tmp_path, turbo, voice_wav):
    pipe, project = turbo, new_project(tmp_path, voice=str(voice_wav))
    render_pending(project, pipe)
    before, first = export_wav(project, tmp_path / "before.wav")
    k = 5
    project.edit_text(project.segment(k), "He carried a heavy basket of seeds and a hoe.")
    assert [project.number(s) for s in project.pending()] == [k]
    summary = render_pending(project, pipe)
    assert summary.rendered == 1
    regenerate(project, pipe, 3)
    assert len(project.segment(3).takes) == 2 and project.segment(3).chosen == 1
    after, second = export_wav(project, tmp_path / "after.wav")
    for number in range(1, 11):
        old, new = segment_audio(before, first.timeline[number]), segment_audio(after, second.timeline[number])
        if number in (k, 3):
            assert old.size != new.size or not np.array_equal(old, new)
        else:
            np.testing.assert_array_equal(old, new, err_msg=f"segment {number} changed")


def test_the_same_seed_and_settings_reproduce_a_segments_tokens(tmp_path, turbo, voice_wav):
    pipe, project = turbo, new_project(tmp_path, voice=str(voice_wav))
    render_pending(project, pipe, numbers=[2])
    take = project.chosen_take(project.segment(2))
    regenerate(project, pipe, 2, seed=take.seed)
    regenerate(project, pipe, 2)  # a new seed: other tokens
    takes = project.segment(2).takes
    assert takes[1].tokens == takes[0].tokens and takes[1].seed == takes[0].seed
    assert takes[2].tokens != takes[0].tokens
    project.choose(project.segment(2), 1)
    project.save()
    assert open_project(project.folder).segment(2).chosen == 0


def test_settings_and_voice_changes_make_only_the_affected_segments_pending(tmp_path, pipe, voice_wav):
    library = VoiceLibrary(tmp_path / "library")
    library.add("Ann", voice_wav)
    project = new_project(tmp_path, voice="Ann", library=library)
    render_pending(project, pipe)
    project.segment(4).settings["exaggeration"] = 0.9
    project.set_voice(project.segment(7), None)
    assert sorted(project.number(s) for s in project.pending()) == [4, 7]
    project.set_speed(project.segment(2), 1.5)  # pace and pauses are finishing: nothing to re-render
    project.set_pause(project.segment(2), 1.0)
    assert sorted(project.number(s) for s in project.pending()) == [4, 7]
    with pytest.raises(ProjectError) as caught:
        project.set_voice(project.segment(1), "Bob")
    assert caught.value.code == "project.unknown_voice" and caught.value.data == {"name": "Bob", "voices": ["Ann"]}
    assert "Its voices: Ann" in describe_error(caught.value)


def test_cancel_keeps_what_is_done_and_rendering_again_continues(tmp_path, pipe):
    project = new_project(tmp_path)
    done = []
    summary = render_pending(
        project, pipe, lambda e: done.append(e) if e.kind == "segment" else None, cancelled=lambda: len(done) >= 3
    )
    assert summary.cancelled and summary.rendered == 3
    assert open_project(project.folder).counts()["rendered"] == 3
    assert render_pending(project, pipe).rendered == 7
    assert not project.pending()


def test_a_full_disk_during_render_stops_with_the_project_consistent(tmp_path, pipe, monkeypatch):
    project = new_project(tmp_path)
    import core.narration.rendering.render as render_module

    real, calls = render_module.write_audio, []

    def full_disk(path, audio, rate):
        calls.append(path)
        if len(calls) == 4:
            raise render_module.AudioWriteError("audio.write_failed", path=str(path), reason="No space left on device")
        real(path, audio, rate)

    monkeypatch.setattr(render_module, "write_audio", full_disk)
    with pytest.raises(render_module.AudioWriteError) as caught:
        render_pending(project, pipe)
    assert caught.value.code == "audio.write_failed" and "No space" in describe_error(caught.value)
    reopened = open_project(project.folder)
    assert reopened.counts()["rendered"] == 3
    assert sorted(p.name for p in (project.folder / "takes").iterdir()) == [
        "00001-1.flac",
        "00002-1.flac",
        "00003-1.flac",
    ]
    monkeypatch.setattr(render_module, "write_audio", real)
    assert render_pending(reopened, pipe).rendered == 7


def test_a_failed_save_removes_the_new_take(tmp_path, pipe):
    project = new_project(tmp_path)
    project.store.set_page_limit(None)  # the database cannot grow: SQLite's "database or disk is full"
    with pytest.raises(ProjectError) as caught:
        render_pending(project, pipe)
    assert caught.value.code == "project.save_failed" and caught.value.data["reason"] == "No space left on device"
    assert "No space left" in describe_error(caught.value)
    stored = {t.file for s in project.segments for t in s.takes}  # the takes that fitted, and not the one that did not
    assert {f"takes/{p.name}" for p in (project.folder / "takes").iterdir()} == stored
    assert project.counts()["rendered"] == len(stored) < len(project.segments)
    assert open_project(project.folder).to_dict() == project.to_dict()


def test_pace_shortens_the_export_at_the_same_pitch(tmp_path, pipe):
    project = new_project(tmp_path)
    render_pending(project, pipe)
    normal, _ = export_wav(project, tmp_path / "normal.wav")
    project.set_speed(None, 1.25)
    fast, _ = export_wav(project, tmp_path / "fast.wav")
    assert fast.size / normal.size == pytest.approx(0.80, abs=0.02)
    assert centroid_hz(fast) == pytest.approx(centroid_hz(normal), rel=0.02)
    project.set_speed(None, 1.0)
    assert np.array_equal(export_wav(project, tmp_path / "again.wav")[0], normal)  # takes untouched


def test_time_stretch_keeps_a_tones_pitch():
    t = np.arange(SAMPLE_RATE * 3) / SAMPLE_RATE
    tone = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    for speed in (0.5, 1.25, 2.0):
        out = stretch(tone, speed)
        assert out.size / tone.size == pytest.approx(1 / speed, abs=0.01)
        assert dominant_hz(out) == pytest.approx(440, rel=0.01)


@pytest.mark.parametrize("target", [-16.0, -23.0])
def test_loudness_reaches_the_target_with_true_peaks_under_the_ceiling(tmp_path, pipe, target):
    project = new_project(tmp_path)
    render_pending(project, pipe)
    audio, result = export_wav(project, tmp_path / "loud.wav", loudness=target, true_peak=-1.0)
    assert integrated_loudness(audio) == pytest.approx(target, abs=0.5)
    assert true_peak_db(audio) <= -1.0 + 0.1
    assert result.loudness[0]["after_lufs"] == pytest.approx(target, abs=0.5)


@pytest.mark.parametrize("suffix", [".wav", ".flac", ".ogg", ".opus", ".mp3"])
def test_every_format_decodes_to_the_expected_duration_with_tags_and_chapters(tmp_path, pipe, suffix):
    project = new_project(tmp_path)
    render_pending(project, pipe)
    out = tmp_path / f"book{suffix}"
    result = export_project(project, ExportRequest(out=out))
    info = sf.info(out)
    assert info.samplerate == SAMPLE_RATE and info.channels == 1
    assert info.frames / SAMPLE_RATE == pytest.approx(result.seconds, abs=0.03)
    audio, _ = sf.read(out, dtype="float32")
    assert np.abs(audio).max() > 0.01
    if suffix != ".wav":
        marks = read_chapter_marks(out)
        assert [t for t, _ in marks] == ["Morning", "Evening"]
        assert marks[1][1] == pytest.approx(result.chapters[1]["start"], abs=0.002)
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("suffix", [".srt", ".vtt"])
def test_subtitle_cues_are_in_order_one_per_segment_and_lie_on_their_speech(tmp_path, pipe, suffix):
    project = new_project(tmp_path)
    render_pending(project, pipe)
    project.set_speed(None, 1.25)
    audio, result = export_wav(project, tmp_path / "book.wav", subtitles=tmp_path / f"book{suffix}")
    text = (tmp_path / f"book{suffix}").read_text(encoding="utf-8")
    assert text.startswith("WEBVTT\n\n") == (suffix == ".vtt")
    sep = "," if suffix == ".srt" else "."
    cues = [line.split(" --> ") for line in text.splitlines() if " --> " in line]
    assert len(cues) == len(project.segments)

    def seconds(stamp):
        h, m, rest = stamp.split(":")
        s, ms = rest.split(sep)
        return int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000

    times = [(seconds(a), seconds(b)) for a, b in cues]
    assert all(a < b for a, b in times) and all(times[i][1] <= times[i + 1][0] for i in range(len(times) - 1))
    for number, (start, end) in enumerate(times, 1):
        assert (start, end) == pytest.approx((result.timeline[number].start, result.timeline[number].end), abs=0.001)
        speech = audio[round(start * SAMPLE_RATE) : round(end * SAMPLE_RATE)]
        assert np.abs(speech).max() > 0.01  # the cue covers the segment's own audio
        if number < len(times):
            gap = audio[round(end * SAMPLE_RATE) + 2 : round(times[number][0] * SAMPLE_RATE) - 2]
            assert gap.size and np.abs(gap).max() < 1e-3  # and not the pause after it
    lines = text.splitlines()
    assert project.segments[0].text in lines


def test_an_epub_with_three_chapters_exports_three_files_and_a_chapter_list(tmp_path, voice_wav):
    book = make_epub(tmp_path / "book.epub", ["Arrival", "The Middle", "Departure"])
    out = tmp_path / "chapters"
    code, report = run_cli(
        "narrate",
        str(book),
        "--project",
        str(tmp_path / "B.cbproj"),
        "--bundle",
        str(bundle("original")),
        "--voice",
        str(voice_wav),
        "--per-chapter",
        str(out),
        "--format",
        "mp3",
        "--chapter-subtitles",
        "srt",
        "--json",
    )
    assert code == 0, report
    audio = sorted(p.name for p in out.glob("*.mp3"))
    assert audio == ["01 - Arrival.mp3", "02 - The Middle.mp3", "03 - Departure.mp3"]
    assert len(list(out.glob("*.srt"))) == 3
    playlist = (out / "A Test Book.m3u8").read_text(encoding="utf-8").splitlines()
    assert playlist[0] == "#EXTM3U" and [line for line in playlist if line.endswith(".mp3")] == audio
    contents, *chapters = report["chapters"]  # the book's table of contents page: a skipped chapter
    assert [c["title"] for c in chapters] == ["Arrival", "The Middle", "Departure"]
    assert [c["title"] for c in report["export"]["chapters"]] == ["Arrival", "The Middle", "Departure"]
    assert all(s["status"] == "skipped" for s in report["segments"] if s["chapter"] == contents["number"])
    assert [f["kind"] for f in report["export"]["files"]].count("audio") == 3


# --- the command line ---------------------------------------------------------------------------------------------
_BUNDLES: dict = {}


@pytest.fixture(autouse=True)
def _remember_bundles(bundles):
    _BUNDLES.update(bundles)


def bundle(variant):
    return _BUNDLES[variant]


def run_cli(*argv):
    """``python -m core`` in this process; returns the exit code and the parsed JSON (or the stdout text)."""
    import contextlib
    import io

    from core.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    try:
        return code, json.loads(out.getvalue())
    except ValueError:
        return code, out.getvalue() + err.getvalue()


def test_narrate_continues_a_changed_book_rendering_only_the_changed_sentence(tmp_path, voice_wav):
    book = tmp_path / "book.txt"
    book.write_text(BOOK, encoding="utf-8")
    project = tmp_path / "Book.cbproj"
    args = (
        "narrate",
        str(book),
        "--project",
        str(project),
        "--bundle",
        str(bundle("original")),
        "--voice",
        str(voice_wav),
        "--json",
    )
    code, first = run_cli(*args, "--out", str(tmp_path / "a.flac"))
    assert code == 0, first
    assert first["render"]["rendered"] == 10 and first["counts"]["rendered"] == 10
    fields = {"number", "id", "text", "status", "seed", "takes", "start", "end"}
    assert fields <= set(first["segments"][0]) and first["segments"][3]["start"] > 0
    book.write_text(BOOK.replace("Birds began to sing.", "Birds sang loudly."), encoding="utf-8")
    code, second = run_cli(*args)
    assert code == 0 and second["render"]["rendered"] == 1
    changed = [s for s in second["segments"] if s["text"] == "Birds sang loudly."]
    assert changed and changed[0]["takes"] == 1
    kept = {s["id"]: s["seed"] for s in first["segments"]}
    assert all(kept[s["id"]] == s["seed"] for s in second["segments"] if s["text"] != "Birds sang loudly.")
    code, third = run_cli(*args)  # nothing changed: nothing to render
    assert code == 0 and "render" not in third


def test_project_commands_list_edit_regenerate_choose_and_export(tmp_path, voice_wav):
    project = tmp_path / "P.cbproj"
    book = tmp_path / "b.md"
    book.write_text("# Title\n\nOne sentence here. Two sentences here.\n", encoding="utf-8")
    code, out = run_cli(
        "narrate",
        str(book),
        "--project",
        str(project),
        "--bundle",
        str(bundle("turbo")),
        "--voice",
        str(voice_wav),
        "--seed",
        "42",
        "--json",
    )
    assert code == 0, out
    assert [s["seed"] for s in out["segments"]] == [42, 42, 42]
    code, out = run_cli("project", str(project), "--edit", "2", "--text", "A new first sentence.", "--json")
    assert code == 0 and out["segments"][1]["status"] == "pending" and out["counts"]["pending"] == 1
    code, out = run_cli(
        "project", str(project), "--regenerate", "3", "--seed", "42", "--bundle", str(bundle("turbo")), "--json"
    )
    assert code == 0 and out["segments"][2]["takes"] == 2 and out["segments"][2]["chosen"] == 2
    code, out = run_cli("project", str(project), "--choose", "3", "1", "--json")
    assert code == 0 and out["segments"][2]["chosen"] == 1
    code, message = run_cli("project", str(project), "--export", "--out", str(tmp_path / "x.wav"))
    assert code == 2 and "not rendered yet (2)" in message
    code, out = run_cli("project", str(project), "--render", "--bundle", str(bundle("turbo")), "--json")
    assert code == 0 and out["counts"]["rendered"] == 3
    code, out = run_cli(
        "project",
        str(project),
        "--export",
        "--out",
        str(tmp_path / "x.ogg"),
        "--speed",
        "0.8",
        "--loudness",
        "audiobook",
        "--subtitles",
        str(tmp_path / "x.vtt"),
        "--json",
    )
    assert code == 0 and out["export"]["loudness"][0]["target_lufs"] == -19.0
    assert out["segments"][-1]["end"] == pytest.approx(out["export"]["seconds"], abs=0.01)
    code, text = run_cli("project", str(project), "--list")
    assert code == 0 and "3 rendered, 0 pending, 0 failed" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("project", "{p}", "--choose", "99", "1"), "no segment 99"),
        (("project", "{p}", "--choose", "1", "5"), "no take 5"),
        (("project", "{p}", "--edit", "1"), "needs --text"),
        (("project", "{p}", "--edit", "1", "--text", "!!!"), "nothing to say"),
        (("project", "{p}", "--render"), "add --bundle"),
        (("project", "{p}", "--set-pause", "1", "99"), "between 0 and 30"),
        (("project", "{p}", "--set-speed", "1", "3"), "between 0.5 and 2.0"),
        (("project", "{p}", "--export", "--out", "x.aac"), ".wav, .flac, .ogg, .opus, .mp3"),
        (("project", "{p}", "--export", "--out", "x.wav", "--loudness", "loud"), "podcast (-16)"),
        (("project", "{p}", "--set-voice", "1", "Nobody"), "Unknown voice 'Nobody'"),
        (("project", "{missing}", "--list"), "no project.sqlite"),
    ],
)
def test_bad_project_commands_exit_2_with_one_line(tmp_path, argv, message):
    project = new_project(tmp_path)
    argv = [a.format(p=project.folder, missing=tmp_path / "nothing") for a in argv]
    before = stored_state(project.folder)
    code, text = run_cli(*argv, "--library", str(tmp_path / "lib"))
    assert code == 2 and message in text, text
    assert stored_state(project.folder) == before


def test_unknown_voice_tags_fail_before_any_rendering_listing_the_known_voices(tmp_path, voice_wav):
    library = tmp_path / "lib"
    VoiceLibrary(library).add("Narrator", voice_wav)
    book = tmp_path / "b.txt"
    book.write_text("Hello. [voice:Ghost] Boo!", encoding="utf-8")
    code, text = run_cli(
        "narrate",
        str(book),
        "--project",
        str(tmp_path / "P"),
        "--bundle",
        str(bundle("turbo")),
        "--voice",
        "Narrator",
        "--library",
        str(library),
    )
    assert code == 2 and "Unknown voice 'Ghost'" in text and "Known voices: Narrator" in text
    assert not (tmp_path / "P" / PROJECT_FILE).exists()


def test_turbo_without_a_voice_says_a_recording_is_needed_before_rendering(tmp_path):
    book = tmp_path / "b.txt"
    book.write_text("Hello there.", encoding="utf-8")
    code, text = run_cli("narrate", str(book), "--project", str(tmp_path / "P"), "--bundle", str(bundle("turbo")))
    assert code == 2 and "no built-in voice" in text


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: "{not json", "not valid JSON"),
        (lambda d: {**d, "schema": 99}, "newer version"),
        (lambda d: {**d, "segments": "x"}, "wrong type"),
        (lambda d: _take_file(d, "../../outside.flac"), "inside takes/"),
        (lambda d: _take_file(d, "/etc/passwd"), "inside takes/"),
        (lambda d: {**d, "voices": {"A": "../a.wav"}}, "inside voices/"),
        (lambda d: {**d, "settings": {"volume": 11}}, "unknown settings"),
    ],
)
def test_a_damaged_or_hand_edited_project_file_is_refused_and_never_overwritten(tmp_path, pipe, edit, message):
    project = new_project(tmp_path)
    render_pending(project, pipe, numbers=[1])
    write_legacy(project.folder, edit(project_data(project.folder)))  # as an earlier version's project.json
    file = project.folder / LEGACY_FILE
    before = file.read_bytes()
    with pytest.raises(ProjectError) as caught:
        open_project(project.folder)
    assert caught.value.code in ("project.damaged", "project.newer_format", "project.invalid")
    assert message in describe_error(caught.value)
    code, text = run_cli("project", str(project.folder), "--render", "--bundle", str(bundle("original")))
    assert code == 2 and message in text
    assert file.read_bytes() == before and not (project.folder / PROJECT_FILE).exists()


def _take_file(data, path):
    data["segments"][0]["takes"][0]["file"] = path
    return data


def test_a_new_project_refuses_a_folder_that_holds_other_files(tmp_path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"x")
    with pytest.raises(ProjectError) as caught:
        create_project(tmp_path / "photos", "Book")
    assert caught.value.code == "project.folder_not_empty" and "not empty" in describe_error(caught.value)


@pytest.mark.slow
def test_kill_9_during_render_loses_at_most_the_segment_in_flight_and_resume_finishes(tmp_path, voice_wav):
    book = tmp_path / "long.txt"
    book.write_text("\n\n".join(f"This is sentence number {i} of a long book." for i in range(1, 121)), "utf-8")
    project = tmp_path / "Long.cbproj"
    argv = [
        sys.executable,
        "-m",
        "core",
        "narrate",
        str(book),
        "--project",
        str(project),
        "--bundle",
        str(bundle("original")),
        "--voice",
        str(voice_wav),
        "--provider",
        "cpu",
    ]
    child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    rendered = 0
    while time.monotonic() < deadline and rendered < 10:
        try:
            rendered = open_project(project).counts()["rendered"]
        except ProjectError:
            rendered = 0  # not created yet
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert 10 <= rendered < 120, "the render finished before it could be killed"
    reopened = open_project(project)
    saved = reopened.counts()["rendered"]
    on_disk = {p.name for p in (project / "takes").glob("*.flac") if not p.name.startswith(".")}
    referenced = {Path(s.takes[0].file).name for s in reopened.segments if s.takes}
    assert referenced == on_disk  # the take in flight (written, its row not committed) was removed on open
    assert saved >= rendered
    finished = subprocess.run(argv + ["--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    report = json.loads(finished.stdout)
    assert report["counts"]["rendered"] == 120 and report["render"]["rendered"] == 120 - saved


def test_a_full_disk_during_export_leaves_no_file_and_the_project_unchanged(tmp_path, pipe, monkeypatch):
    project = new_project(tmp_path)
    render_pending(project, pipe)
    before = stored_state(project.folder)
    out = tmp_path / "book.flac"
    out.write_bytes(b"the previous export")

    def no_space(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(encoder._Encoder, "write", no_space)  # the disk fills while the file is encoded
    code, text = run_cli("project", str(project.folder), "--export", "--out", str(out))
    assert code == 2 and "No space left on device" in text
    assert out.read_bytes() == b"the previous export"
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name]
    assert stored_state(project.folder) == before
