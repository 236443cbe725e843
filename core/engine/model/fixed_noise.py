"""The decoder's noise made repeatable, for comparing variants of one decoder on the same tokens.

The exported decoder draws fresh noise on every call: ``RandomNormalLike`` for the flow's starting point (one value
per mel frame of the voice prompt and the new speech) and ``RandomUniformLike``/``RandomNormalLike`` for the
vocoder's source phases. Two calls with the same tokens therefore differ by themselves, and so would two variants
(int8, fewer flow steps, a shorter voice prompt) unless they draw the same noise.

:func:`with_fixed_noise` rewrites a decoder graph (in memory, for benchmark sessions only; what users run is not
changed) so that they do:

- every other random node gets a seed derived from its name: without one onnxruntime seeds each node from a global
  counter in the order it builds the kernels, which differs between the float32 and int8 graphs. The n-th call of
  every variant then draws the same noise. A comparison session goes one step further
  (:func:`with_comparison_noise`, what :func:`core.engine.model.model_parts.load_decoder` runs): those nodes draw from
  the fed seed (:mod:`core.engine.model.seeded_noise`), as the int8 file made at first start does, so a float32
  reference and that file draw the same noise too.
- the flow's starting noise (the random node that the flow solver's first update adds to) becomes the **last** T
  frames of one fixed buffer, T being the call's frames. The new speech is at the end of the mel, after the voice
  prompt, so a call with a shorter prompt starts its new frames from the very same noise as the full-prompt call:
  their difference is the prompt's, not the noise's. (Upstream chatterbox's CFM keeps such a fixed noise buffer,
  ``rand_noise``, sliced from its start.)
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from core.engine.model.flow_steps import euler_chain

RANDOM_OPS = ("RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike")
FLOW_NOISE_FRAMES = 8000
"""Frames of the fixed flow-noise buffer (50 a second: 160 s of prompt and speech, 2.6 MB); a longer call in a
comparison session fails its shape check instead of drawing other noise."""
FLOW_NOISE_SEED = 20251125


def with_comparison_noise(model: Any) -> int:
    """What a comparison session runs: :func:`with_fixed_noise`, then every other random node drawn from the fed seed
    (:func:`~core.engine.model.seeded_noise.with_seeded_noise`), as the int8 file made at first start draws it. A
    float32 reference and an int8 variant then draw the same vocoder noise for the same seed; seeded by name for
    onnxruntime's own generator instead, they drew other noise, and their difference was the model's call-to-call
    one (26.8 dB on faithful Original), not the variant's. The random nodes rewritten."""
    from core.engine.model.seeded_noise import with_seeded_noise

    fixed = with_fixed_noise(model)
    with_seeded_noise(model)
    return fixed


def with_fixed_noise(model: Any) -> int:
    """Rewrite ``model`` (an ``onnx.ModelProto``, in place) as the module says; return the random nodes fixed."""
    import onnx

    flow_noise = _flow_noise_node(model.graph)
    fixed = 0
    for node in list(model.graph.node):
        if node is flow_noise:  # a random node, or in a file made seeded the Cast that ends its generator
            _replace_with_buffer_tail(model.graph, node)
        elif node.op_type in RANDOM_OPS:
            seed = float(int(hashlib.sha256(node.name.encode()).hexdigest()[:6], 16))
            kept = [a for a in node.attribute if a.name != "seed"]
            del node.attribute[:]
            node.attribute.extend([*kept, onnx.helper.make_attribute("seed", seed)])
        else:
            continue
        fixed += 1
    return fixed


def _flow_noise_node(graph: Any) -> Any | None:
    """The ``RandomNormalLike`` whose output the flow solver's first update adds to (``x₁ = x₀ + dt·v``; ten
    updates in the Original/Multilingual decoder, two in Turbo's), or ``None`` (no solver found)."""
    chain = euler_chain(graph, min_steps=2)
    if not chain:
        return None
    start = next(name for name in chain[0].add.input if name != chain[0].mul.output[0])
    for node in graph.node:
        if node.output[0] != start:
            continue
        seeded = node.op_type == "Cast" and node.name.endswith("RandomNormalLike")  # an int8 file made seeded
        if node.op_type == "RandomNormalLike" or seeded:
            return node
    return None


def _replace_with_buffer_tail(graph: Any, node: Any) -> None:
    """``noise = buffer[..., -T:]`` with T the last dimension of the node's input (its shape: [1, 80, T])."""
    from onnx import helper, numpy_helper

    name = node.output[0]
    channels = 80
    buffer = np.random.default_rng(FLOW_NOISE_SEED).standard_normal((1, channels, FLOW_NOISE_FRAMES))
    prefix = "fixed_noise/"
    graph.initializer.extend(
        [
            numpy_helper.from_array(buffer.astype(np.float32), prefix + "buffer"),
            numpy_helper.from_array(np.array([-1], np.int64), prefix + "last_axis"),
            numpy_helper.from_array(np.array([np.iinfo(np.int64).max], np.int64), prefix + "to_end"),
        ]
    )
    replacement = [
        helper.make_node("Shape", [node.input[0]], [prefix + "shape"], start=-1),
        helper.make_node("Neg", [prefix + "shape"], [prefix + "from"]),
        helper.make_node(
            "Slice",
            [prefix + "buffer", prefix + "from", prefix + "to_end", prefix + "last_axis"],
            [name],
            name=node.name,
        ),
    ]
    index = list(graph.node).index(node)
    graph.node.remove(node)
    for offset, new in enumerate(replacement):
        graph.node.insert(index + offset, new)
