"""The speech decoder's 1-D convolutions as 2-D ones (onnxruntime's blocked-layout kernel on the CPU): the same
outputs, the kernel really chosen, the exported graph given back exactly, and where the rewrite is made (the int8
file, in memory for the others) and not made (a start that need not parse the int8 file)."""

from __future__ import annotations

import json
import platform
import shutil

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from core.cli.main import main
from core.engine import RuntimeOptions
from core.engine.model.blocked_convolutions import AXES, with_blocked_convolutions, without_blocked_convolutions
from core.engine.model.decoder_q8 import MADE_NAME, quantize
from core.engine.model.model_parts import decoder_graph_bytes

CHANNELS = 16


def _conv(name: str, x: str, out: str, weight: str, bias: str | None = None, **attrs) -> onnx.NodeProto:
    return helper.make_node("Conv", [x, weight] + ([bias] if bias else []), [out], name=name, **attrs)


def _vocoder_like(external: bool = False, tmp_path=None) -> onnx.ModelProto:
    """Convolutions as a HiFi-GAN vocoder has them: dilated, with and without bias, one weight shared by two nodes
    (as the flow's unrolled steps share theirs), strided, grouped, asymmetric pads, a LeakyReLU between; a weight that
    is also a graph input (overridable: left 1-D); and a MatMul, for the quantizer."""
    rng = np.random.default_rng(3)

    def w(*shape):
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    inits = {
        "w_dilated": w(CHANNELS, CHANNELS, 7),
        "b_dilated": w(CHANNELS),
        "w_shared": w(CHANNELS, CHANNELS, 3),
        "w_strided": w(CHANNELS, CHANNELS, 4),
        "w_grouped": w(CHANNELS, CHANNELS // 4, 5),
        "w_fed": w(CHANNELS, CHANNELS, 1),
        "proj": w(CHANNELS, CHANNELS),
    }
    nodes = [
        _conv("/resblocks.0/convs1.0/Conv", "x", "a", "w_dilated", "b_dilated", dilations=[3], pads=[9, 9]),
        helper.make_node("LeakyRelu", ["a"], ["a_act"], alpha=0.1),
        _conv("/resblocks.0/convs2.0/Conv", "a_act", "b", "w_shared", pads=[1, 1]),
        _conv("/resblocks.0/convs2.1/Conv", "b", "c", "w_shared", pads=[1, 1]),
        _conv("/source_downs.0/Conv", "c", "d", "w_strided", strides=[2], pads=[2, 1]),
        _conv("/grouped/Conv", "d", "e", "w_grouped", group=4, pads=[2, 2]),
        _conv("/fed/Conv", "e", "f", "w_fed"),
        helper.make_node("Transpose", ["f"], ["ft"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["ft", "proj"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "vocoder_like",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, "frames"]),
            helper.make_tensor_value_info("w_fed", TensorProto.FLOAT, [CHANNELS, CHANNELS, 1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "out_frames", CHANNELS])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    if external:
        path = tmp_path / "conditional_decoder.onnx"
        onnx.save(
            model,
            str(path),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location="conditional_decoder.onnx_data",
            size_threshold=0,
        )
        return onnx.load(str(path), load_external_data=False)
    return model


def _run(model: onnx.ModelProto | bytes, x: np.ndarray, folder=None, optimized=None) -> np.ndarray:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if folder is not None:
        options.add_session_config_entry("session.model_external_initializers_file_folder_path", str(folder))
    if optimized is not None:
        options.optimized_model_filepath = str(optimized)
    data = model if isinstance(model, bytes) else model.SerializeToString()
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    return session.run(["y"], {"x": x})[0]


def _inputs(frames: int) -> np.ndarray:
    return np.random.default_rng(frames).standard_normal((1, CHANNELS, frames)).astype(np.float32)


def _structure(model: onnx.ModelProto) -> list:
    def attrs(node):
        return sorted((a.name, str(helper.get_attribute_value(a))) for a in node.attribute)

    nodes = [(n.op_type, n.name, list(n.input), list(n.output), attrs(n)) for n in model.graph.node]
    return [nodes, sorted((i.name, list(i.dims)) for i in model.graph.initializer)]


def test_the_rewritten_convolutions_give_the_exported_outputs():
    model = _vocoder_like()
    exported = onnx.ModelProto()
    exported.CopyFrom(model)
    assert with_blocked_convolutions(model) == 5  # not the one whose weight is a graph input
    ops = [(n.op_type, n.name) for n in model.graph.node]
    assert ("Conv", "/fed/Conv") in ops and ("Conv", "/resblocks.0/convs1.0/Conv.as_2d") in ops
    weights = {i.name: list(i.dims) for i in model.graph.initializer}
    assert weights["w_shared.as_2d"] == [CHANNELS, CHANNELS, 1, 3] and "w_shared" not in weights  # reshaped once
    assert weights["w_fed"] == [CHANNELS, CHANNELS, 1] and AXES in weights
    onnx.checker.check_model(model)
    for frames in (40, 241):  # an odd length through the strided convolution
        x = _inputs(frames)
        np.testing.assert_allclose(_run(model, x), _run(exported, x), rtol=1e-5, atol=1e-5)
    assert with_blocked_convolutions(model) == 0  # made once


def test_turning_them_back_gives_the_exported_graph_exactly():
    exported = _vocoder_like()
    model = _vocoder_like()
    with_blocked_convolutions(model)
    assert without_blocked_convolutions(model) == 5
    assert _structure(model) == _structure(exported)
    assert without_blocked_convolutions(model) == 0 and without_blocked_convolutions(_vocoder_like()) == 0


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="NCHWc is onnxruntime's x86 layout")
def test_onnxruntime_gives_them_its_blocked_layout_kernel(tmp_path):
    """The point of the rewrite: at optimisation level ``all`` the 2-D convolutions become NCHWc ones; the exported
    1-D ones never do."""

    def blocked_nodes(model) -> int:
        path = tmp_path / "optimized.onnx"
        _run(model, _inputs(64), optimized=path)
        optimized = onnx.load(str(path), load_external_data=False)
        return sum(n.domain == "com.microsoft.nchwc" for n in optimized.graph.node)

    model = _vocoder_like()
    assert blocked_nodes(model) == 0
    with_blocked_convolutions(model)
    assert blocked_nodes(model) >= 4


def test_weights_in_an_external_file_are_reshaped_without_being_read(tmp_path):
    model = _vocoder_like(external=True, tmp_path=tmp_path)
    x = _inputs(50)
    before = _run(model, x, folder=tmp_path)
    data = (tmp_path / "conditional_decoder.onnx_data").read_bytes()
    with_blocked_convolutions(model)
    tall = next(i for i in model.graph.initializer if i.name == "w_dilated.as_2d")
    assert tall.data_location == TensorProto.EXTERNAL and not tall.raw_data  # still points into the file
    np.testing.assert_allclose(_run(model, x, folder=tmp_path), before, rtol=1e-5, atol=1e-5)
    assert (tmp_path / "conditional_decoder.onnx_data").read_bytes() == data


def test_the_int8_decoder_is_made_with_them(tmp_path):
    source = tmp_path / "conditional_decoder.onnx"
    onnx.save(_vocoder_like(), str(source))
    made = tmp_path / MADE_NAME
    quantize(str(source), str(made))
    graph = onnx.load(str(made)).graph
    assert any(i.name == AXES for i in graph.initializer)
    assert {n.op_type for n in graph.node} >= {"MatMulInteger", "Conv", "Unsqueeze", "Squeeze"}
    flat = onnx.load(str(made))
    assert without_blocked_convolutions(flat) == 5
    x = _inputs(60)
    np.testing.assert_allclose(_run(onnx.load(str(made)), x), _run(flat, x), rtol=1e-5, atol=1e-5)


def test_where_the_decoder_graph_is_rewritten_at_load(tmp_path, monkeypatch):
    """The made int8 file already has them: a CPU start loads it as it is (no parse of a 260 MB file); with the
    switch off it is parsed and turned back; a float32 decoder is rewritten in memory."""
    source = tmp_path / "conditional_decoder.onnx"
    onnx.save(_vocoder_like(), str(source))
    made = tmp_path / MADE_NAME
    quantize(str(source), str(made))
    opened: list[str] = []
    real_load = onnx.load
    monkeypatch.setattr(onnx, "load", lambda path, *a, **k: opened.append(str(path)) or real_load(path, *a, **k))
    assert decoder_graph_bytes(made, None, source=source, blocked=True) is None and opened == []
    flat = decoder_graph_bytes(made, None, source=source, blocked=False)
    assert flat is not None and opened == [str(made)]
    assert not any(i.name == AXES for i in onnx.load_from_string(flat).graph.initializer)
    blocked = decoder_graph_bytes(source, None, blocked=True)
    assert blocked is not None and any(i.name == AXES for i in onnx.load_from_string(blocked).graph.initializer)


def test_the_switch_needs_a_reload_and_the_cli_passes_it(tmp_path, capsys, voice_wav):
    assert RuntimeOptions(blocked_convolutions=False).session_changes(RuntimeOptions()) == ["blocked_convolutions"]
    from core.standin import make_standin

    bundle = make_standin(tmp_path / "turbo", "turbo", seed=5)
    shutil.rmtree(tmp_path / "bench-cache", ignore_errors=True)
    out = tmp_path / "bench.json"
    args = ["bench", "--bundle", str(bundle), "--quick", "--provider", "cpu", "--only", "convs", "--json", str(out)]
    assert main([*args, "--no-blocked-convolutions"]) == 0, capsys.readouterr()
    speech = tmp_path / "hello.wav"
    synth = ["synth", "--bundle", str(bundle), "--text", "Hello.", "--out", str(speech), "--voice", str(voice_wav)]
    assert main([*synth, "--no-blocked-convolutions"]) == 0 and speech.is_file()
    calls = json.loads(out.read_text())["blocked_convolutions"]["calls"]
    assert sorted(calls) == ["10", "100"]
    assert all(c["before_ms"] > 0 and c["after_ms"] > 0 and c["ratio"] > 0 for c in calls.values())
