"""The decoder's noise drawn from the request's seed: the same seed gives the same samples on every run and machine.

The exported decoders draw their noise from unseeded random nodes: ``RandomNormalLike`` for the flow's starting
point and ``RandomUniformLike``/``RandomNormalLike`` for the vocoder's source phases and noise. Two renders of one
seeded project therefore differed by up to 0.028 in amplitude, and a Ray actor could match a local render only in
its tokens. (Upstream chatterbox itself starts the flow from one fixed noise buffer; the export made it random.)

:func:`with_seeded_noise` rewrites the decoder graph when it is loaded so that every random node computes its noise
from a new graph input, :data:`NOISE_SEED` (int64 ``[1]``), with a counter-based generator: element *i* of a node's
output is a function of the seed, the node's name and *i* only, whatever ran before, on whichever thread count. The
generator is 64-bit integer arithmetic (a multiply-and-fold mix in the manner of SplitMix64; the graphs are opset
17, which has no bitwise XOR, so the folds add) turned into floats: 24-bit uniforms, and normals by Box–Muller
(two uniforms from one 64-bit draw). Its statistics, and the output's difference against the graph's own noise,
are measured in ``tests/engine/test_seeded_noise.py`` and docs/PERFORMANCE-LOG.md.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

import numpy as np

NOISE_SEED = "noise_seed"
"""The graph input a rewritten decoder takes its noise seed from (int64, shape [1])."""
RANDOM_OPS = ("RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike")
_GOLDEN = 0x9E3779B97F4A7C15
_MIX = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB)


def new_noise_seed() -> int:
    return secrets.randbelow(2**31)


def fed_seed(seed: int) -> np.ndarray:
    """What a decoder call feeds :data:`NOISE_SEED` for a seed: the seed mixed (SplitMix64), so that neighbouring
    seeds (a take's and the next take's) start far apart in the generator's stream."""
    z = (int(seed) * _GOLDEN + _GOLDEN) % 2**64
    z = ((z ^ (z >> 30)) * _MIX[0]) % 2**64
    z = ((z ^ (z >> 27)) * _MIX[1]) % 2**64
    z ^= z >> 31
    return np.array([z], np.uint64).view(np.int64)


def with_seeded_noise(model: Any) -> int:
    """Rewrite ``model`` (an ``onnx.ModelProto``, in place) as the module says; return the random nodes replaced.
    Nothing changes (0) for a graph without random nodes."""
    from onnx import TensorProto, helper

    graph = model.graph
    randoms = [node for node in graph.node if node.op_type in RANDOM_OPS]
    if not randoms:
        return 0
    if not any(i.name == NOISE_SEED for i in graph.input):
        graph.input.append(helper.make_tensor_value_info(NOISE_SEED, TensorProto.INT64, [1]))
    for number, node in enumerate(randoms):
        index = list(graph.node).index(node)
        graph.node.remove(node)
        for offset, new in enumerate(_generator_nodes(graph, node, f"seeded_noise/{number}/")):
            graph.node.insert(index + offset, new)
    return len(randoms)


def _node_key(name: str) -> int:
    return int(hashlib.sha256(name.encode()).hexdigest()[:16], 16)


def _generator_nodes(graph: Any, node: Any, p: str) -> list[Any]:
    """The nodes that compute ``node``'s output from :data:`NOISE_SEED`: same name, shape and dtype."""
    from onnx import TensorProto, helper, numpy_helper

    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    nodes: list[Any] = []

    def const(name: str, value: Any, dtype: Any = np.uint64) -> str:
        graph.initializer.append(numpy_helper.from_array(np.array(value, dtype), p + name))
        return p + name

    def op(kind: str, inputs: list[str], out: str, **kw: Any) -> str:
        nodes.append(helper.make_node(kind, inputs, [p + out], **kw))
        return p + out

    if node.op_type.endswith("Like"):
        shape = op("Shape", [node.input[0]], "shape")
    else:
        shape = const("fixed_shape", attrs["shape"], np.int64)
    count = op("ReduceProd", [shape], "count", keepdims=0)
    steps = op("Range", [const("zero", 0, np.int64), count, const("one", 1, np.int64)], "range")
    index = op("Cast", [steps], "index", to=TensorProto.UINT64)
    # Widynski's "Squares" counter-based generator (2020): x = ctr·key, then rounds of x = x² + y and a rotation by
    # 32 bits. The rotation's two halves share no bits, so the bitwise OR it needs is an addition here. The key (odd)
    # comes from the fed seed, already mixed (:func:`fed_seed`), and the node's name.
    seed = op("Cast", [NOISE_SEED], "seed", to=TensorProto.UINT64)
    key = op("Add", [seed, const("node", [_node_key(f"{node.name}|{node.output[0]}")])], "k")
    key = op("Add", [op("Mul", [key, const("two", [2])], "even"), const("odd", [1])], "key")
    y = op("Mul", [index, key], "y")
    z = op("Add", [y, key], "z")
    thirty_two = const("s32", [32])
    x = y
    for i, add in enumerate((y, z, y, z, y)):
        x = op("Add", [op("Mul", [x, x], f"square{i}"), add], f"round{i}")
        if i == 3:
            round4 = x  # the generator's 32-bit output is this round's upper half
        if i < 4:
            lower = op("BitShift", [x, thirty_two], f"to_low{i}", direction="RIGHT")
            upper = op("BitShift", [x, thirty_two], f"to_high{i}", direction="LEFT")
            x = op("Add", [lower, upper], f"rotated{i}")
    s40 = const("s40", [40])

    def uniform(bits: str, name: str) -> str:  # 24 bits → (0, 1), never 0 (a logarithm follows)
        as_float = op("Cast", [bits], name + "_f", to=TensorProto.FLOAT)
        scaled = op("Mul", [as_float, const(name + "_unit", [2.0**-24], np.float32)], name + "_scaled")
        return op("Add", [scaled, const(name + "_half", [2.0**-25], np.float32)], name)

    u1 = uniform(op("BitShift", [round4, s40], "bits1", direction="RIGHT"), "u1")
    if node.op_type.startswith("RandomUniform"):
        low, high = float(attrs.get("low", 0.0)), float(attrs.get("high", 1.0))
        value = _affine(op, const, u1, high - low, low)
    else:
        u2 = uniform(op("BitShift", [x, s40], "bits2", direction="RIGHT"), "u2")  # the fifth round's upper bits
        r2 = op("Mul", [op("Log", [u1], "log_u1"), const("minus_two", [-2.0], np.float32)], "r2")
        radius = op("Sqrt", [r2], "radius")
        angle = op("Cos", [op("Mul", [u2, const("two_pi", [2 * np.pi], np.float32)], "theta")], "cos")
        normal = op("Mul", [radius, angle], "normal")
        value = _affine(op, const, normal, float(attrs.get("scale", 1.0)), float(attrs.get("mean", 0.0)))
    flat_shaped = op("Reshape", [value, shape], "shaped")
    dtype = int(attrs.get("dtype", TensorProto.FLOAT))
    nodes.append(helper.make_node("Cast", [flat_shaped], [node.output[0]], name=node.name, to=dtype))
    return nodes


def _affine(op: Any, const: Any, value: str, scale: float, offset: float) -> str:
    if scale == 1.0 and offset == 0.0:
        return value
    scaled = op("Mul", [value, const("scale", [scale], np.float32)], "times_scale")
    return str(op("Add", [scaled, const("offset", [offset], np.float32)], "affine"))
