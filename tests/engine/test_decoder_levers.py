"""The decoder's speed levers: the int8 decoder file (made once, reused, never written into a read-only model folder),
the voice prompt's best window, the output-difference metric and the options that choose them."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import onnx
import pytest

import core.engine.model.decoder_q8 as decoder_q8
from core.bench.output_snr import SNR_CAP, log_mel_snr_db, waveform_snr_db
from core.cli.main import main
from core.engine import InvalidOptions, Pipeline, RuntimeOptions, SynthesisOptions
from core.engine.caches.conditioning import Conditioning, best_prompt_start
from core.engine.model.decoder_q8 import MADE_NAME, SHIPPED_NAME, DecoderQ8
from core.engine.model.model_parts import DECODER_Q8_PROGRESS
from core.standin import make_standin

RATE = 24000


@pytest.fixture
def original(tmp_path):
    return make_standin(tmp_path / "original", "original", seed=7)


def _runtime(**changes) -> RuntimeOptions:
    return RuntimeOptions(provider="cpu", **changes)


def _op_types(path) -> set[str]:
    return {n.op_type for n in onnx.load(str(path), load_external_data=False).graph.node}


def test_the_int8_decoder_is_made_once_beside_the_model_and_reused(original):
    progress: list[tuple[str, float | None]] = []
    pipe = Pipeline.from_bundle(
        original, _runtime(decoder_precision="q8"), progress=lambda g, s: progress.append((g, s))
    )
    made = original / "onnx" / MADE_NAME
    assert pipe.files.graphs["conditional_decoder"] == made and pipe.files.precisions["conditional_decoder"] == "q8"
    assert "MatMulInteger" in _op_types(made) and "MatMulInteger" not in _op_types(
        original / "onnx" / "conditional_decoder.onnx"
    )
    assert [g for g, s in progress if g == DECODER_Q8_PROGRESS] == [DECODER_Q8_PROGRESS] * 2  # started, done
    assert pipe.synthesize("Hello there.", voice=None).audio.size > 0
    stamp = made.stat().st_mtime_ns
    progress.clear()
    again = Pipeline.from_bundle(
        original, _runtime(decoder_precision="q8"), progress=lambda g, s: progress.append((g, s))
    )
    assert again.files.graphs["conditional_decoder"] == made and made.stat().st_mtime_ns == stamp
    assert DECODER_Q8_PROGRESS not in {g for g, _ in progress}  # nothing made the second time


def test_a_changed_source_decoder_makes_the_int8_file_again(original, tmp_path):
    cache = tmp_path / "cache"
    first = DecoderQ8(original / "onnx" / "conditional_decoder.onnx", cache)
    first.make()
    assert DecoderQ8(original / "onnx" / "conditional_decoder.onnx", cache).ready
    source = original / "onnx" / "conditional_decoder.onnx"
    source.write_bytes(source.read_bytes() + b"")  # same bytes, a new modification time

    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10**9))
    assert not DecoderQ8(source, cache).ready


def test_a_read_only_model_folder_gets_its_int8_decoder_in_the_cache(original, tmp_path, monkeypatch):
    folder = original / "onnx"
    folder.chmod(0o555)  # marked read-only: left alone even by a root process (see decoder_q8._writable)
    try:
        cache = tmp_path / "xdg-cache"
        monkeypatch.setattr("core.engine.model.model_parts.decoder_q8_cache_dir", lambda: cache)
        pipe = Pipeline.from_bundle(original, _runtime(decoder_precision="q8"))
        path = pipe.files.graphs["conditional_decoder"]
        assert path.is_file() and path.is_relative_to(cache) and not (folder / MADE_NAME).exists()
        stamp = path.stat().st_mtime_ns
        again = Pipeline.from_bundle(original, _runtime(decoder_precision="q8"))
        assert again.files.graphs["conditional_decoder"] == path and path.stat().st_mtime_ns == stamp
    finally:
        folder.chmod(0o755)


def test_making_the_int8_decoder_writes_nothing_into_the_model_folder(original, tmp_path, monkeypatch):
    """onnxruntime's quantizer, given a path, writes a shape-inferred copy beside it: a user without write access to
    the model folder got no int8 decoder at all (the file could not be written, so the float32 one ran)."""
    written = []
    infer = onnx.shape_inference.infer_shapes_path

    def spy(model_path, output_path="", *args, **kwargs):
        written.append(os.path.abspath(output_path or model_path))
        return infer(model_path, output_path, *args, **kwargs)

    monkeypatch.setattr(onnx.shape_inference, "infer_shapes_path", spy)
    folder = original / "onnx"
    before = sorted(p.name for p in folder.iterdir())
    target = tmp_path / "made" / MADE_NAME
    target.parent.mkdir()
    decoder_q8.quantize(str(folder / "conditional_decoder.onnx"), str(target))
    assert "MatMulInteger" in _op_types(target)
    assert written and not any(os.path.commonpath([w, str(folder)]) == str(folder) for w in written), written
    assert sorted(p.name for p in folder.iterdir()) == before


def test_a_failed_write_beside_the_model_falls_back_to_the_cache(original, tmp_path, monkeypatch):
    real = decoder_q8.DecoderQ8._make_at

    def refuse_beside(self, target):
        if target.parent == original / "onnx":
            raise PermissionError("read-only file system")
        return real(self, target)

    monkeypatch.setattr(decoder_q8.DecoderQ8, "_make_at", refuse_beside)
    q8 = DecoderQ8(original / "onnx" / "conditional_decoder.onnx", tmp_path / "cache")
    assert q8.make().is_relative_to(tmp_path / "cache") and q8.ready


def test_a_decoder_without_steps_to_cut_is_not_parsed_at_load(bundles, tmp_path, monkeypatch):
    """The int8 file holds its weights inline (260 MB for Turbo's): whether there are flow steps to cut is read from
    the float32 source's small graph, so a Turbo start does not parse the whole int8 file to find none."""
    from core.engine.model.flow_steps import exported_steps
    from core.engine.model.model_parts import decoder_graph_bytes

    source = bundles["turbo"] / "onnx" / "conditional_decoder.onnx"
    assert exported_steps(source) < 3  # no unrolled solver of its own
    made = tmp_path / MADE_NAME
    shutil.copy(source, made)
    opened = []
    real_load = onnx.load
    monkeypatch.setattr(onnx, "load", lambda path, *a, **k: opened.append(str(path)) or real_load(path, *a, **k))
    assert decoder_graph_bytes(made, 5, source=source, blocked=True) is None  # as a CPU start asks
    assert opened == [str(source)]


def test_a_shipped_quantized_decoder_is_used_as_it_is(original, tmp_path):
    folder = original / "onnx"
    shutil.copy(folder / "conditional_decoder.onnx", folder / SHIPPED_NAME)
    q8 = DecoderQ8(folder / "conditional_decoder.onnx", tmp_path / "cache")
    assert q8.ready and q8.path == folder / SHIPPED_NAME and not (tmp_path / "cache").exists()


def test_auto_takes_the_int8_decoder_for_every_variant(bundles, tmp_path):
    original = make_standin(tmp_path / "o", "original", seed=7)
    turbo = make_standin(tmp_path / "t", "turbo", seed=7)
    assert Pipeline.from_bundle(original, _runtime()).files.precisions["conditional_decoder"] == "q8"
    assert Pipeline.from_bundle(turbo, _runtime()).files.precisions["conditional_decoder"] == "q8"
    assert Pipeline.from_bundle(original, _runtime(decoder_precision="fp32")).files.graphs[
        "conditional_decoder"
    ].name == ("conditional_decoder.onnx")


def test_decoder_options_are_validated_and_need_a_reload():
    with pytest.raises(InvalidOptions) as err:
        RuntimeOptions(decoder_precision="int4")
    assert err.value.code == "options.invalid_choice" and err.value.data["field"] == "decoder_precision"
    with pytest.raises(InvalidOptions):
        RuntimeOptions(decoder_prompt_window="middle")
    assert RuntimeOptions(decoder_precision="q8").session_changes(RuntimeOptions()) == ["decoder_precision"]
    assert RuntimeOptions(decoder_prompt_window="first").session_changes(RuntimeOptions()) == []
    for steps in (0, 11):
        with pytest.raises(InvalidOptions) as err:
            RuntimeOptions(decoder_flow_steps=steps)
        assert err.value.code == "options.setting_range" and err.value.data["field"] == "decoder_flow_steps"
    assert RuntimeOptions(decoder_flow_steps=7).session_changes(RuntimeOptions()) == ["decoder_flow_steps"]


def test_the_cli_passes_the_decoder_switches(original, tmp_path, capsys):
    out = tmp_path / "hello.wav"
    args = ["synth", "--bundle", str(original), "--text", "Hello.", "--out", str(out), "--provider", "cpu", "--json"]
    switches = ["--decoder-precision", "fp32", "--decoder-flow-steps", "5", "--decoder-prompt-window", "first"]
    assert main([*args, *switches]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["decoder_precision"] == "fp32" and report["decoder_prompt_window"] == "first" and out.is_file()
    assert main([*args, "--decoder-flow-steps", "0"]) != 0  # out of range: refused


# --- the voice prompt's best window ---------------------------------------------------------------------------------


def _conditioning(mel: np.ndarray) -> Conditioning:
    tokens = mel.shape[0] // 2
    return Conditioning(
        audio_features=np.zeros((1, 3, 4), np.float32),
        audio_tokens=np.arange(tokens, dtype=np.int64)[None, :],
        speaker_embeddings=np.zeros((1, 192), np.float32),
        speaker_features=mel[None].astype(np.float32),
    )


def test_the_best_window_falls_on_speech_not_on_the_leading_silence():
    silence, speech = np.full((100, 80), -11.5), np.full((200, 80), -2.0)  # 2 s of silence, then 4 s of speech
    speech[::7] = -6.0  # some variation inside the speech
    mel = np.concatenate([silence, speech])
    cond = _conditioning(mel)
    short = cond.with_decoder_prompt(3.0)
    assert short.prompt_tokens == 75 and short.speaker_features.shape[1] == 150
    start = int(short.audio_tokens[0, 0])
    assert start >= 50  # after the silence
    np.testing.assert_array_equal(short.speaker_features[0], mel[2 * start : 2 * start + 150])  # tokens and mel agree
    first = cond.with_decoder_prompt(3.0, "first")
    assert int(first.audio_tokens[0, 0]) == 0 and first.speaker_features.shape[1] == 150
    assert cond.with_decoder_prompt(10.0) is cond  # shorter than the cut: untouched


def test_the_best_window_of_an_even_reference_is_its_start_and_a_loud_middle_wins():
    even = np.full((300, 80), -3.0)
    assert best_prompt_start(even, 75, 150) == 0
    loud = even.copy()
    loud[160:260] = 0.0  # tokens 80..129 louder
    start = best_prompt_start(loud, 50, 150)
    assert start == 80
    assert best_prompt_start(loud, 150, 150) == 0 and best_prompt_start(loud, 200, 150) == 0


# --- the output difference -----------------------------------------------------------------------------------------


def test_waveform_snr_of_known_signals():
    t = np.arange(RATE) / RATE
    clean = np.sin(2 * np.pi * 220 * t)
    noise = np.random.default_rng(0).standard_normal(RATE)
    noise *= np.sqrt(np.sum(clean**2) / np.sum(noise**2)) * 10 ** (-20 / 20)  # exactly 20 dB below the sine
    assert waveform_snr_db(clean, clean) == SNR_CAP
    assert waveform_snr_db(clean, clean + noise) == pytest.approx(20.0, abs=1e-6)
    assert waveform_snr_db(clean, 0.5 * clean) == pytest.approx(6.02, abs=0.01)  # half the amplitude: error = half
    assert waveform_snr_db(clean, np.concatenate([clean, noise])) == SNR_CAP  # compared over the common length


def test_log_mel_snr_ranks_differences_and_ignores_a_phase_flip():
    t = np.arange(RATE) / RATE
    rng = np.random.default_rng(1)
    clean = 0.1 * rng.standard_normal(RATE) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))  # broadband, like speech
    small, large = (clean + level * rng.standard_normal(RATE) for level in (0.001, 0.03))
    assert log_mel_snr_db(clean, clean, RATE) == SNR_CAP
    assert log_mel_snr_db(clean, small, RATE) > log_mel_snr_db(clean, large, RATE) + 20 > 20
    assert log_mel_snr_db(clean, -clean, RATE) == SNR_CAP  # the same spectrum...
    assert waveform_snr_db(clean, -clean) < 0  # ...that the waveform figure calls the opposite signal


