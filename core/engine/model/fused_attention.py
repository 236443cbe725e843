"""Each layer's attention as one onnxruntime ``MultiHeadAttention`` node instead of the exported chain of ops.

The exported language models write attention as PyTorch's eager code does: ``present = Concat(past, new)`` for the
keys and the values (the whole cache copied, every layer, every step), then ``Transpose``, ``MatMul``, a scale, the
mask added, ``Softmax`` and ``MatMul`` again, each its own pass over the cache. onnxruntime's contrib operator
``com.microsoft.MultiHeadAttention`` takes the same inputs (the new queries, keys and values, the past keys and
values in the same ``[batch, heads, positions, head_dim]`` layout, the additive mask as ``attention_bias``) and
gives the same outputs (the layer's attention output and the ``present.*`` cache), in one kernel that appends to the
cache and attends per head in parallel. The graph's inputs and outputs keep their names and shapes, so nothing else
changes; the rewrite is found by structure (the ``Concat`` that makes ``present.N.key`` and the chain from it to the
heads' merge), and a layer that does not match is left as exported.

Applied with the shape folding (:mod:`.shape_folding`), whose check against the graph as exported covers it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

MS_DOMAIN = "com.microsoft"


def fuse_attention(model: Any) -> int:
    """Rewrite every matching layer of ``model`` in place; the number of layers fused (the nodes it no longer needs
    are left for the caller to remove)."""
    import onnx
    from onnx import helper

    graph = model.graph
    producers = {o: n for n in graph.node for o in n.output if o}
    consumers = consumers_of(graph.node)
    inputs = {i.name: i for i in graph.input}
    values = constant_values(graph)
    fused = 0
    for concat_k in [n for n in graph.node if n.op_type == "Concat" and _is_present(n, "key")]:
        plan = _match(concat_k, producers, consumers, inputs, values)
        if plan is None:
            continue
        (concat_v, q, k_new, v_new, mask, merge, heads, scale) = plan
        prefix = merge.output[0] + "_mha"
        flat = f"{prefix}_flat"
        graph.initializer.append(onnx.numpy_helper.from_array(np.array([0, 0, -1], np.int64), flat))
        new_nodes = []
        bsd = []
        for name, tensor in (("q", q), ("k", k_new), ("v", v_new)):
            new_nodes.append(helper.make_node("Transpose", [tensor], [f"{prefix}_{name}_bsnh"], perm=[0, 2, 1, 3]))
            new_nodes.append(helper.make_node("Reshape", [f"{prefix}_{name}_bsnh", flat], [f"{prefix}_{name}"]))
            bsd.append(f"{prefix}_{name}")
        new_nodes.append(
            helper.make_node(
                "MultiHeadAttention",
                [*bsd, "", "", mask, concat_k.input[0], concat_v.input[0]],
                [merge.output[0], concat_k.output[0], concat_v.output[0]],
                name=prefix,
                domain=MS_DOMAIN,
                num_heads=heads,
                scale=scale,
            )
        )
        graph.node.remove(concat_k)
        graph.node.remove(concat_v)
        at = list(graph.node).index(merge)  # every input of the new nodes is made before the heads' merge
        graph.node.remove(merge)
        for offset, node in enumerate(new_nodes):
            graph.node.insert(at + offset, node)
        fused += 1
    if fused and not any(o.domain == MS_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
    return fused


def consumers_of(nodes: Iterable[Any]) -> dict[str, list[Any]]:
    """Tensor name → the nodes that read it (in graph order)."""
    found: dict[str, list[Any]] = {}
    for node in nodes:
        for x in node.input:
            found.setdefault(x, []).append(node)
    return found


def _is_present(node: Any, kind: str) -> bool:
    return len(node.input) == 2 and node.output[0].startswith("present.") and node.output[0].endswith(f".{kind}")


def constant_values(graph: Any) -> dict[str, np.ndarray]:
    """Small initializers and ``Constant`` outputs by name, as arrays (weights stored outside are left out)."""
    from onnx import TensorProto, numpy_helper

    small = (t for t in graph.initializer if t.data_location != TensorProto.EXTERNAL and t.ByteSize() < 4096)
    values = {t.name: t for t in small}
    out = {name: numpy_helper.to_array(t) for name, t in values.items()}
    for node in graph.node:
        if node.op_type == "Constant":
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            if value is not None:
                out[node.output[0]] = numpy_helper.to_array(value)
    return out


def _attr(node: Any, name: str) -> Any:
    from onnx import helper

    return next((helper.get_attribute_value(a) for a in node.attribute if a.name == name), None)


def _only(consumers: dict[str, list[Any]], tensor: str, op: str) -> Any | None:
    users = consumers.get(tensor, [])
    return users[0] if len(users) == 1 and users[0].op_type == op else None


def _match(
    concat_k: Any,
    producers: dict[str, Any],
    consumers: dict[str, list[Any]],
    inputs: dict[str, Any],
    values: dict[str, np.ndarray],
) -> tuple[Any, ...] | None:
    """The layer's parts when it has the exported shape, else ``None``:
    ``Concat(past.key, k) → Transpose(0,1,3,2) → MatMul(q, ·) → Mul|Div(const) → Add(mask) → Softmax → Cast* →
    MatMul(·, Concat(past.value, v)) → Transpose(0,2,1,3) → Reshape``."""
    key = concat_k.output[0]
    past_k, k_new = concat_k.input
    concat_v = producers.get(key[: -len("key")] + "value")
    if concat_v is None or concat_v.op_type != "Concat" or not _is_present(concat_v, "value"):
        return None
    past_v, v_new = concat_v.input
    if past_k not in inputs or past_v not in inputs or {_attr(concat_k, "axis"), _attr(concat_v, "axis")} - {2, -2}:
        return None
    dims = inputs[past_k].type.tensor_type.shape.dim
    if len(dims) != 4 or not dims[1].HasField("dim_value"):
        return None
    heads = int(dims[1].dim_value)
    transposes = [c for c in consumers.get(key, []) if c.op_type == "Transpose" and _attr(c, "perm") == [0, 1, 3, 2]]
    if len(transposes) != 1 or len(consumers.get(key, [])) != 1:
        return None
    qk = _only(consumers, transposes[0].output[0], "MatMul")
    if qk is None or qk.input[1] != transposes[0].output[0]:
        return None
    scaled = consumers.get(qk.output[0], [])
    if len(scaled) != 1 or scaled[0].op_type not in ("Mul", "Div") or scaled[0].input[0] != qk.output[0]:
        return None
    factor = values.get(scaled[0].input[1])
    if factor is None or factor.size != 1:
        return None
    scale = float(factor.reshape(())) if scaled[0].op_type == "Mul" else 1.0 / float(factor.reshape(()))
    add = _only(consumers, scaled[0].output[0], "Add")
    if add is None:
        return None
    mask = add.input[1] if add.input[0] == scaled[0].output[0] else add.input[0]
    softmax = _only(consumers, add.output[0], "Softmax")
    if softmax is None or _attr(softmax, "axis") not in (-1, 3):
        return None
    probs = softmax.output[0]
    while (cast := _only(consumers, probs, "Cast")) is not None and _attr(cast, "to") == 1:  # float to float
        probs = cast.output[0]
    pv = _only(consumers, probs, "MatMul")
    if pv is None or pv.input[1] != concat_v.output[0] or len(consumers.get(concat_v.output[0], [])) != 1:
        return None
    back = _only(consumers, pv.output[0], "Transpose")
    if back is None or _attr(back, "perm") != [0, 2, 1, 3]:
        return None
    merge = _only(consumers, back.output[0], "Reshape")
    if merge is None:
        return None
    return concat_v, qk.input[0], k_new, v_new, mask, merge, heads, scale
