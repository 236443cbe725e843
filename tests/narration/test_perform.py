"""Perform this line: a person's recording of a segment re-voiced into the segment's voice and stored as its take,
marked performed (core/narration/rendering/perform.py), on the tiny Original stand-in."""

from __future__ import annotations

import json
import shutil
import sqlite3

import numpy as np
import pytest
import soundfile as sf

from core.engine import Pipeline, SynthesisCancelled, VoiceReferenceError, source_from_array
from core.narration import (
    ExportRequest,
    ProjectError,
    TakePolicy,
    check_takes,
    editing,
    export_project,
    open_project,
    perform_segment,
    performance_source,
    render_todo,
)
from core.narration.projects.store import STORE_SCHEMA
from core.narration.screening import BookContext, TakeMeasures, Thresholds, judge, measure_take
from core.narration.screening.screen import measures_of
from core.standin import synthetic_voice
from core.wording import describe_error, generic
from tests.narration_support import project_data, store_as_of, stored_state


@pytest.fixture(scope="module")
def pipe(bundles):
    return Pipeline.from_bundle(bundles["original"])


def recording(path, seconds=2.5, rate=44100, channels=2, seed=5):
    """A speech-like recording of ``seconds`` at ``rate`` (stereo by default: it is mixed to mono)."""
    voice = synthetic_voice(seconds * rate / 24000, seed=seed, pitch_hz=150)  # made at 24 kHz, written at ``rate``
    sf.write(path, np.stack([voice] * channels, axis=1) if channels > 1 else voice, rate)
    return path


def takes_on_disk(project) -> set[str]:
    return {p.name for p in (project.folder / "takes").iterdir()}


def test_a_performed_line_is_the_chosen_take_marked_performed_with_the_recordings_length(book_copy, pipe, tmp_path):
    project = book_copy
    segment = project.segments[2]
    source = recording(tmp_path / "line 3.wav", seconds=2.5)
    before = len(segment.takes)
    progress = []
    take = perform_segment(project, pipe, segment, source, seed=11, progress=lambda *p: progress.append(p))
    assert segment.takes[-1] is take and segment.chosen == before and len(segment.takes) == before + 1
    assert project.status(segment) == "rendered" and take.key == project.render_key(segment)
    assert take.performed == {"source": "takes/00003-2.source.wav", "name": "line 3.wav"} and take.is_performed
    assert take.tokens == [] and take.seed == 11
    assert take.seconds == pytest.approx(2.5, abs=1 / 24000)  # the recording's length, and its timing
    audio, rate = sf.read(project.path(take.file), dtype="float32")
    assert rate == 24000 and audio.ndim == 1 and audio.size == round(2.5 * 24000)
    assert project.path(take.performed["source"]).read_bytes() == source.read_bytes()  # kept as it was given
    assert performance_source(project, take) == project.path("takes/00003-2.source.wav")
    assert progress[-1] == pytest.approx((2.5, 2.5), abs=1e-3)
    assert take.screen is not None and take.screen["measures"]["performed"] is True
    assert take.screen["measures"]["tokens"] == 0 and take.screen["reasons"] == []
    assert project.segments[1].takes[-1].performed is None  # the model's takes are not performed

    project.close()
    again = open_project(project.folder)  # stored: it survives reopening the project
    reopened = again.segments[2]
    assert reopened.takes[-1] == take and reopened.chosen == before and again.status(reopened) == "rendered"
    dump = tmp_path / "dump.json"
    again.dump_json(dump)
    dumped = json.loads(dump.read_text())["segments"][2]["takes"]
    assert [t["performed"] for t in dumped] == [None, {"name": "line 3.wav", "source": "takes/00003-2.source.wav"}]
    assert project_data(again.folder)["segments"][1]["takes"][-1]["performed"] is None

    edit = editing.edit_text(again, 3, "She walked into the old town.")  # outdated, as every take is by an edit
    assert again.status(again.segments[2]) == "pending" and again.segments[2].takes[-1].is_performed
    editing.revert(again, edit)
    assert again.status(again.segments[2]) == "rendered"
    again.close()


