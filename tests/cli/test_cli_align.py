"""``python -m core align``: a recording's words with their times, as lines or JSON; a file that is not audio, or a
recording that does not say its text, exits 2 and says why (the words that were heard are still printed)."""

from __future__ import annotations

import numpy as np
import soundfile as sf

from core.engine import split_words
from tests.alignment_support import RATE, SENTENCES, needs_espeak, recording
from tests.cli.test_cli_project_edit import run_cli

TEXT = SENTENCES["en"][2]


def _wav(tmp_path, text=TEXT, language="en"):
    audio, truth = recording(split_words(text), language)
    path = tmp_path / "take.wav"
    sf.write(path, audio, RATE)
    return path, truth


@needs_espeak
def test_align_prints_each_word_with_its_times_and_a_summary(capsys, tmp_path):
    wav, truth = _wav(tmp_path)
    code, data, err = run_cli(capsys, "align", wav, "--text", TEXT, "--json")
    assert code == 0, err
    assert [w["word"] for w in data["words"]] == [word for word, *_ in truth]
    assert set(data) == {"words", "duration", "language", "aligner", "placed"}
    assert data["placed"] == 1.0 and data["aligner"] == "pocketsphinx" and data["language"] == "en"
    assert abs(data["words"][0]["start"] - truth[0][1]) < 0.05
    text_file = tmp_path / "take.txt"
    text_file.write_text(TEXT, encoding="utf-8")
    code, out, err = run_cli(capsys, "align", wav, "--text-file", text_file)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split("  ")[-1] == "My" and "–" in lines[0]
    assert lines[-1].startswith(f"{len(truth)} of {len(truth)} words placed (100%)")


@needs_espeak
def test_spoken_form_is_timed_on_the_written_words(capsys, tmp_path):
    wav, _ = _wav(tmp_path, "chapter twelve begins")
    code, data, err = run_cli(
        capsys, "align", wav, "--text", "Chapter 12 begins", "--spoken", "chapter twelve begins", "--json"
    )
    assert code == 0, err
    assert [w["word"] for w in data["words"]] == ["Chapter", "12", "begins"]


@needs_espeak
def test_a_recording_of_other_words_exits_2_with_the_share_placed(capsys, tmp_path):
    wav, _ = _wav(tmp_path, SENTENCES["en"][0])
    code, out, err = run_cli(capsys, "align", wav, "--text", SENTENCES["en"][1], "--language", "en")
    assert code == 2
    assert "does not match its text" in err and "%) were heard in it" in err
    placed, total = out.splitlines()[-1].split(" words placed")[0].split(" of ")
    assert int(total) == 16 and int(placed) < 8  # the words that were heard are still printed (measured: 1)
    assert len(out.splitlines()) == int(placed) + 1
    hiss = tmp_path / "hiss.wav"
    sf.write(hiss, np.random.default_rng(1).standard_normal(2 * RATE).astype(np.float32) * 0.01, RATE)
    code, out, err = run_cli(capsys, "align", hiss, "--text", "extraordinary circumstances notwithstanding")
    assert code == 2 and out == "" and "Not one of the 3 words of the text was heard in the recording (2 s)" in err


def test_a_file_that_is_not_audio_exits_2(capsys, tmp_path):
    fake = tmp_path / "notes.wav"
    fake.write_text("these are not samples", encoding="utf-8")
    code, out, err = run_cli(capsys, "align", fake, "--text", "hello")
    assert code == 2 and out == ""
    assert "is not an audio file that can be read" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "align", tmp_path / "missing.wav", "--text", "hello")
    assert code == 2 and "is not an audio file" in err
    code, _, err = run_cli(capsys, "align", fake, "--text-file", tmp_path / "missing.txt")
    assert code == 2 and "Cannot read" in err
    code, _, err = run_cli(capsys, "align", fake)
    assert code == 2 and "--text" in err
