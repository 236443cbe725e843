"""``python -m core``: JSON fields, exit codes, and a clear one-line message for every bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf

from core.cli.main import main
from tests.conftest import deny_reading, tone


def run_cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def synth_json(capsys, bundle, tmp_path, *extra):
    code, out, err = run_cli(capsys, "synth", "--bundle", bundle, "--out", tmp_path / "o.wav", "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_synth_json_reports_the_documented_fields(capsys, bundles, voice_wav, tmp_path):
    data = synth_json(
        capsys,
        bundles["turbo"],
        tmp_path,
        "--text",
        "Hello there.",
        "--voice",
        voice_wav,
        "--seed",
        4,
        "--no-trim-silence",
    )
    for key in ("variant", "providers", "kv_chaining", "sample_rate", "audio_seconds", "speech_tokens", "timings"):
        assert key in data
    for key in ("prefill_ms", "first_token_ms", "step_ms_median", "decoder_ms", "total_ms", "rtf"):
        assert key in data["timings"]
    assert data["variant"] == "turbo" and data["sample_rate"] == 24000 and data["kv_chaining"] is True
    assert set(data["providers"]) == {"speech_encoder", "embed_tokens", "language_model", "conditional_decoder"}
    audio, rate = sf.read(tmp_path / "o.wav")
    assert rate == 24000 and audio.ndim == 1
    assert audio.size == 960 * (len(data["speech_tokens"]) + 3)
    assert abs(data["audio_seconds"] - audio.size / 24000) < 1e-3


def test_no_kv_chaining_flag_gives_the_same_tokens(capsys, bundles, tmp_path):
    args = ("--text", "Testing one two.", "--greedy")
    chained = synth_json(capsys, bundles["multilingual"], tmp_path, *args, "--language", "en")
    plain = synth_json(capsys, bundles["multilingual"], tmp_path, *args, "--language", "en", "--no-kv-chaining")
    assert plain["kv_chaining"] is False
    assert chained["speech_tokens"] == plain["speech_tokens"]


def test_text_file_and_odd_characters_are_spoken(capsys, bundles, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("Hello 👋 world\x07! Ça va? Привет. 你好。 [laugh] ok\n\nNext paragraph.", encoding="utf-8")
    data = synth_json(capsys, bundles["original"], tmp_path, "--text-file", text, "--seed", 1)
    assert data["audio_seconds"] > 1


def test_info_describes_the_bundle(capsys, bundles):
    code, out, _ = run_cli(capsys, "info", bundles["original"])
    info = json.loads(out)
    assert code == 0
    assert info["variant"] == "original" and info["layers"] == 2 and info["kv_inputs"] == 4
    assert info["graphs"]["language_model"]["precision"] == "fp32"
    assert info["dtypes"]["kv"] == "float32" and info["supports_cfg"] is True


def test_make_standin_command(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "make-standin", tmp_path / "b", "--variant", "multilingual", "--seed", 3)
    assert code == 0 and "multilingual" in out
    assert (tmp_path / "b" / "onnx" / "language_model.onnx").is_file()


@pytest.mark.parametrize(
    "case",
    [
        "missing_graph",
        "missing_data",
        "truncated_data",
        "garbled_graph",
        "no_tokenizer",
        "garbled_tokenizer",
        "wrong_variant",
        "not_a_folder",
    ],
)
def test_bad_bundles_exit_2_with_a_message_naming_the_file(capsys, broken, tmp_path, case):
    bundle, expected = broken[case]
    code, out, err = run_cli(capsys, "synth", "--bundle", bundle, "--text", "Hi there.", "--out", tmp_path / "o.wav")
    assert code == 2, err
    assert expected in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "o.wav").exists()


def _voice(tmp_path, name, data=None, rate=24000, subtype=None, raw=None):
    path = tmp_path / name
    if raw is not None:
        path.write_bytes(raw)
    else:
        sf.write(path, data, rate, subtype=subtype)
    return path


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [
        ("corrupt.wav", lambda p: _voice(p, "corrupt.wav", raw=b"RIFF\x00\x00garbage" * 10), "not a readable audio"),
        ("empty.wav", lambda p: _voice(p, "empty.wav", np.zeros((0, 1), np.float32)), "contains no audio"),
        ("silent.wav", lambda p: _voice(p, "silent.wav", np.zeros(24000 * 3, np.float32)), "is silent"),
        ("short.wav", lambda p: _voice(p, "short.wav", tone(0.3)), "only 0.3 s long"),
        ("text.wav", lambda p: _voice(p, "text.wav", raw=b"just some text, not audio\n"), "not a readable audio"),
        ("missing.wav", lambda p: p / "missing.wav", "no longer exists"),
        ("folder", lambda p: p, "is a folder"),
    ],
)
def test_bad_reference_audio_exits_2(capsys, bundles, tmp_path, name, make, expected):
    voice = make(tmp_path)
    code, _, err = run_cli(
        capsys, "synth", "--bundle", bundles["turbo"], "--text", "Hi.", "--voice", voice, "--out", tmp_path / "o.wav"
    )
    assert code == 2 and expected in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--text", ""), "nothing to say"),
        (("--text", "   \n\t "), "nothing to say"),
        (("--text", "?!... --- !!!"), "nothing to say"),
        (("--text", "Hi.", "--temperature", "0"), "temperature"),
        (("--text", "Hi.", "--top-p", "1.5"), "top_p"),
        (("--text", "Hi.", "--language", "xx"), "not supported"),
        (("--text", "Hi.", "--threads", "0"), "threads"),
        (("--text", "Hi.", "--out", "/nonexistent-dir/o.wav"), "does not exist"),
        (("--text", "Hi.", "--out", "o.mp4"), ".wav, .flac, .ogg, .opus, .mp3"),
        (("--text-file", "/nonexistent.txt"), "Cannot read"),
        (("--text", "Hi.", "--precision", "q9"), "invalid choice"),
    ],
)
def test_bad_text_and_options_exit_2(capsys, bundles, tmp_path, args, expected):
    base = ["synth", "--bundle", bundles["multilingual"], "--out", tmp_path / "o.wav"]
    if "--out" in args:
        base = base[:3]
    code, _, err = run_cli(capsys, *base, *args)
    assert code == 2 and expected in err, err


def test_turbo_without_voice_and_english_only_models(capsys, bundles, tmp_path):
    out = tmp_path / "o.wav"
    code, _, err = run_cli(capsys, "synth", "--bundle", bundles["turbo"], "--text", "Hi.", "--out", out)
    assert code == 2 and "no default voice" in err
    code, _, err = run_cli(
        capsys, "synth", "--bundle", bundles["original"], "--text", "Hi.", "--language", "fr", "--out", out
    )
    assert code == 2 and "English only" in err


def test_internal_errors_exit_1(capsys, bundles, tmp_path, monkeypatch):
    from core.engine.pipeline import Pipeline

    def boom(*_a, **_k):  # fails after the first chunk has been written
        yield SimpleNamespace(samples=np.full(2400, 0.1, np.float32))
        raise RuntimeError("kaboom")

    monkeypatch.setattr(Pipeline, "stream", boom)
    code, _, err = run_cli(
        capsys, "synth", "--bundle", bundles["original"], "--text", "Hi.", "--out", tmp_path / "o.wav"
    )
    assert code == 1 and "internal error" in err and "kaboom" in err
    assert not (tmp_path / "o.wav").exists() and not list(tmp_path.glob(".*partial*"))


def test_real_process_exit_code_and_no_traceback(bundles, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "core",
            "synth",
            "--bundle",
            str(bundles["turbo"]),
            "--text",
            "Hi.",
            "--out",
            str(tmp_path / "o.wav"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("error: This model has no default voice")
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize(
    "text",
    [
        "Hello 👋 world! Ça va? Привет, мир. 你好。 مرحبا. 🎉🎉",
        "Control\x00 characters\x07 and\x1b[31m escapes\u200b inside\ufeff the text.",
        "Unknown tags [whisper] [sigh:long] <break/> are [laugh] dropped or kept.",
    ],
)
def test_odd_text_is_spoken(capsys, bundles, tmp_path, text):
    voice = _voice(tmp_path, "v.wav", tone(6))
    data = synth_json(capsys, bundles["turbo"], tmp_path, "--text", text, "--voice", voice, "--seed", 2)
    assert data["audio_seconds"] > 0.5 and data["speech_tokens"]


def test_a_100000_character_text_is_spoken_sentence_by_sentence(capsys, bundles, tmp_path):
    text = " ".join(f"This is sentence number {i} of a very long chapter, read aloud." for i in range(1700))[:100_000]
    path = tmp_path / "chapter.txt"
    path.write_text(text, encoding="utf-8")
    data = synth_json(
        capsys, bundles["original"], tmp_path, "--text-file", path, "--max-new-tokens", 2, "--no-stream", "--seed", 1
    )
    assert len(data["chunks"]) > 1500 and data["audio_seconds"] > 200
    assert sf.info(tmp_path / "o.wav").frames == round(data["audio_seconds"] * 24000)


@pytest.mark.parametrize(
    ("name", "data", "rate", "subtype", "warning"),
    [
        ("ten_minutes.flac", tone(600, 16000), 16000, None, "first 30 s of the 600 s"),
        ("stereo48k.wav", tone(6, 48000, channels=2), 48000, None, None),
        ("phone.wav", tone(6, 8000), 8000, "PCM_U8", "8000 Hz"),
    ],
)
def test_unusual_references_are_used_with_a_warning(capsys, bundles, tmp_path, name, data, rate, subtype, warning):
    voice = _voice(tmp_path, name, data, rate, subtype)
    result = synth_json(capsys, bundles["turbo"], tmp_path, "--text", "Hi there.", "--voice", voice, "--seed", 1)
    assert result["audio_seconds"] > 0
    assert (warning is None and not result["warnings"]) or any(warning in w for w in result["warnings"])


def test_an_unreadable_reference_exits_2(capsys, bundles, tmp_path, monkeypatch):
    voice = _voice(tmp_path, "locked.wav", tone(3))
    deny_reading(monkeypatch, voice)
    code, _, err = run_cli(
        capsys, "synth", "--bundle", bundles["turbo"], "--text", "Hi.", "--voice", voice, "--out", tmp_path / "o.wav"
    )
    assert code == 2 and "locked.wav: permission denied" in err and not (tmp_path / "o.wav").exists()


def test_playback_policy_flag_reaches_the_plan_and_is_checked(capsys, bundles, voice_wav, tmp_path):
    args = ("--text", "Hello there. A second sentence.", "--voice", voice_wav, "--seed", 4)
    fast = synth_json(capsys, bundles["turbo"], tmp_path, *args, "--playback-policy", "fast")
    smooth = synth_json(capsys, bundles["turbo"], tmp_path, *args, "--playback-policy", "smooth")
    assert fast["playback_policy"] == "fast" and fast["forecast"]["policy"] == "fast"
    assert smooth["playback_policy"] == "smooth" and smooth["forecast"]["requested"] == "smooth"
    assert fast["speech_tokens"] == smooth["speech_tokens"]  # when playback starts changes no sound
    assert smooth["timings"]["play_start_ms"] >= smooth["timings"]["ttfa_ms"]
    code, _out, err = run_cli(
        capsys, "synth", "--bundle", bundles["turbo"], *args, "--out", tmp_path / "o.wav", "--playback-policy", "soon"
    )
    assert code == 2 and "--playback-policy" in err