# --- the bench ------------------------------------------------------------------------------------------------------


def test_bench_reports_the_decoder_output_snr_and_the_levers(original, tmp_path, capsys):
    out = tmp_path / "bench.json"
    args = ["bench", "--bundle", str(original), "--quick", "--provider", "cpu", "--json", str(out)]
    assert main([*args, "--only", "decoder,decoder_levers"]) == 0, capsys.readouterr()
    decoder = json.loads(out.read_text())["decoder"]
    assert 0 < decoder["output_snr_db"] <= SNR_CAP and 0 < decoder["output_log_mel_snr_db"] <= SNR_CAP
    assert decoder["output_settings"]["decoder_precision"] == "q8" and decoder["fixed_ms"] == decoder["fixed_ms"]
    rows = {row["lever"]: row for row in decoder["levers"]["rows"]}
    assert rows["fp32, 10 steps, full prompt (reference)"]["waveform_snr_db"] == SNR_CAP
    assert rows["q8"]["waveform_snr_db"] < SNR_CAP and "fp32, 1 thread" in rows and "fp32, 5 flow steps" in rows
    assert all(row["ms"] > 0 and row["ratio"] > 0 for row in rows.values())
    assert main([*args, "--only", "decoder"]) == 0  # the levers only when named
    assert "levers" not in json.loads(out.read_text())["decoder"]


