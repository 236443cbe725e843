"""Fewer flow steps cut out of an unrolled Euler solver: the same arithmetic as Euler on the kept schedule points."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from core.engine.model.flow_steps import euler_chain, kept_steps, with_flow_steps

STEPS = 10
T = 1 - np.cos(np.linspace(0, 1, STEPS + 1) * 0.5 * np.pi)  # the cosine schedule chatterbox's CFM uses
A = np.linspace(-0.5, 0.5, STEPS).astype(np.float32)  # each step's "estimator": v = a·x + t


def _estimator_input(x: str, i: int) -> list:
    """Each step's estimator input built as the export builds its batch-2 input: ``x`` read inside the branches of
    an ``If`` (squeeze when the batch is 1), whose branches name the outer ``x`` directly, then written over the
    whole of one buffer that every step updates (``x_in[:] = x``: a ScatterND on the previous step's buffer)."""
    out = helper.make_tensor_value_info(f"xi{i}", TensorProto.FLOAT, [4])
    branch = [
        helper.make_graph([helper.make_node("Identity", [x], [f"xi{i}"])], f"{side}{i}", [], [out])
        for side in ("then", "else")
    ]
    buffer = f"xin{i - 1}" if i else "zeros"
    return [
        helper.make_node("Constant", [], [f"c{i}"], value=numpy_helper.from_array(np.array(True))),
        helper.make_node("If", [f"c{i}"], [f"xif{i}"], then_branch=branch[0], else_branch=branch[1]),
        helper.make_node("ScatterND", [buffer, "every", f"xif{i}"], [f"xin{i}"]),
    ]


def _unrolled(dt_sum: float = 1.0) -> onnx.ModelProto:
    """x → ten Euler steps (estimator v = a_i·x + t_i on x as :func:`_estimator_input` builds it, update
    x + dt_i·v) → 2·x; constants baked as in the export."""
    nodes, inits, x = [], [], "x"
    dts = np.diff(T) * dt_sum
    for i in range(STEPS):
        inits += [
            numpy_helper.from_array(np.array(A[i], np.float32), f"a{i}"),
            numpy_helper.from_array(np.array(T[i], np.float32), f"t{i}"),
        ]
        nodes += _estimator_input(x, i)
        nodes += [
            helper.make_node("Mul", [f"xin{i}", f"a{i}"], [f"ax{i}"]),
            helper.make_node("Add", [f"ax{i}", f"t{i}"], [f"v{i}"]),
            helper.make_node("Constant", [], [f"dt{i}"], value=numpy_helper.from_array(np.array(dts[i], np.float32))),
            helper.make_node("Mul", [f"v{i}", f"dt{i}"], [f"step{i}"]),
            helper.make_node("Add", [x, f"step{i}"], [f"x{i + 1}"]),
        ]
        x = f"x{i + 1}"
    inits += [
        numpy_helper.from_array(np.array(2.0, np.float32), "two"),
        numpy_helper.from_array(np.zeros(4, np.float32), "zeros"),
        numpy_helper.from_array(np.arange(4, dtype=np.int64).reshape(4, 1), "every"),
    ]
    nodes.append(helper.make_node("Mul", [x, "two"], ["y"]))
    graph = helper.make_graph(
        nodes,
        "unrolled",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _euler(x: np.ndarray, points: list[int]) -> np.ndarray:
    x = x.astype(np.float64)
    for i, step in enumerate(points):
        reach = points[i + 1] if i + 1 < len(points) else STEPS
        x = x + (T[reach] - T[step]) * (A[step] * x + T[step])
    return 2 * x


def test_the_chain_is_found_by_structure():
    chain = euler_chain(_unrolled().graph)
    assert len(chain) == STEPS and sum(u.dt for u in chain) == pytest.approx(1.0, abs=1e-6)
    assert euler_chain(_unrolled(dt_sum=0.5).graph) == []  # not a flow solver from 0 to 1: left alone


@pytest.mark.parametrize("steps", [1, 3, 4, 5, 7])
def test_fewer_steps_are_euler_on_the_kept_schedule_points(steps):
    x = np.array([0.3, -1.0, 2.0, 0.0], np.float32)
    model = _unrolled()
    np.testing.assert_allclose(_run(model, x), _euler(x, list(range(STEPS))), rtol=1e-5)
    assert with_flow_steps(model, steps) == STEPS
    onnx.checker.check_model(model)
    points = kept_steps(STEPS, steps)
    assert len(points) == steps and points[0] == 0
    np.testing.assert_allclose(_run(model, x), _euler(x, points), rtol=1e-5)
    estimators = [n for n in model.graph.node if n.output[0].startswith("ax")]
    assert len(estimators) == steps  # the skipped estimators are pruned, whatever reads their x


def test_as_many_steps_as_exported_changes_nothing():
    model = _unrolled()
    before = model.SerializeToString()
    assert with_flow_steps(model, STEPS) == STEPS and model.SerializeToString() == before
