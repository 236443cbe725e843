"""Fewer flow-matching steps, cut out of a decoder graph that unrolls them.

The Original/Multilingual decoder's flow matching (chatterbox's CFM ``solve_euler``) was exported with its ten Euler
steps unrolled: ten copies of the estimator, each followed by ``x = x + dt · v`` where ``dt`` is a constant of the
cosine schedule (``t = 1 − cos(π/2 · i/10)``; the ten ``dt`` add up to 1). Each step's estimator is given its own
``t`` as a constant too, so a graph with ``k`` of those steps is exact Euler on the same schedule's points: keep the
steps that start at ``t[s₀], t[s₁] …``, give step ``sᵢ`` the ``dt`` that reaches ``t[sᵢ₊₁]``, feed its result to
step ``sᵢ₊₁`` and drop the steps in between (their estimators are then unused and pruned).

:func:`euler_chain` finds the updates by structure (an ``Add`` of the previous ``x`` and a ``Mul`` by a scalar
constant, chained, the constants summing to 1), so nothing depends on node names. Turbo's decoder (two steps, no
CFG) is left as exported. The rewritten graph is made in memory at load time (a second for the float32 graph, whose
weights stay in the bundle's own ``.onnx_data``).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EulerUpdate:
    add: Any
    """The ``Add`` node: ``x_next = x + dt · v``."""
    mul: Any
    """The ``Mul`` node ``dt · v``."""
    dt_input: int
    """Which input of :attr:`mul` is the constant ``dt``."""
    dt: float


def _scalars(graph: Any) -> dict[str, np.ndarray]:
    from onnx import TensorProto, numpy_helper

    found: dict[str, np.ndarray] = {}
    for tensor in graph.initializer:
        if tensor.data_location != TensorProto.EXTERNAL and len(tensor.dims) <= 1:
            array = numpy_helper.to_array(tensor)
            if array.size == 1:
                found[tensor.name] = array
    for node in graph.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            array = numpy_helper.to_array(node.attribute[0].t)
            if array.size == 1:
                found[node.output[0]] = array
    return found


def euler_chain(graph: Any, min_steps: int = 3) -> list[EulerUpdate]:
    """The flow solver's updates in order, or ``[]`` when the graph has no chain of at least ``min_steps`` whose
    ``dt`` add up to 1 (Turbo's decoder has two; three or more are an unrolled solver worth cutting)."""
    scalars = _scalars(graph)
    users: dict[str, list[Any]] = defaultdict(list)
    for node in graph.node:
        for name in node.input:
            users[name].append(node)
    updates: dict[str, EulerUpdate] = {}
    for mul in graph.node:
        if mul.op_type != "Mul" or len(mul.input) != 2:
            continue
        constant = [i for i, name in enumerate(mul.input) if name in scalars]
        consumers = users[mul.output[0]]
        if len(constant) == 1 and len(consumers) == 1 and consumers[0].op_type == "Add":
            add = consumers[0]
            dt = float(scalars[mul.input[constant[0]]].reshape(-1)[0])
            updates[add.output[0]] = EulerUpdate(add, mul, constant[0], dt)
    previous = {out: next(n for n in u.add.input if n != u.mul.output[0]) for out, u in updates.items()}
    following = {prev: out for out, prev in previous.items() if prev in updates}
    best: list[str] = []
    for out in updates:
        if previous[out] in updates:
            continue
        chain = [out]
        while chain[-1] in following:
            chain.append(following[chain[-1]])
        best = max(best, chain, key=len)
    chain_updates = [updates[out] for out in best]
    if len(chain_updates) < min_steps or abs(sum(u.dt for u in chain_updates) - 1.0) > 1e-3:
        return []
    return chain_updates


def exported_steps(path: Path) -> int:
    """The steps of the unrolled solver in the graph file at ``path`` (0: none), read without its weights."""
    import onnx

    return len(euler_chain(onnx.load(str(path), load_external_data=False).graph))


def kept_steps(exported: int, steps: int) -> list[int]:
    """The exported steps a ``steps``-step solver keeps: evenly spread over the schedule, the first always."""
    return sorted({round(i * exported / steps) for i in range(steps)})


def with_flow_steps(model: Any, steps: int) -> int:
    """Rewrite ``model`` (an ``onnx.ModelProto``, in place) to ``steps`` flow steps; return the steps it had (0: no
    unrolled solver found, nothing changed)."""
    from onnx import helper, numpy_helper

    graph = model.graph
    chain = euler_chain(graph)
    exported = len(chain)
    if not exported or steps >= exported:
        return exported
    t = np.concatenate([[0.0], np.cumsum([u.dt for u in chain])])
    kept = kept_steps(exported, steps)
    renames: dict[str, str] = {}
    scalars = _scalars(graph)
    for i, step in enumerate(kept):
        reach = kept[i + 1] if i + 1 < len(kept) else exported
        update = chain[step]
        old = update.mul.input[update.dt_input]
        dtype = scalars[old].dtype
        name = f"flow_steps/dt_{step}"
        graph.initializer.append(numpy_helper.from_array(np.asarray(t[reach] - t[step], dtype=dtype), name))
        update.mul.input[update.dt_input] = name
        for skipped in range(step + 1, reach):
            # Every skipped step's x, not only the last: the export writes each step's x into one batch-2 buffer
            # (``x_in[:] = x``, a ScatterND on the previous step's buffer), so the buffer chain still reads them.
            renames[chain[skipped].add.output[0]] = update.add.output[0]
    _rename_inputs(graph, renames)
    outputs = {o.name for o in graph.output}
    for old, new in renames.items():
        if old in outputs:
            graph.node.append(helper.make_node("Identity", [new], [old]))
    _prune(graph)
    log.info("decoder flow steps %d → %d (kept %s)", exported, steps, kept)
    return exported


def _rename_inputs(graph: Any, renames: dict[str, str]) -> None:
    """Point every use of a renamed value at its new name, in ``graph`` and in the subgraphs of its nodes: the export
    builds each step's batch-2 input through ``If`` nodes (squeeze when the batch is 1) whose branches read ``x`` from
    the outer graph, so a rename that missed them kept every skipped step's estimator alive."""
    for node in graph.node:
        for j, name in enumerate(node.input):
            if name in renames:
                node.input[j] = renames[name]
        for sub in _subgraphs(node):
            _rename_inputs(sub, renames)


def _subgraphs(node: Any) -> list[Any]:
    graphs: list[Any] = []
    for attribute in node.attribute:
        if attribute.type == 5:  # GRAPH
            graphs.append(attribute.g)
        elif attribute.type == 10:  # GRAPHS
            graphs.extend(attribute.graphs)
    return graphs


def _prune(graph: Any) -> None:
    """Drop the nodes and initializers nothing needed for the graph's outputs uses."""
    producer = {out: node for node in graph.node for out in node.output}
    needed: set[str] = set()
    stack = [o.name for o in graph.output]
    live: set[int] = set()
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        node = producer.get(name)
        if node is not None and id(node) not in live:
            live.add(id(node))
            stack.extend(n for n in node.input if n)
            stack.extend(subgraph_inputs(node))
    kept_nodes = [n for n in graph.node if id(n) in live]
    del graph.node[:]
    graph.node.extend(kept_nodes)
    kept_init = [t for t in graph.initializer if t.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(kept_init)


def subgraph_inputs(node: Any) -> list[str]:
    """Every name the node's subgraphs (and theirs) read: the outer values among them must stay."""
    names: list[str] = []
    for sub in _subgraphs(node):
        for inner in sub.node:
            names.extend(n for n in inner.input if n)
            names.extend(subgraph_inputs(inner))
    return names
