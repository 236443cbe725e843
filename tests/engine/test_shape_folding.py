"""The language model's shape arithmetic folded into constants: fewer nodes, the same outputs, checked at build."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import core.engine.model.shape_folding as folding
from core.engine.model.shape_folding import fold_shapes, folded_graph, lm_feeds
from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline

HIDDEN, HEADS, HEAD_DIM = 8, 2, 4


def _exported_layer(causal: bool = False, heads: int = HEADS, head_dim: int = HEAD_DIM) -> onnx.ModelProto:
    """One attention layer written the way PyTorch's tracer writes GPT-2: every reshape's target computed from
    shapes at run time, the projection flattened to two dims and back around its product, and the attention scale
    computed from the cache's last dim. ``causal``: the mask also hides later positions, from the past length read
    off the cache's shape (as the exports compute it)."""
    hidden = heads * head_dim
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((hidden, 3 * hidden)).astype(np.float32), "w_qkv"),
        numpy_helper.from_array(rng.standard_normal(3 * hidden).astype(np.float32), "b_qkv"),
        numpy_helper.from_array(rng.standard_normal((hidden, hidden)).astype(np.float32), "w_out"),
    ]
    nodes = []

    def const(name, value):
        nodes.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(value))))
        return name

    def dim(tensor, index, name):
        nodes.append(helper.make_node("Shape", [tensor], [f"{name}_shape"]))
        nodes.append(helper.make_node("Gather", [f"{name}_shape", const(f"{name}_i", index)], [f"{name}_d"]))
        nodes.append(helper.make_node("Unsqueeze", [f"{name}_d", const(f"{name}_ax", [0])], [name]))
        return name

    x = "inputs_embeds"
    # c_attn: Reshape(x, [-1, H]) -> MatMul -> Add bias -> Reshape(back to [B, S, 3H]).
    nodes.append(helper.make_node("Shape", [x], ["x_shape"]))
    nodes.append(helper.make_node("Slice", ["x_shape", const("s0", [-1]), const("s1", [2**62]), const("s2", [0])],
                                  ["x_last"]))  # fmt: skip
    nodes.append(helper.make_node("Concat", [const("minus1", [-1]), "x_last"], ["flat_shape"], axis=0))
    nodes.append(helper.make_node("Reshape", [x, "flat_shape"], ["x_flat"]))
    nodes.append(helper.make_node("MatMul", ["x_flat", "w_qkv"], ["qkv_mm"]))
    nodes.append(helper.make_node("Add", ["qkv_mm", "b_qkv"], ["qkv_flat"]))
    b, s = dim(x, 0, "b"), dim(x, 1, "s")
    nodes.append(helper.make_node("Concat", [b, s, const("n3", [3 * hidden])], ["back_shape"], axis=0))
    nodes.append(helper.make_node("Reshape", ["qkv_flat", "back_shape"], ["qkv"]))
    nodes.append(helper.make_node("Split", ["qkv", const("split", [hidden] * 3)], ["q", "k", "v"], axis=2))
    per_head = []
    for t in ("q", "k", "v"):
        b2, s2 = dim(t, 0, f"{t}b"), dim(t, 1, f"{t}s")
        shape = [b2, s2, const(f"{t}h", [heads]), const(f"{t}hd", [head_dim])]
        nodes.append(helper.make_node("Concat", shape, [f"{t}_heads_shape"], axis=0))
        nodes.append(helper.make_node("Reshape", [t, f"{t}_heads_shape"], [f"{t}_heads"]))
        nodes.append(helper.make_node("Transpose", [f"{t}_heads"], [f"{t}_bnsh"], perm=[0, 2, 1, 3]))
        per_head.append(f"{t}_bnsh")
    nodes.append(helper.make_node("Concat", ["past_key_values.0.key", "k_bnsh"], ["present.0.key"], axis=2))
    nodes.append(helper.make_node("Concat", ["past_key_values.0.value", "v_bnsh"], ["present.0.value"], axis=2))
    nodes.append(helper.make_node("Transpose", ["present.0.key"], ["k_t"], perm=[0, 1, 3, 2]))
    nodes.append(helper.make_node("MatMul", ["q_bnsh", "k_t"], ["scores"]))
    # scale = sqrt(last dim of the value cache), computed at run time
    nodes.append(helper.make_node("Shape", ["present.0.value"], ["pv_shape"]))
    nodes.append(helper.make_node("Slice", ["pv_shape", const("p0", [-1]), const("p1", [2**62]), const("p2", [0])],
                                  ["pv_last"]))  # fmt: skip
    nodes.append(helper.make_node("Squeeze", ["pv_last", const("p3", [0])], ["pv_dim"]))
    nodes.append(helper.make_node("Cast", ["pv_dim"], ["pv_float"], to=TensorProto.FLOAT))
    nodes.append(helper.make_node("Sqrt", ["pv_float"], ["scale"]))
    nodes.append(helper.make_node("Div", ["scores", "scale"], ["scaled"]))
    # the additive mask [B, 1, S, total] from attention_mask (padding positions get -10000), as the exports make it
    nodes.append(helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT))
    nodes.append(helper.make_node("Sub", [const("one", np.float32(1.0)), "mask_f"], ["mask_off"]))
    nodes.append(helper.make_node("Mul", ["mask_off", const("big", np.float32(-10000.0))], ["mask_bias"]))
    nodes.append(helper.make_node("Unsqueeze", ["mask_bias", const("mask_axes", [1, 2])], ["mask_b11t"]))
    mb, ms, mt = dim(x, 0, "mb"), dim(x, 1, "ms"), dim("attention_mask", 1, "mt")
    nodes.append(helper.make_node("Concat", [mb, const("m1", [1]), ms, mt], ["mask_shape"], axis=0))
    nodes.append(helper.make_node("Expand", ["mask_b11t", "mask_shape"], ["mask_4d"]))
    if causal:
        nodes.append(helper.make_node("Shape", ["past_key_values.0.key"], ["pk_shape"]))
        nodes.append(helper.make_node("Gather", ["pk_shape", const("pk_i", 2)], ["past_len"]))
        nodes.append(helper.make_node("Shape", [x], ["xs_shape"]))
        nodes.append(helper.make_node("Gather", ["xs_shape", const("xs_i", 1)], ["new_len"]))
        nodes.append(helper.make_node("Add", ["past_len", "new_len"], ["total_len"]))
        nodes.append(helper.make_node("Range", ["past_len", "total_len", const("step1", 1)], ["rows"]))
        nodes.append(helper.make_node("Range", [const("start0", 0), "total_len", const("step1b", 1)], ["cols"]))
        nodes.append(helper.make_node("Unsqueeze", ["rows", const("ax1", [1])], ["rows_c"]))
        nodes.append(helper.make_node("Unsqueeze", ["cols", const("ax0", [0])], ["cols_r"]))
        nodes.append(helper.make_node("LessOrEqual", ["cols_r", "rows_c"], ["allowed"]))
        zero, hide = const("zero_f", np.float32(0.0)), const("hide_f", np.float32(-10000.0))
        nodes.append(helper.make_node("Where", ["allowed", zero, hide], ["causal_bias"]))
        nodes.append(helper.make_node("Add", ["mask_4d", "causal_bias"], ["mask_full"]))
        nodes.append(helper.make_node("Add", ["scaled", "mask_full"], ["masked"]))
    else:
        nodes.append(helper.make_node("Add", ["scaled", "mask_4d"], ["masked"]))
    nodes.append(helper.make_node("Softmax", ["masked"], ["probs"], axis=-1))
    nodes.append(helper.make_node("MatMul", ["probs", "present.0.value"], ["ctx"]))
    nodes.append(helper.make_node("Transpose", ["ctx"], ["ctx_bshd"], perm=[0, 2, 1, 3]))
    b3, s3 = dim("ctx_bshd", 0, "cb"), dim("ctx_bshd", 1, "cs")
    nodes.append(helper.make_node("Concat", [b3, s3, const("ch", [hidden])], ["merge_shape"], axis=0))
    nodes.append(helper.make_node("Reshape", ["ctx_bshd", "merge_shape"], ["merged"]))
    nodes.append(helper.make_node("MatMul", ["merged", "w_out"], ["logits"]))
    inputs = [
        helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, ["batch", "seq", hidden]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total"]),
        helper.make_tensor_value_info("past_key_values.0.key", TensorProto.FLOAT, ["batch", heads, "past", head_dim]),
        helper.make_tensor_value_info("past_key_values.0.value", TensorProto.FLOAT, ["batch", heads, "past", head_dim]),
    ]
    outputs = [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, None),
        helper.make_tensor_value_info("present.0.key", TensorProto.FLOAT, None),
        helper.make_tensor_value_info("present.0.value", TensorProto.FLOAT, None),
    ]
    graph = helper.make_graph(nodes, "layer", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def _run(data: bytes, feeds: dict) -> list[np.ndarray]:
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _ops(model: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in model.graph.node]


def test_an_exported_layer_loses_its_shape_arithmetic_and_keeps_its_outputs(tmp_path):
    model = _exported_layer()
    exported = model.SerializeToString()
    folded = fold_shapes(model, tmp_path, lm_feeds(model))
    assert folded is not None
    lean = onnx.load_from_string(folded)
    before, after = _ops(onnx.load_from_string(exported)), _ops(lean)
    # only the mask's expansion still reads shapes (batch, length and total all vary)
    assert before.count("Shape") == 15 and after.count("Shape") == after.count("Gather") == 3
    # the flatten/unflatten pair around the projection is gone: the product reads the 3-D input
    assert after.count("Reshape") == before.count("Reshape") - 2
    product = next(n for n in lean.graph.node if n.op_type == "MatMul" and "w_qkv" in n.input)
    assert product.input[0] == "inputs_embeds"
    # every remaining reshape has a constant target (0 copies a dim, -1 infers one)
    targets = {t.name: numpy_helper.to_array(t).tolist() for t in lean.graph.initializer}
    assert sorted(targets[n.input[1]] for n in lean.graph.node if n.op_type == "Reshape") == [
        [0, 0, 2, 4],
        [0, 0, 2, 4],
        [0, 0, 2, 4],
        [0, 0, 8],
    ]
    feeds = lm_feeds(model)
    for shape in ((1, 1, 30), (2, 5, 0), (4, 3, 7)):  # sizes the probes never used
        for x, y in zip(_run(exported, feeds(*shape)), _run(folded, feeds(*shape)), strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def test_each_layer_s_attention_becomes_one_operator_with_the_same_outputs(tmp_path):
    model = _exported_layer()
    exported = model.SerializeToString()
    rewritten = fold_shapes(model, tmp_path, lm_feeds(model), fold=True, fuse=True)
    assert rewritten is not None
    lean = onnx.load_from_string(rewritten)
    fused = [n for n in lean.graph.node if n.op_type == "MultiHeadAttention"]
    assert len(fused) == 1 and fused[0].domain == "com.microsoft"
    assert list(fused[0].output[1:]) == ["present.0.key", "present.0.value"]  # the cache keeps its names
    assert list(fused[0].input[6:8]) == ["past_key_values.0.key", "past_key_values.0.value"]
    # no copy of the cache, no separate passes over it
    assert "Softmax" not in _ops(lean) and not [
        n for n in lean.graph.node if n.op_type == "Concat" and "past" in n.input[0]
    ]
    assert abs(next(a.f for a in fused[0].attribute if a.name == "scale") - HEAD_DIM**-0.5) < 1e-7
    feeds = lm_feeds(model)
    for shape in ((1, 1, 30), (2, 5, 0), (3, 2, 7)):
        inputs = feeds(*shape)
        inputs["attention_mask"][0, :2] = 0  # a padded row: the mask reaches the fused operator as its bias
        for x, y in zip(_run(exported, inputs), _run(rewritten, inputs), strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def test_a_fold_that_changes_the_outputs_is_refused(tmp_path, monkeypatch):
    model = _exported_layer()
    monkeypatch.setattr(folding, "_constant_target", lambda ins, outs, node: [0, 0, HEAD_DIM, HEADS])  # wrong order
    monkeypatch.setattr(folding, "_drop_flatten_pair", lambda *args: 0)
    assert fold_shapes(model, tmp_path, lm_feeds(model)) is None


def test_a_graph_with_nothing_to_fold_is_left_alone(tmp_path):
    x = helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, ["b", "s", HIDDEN])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)
    m = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "t"])
    graph = helper.make_graph([helper.make_node("Relu", ["inputs_embeds"], ["logits"])], "g", [x, m], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    working: list[bool] = []
    assert fold_shapes(model, tmp_path, lm_feeds(model), True, True, lambda: working.append(True)) is None
    assert not working  # nothing to rewrite: the graph never ran, nothing to announce


def test_the_folded_graph_is_made_once_and_kept(tmp_path, monkeypatch):
    path = tmp_path / "language_model.onnx"
    onnx.save(_exported_layer(), path)
    cache = tmp_path / "cache"
    working: list[str] = []
    first = folded_graph(path, None, cache, working=lambda: working.append("made"))
    assert first is not None and len(list(cache.glob("*.onnx"))) == 1
    assert working == ["made"]  # announced once, before the graph first ran (a front end shows it)
    monkeypatch.setattr(folding, "fold_shapes", lambda *args: pytest.fail("folded again"))
    assert folded_graph(path, None, cache, working=lambda: working.append("again")) == first
    assert working == ["made"]  # a cached graph is not announced
    # another version of the graph bytes (e.g. int8 compute) is another entry
    assert folded_graph(path, b"not a graph", cache) is None
    assert len(list(cache.glob("*.unfoldable"))) == 1


@pytest.mark.parametrize("variant", ["turbo", "original"])
def test_the_stand_in_speaks_the_same_with_and_without_the_rewrites(bundles, voice_wav, variant):
    """The stand-ins' graphs have constant shapes already (nothing to fold) and attention the fusion does not
    match: the switches load and speak alike."""
    options = SynthesisOptions(seed=3, max_new_tokens=12, cfg_weight=0.0)
    audio = {}
    for fold in (True, False):
        runtime = RuntimeOptions(
            precision="fp32", shape_folding=fold, fused_attention=fold, decoder_precision="fp32", stream=False
        )
        pipe = Pipeline.from_bundle(bundles[variant], runtime)
        result = pipe.synthesize("Hello there.", voice_wav, options)
        audio[fold] = result.audio
    np.testing.assert_allclose(audio[True], audio[False], atol=1e-4)
