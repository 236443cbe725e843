"""Repeatable decoder noise for comparisons: the flow's starting noise is the tail of one fixed buffer, so a call
with a shorter voice prompt starts its new frames from the same noise as the full-prompt call."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from core.engine.model.fixed_noise import with_comparison_noise, with_fixed_noise
from core.engine.model.seeded_noise import NOISE_SEED, fed_seed, with_seeded_noise

DTS = (0.2, 0.3, 0.5)  # an unrolled Euler solver from t=0 to 1, as the Original decoder's flow


def _flow(with_vocoder_noise: bool = False):
    """mu [1, 80, T] → noise shaped like it → three Euler updates x + dt·(a·x) → the mel (plus, optionally, a second
    random node standing for the vocoder's source phases)."""
    nodes = [helper.make_node("RandomNormalLike", ["mu"], ["x0"], name="/RandomNormalLike", dtype=TensorProto.FLOAT)]
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "a")]
    for i, dt in enumerate(DTS):
        inits.append(numpy_helper.from_array(np.array(dt, np.float32), f"dt{i}"))
        nodes += [
            helper.make_node("Mul", [f"x{i}", "a"], [f"v{i}"]),
            helper.make_node("Mul", [f"v{i}", f"dt{i}"], [f"s{i}"]),
            helper.make_node("Add", [f"x{i}", f"s{i}"], [f"x{i + 1}"]),
        ]
    last = f"x{len(DTS)}"
    if with_vocoder_noise:
        nodes += [
            helper.make_node("RandomUniformLike", [last], ["phase"], name="/source/RandomUniformLike"),
            helper.make_node("Add", [last, "phase"], ["mel"]),
        ]
    else:
        nodes.append(helper.make_node("Identity", [last], ["mel"]))
    graph = helper.make_graph(
        nodes,
        "flow",
        [helper.make_tensor_value_info("mu", TensorProto.FLOAT, [1, 80, "T"])],
        [helper.make_tensor_value_info("mel", TensorProto.FLOAT, [1, 80, "T"])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def _session(model) -> ort.InferenceSession:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _mel(session: ort.InferenceSession, frames: int) -> np.ndarray:
    return session.run(None, {"mu": np.zeros((1, 80, frames), np.float32)})[0]


def test_a_shorter_prompt_starts_its_new_frames_from_the_same_noise():
    model = _flow()
    assert with_fixed_noise(model) == 1
    session = _session(model)
    full, short = _mel(session, 30), _mel(session, 12)  # 18 or 0 prompt frames, then 12 new ones
    np.testing.assert_array_equal(full[..., -12:], short)
    np.testing.assert_array_equal(full, _mel(_session(model), 30))  # every session, every call: the same noise
    assert 0.5 < full.std() < 2.0  # still noise, as the model draws it (here scaled by the three updates)


def test_the_noise_users_get_is_left_alone():
    model = _flow()
    session = _session(model)
    assert not np.array_equal(_mel(session, 12), _mel(session, 12))  # fresh noise on every call, as exported


def test_other_random_nodes_are_seeded_by_name():
    model = _flow(with_vocoder_noise=True)
    assert with_fixed_noise(model) == 2
    first, second = _session(model), _session(model)
    np.testing.assert_array_equal(_mel(first, 20), _mel(second, 20))


def test_a_float32_reference_and_a_file_made_seeded_draw_the_same_noise_in_comparisons():
    """The int8 decoder file is made with its noise seeded; the float32 reference is not. In comparison sessions both
    must draw the same vocoder noise for the same seed, or their difference is the model's own call-to-call one
    (as ``decoder.output_snr_db`` measured on faithful Original before: 26.8 dB, the yardstick, not the lever)."""
    reference, made = _flow(with_vocoder_noise=True), _flow(with_vocoder_noise=True)
    assert with_seeded_noise(made) == 2  # as decoder_q8 makes its file
    assert with_comparison_noise(reference) == 2 and with_comparison_noise(made) == 1  # the flow noise; the rest seeded
    feeds = {"mu": np.zeros((1, 80, 20), np.float32), NOISE_SEED: fed_seed(7)}
    a, b = (_session(m).run(None, feeds)[0] for m in (reference, made))
    np.testing.assert_array_equal(a, b)
    other = _session(reference).run(None, {**feeds, NOISE_SEED: fed_seed(8)})[0]
    assert not np.array_equal(a, other)  # the vocoder's noise follows the seed
