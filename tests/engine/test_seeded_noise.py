"""The decoder's noise drawn from the seed: well distributed, repeatable, a new draw for a new seed, everywhere."""

from __future__ import annotations

import math

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from core.engine import Pipeline, RuntimeOptions, SynthesisOptions
from core.engine.model.seeded_noise import NOISE_SEED, fed_seed, with_seeded_noise
from core.standin import make_standin

ELEMENTS = 200_000 * 9


def noise_graph() -> onnx.ModelProto:
    """The real decoders' three random nodes, in shape: a flow noise and the vocoder's phase and noise."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, None, 9])
    nodes = [
        helper.make_node("RandomNormalLike", ["x"], ["flow"], name="/RandomNormalLike", dtype=1),
        helper.make_node(
            "RandomUniformLike", ["x"], ["phase"], name="/l_sin_gen/RandomUniformLike", low=-1.0, high=3.0
        ),
        helper.make_node("RandomNormal", [], ["fixed"], name="/fixed", shape=[4, 5], mean=2.0, scale=0.5),
    ]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("flow", "phase", "fixed")]
    model = helper.make_model(
        helper.make_graph(nodes, "noise", [x], outputs), opset_imports=[helper.make_opsetid("", 17)]
    )
    model.ir_version = 8
    return model


@pytest.fixture(scope="module")
def draw():
    model = noise_graph()
    assert with_seeded_noise(model) == 3
    assert not [n for n in model.graph.node if n.op_type.startswith("Random")]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert NOISE_SEED in [i.name for i in session.get_inputs()]
    shaped = np.zeros((1, ELEMENTS // 9, 9), np.float32)
    return lambda seed: session.run(None, {"x": shaped, NOISE_SEED: fed_seed(seed)})


def test_the_noise_is_normal_and_uniform_as_the_nodes_asked(draw):
    flow, phase, fixed = draw(1)
    assert flow.shape == (1, ELEMENTS // 9, 9) and flow.dtype == np.float32 and fixed.shape == (4, 5)
    values = flow.ravel().astype(np.float64)
    z = (values - values.mean()) / values.std()
    assert abs(values.mean()) < 0.005 and abs(values.std() - 1) < 0.005
    assert abs((z**3).mean()) < 0.01 and abs((z**4).mean() - 3) < 0.02  # skew 0, kurtosis 3
    edges = np.linspace(-4, 4, 33)
    counts, _ = np.histogram(values, edges)
    expected = np.diff([0.5 * (1 + math.erf(e / math.sqrt(2))) for e in edges]) * values.size
    assert (((counts - expected) ** 2) / expected).sum() / 32 < 2.0  # chi-square per bin near 1
    u = phase.ravel()
    assert u.min() > -1.0 and u.max() < 3.0 and abs(u.mean() - 1.0) < 0.01 and abs(u.var() - 16 / 12) < 0.01
    counts, _ = np.histogram(u, np.linspace(-1, 3, 65))
    assert (((counts - u.size / 64) ** 2) / (u.size / 64)).sum() / 63 < 2.0
    assert abs(fixed.mean() - 2.0) < 0.5


def test_neighbouring_samples_nodes_and_seeds_are_uncorrelated(draw):
    flow, phase, _ = draw(1)
    again, _, _ = draw(1)
    other, _, _ = draw(2)
    flat = flow.ravel().astype(np.float64)
    bound = 5 / math.sqrt(flat.size)
    for lag in (1, 2, 9, 960):
        assert abs(np.corrcoef(flat[:-lag], flat[lag:])[0, 1]) < bound
    np.testing.assert_array_equal(flow, again)  # the same seed: the same noise, whatever ran before
    assert abs(np.corrcoef(flat, other.ravel())[0, 1]) < bound  # seeds 1 and 2 are far apart
    assert abs(np.corrcoef(flat, phase.ravel())[0, 1]) < bound  # so are two nodes


def test_a_graph_without_random_nodes_is_left_as_it_is():
    model = noise_graph()
    del model.graph.node[:]
    assert with_seeded_noise(model) == 0
    assert NOISE_SEED not in [i.name for i in model.graph.input]


@pytest.fixture(scope="module")
def noisy(tmp_path_factory):
    return make_standin(tmp_path_factory.mktemp("noisy") / "turbo", "turbo", seed=7, decoder_noise=True)


@pytest.mark.parametrize("precision", ["fp32", "q8"])
def test_a_seeded_request_gives_the_same_samples_in_another_process_and_precision(noisy, voice_wav, precision):
    """A decoder with random nodes (as the real ones): one seed, one result, in a fresh pipeline too (a re-render, a
    Ray actor); another seed, another draw. The int8 decoder is made with its noise seeded."""
    runtime = RuntimeOptions(decoder_precision=precision, stream=False)
    first = Pipeline.from_bundle(noisy, runtime)
    assert first.files.precisions["conditional_decoder"] == precision
    text = "The lighthouse keeper counted the ships. Then he slept."
    a = first.synthesize(text, voice_wav, SynthesisOptions(seed=21)).audio
    b = Pipeline.from_bundle(noisy, runtime).synthesize(text, voice_wav, SynthesisOptions(seed=21)).audio
    c = first.synthesize(text, voice_wav, SynthesisOptions(seed=22)).audio
    np.testing.assert_array_equal(a, b)
    n = min(a.size, c.size)
    assert np.max(np.abs(a[:n] - c[:n])) > 1e-3


def test_the_unseeded_graph_would_differ_call_to_call(noisy):
    """What the rewrite removes: the stand-in's decoder as built draws new noise on every call."""
    session = ort.InferenceSession(str(noisy / "onnx" / "conditional_decoder.onnx"), providers=["CPUExecutionProvider"])
    feeds = {
        "speech_tokens": np.arange(40, dtype=np.int64)[None, :],
        "speaker_embeddings": np.zeros((1, 192), np.float32),
        "speaker_features": np.zeros((1, 20, 80), np.float32),
    }
    assert not np.array_equal(session.run(None, feeds)[0], session.run(None, feeds)[0])
