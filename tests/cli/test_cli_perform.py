"""``project DIR --perform N FILE``: a recording of segment N re-voiced into its voice and stored as its take (its
JSON, progress on stderr, the list and the dump marking it performed, bad files refused in words, exit codes)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from core.narration import open_project
from core.standin import synthetic_voice
from tests.export_support import run_cli
from tests.narration_support import stored_state


def line(path, seconds=2.0, rate=48000):
    sf.write(path, synthetic_voice(seconds * rate / 24000, seed=4, pitch_hz=160), rate)
    return path


def test_perform_stores_the_take_and_says_so_in_json(book_copy, bundles, tmp_path):
    folder, bundle = book_copy.folder, bundles["original"]
    source = line(tmp_path / "my line.wav")
    code, out, err = run_cli("project", folder, "--perform", "2", source, "--bundle", bundle, "--seed", "9", "--json")
    assert code == 0, err
    assert out["perform"] == {
        "segment": 2,
        "take": 2,
        "file": "takes/00002-2.flac",
        "source": "takes/00002-2.source.wav",
        "recording": str(source),
        "seconds": 2.0,
        "seed": 9,
        "voice": None,
        "flagged": False,
        "warnings": [],
    }
    segment = out["segments"][1]
    assert segment["performed"] is True and segment["chosen"] == 2 and segment["status"] == "rendered"
    assert not any(s["performed"] for n, s in enumerate(out["segments"]) if n != 1)
    assert "re-voicing segment 2: 2.0 of 2.0 s" in err  # progress on stderr
    project = open_project(folder)
    take = project.segments[1].takes[1]
    assert take.performed == {"source": "takes/00002-2.source.wav", "name": "my line.wav"} and take.tokens == []
    assert project.bundle == str(bundle.resolve())  # remembered, as a render remembers it
    project.close()

    code, text, _ = run_cli("project", folder, "--list")
    assert [row.split()[0] for row in text.splitlines() if "(performed)" in row] == ["2"]
    code, out, _ = run_cli("project", folder, "--list", "--json")
    assert [s["number"] for s in out["segments"] if s["performed"]] == [2]
    dump = tmp_path / "dump.json"
    assert run_cli("project", folder, "--dump-json", dump)[0] == 0
    takes = json.loads(dump.read_text())["segments"][1]["takes"]
    assert [t["performed"] for t in takes] == [None, {"name": "my line.wav", "source": "takes/00002-2.source.wav"}]

    code, text, _ = run_cli("project", folder, "--perform", "2", source)  # the remembered model; words, not JSON
    assert code == 0 and "segment 2: take 3 performed from my line.wav (2.0 s) in the model's voice" in text
    assert "takes/00002-3.source.wav" in text


def test_perform_exports_the_performed_take(book_copy, bundles, tmp_path):
    folder = book_copy.folder
    run_cli("project", folder, "--perform", "1", line(tmp_path / "a.flac", 3.0), "--bundle", bundles["original"])
    out_file = tmp_path / "book.wav"
    code, out, _ = run_cli("project", folder, "--export", "--out", out_file, "--json")
    assert code == 0
    first = out["segments"][0]
    assert first["performed"] and first["end"] - first["start"] == pytest.approx(3.0, abs=0.02)
    assert sf.info(out_file).frames > 3.0 * 24000


def test_a_bad_recording_or_number_is_refused_in_words_and_changes_nothing(book_copy, bundles, tmp_path):
    folder, bundle = book_copy.folder, bundles["original"]
    state = stored_state(folder)
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros(48000, np.float32), 24000)
    cases = [
        (("--perform", "2", tmp_path / "nope.wav"), "nope.wav does not exist: give the recording of segment 2"),
        (("--perform", "2", silent), "silent.wav is silent"),
        (("--perform", "99", line(tmp_path / "ok.wav")), "99"),
        (("--perform", "x", line(tmp_path / "ok.wav")), "'x' is not a segment number"),
    ]
    for argv, words in cases:
        code, out, err = run_cli("project", folder, *argv, "--bundle", bundle, "--json")
        assert code == 2 and words in err and not out, (argv, err)
        assert "Traceback" not in err
    assert stored_state(folder) == state
    code, _, err = run_cli("project", folder, "--perform", "1")
    assert code == 2 and "--perform" in err  # argparse: N and FILE


def test_perform_without_a_model_asks_for_one(book_copy, tmp_path):
    code, _, err = run_cli("project", book_copy.folder, "--perform", "1", line(tmp_path / "a.wav"))
    assert code == 2 and "--bundle" in err