def test_export_includes_the_performed_take(book_copy, pipe, tmp_path):
    project = book_copy
    take = perform_segment(project, pipe, project.segments[3], recording(tmp_path / "line.flac", 3.2, 48000), 3)
    result = export_project(project, ExportRequest(out=tmp_path / "book.wav"))
    place = result.timeline[4]
    assert place.end - place.start == pytest.approx(take.seconds, abs=0.02)
    exported, _rate = sf.read(tmp_path / "book.wav", dtype="float32")
    performed, _rate = sf.read(project.path(take.file), dtype="float32")
    start = round(place.start * 24000)
    heard = exported[start : start + performed.size]
    assert np.corrcoef(heard, performed[: heard.size])[0, 1] > 0.9  # the performance itself is what is heard
    assert not result.flagged


def test_a_recording_in_memory_is_kept_as_flac_and_performing_again_shares_the_kept_file(book_copy, pipe, tmp_path):
    project = book_copy
    segment = project.segments[0]
    samples = synthetic_voice(1.5, seed=8, pitch_hz=140)
    first = perform_segment(project, pipe, segment, source_from_array(samples, 24000, "microphone"))
    assert first.performed == {"source": "takes/00001-2.source.flac", "name": "recording"}
    kept = performance_source(project, first)
    assert kept is not None and sf.info(kept).frames == samples.size
    second = perform_segment(project, pipe, segment, kept, seed=2)  # re-voiced again from the kept recording
    assert second.performed == first.performed == {"source": "takes/00001-2.source.flac", "name": "recording"}
    first_takes = {f"{s.id:05d}-1.flac" for s in project.segments}
    assert segment.chosen == 2
    assert sorted(takes_on_disk(project) - first_takes) == ["00001-2.flac", "00001-2.source.flac", "00001-3.flac"]
    project.close()
    assert open_project(project.folder).segments[0].takes[1].performed == first.performed  # not swept as an orphan


def test_an_orphan_recording_is_swept_with_orphan_takes_on_open(book_copy, pipe, tmp_path):
    project = book_copy
    take = perform_segment(project, pipe, project.segments[1], recording(tmp_path / "line.ogg", 1.2))
    (project.folder / "takes" / "00002-9.flac").write_bytes(b"left by a crash")
    (project.folder / "takes" / "00002-9.source.wav").write_bytes(b"left by a crash")
    (project.folder / "takes" / "notes.txt").write_text("not ours")
    project.close()
    again = open_project(project.folder)
    names = takes_on_disk(again)
    assert "00002-9.flac" not in names and "00002-9.source.wav" not in names and "notes.txt" in names
    assert take.performed is not None and take.performed["source"][6:] in names
    again.close()


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda folder: folder / "missing.wav", "perform.no_recording"),
        (lambda folder: folder, "voice.is_folder"),
        (lambda folder: _write(folder / "notes.wav", b"not audio at all"), "voice.unreadable"),
        (lambda folder: _audio(folder / "silent.wav", np.zeros(48000, np.float32)), "voice.silent"),
        (lambda folder: recording(folder / "short.wav", seconds=0.3), "source.too_short"),
        (lambda folder: _audio(folder / "empty.wav", np.zeros(0, np.float32)), "voice.empty"),
    ],
)
def test_a_bad_recording_is_refused_in_words_and_changes_nothing(book_copy, pipe, tmp_path, make, code):
    project = book_copy
    folder = tmp_path / "in"
    folder.mkdir()
    source = make(folder)
    state, files = stored_state(project.folder), takes_on_disk(project)
    segment = project.segments[4]
    takes, chosen = list(segment.takes), segment.chosen
    with pytest.raises((ProjectError, VoiceReferenceError)) as caught:
        perform_segment(project, pipe, segment, source)
    assert caught.value.code == code
    words = describe_error(caught.value, "cli")
    assert words != generic(code, caught.value.data) and "{" not in words
    assert segment.takes == takes and segment.chosen == chosen
    assert stored_state(project.folder) == state and takes_on_disk(project) == files


def test_a_cancelled_performance_stores_nothing(book_copy, pipe, tmp_path):
    project = book_copy
    state, files = stored_state(project.folder), takes_on_disk(project)
    with pytest.raises(SynthesisCancelled):
        perform_segment(project, pipe, project.segments[0], recording(tmp_path / "line.wav"), cancelled=lambda: True)
    assert stored_state(project.folder) == state and takes_on_disk(project) == files


def test_a_segment_without_a_voice_on_a_model_without_one_is_refused(book_copy, bundles, tmp_path):
    turbo = Pipeline.from_bundle(bundles["turbo"])
    with pytest.raises(ProjectError) as caught:
        perform_segment(book_copy, turbo, book_copy.segments[0], recording(tmp_path / "line.wav"))
    assert caught.value.code == "render.no_voice" and caught.value.data["segment"] == 1