def test_a_failed_quantizer_leaves_the_float32_decoder_in_use(original, monkeypatch):
    def fail(self):
        raise decoder_q8.DecoderQ8Failed("the quantizer ended with exit code 1")

    monkeypatch.setattr(decoder_q8.DecoderQ8, "make", fail)
    pipe = Pipeline.from_bundle(original, _runtime(decoder_precision="q8"))
    assert pipe.synthesize("Hello there.").audio.size > 0 and not (original / "onnx" / MADE_NAME).exists()


def test_fixed_noise_makes_two_sessions_draw_the_same_noise():
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from core.engine.model.fixed_noise import with_fixed_noise

    graph = helper.make_graph(
        [helper.make_node("RandomNormalLike", ["x"], ["y"], name="flow_noise", dtype=TensorProto.FLOAT)],
        "noise",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    assert with_fixed_noise(model) == 1
    x = {"x": np.zeros(64, np.float32)}
    first, second = (
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]) for _ in range(2)
    )
    a = first.run(None, x)[0]
    np.testing.assert_array_equal(a, second.run(None, x)[0])  # the same noise in both sessions...
    assert not np.array_equal(a, first.run(None, x)[0])  # ...and new noise on the next call, as the model has


def test_int8_streaming_stays_close_to_one_shot(bundles):
    """The int8 decoder quantizes each call's activations with that call's own scale: a streamed sentence (windows
    with context) is no longer bit-identical to one-shot, but stays far closer than audible."""
    options = SynthesisOptions(seed=9)
    text = "The quick brown fox jumps over the lazy dog, and then it runs far away."
    runtime = {"stream_plan": "fixed", "first_chunk_tokens": 7, "chunk_tokens": 11}
    a = Pipeline.from_bundle(bundles["original"], _runtime(stream=True, **runtime)).synthesize(text, None, options)
    b = Pipeline.from_bundle(bundles["original"], _runtime(stream=False)).synthesize(text, None, options)
    assert a.speech_tokens == b.speech_tokens and a.audio.size == b.audio.size
    assert waveform_snr_db(b.audio, a.audio) > 40


def test_a_scratch_folder_left_by_a_dead_maker_is_removed_and_a_fresh_one_kept(original, tmp_path):
    folder = original / "onnx"
    stale, fresh = folder / ".conditional_decoder_q8.abc.work", folder / ".conditional_decoder_q8.def.work"
    for scratch in (stale, fresh):
        scratch.mkdir()
        (scratch / MADE_NAME).write_bytes(b"half a graph")
    os.utime(stale, (os.stat(stale).st_atime - 7200, os.stat(stale).st_mtime - 7200))
    DecoderQ8(folder / "conditional_decoder.onnx", tmp_path / "cache").make()
    assert not stale.exists() and fresh.exists()  # another process may still be making the file in the fresh one
