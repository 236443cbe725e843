"""int8 compute for 4-bit language models: a rewritten copy of the small graph file, weights read from the bundle."""

from __future__ import annotations

import json

import onnx
import pytest

from core.cli.main import main
from core.engine.model.q4_compute import INT8_LEVEL, int8_graph
from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from core.standin import make_standin

TEXT = "Hello there. How are you today?"


@pytest.fixture(scope="module")
def q4_bundle(tmp_path_factory):
    return make_standin(tmp_path_factory.mktemp("q4") / "original-q4", "original", precision="q4", seed=7)


def _levels(data: bytes) -> set:
    model = onnx.load_from_string(data)
    return {
        next((a.i for a in n.attribute if a.name == "accuracy_level"), 0)
        for n in model.graph.node
        if n.op_type == "MatMulNBits"
    }


def test_the_int8_copy_changes_only_the_accuracy_level_and_is_cached(q4_bundle, tmp_path):
    graph = q4_bundle / "onnx" / "language_model_q4.onnx"
    before = graph.read_bytes(), (graph.parent / "language_model_q4.onnx_data").stat().st_mtime_ns
    data = int8_graph(graph, tmp_path / "cache")
    assert _levels(data) == {INT8_LEVEL} and _levels(graph.read_bytes()) == {0}
    original = onnx.load(str(graph), load_external_data=False)
    rewritten = onnx.load_from_string(data)
    assert [n.op_type for n in rewritten.graph.node] == [n.op_type for n in original.graph.node]
    assert list(rewritten.graph.initializer) == list(original.graph.initializer)  # weights untouched
    assert (graph.read_bytes(), (graph.parent / "language_model_q4.onnx_data").stat().st_mtime_ns) == before
    cached = list((tmp_path / "cache").glob("*.onnx"))
    assert len(cached) == 1 and int8_graph(graph, tmp_path / "cache") == data
    assert int8_graph(q4_bundle / "onnx" / "conditional_decoder.onnx", tmp_path / "cache") is None  # no 4-bit


@pytest.mark.parametrize("cfg", [0.0, 0.5])
def test_int8_and_fp32_compute_run_and_are_reported(q4_bundle, voice_wav, cfg):
    results = {}
    for mode in ("int8", "fp32"):
        pipe = Pipeline.from_bundle(q4_bundle, RuntimeOptions(provider="cpu", precision="q4", q4_compute=mode))
        assert pipe.capabilities.q4_compute == mode
        results[mode] = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(greedy=True, cfg_weight=cfg)).speech_tokens
    # The stand-in decides with exact control channels, so int8 rounding of the random layers changes nothing.
    assert results["int8"] == results["fp32"] and len(results["int8"]) > 10


def test_a_model_without_4bit_weights_reports_no_q4_compute(bundles):
    assert Pipeline.from_bundle(bundles["turbo"], RuntimeOptions(provider="cpu")).capabilities.q4_compute is None


def test_the_cli_takes_and_reports_q4_compute(capsys, q4_bundle, voice_wav, tmp_path):
    for mode in ("int8", "fp32"):
        code = main(
            [
                "synth",
                "--bundle",
                str(q4_bundle),
                "--precision",
                "q4",
                "--q4-compute",
                mode,
                "--provider",
                "cpu",
                "--text",
                "Hi there.",
                "--voice",
                str(voice_wav),
                "--out",
                str(tmp_path / "o.wav"),
                "--json",
            ]
        )
        out = capsys.readouterr().out
        assert code == 0 and json.loads(out)["q4_compute"] == mode
    assert main(["info", str(q4_bundle), "--precision", "q4", "--provider", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["q4_compute"] == "int8"
    assert main(["synth", "--bundle", str(q4_bundle), "--q4-compute", "int4", "--text", "x", "--out", "o.wav"]) == 2