def test_a_performed_take_goes_into_the_segments_voice(book_copy, pipe, tmp_path, voice_wav, other_voice_wav):
    from core.narration import resolve_voices

    project = book_copy
    resolve_voices(project, [str(voice_wav), str(other_voice_wav)], None, tmp_path)
    segment = project.segments[5]
    source = recording(tmp_path / "line.wav", 2.0)
    made = {}
    for name in ("voice", "other"):
        project.set_voice(segment, name)
        made[name] = perform_segment(project, pipe, segment, source, seed=1)
    one, _ = sf.read(project.path(made["voice"].file), dtype="float32")
    two, _ = sf.read(project.path(made["other"].file), dtype="float32")
    assert one.size == two.size and not np.allclose(one, two, atol=1e-3)  # the same line, in two voices
    assert project.chosen_take(segment) is made["other"] and made["voice"].key != project.render_key(segment)


def test_the_screen_judges_a_performed_take_without_tokens_rate_or_the_pipelines_fade():
    base = dict(
        seconds=9.0,
        speech_seconds=9.0,
        letters=20,
        pause_s=0.0,
        longest_silence_s=0.1,
        silence_at_s=1.0,
        noise_tail_s=0.0,
        after_pause_s=0.0,
        clipped_ms=0.0,
        end_db=25.0,  # ends mid-sound: a generated take would be cut off
        loudness_lufs=-20.0,
        tokens=0,
    )
    thresholds = Thresholds()
    generated = judge(TakeMeasures(**base), thresholds, 0.05, None)
    assert {r["code"] for r in generated.reasons} == {"too_long", "cut_off"}
    performed = TakeMeasures(**base, performed=True)
    assert judge(performed, thresholds, 0.05, None).reasons == []  # the person's pace, the recording's end
    context = BookContext()
    context.add("narrator", performed)
    assert context.rates == {} and context.loudness == [-20.0]  # a person's pace is not the voice's
    clipped = TakeMeasures(**{**base, "clipped_ms": 30.0}, performed=True)
    assert [r["code"] for r in judge(clipped, thresholds, None, None).reasons] == ["clipping"]
    measured = measure_take(np.zeros(2400, np.float32), "Some words here.", [], [], performed=True)
    assert measured.performed and measured.tokens == 0 and measured.loop_share == 0.0
    assert TakeMeasures.from_dict({**base}).performed is False  # measures stored before performing existed


def test_screening_again_keeps_a_performed_take_performed(book_copy, pipe, tmp_path):
    project = book_copy
    take = perform_segment(project, pipe, project.segments[6], recording(tmp_path / "line.wav", 2.0))
    take.screen = None
    project.save([project.segments[6]])
    report = check_takes(project, [7])
    assert report.checked == 1 and not report.flagged
    measures = measures_of(take)
    assert measures is not None and measures.performed and measures.tokens == 0


def test_a_render_with_retakes_leaves_a_flagged_performed_take_to_a_person(book_copy, pipe, tmp_path):
    project = book_copy
    take = perform_segment(project, pipe, project.segments[0], recording(tmp_path / "line.wav", 2.0))
    take.screen = {**(take.screen or {}), "reasons": [{"code": "loudness", "db": 9.0, "book": -20.0}]}
    model_take = project.chosen_take(project.segments[1])
    assert model_take is not None
    model_take.screen = {**(model_take.screen or {}), "reasons": [{"code": "loudness", "db": 9.0, "book": -20.0}]}
    todo = render_todo(project, None, TakePolicy(retakes=2))
    assert [project.number(s) for s in todo] == [2]


def test_a_schema_2_project_is_brought_up_to_date(book_copy, tmp_path):
    folder = tmp_path / "Old.cbproj"
    book_copy.close()
    shutil.copytree(book_copy.folder, folder)
    store_as_of(folder, 2)
    old = open_project(folder)
    assert all(t.performed is None for s in old.segments for t in s.takes)
    old.close()
    db = sqlite3.connect(folder / "project.sqlite")
    assert db.execute("PRAGMA user_version").fetchone()[0] == STORE_SCHEMA == 5
    assert db.execute("SELECT count(*) FROM takes WHERE performed IS NULL").fetchone()[0] > 0
    db.close()


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def _audio(path, samples):
    sf.write(path, samples, 24000)
    return path
