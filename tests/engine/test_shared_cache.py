"""The language model's cache written in place: one buffer per cache tensor, bound as past and present."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import core.engine.model.shape_folding as folding
from core.engine.generation.lm_runners import ChainedKV, CopiedKV, SharedKV
from core.engine.model.model_parts import runner_kind
from core.engine.model.shape_folding import fold_shapes, lm_feeds
from core.engine.model.shared_cache import MARK, share_cache, shares_cache

from .test_shape_folding import _exported_layer

HEADS, HEAD_DIM = 2, 8  # the operator's CPU kernel takes head sizes in multiples of 8
HIDDEN, VOCAB = HEADS * HEAD_DIM, 40


def _rewritten(tmp_path, share: bool) -> bytes:
    model = _exported_layer(causal=True, heads=HEADS, head_dim=HEAD_DIM)
    data = fold_shapes(model, tmp_path, lm_feeds(model), fold=True, fuse=True, share=share)
    assert data is not None
    return data


def _session(data: bytes) -> ort.InferenceSession:
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def _embed_session() -> ort.InferenceSession:
    table = np.random.default_rng(1).standard_normal((VOCAB, HIDDEN)).astype(np.float32) * 0.5
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["inputs_embeds"])],
        "embed",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"])],
        [helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, ["b", "s", HIDDEN])],
        [numpy_helper.from_array(table, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    return _session(model.SerializeToString())


def _info() -> SimpleNamespace:
    """What a runner reads of :class:`~core.engine.model.model_info.ModelInfo`, for the one-layer graph."""
    return SimpleNamespace(
        variant="turbo",
        lm=SimpleNamespace(inputs_embeds="inputs_embeds", attention_mask="attention_mask", logits="logits"),
        embed=SimpleNamespace(input_ids="input_ids", inputs_embeds="inputs_embeds"),
        past_names=["past_key_values.0.key", "past_key_values.0.value"],
        present_names=["present.0.key", "present.0.value"],
        kv_heads=HEADS,
        head_dim=HEAD_DIM,
        kv_dtype=np.float32,
        hidden=HIDDEN,
        logits_vocab=HIDDEN,
        logits_dtype=np.float32,
        embeds_dtype=np.float32,
        embed_output_dtype=np.float32,
        lm_has_position_ids=False,
    )


def test_each_fused_layer_writes_its_cache_in_place_with_the_same_outputs(tmp_path):
    exported = _exported_layer(causal=True, heads=HEADS, head_dim=HEAD_DIM)
    feeds = lm_feeds(exported)
    shared = onnx.load_from_string(_rewritten(tmp_path, share=True))
    ops = [n.op_type for n in shared.graph.node]
    assert ops.count("GroupQueryAttention") == 1 and "MultiHeadAttention" not in ops
    layer = next(n for n in shared.graph.node if n.op_type == "GroupQueryAttention")
    assert list(layer.input[3:5]) == ["past_key_values.0.key", "past_key_values.0.value"]
    assert list(layer.output[1:]) == ["present.0.key", "present.0.value"]  # the cache keeps its names
    # the past length comes from the mask now: nothing reads the cache's shape (a shared buffer is longer)
    assert not [n for n in shared.graph.node if n.op_type == "Shape" and n.input[0].startswith("past_")]
    assert {p.key: p.value for p in shared.metadata_props}[MARK] == "1"
    assert shares_cache(_session(shared.SerializeToString()))
    reference, rewritten = _session(exported.SerializeToString()), _session(shared.SerializeToString())
    for batch, new, cached in ((1, 1, 30), (3, 1, 7), (1, 5, 0), (1, 4, 6)):
        inputs = feeds(batch, new, cached)
        if batch > 1:
            inputs["attention_mask"][1, :3] = 0  # a left-padded row: its padding stays hidden through the bias
        for x, y in zip(reference.run(None, inputs), rewritten.run(None, inputs), strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def test_steps_write_one_buffer_in_place_and_match_the_copying_runner(tmp_path):
    fused, shared = _session(_rewritten(tmp_path, share=False)), _session(_rewritten(tmp_path, share=True))
    embed, info = _embed_session(), _info()
    assert runner_kind(shared, kv_chaining=True) is SharedKV and runner_kind(fused, kv_chaining=True) is ChainedKV
    assert runner_kind(shared, kv_chaining=False) is CopiedKV
    rng = np.random.default_rng(2)
    voice, text = (rng.standard_normal((1, n, HIDDEN)).astype(np.float32) for n in (9, 4))
    builder = SharedKV(shared, embed, info, 1, 0.5)
    builder.prefill(voice)
    prefix = [value.numpy().copy() for value in builder.past]  # what the prefix cache keeps
    copying, in_place = ChainedKV(fused, embed, info, 1, 0.5), SharedKV(shared, embed, info, 1, 0.5)
    copying.prefill(voice)
    in_place.adopt(builder.past, builder.total)
    np.testing.assert_allclose(copying.prefill(text), in_place.prefill(text), rtol=1e-5, atol=1e-5)
    assert in_place.capacity == 13 + SharedKV.GROW  # the adopted cache copied into a buffer with room to grow
    buffers, capacities = {in_place._shared[0].data_ptr()}, []
    for i in range(SharedKV.GROW + 20):
        token = (i * 7) % VOCAB
        np.testing.assert_allclose(copying.step(token), in_place.step(token), rtol=1e-4, atol=1e-4)
        buffers.add(in_place._shared[0].data_ptr())
        capacities.append(in_place.capacity)
    # one buffer until it is full, then one more with room to grow: not one per step
    assert len(buffers) == 2 and capacities[-1] > capacities[0] == 13 + SharedKV.GROW
    assert in_place.total == copying.total == 13 + SharedKV.GROW + 20
    for x, y in zip(copying.past, in_place.past, strict=True):  # the positions in use, read back exactly
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-4, atol=1e-4)
    for kept, value in zip(prefix, builder.past, strict=True):  # the adopted voice prefix was never written
        np.testing.assert_array_equal(kept, value.numpy())


def test_the_buffers_are_bound_when_they_change_not_at_every_step(tmp_path):
    """A binding lasts from run to run: 2 binds per layer for a new buffer, none for a step into the same one."""
    runner = SharedKV(_session(_rewritten(tmp_path, share=True)), _embed_session(), _info(), 1, 0.5)
    reference = ChainedKV(_session(_rewritten(tmp_path, share=False)), _embed_session(), _info(), 1, 0.5)
    io, binds = runner._lm_io, []
    for method in ("bind_ortvalue_input", "bind_ortvalue_output"):
        real = getattr(io, method)

        def spy(name, value, _real=real):
            if "key" in name or "value" in name:
                binds.append(name)
            return _real(name, value)

        setattr(io, method, spy)
    voice = np.random.default_rng(3).standard_normal((1, 6, HIDDEN)).astype(np.float32)
    np.testing.assert_allclose(runner.prefill(voice), reference.prefill(voice), rtol=1e-5, atol=1e-5)
    assert len(binds) == 4  # past and present, key and value
    for i in range(SharedKV.GROW + 5):  # through one regrow
        np.testing.assert_allclose(runner.step(i % VOCAB), reference.step(i % VOCAB), rtol=1e-4, atol=1e-4)
    assert len(binds) == 8
    runner.past = runner.past  # a cache set from outside (as adopt does): its new buffer is bound at the next run
    np.testing.assert_allclose(runner.step(3), reference.step(3), rtol=1e-4, atol=1e-4)
    assert len(binds) == 12


@pytest.mark.parametrize("kind", [SharedKV, CopiedKV])
def test_rows_on_top_of_a_cache_are_prefilled_one_at_a_time(tmp_path, kind):
    """The operator takes several new positions on top of a cache for one row only: such a prefill runs row by
    row, and gives what the copying graph gives for the whole batch."""
    fused, shared = _session(_rewritten(tmp_path, share=False)), _session(_rewritten(tmp_path, share=True))
    embed, info = _embed_session(), _info()
    rng = np.random.default_rng(3)
    prefix = rng.standard_normal((1, 6, HIDDEN)).astype(np.float32)
    text = rng.standard_normal((2, 4, HIDDEN)).astype(np.float32)
    results = []
    for session, runner_type in ((fused, ChainedKV), (shared, kind)):
        builder = runner_type(session, embed, info, 1, 0.5)
        builder.prefill(prefix)
        past = builder.past
        runner = runner_type(session, embed, info, 2, 0.5)
        if isinstance(past, dict):
            runner.adopt({name: np.repeat(value, 2, axis=0) for name, value in past.items()}, builder.total)
        else:
            runner.adopt([ort.OrtValue.ortvalue_from_numpy(np.repeat(v.numpy(), 2, axis=0)) for v in past], 6)
        logits = runner.prefill(text)
        results.append((logits, runner.step(np.array([3, 5])), runner.total))
    assert results[1][2] == results[0][2] == 11
    for x, y in zip(results[0][:2], results[1][:2], strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def test_a_sharing_that_changes_the_outputs_falls_back_to_the_fused_graph(tmp_path, monkeypatch):
    def wrong(model):
        count = share_cache(model)
        for node in model.graph.node:
            for attribute in node.attribute:
                if node.op_type == "GroupQueryAttention" and attribute.name == "scale":
                    attribute.f = 1.0
        return count

    monkeypatch.setattr(folding, "share_cache", wrong)
    ops = [n.op_type for n in onnx.load_from_string(_rewritten(tmp_path, share=True)).graph.node]
    assert "MultiHeadAttention" in ops and "GroupQueryAttention" not in ops


def test_a_graph_it_does_not_know_is_left_fused(tmp_path):
    fused = onnx.load_from_string(_rewritten(tmp_path, share=False))
    other = onnx.ModelProto()
    other.CopyFrom(fused)
    # a graph that reads another dimension of the cache's shape than its length
    other.graph.node.append(helper.make_node("Shape", ["past_key_values.0.key"], ["heads_shape"]))
    index = numpy_helper.from_array(np.array(1, np.int64), "heads_index")
    other.graph.initializer.append(index)
    other.graph.node.append(helper.make_node("Gather", ["heads_shape", "heads_index"], ["heads_seen"]))
    other.graph.output.append(helper.make_tensor_value_info("heads_seen", TensorProto.INT64, None))
    assert share_cache(other) == 0
    # head sizes the operator's CPU kernel does not take
    small = _exported_layer(causal=True, heads=2, head_dim=4)
    data = fold_shapes(small, tmp_path, lm_feeds(small), fold=True, fuse=True, share=True)
    assert data is not None and "MultiHeadAttention" in [n.op_type for n in onnx.load_from_string(data).graph.node]
