"""The speech decoder's one-dimensional convolutions written as two-dimensional ones, so that onnxruntime's CPU
runs them in its blocked channel layout (NCHWc).

onnxruntime's graph optimisation at level ``all`` gives a 2-D ``Conv`` on the CPU its direct kernel over channels
blocked by the vector width (``ReorderInput`` → ``com.microsoft.nchwc.Conv`` → ``ReorderOutput``); a 1-D one, as
PyTorch exports ``Conv1d``, stays on the general im2col + GEMM path. The decoder is made of 1-D convolutions (the
vocoder's resblocks over 1,600–24,000 frames are a third of a call), so each becomes ``Unsqueeze`` (a height of 1) →
the same convolution with a ``[1, k]`` kernel → ``Squeeze``: the same arithmetic (outputs within float32 rounding
of the exported ones), a faster kernel. Measured in docs/PERFORMANCE-LOG.md ("Blocked convolutions").

Only convolutions whose weight is a constant of the graph are changed (the kernel needs it to reorder the filter
once), each weight is reshaped once however many nodes share it (the flow's unrolled steps share theirs). A graph
made this way is turned back exactly by :func:`without_blocked_convolutions` (the switch off, and the benchmark's
"before" side, for a file made with them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.engine.model.flow_steps import subgraph_inputs

AXES = "blocked_convolutions.height_axis"
"""The constant ``[2]`` the added ``Unsqueeze``/``Squeeze`` nodes share."""
SUFFIX = ".as_2d"
"""Appended to a reshaped weight's name (and to the names of the nodes made for a convolution)."""


def _attrs(node: Any) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _auto_pad(attrs: dict[str, Any]) -> str:
    value = attrs.get("auto_pad", "NOTSET")
    return value.decode() if isinstance(value, bytes) else str(value)


def with_blocked_convolutions(model: Any) -> int:
    """Rewrite ``model`` (an ``onnx.ModelProto``, in place); the number of convolutions changed."""
    from onnx import helper, numpy_helper

    graph = model.graph
    if any(init.name == AXES for init in graph.initializer):
        return 0  # already made
    fed = {i.name for i in graph.input}  # an initializer listed as an input may be overridden: left alone
    weights = {init.name: init for init in graph.initializer if init.name not in fed}
    reshaped: dict[str, Any] = {}
    nodes, changed = [], 0
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "Conv" and node.domain in ("", "ai.onnx") else None
        attrs = _attrs(node) if weight is not None else {}
        if weight is None or len(weight.dims) != 3 or _auto_pad(attrs) != "NOTSET":
            nodes.append(node)
            continue
        name = weight.name + SUFFIX
        if name not in reshaped:
            reshaped[name] = _reshaped(weight, name, [*weight.dims[:2], 1, weight.dims[2]])
        tall_in, tall_out = node.output[0] + SUFFIX + ".in", node.output[0] + SUFFIX + ".out"
        nodes.append(helper.make_node("Unsqueeze", [node.input[0], AXES], [tall_in], name=node.name + SUFFIX + ".up"))
        nodes.append(
            helper.make_node(
                "Conv", [tall_in, name, *node.input[2:]], [tall_out], name=node.name + SUFFIX, **_taller(attrs)
            )
        )
        nodes.append(helper.make_node("Squeeze", [tall_out, AXES], [node.output[0]], name=node.name + SUFFIX + ".down"))
        changed += 1
    if not changed:
        return 0
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.append(numpy_helper.from_array(np.array([2], dtype=np.int64), AXES))
    _replace_initializers(graph, reshaped)
    return changed


def without_blocked_convolutions(model: Any) -> int:
    """Undo :func:`with_blocked_convolutions` on ``model`` (in place): every convolution it made is its exported
    1-D self again, with the same names and weights. The number of convolutions turned back."""
    from onnx import helper

    graph = model.graph
    if not any(init.name == AXES for init in graph.initializer):
        return 0
    weights = {init.name: init for init in graph.initializer}
    made_by_output = {n.output[0]: n for n in graph.node}
    drop: set[int] = set()
    restored: dict[int, Any] = {}
    flat: dict[str, Any] = {}
    for node in graph.node:
        if node.op_type != "Squeeze" or not node.name.endswith(SUFFIX + ".down"):
            continue
        conv = made_by_output.get(node.input[0])
        up = made_by_output.get(conv.input[0]) if conv is not None else None
        if conv is None or up is None or up.op_type != "Unsqueeze":
            continue
        attrs = _attrs(conv)
        weight_name = conv.input[1]
        original = weight_name[: -len(SUFFIX)]
        if original not in flat:
            tall = weights[weight_name]
            flat[original] = _reshaped(tall, original, [tall.dims[0], tall.dims[1], tall.dims[3]])
        restored[id(up)] = helper.make_node(
            "Conv",
            [up.input[0], original, *conv.input[2:]],
            [node.output[0]],
            name=conv.name[: -len(SUFFIX)],
            **_flatter(attrs),
        )
        drop.update((id(conv), id(node)))
    nodes = [restored.get(id(n), n) for n in graph.node if id(n) not in drop]
    del graph.node[:]
    graph.node.extend(nodes)
    _replace_initializers(graph, flat, drop_name=AXES)
    return len(restored)


def _taller(attrs: dict[str, Any]) -> dict[str, Any]:
    """A 1-D convolution's attributes for the same convolution over a height of 1 (only those it had: the others
    keep their defaults either way)."""
    out = {k: v for k, v in attrs.items() if k in ("group", "auto_pad")}
    for key in ("kernel_shape", "dilations", "strides"):
        if key in attrs:
            out[key] = [1, int(attrs[key][0])]
    if "pads" in attrs:
        out["pads"] = [0, int(attrs["pads"][0]), 0, int(attrs["pads"][1])]
    return out


def _flatter(attrs: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`_taller`."""
    out = {k: v for k, v in attrs.items() if k in ("group", "auto_pad")}
    for key in ("kernel_shape", "dilations", "strides"):
        if key in attrs:
            out[key] = [int(attrs[key][1])]
    if "pads" in attrs:
        out["pads"] = [int(attrs["pads"][1]), int(attrs["pads"][3])]
    return out


def _reshaped(tensor: Any, name: str, dims: list[int]) -> Any:
    """``tensor`` under ``name`` with ``dims``: only the shape changes (a dimension of 1 added or dropped), so its
    data, inline or in an external file, is used as it is, unread."""
    from onnx import TensorProto

    copy = TensorProto()
    copy.CopyFrom(tensor)
    copy.name = name
    del copy.dims[:]
    copy.dims.extend(int(d) for d in dims)
    return copy


def _replace_initializers(graph: Any, added: dict[str, Any], drop_name: str | None = None) -> None:
    """Add ``added``; keep only the initializers some node (or subgraph) still reads."""
    used = {o.name for o in graph.output}
    for node in graph.node:
        used.update(node.input)
        used.update(subgraph_inputs(node))
    kept = [i for i in graph.initializer if i.name in used and i.name != drop_name and i.name not in added]
    del graph.initializer[:]
    graph.initializer.extend(kept + [added[name] for name in added if name in used])
