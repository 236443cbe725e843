"""The language model's KV cache written in place: each fused attention layer as ``GroupQueryAttention``.

``MultiHeadAttention`` (:mod:`.fused_attention`) appends the step's key and value by writing a new ``present``
tensor: the whole cache copied, every layer, every step (``[batch, heads, positions, head_dim]`` × 2 × layers; at
450 positions 88 MB of Turbo's cache read and written again per token), into memory freshly taken from the
allocator. onnxruntime's ``com.microsoft.GroupQueryAttention`` shares one buffer between ``past`` and ``present``
when both are bound to the same tensor: the cache is allocated once with room to grow, the step writes one row per
layer in place, and attention reads only the positions in use (``seqlens_k``). The runner that binds it so is
:class:`core.engine.generation.lm_runners.SharedKV`.

The rewrite, per fused layer: the same queries, keys, values, past and additive mask (as ``attention_bias``), with
``seqlens_k`` (the last position, every row) and ``total_sequence_length`` taken from ``attention_mask``'s length.
Where the graph read the past length from the past tensor's shape (the causal mask), it now reads mask length
minus new length: the same number when the cache is exact, the right one when it sits in a longer shared buffer.
A left-padded row keeps its padding masked through the bias, so batched steps are unchanged.

What the operator does not take: several rows prefilled at once on top of a cache (onnxruntime refuses a batch
above 1 with more than one new position and a past). :class:`~core.engine.generation.lm_runners.SharedKV` prefills
such rows one at a time. The graph is marked (:data:`MARK`) so a runner knows what it runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.engine.model.fused_attention import MS_DOMAIN, constant_values

MARK = "chatterbox.shared_kv_cache"
"""Model metadata key set to ``"1"`` on a rewritten graph (read back through the session's model metadata)."""


def share_cache(model: Any) -> int:
    """Rewrite ``model``'s ``MultiHeadAttention`` layers in place into cache-sharing ``GroupQueryAttention``; the
    number of layers rewritten (0: the graph is left as it was)."""
    import onnx
    from onnx import TensorProto, helper

    graph = model.graph
    inputs = {i.name for i in graph.input}
    pasts = {name for name in inputs if name.startswith("past_key_values.")}
    layers = [n for n in graph.node if n.op_type == "MultiHeadAttention" and n.domain == MS_DOMAIN]
    if not layers or "attention_mask" not in inputs or "inputs_embeds" not in inputs:
        return 0
    if any(
        len(n.input) < 8 or n.input[6] not in pasts or n.input[7] not in pasts or n.input[3] or n.input[4]
        for n in layers
    ):
        return 0  # a packed bias or a key padding mask: not what the fusion writes
    for value in graph.input:
        if value.name in pasts:
            head_dim = value.type.tensor_type.shape.dim[3]
            if not head_dim.HasField("dim_value") or head_dim.dim_value % 8:
                return 0  # the operator's CPU kernel takes head sizes in multiples of 8
    shape_reads = [n for n in graph.node if n.op_type == "Shape" and n.input[0] in pasts]
    length_reads = [n for n in graph.node if n.op_type == "Gather" and n.input[0] in {s.output[0] for s in shape_reads}]
    constants = constant_values(graph)
    for read in length_reads:
        index = constants.get(read.input[1])
        if index is None or index.ndim != 0 or int(index) not in (2, -2):
            return 0  # the graph reads another dimension of the past: not a graph this rewrite knows
    readers, reads = {s.output[0] for s in shape_reads}, {id(n) for n in length_reads}
    if any(i in readers for n in graph.node if id(n) not in reads for i in n.input):
        return 0

    p = "shared_kv"
    graph.initializer.extend(
        [
            onnx.numpy_helper.from_array(np.array(0, np.int64), f"{p}_zero"),
            onnx.numpy_helper.from_array(np.array(1, np.int64), f"{p}_one"),
            onnx.numpy_helper.from_array(np.array([0], np.int64), f"{p}_axis0"),
            onnx.numpy_helper.from_array(np.array(1, np.int32), f"{p}_one32"),
        ]
    )
    front = [
        helper.make_node("Shape", ["attention_mask"], [f"{p}_mask_shape"]),
        helper.make_node("Gather", [f"{p}_mask_shape", f"{p}_one"], [f"{p}_total64"], axis=0),
        helper.make_node("Cast", [f"{p}_total64"], [f"{p}_total"], to=TensorProto.INT32),
        helper.make_node("Gather", [f"{p}_mask_shape", f"{p}_zero"], [f"{p}_batch"], axis=0),
        helper.make_node("Unsqueeze", [f"{p}_batch", f"{p}_axis0"], [f"{p}_batch1"]),
        helper.make_node("Sub", [f"{p}_total", f"{p}_one32"], [f"{p}_last"]),
        helper.make_node("Expand", [f"{p}_last", f"{p}_batch1"], [f"{p}_seqlens_k"]),
        helper.make_node("Shape", ["inputs_embeds"], [f"{p}_embeds_shape"]),
        helper.make_node("Gather", [f"{p}_embeds_shape", f"{p}_one"], [f"{p}_new"], axis=0),
    ]
    for read in length_reads:  # the past length: mask length minus new length, whatever the buffer's length
        front.append(helper.make_node("Sub", [f"{p}_total64", f"{p}_new"], [read.output[0]], name=read.name))
        graph.node.remove(read)
    for node in shape_reads:
        graph.node.remove(node)
    for layer in layers:
        attributes = {a.name: helper.get_attribute_value(a) for a in layer.attribute}
        query, key, value, _bias, _padding, mask, past_key, past_value = layer.input[:8]
        gqa = helper.make_node(
            "GroupQueryAttention",
            [query, key, value, past_key, past_value, f"{p}_seqlens_k", f"{p}_total", "", "", "", mask],
            list(layer.output),
            name=f"{layer.name}_shared",
            domain=MS_DOMAIN,
            num_heads=attributes["num_heads"],
            kv_num_heads=attributes["num_heads"],
            scale=attributes.get("scale", 0.0),
        )
        position = list(graph.node).index(layer)
        graph.node.remove(layer)
        graph.node.insert(position, gqa)
    for position, node in enumerate(front):
        graph.node.insert(position, node)
    helper.set_model_props(model, {**{e.key: e.value for e in model.metadata_props}, MARK: "1"})
    return len(layers)


def shares_cache(session: Any) -> bool:
    """Whether ``session`` runs a graph rewritten by :func:`share_cache` (an onnxruntime session; anything without
    model metadata, e.g. a test's stand-in session, does not)."""
    try:
        return session.get_modelmeta().custom_metadata_map.get(MARK) == "1"  # type: ignore[no-any-return]
    except Exception:  # noqa: BLE001 - no metadata: an ordinary graph
        return False
