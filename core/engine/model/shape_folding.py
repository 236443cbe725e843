"""The language model without its per-step shape arithmetic: shapes that never change folded into constants.

The exported language models compute every reshape's target from the tensors' shapes at run time (PyTorch's
tracer writes ``Shape → Gather → Unsqueeze → Concat → Reshape`` for each ``view``), and GPT-2's projections reshape
to two dimensions and back around every product. On faithful Turbo that is about 2,900 of the 3,200 nodes a decode
step runs, each a few microseconds of onnxruntime's dispatch: as much time as the 4-bit products themselves.

The rewrite learns what those shapes are from the graph itself: it runs the graph on a few tiny inputs whose batch,
length and cache length all differ (:data:`PROBES`) and records every value computed from shapes alone and every
reshape's input and output shape. Then:

- a value computed from shapes alone that is the same in every probe is a constant (e.g. ``sqrt(head_dim)``);
- a reshape whose output dims are, in every probe, constants or copies of its input's dims at the same place (one
  dim may be whatever is left) gets a constant target (``0`` copies, ``-1`` infers);
- a reshape to two dims before a 4-bit product and the reshape back after it (bias in between) are dropped: the
  product takes the three-dimensional input as it is;

and what no longer feeds anything is removed. The result is checked against the graph as exported on inputs the
probes did not use; any difference and the graph is used as exported. Built once per graph file and kept in the
user cache (a few seconds: the graph runs with tiny inputs).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.files.atomic import atomic_path
from core.engine.model.bundle import file_stamp
from core.engine.model.fused_attention import consumers_of, fuse_attention
from core.engine.model.shared_cache import share_cache

log = logging.getLogger(__name__)
FORMAT_VERSION = 1
PROBES = ((1, 1, 3), (2, 1, 5), (1, 3, 2), (1, 1, 11), (3, 2, 4))
"""(batch, new positions, cached positions) of the probe runs: every dimension varies on its own."""
CHECKS = ((1, 1, 23), (2, 4, 9), (1, 6, 0))
"""Inputs the folded graph is checked on (not among the probes; the last one a prefill without a cache)."""
SHARED_CHECKS = ((1, 1, 23), (2, 1, 9), (1, 6, 0), (1, 4, 9))
"""The same for a graph whose cache is shared (:mod:`.shared_cache`): several rows only one position at a time."""
IN_PLACE_CHECKS = ((2, 1, 17), (1, 4, 9), (1, 5, 0), (2, 3, 0))
"""Runs checked with the cache inside a longer buffer bound as both past and present (how they are run): a step of
two rows, a prefill on top of a cache, prefills from nothing of one row and of two (guidance's pair)."""
TOLERANCE = 1e-4
_SAME_TYPE = {
    "Gather", "Slice", "Squeeze", "Unsqueeze", "Concat", "Reshape", "Expand", "Tile", "Identity", "Add", "Sub",
    "Mul", "Div", "Pow", "Sqrt", "Min", "Max", "Neg", "Abs", "Floor", "Ceil", "Mod", "Range", "CumSum", "ReduceProd",
    "ReduceSum", "ReduceMax", "ReduceMin", "Transpose", "Flatten",
}  # fmt: skip
_BOOL = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor"}
_PRODUCTS = {"MatMulNBits", "MatMul"}

Feeds = Callable[[int, int, int], dict[str, np.ndarray]]


def _identity(graph_identity: str) -> str:
    return hashlib.sha256(f"fold-v{FORMAT_VERSION}|{graph_identity}".encode()).hexdigest()


def folded_graph(
    graph: Path,
    model_bytes: bytes | None,
    cache_dir: Path | None,
    fold: bool = True,
    fuse: bool = False,
    working: Callable[[], None] | None = None,
    share: bool = False,
) -> bytes | None:
    """The serialized graph (``model_bytes``, else the file) with its shape arithmetic folded (``fold``), its
    attention fused (``fuse``) and, where fused, its cache shared between past and present (``share``), or
    ``None`` when nothing changed or the check failed (the graph is then used as it is). Kept in ``cache_dir``.
    ``working``: see :func:`fold_shapes` (never called when the result is cached)."""
    if not fold and not fuse:
        return None
    switches = f"{fold}|{fuse}" + ("|shared" if share and fuse else "")
    key = _identity(f"{file_stamp(graph)}|{switches}|{hashlib.sha256(model_bytes or b'').hexdigest()}")
    cached = cache_dir / f"{key[:40]}.onnx" if cache_dir else None
    failed = cache_dir / f"{key[:40]}.unfoldable" if cache_dir else None
    if failed is not None and failed.is_file():
        return None
    if cached is not None and cached.is_file():
        try:
            return cached.read_bytes()
        except OSError as exc:
            log.warning("cannot read %s (%s); folding again", cached, exc)
    import onnx

    try:
        if model_bytes is not None:
            model = onnx.load_from_string(model_bytes)
        else:
            model = onnx.load(str(graph), load_external_data=False)
        data = fold_shapes(model, graph.parent, lm_feeds(model), fold, fuse, working, share)
    except Exception as exc:  # noqa: BLE001 - an unexpected graph keeps its exported form
        log.warning("%s: shape folding failed (%s); the graph is used as exported", graph.name, exc)
        data = None
    target = cached if data is not None else failed
    if target is not None:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(target) as tmp:
                tmp.write_bytes(data or b"")
        except OSError as exc:
            log.info("cannot keep the folded graph in %s (%s)", target.parent, exc)
    return data


def lm_feeds(model: Any) -> Feeds:
    """Inputs for a language model of the contract (``inputs_embeds``, ``attention_mask``, optional
    ``position_ids``, ``past_key_values.*``) of a given batch, new length and cache length; random values."""
    import onnx

    inputs = {i.name: i for i in model.graph.input}
    names = {t.name for t in model.graph.initializer}

    def static(name: str, index: int) -> int:
        dim = inputs[name].type.tensor_type.shape.dim[index]
        if not dim.HasField("dim_value"):
            raise ValueError(f"{name} dim {index} is not fixed")
        return int(dim.dim_value)

    def dtype(name: str) -> np.dtype:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(inputs[name].type.tensor_type.elem_type))

    hidden = static("inputs_embeds", 2)
    pasts = [n for n in inputs if n.startswith("past_key_values.") and n not in names]

    def feeds(batch: int, new: int, cached: int) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(batch * 100 + new * 10 + cached)
        out = {"inputs_embeds": (rng.standard_normal((batch, new, hidden)) * 0.1).astype(dtype("inputs_embeds"))}
        out["attention_mask"] = np.ones((batch, cached + new), dtype("attention_mask"))
        if "position_ids" in inputs:
            out["position_ids"] = np.tile(np.arange(cached, cached + new), (batch, 1)).astype(dtype("position_ids"))
        for name in pasts:
            shape = (batch, static(name, 1), cached, static(name, 3))
            out[name] = (rng.standard_normal(shape) * 0.1).astype(dtype(name))
        return out

    return feeds


def fold_shapes(
    model: Any,
    weights_folder: Path,
    feeds: Feeds,
    fold: bool = True,
    fuse: bool = False,
    working: Callable[[], None] | None = None,
    share: bool = False,
) -> bytes | None:
    """Rewrite ``model`` in place: its shape arithmetic folded (``fold``, see the module docstring), each layer's
    attention fused into one operator (``fuse``, :mod:`.fused_attention`) and, where fused, written to a cache
    shared between past and present (``share``, :mod:`.shared_cache`; a sharing that fails its check falls back
    to the fused graph); ``None`` when nothing changed or the check against the graph as it was failed.
    ``working`` is called once, before the first run of the graph (the seconds a front end may want to account
    for); a graph with nothing to rewrite never runs."""
    calls: list[bool] = []

    def announce() -> None:
        if working is not None and not calls:
            calls.append(True)
            working()

    import onnx

    original = model.SerializeToString()
    graph = model.graph
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for n in graph.node for a in n.attribute):
        return None  # subgraphs read outer tensors by name: not handled here
    changed = _fold(model, weights_folder, feeds, announce) if fold else 0
    if changed:
        _remove_dead(graph)  # the fusion matches a layer by who reads what: the folded shape reads go first
    fused = fuse_attention(model) if fuse else 0
    if fused:
        _remove_dead(graph)
    if not changed and not fused:
        return None
    rewritten: bytes = model.SerializeToString()
    announce()
    if fused and share and _shared(model):
        shared: bytes = model.SerializeToString()
        if _same_outputs(original, shared, weights_folder, feeds, SHARED_CHECKS, in_place=True):
            log.info("language model: %d shape computations folded, %d layers sharing their cache", changed, fused)
            return shared
        log.warning("the language model's shared cache differs from the exported one: it is used fused")
    if not _same_outputs(original, rewritten, weights_folder, feeds, CHECKS):
        log.warning("the rewritten language model differs from the exported one: it is used as exported")
        return None
    log.info("language model: %d shape computations folded, %d attention layers fused", changed, fused)
    return rewritten


def _shared(model: Any) -> int:
    """:func:`.shared_cache.share_cache` on ``model``; 0 (the fused graph kept) where it fails."""
    try:
        return share_cache(model)
    except Exception as exc:  # noqa: BLE001 - an unexpected graph keeps its fused attention
        log.warning("the language model's cache cannot be shared (%s): it is used fused", exc)
        return 0


def _fold(model: Any, weights_folder: Path, feeds: Feeds, announce: Callable[[], None]) -> int:
    """Fold the shape arithmetic of ``model`` in place; the number of folds."""
    import onnx

    graph = model.graph
    constants = _constants(graph)
    shape_only = _shape_only(graph.node, constants)
    types = _types(graph)
    consumers = consumers_of(graph.node)
    frontier = sorted(
        t for t in shape_only if t not in constants and t in types and any(
            c.output[0] not in shape_only for c in consumers.get(t, ()))
    )  # fmt: skip
    reshapes = [n for n in graph.node if n.op_type == "Reshape" and n.input[1] not in constants]
    if not frontier and not reshapes:
        return 0
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    extra: list[str] = []
    for t in frontier:
        probe.graph.output.append(onnx.helper.make_tensor_value_info(t, types[t], None))
        extra.append(t)
    for i, node in enumerate(reshapes):
        for side, tensor in (("in", node.input[0]), ("out", node.output[0])):
            name = f"__fold_shape_{side}_{i}"
            probe.graph.node.append(onnx.helper.make_node("Shape", [tensor], [name]))
            probe.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT64, None))
            extra.append(name)
    announce()
    session = _session(probe.SerializeToString(), weights_folder)
    runs = [dict(zip(extra, session.run(extra, feeds(*p)), strict=True)) for p in PROBES]
    del session

    changed = 0
    # Reshape → product (→ bias) → reshape back: the product takes the input as it is.
    index = {node.output[0]: i for i, node in enumerate(reshapes)}
    for i, node in enumerate(reshapes):
        changed += _drop_flatten_pair(graph, node, i, index, runs, consumers, constants)
    # Reshapes with a constant target.
    for i, node in enumerate(reshapes):
        if node.op_type != "Reshape" or node.input[1] in constants or not node.output[0]:
            continue
        target = _constant_target(
            [r[f"__fold_shape_in_{i}"] for r in runs], [r[f"__fold_shape_out_{i}"] for r in runs], node
        )
        if target is not None:
            name = f"__fold_target_{i}"
            graph.initializer.append(onnx.numpy_helper.from_array(np.array(target, np.int64), name))
            node.input[1] = name
            changed += 1
    # Values computed from shapes alone that never change.
    for t in frontier:
        values = [r[t] for r in runs]
        if all(v.shape == values[0].shape and np.array_equal(v, values[0]) for v in values[1:]):
            name = f"__fold_const_{len(graph.initializer)}"
            graph.initializer.append(onnx.numpy_helper.from_array(np.asarray(values[0]), name))
            for c in consumers.get(t, ()):
                if c.output[0] not in shape_only:
                    for k, x in enumerate(c.input):
                        if x == t:
                            c.input[k] = name
            changed += 1
    return changed


def _session(data: bytes, weights_folder: Path) -> Any:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    so.add_session_config_entry("session.model_external_initializers_file_folder_path", str(weights_folder))
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def _exact(data: bytes) -> bytes:
    """The graph with every 4-bit product computing in float32 (accuracy level 0): int8 compute quantises the
    activations, so a rounding difference in the last bit upstream can move a product's result by a quantisation
    step (measured: 0.02–0.04 in the logits where the float32 difference was 2e-6). The check compares the
    rewrite, not that rounding."""
    import onnx

    model = onnx.load_from_string(data)
    changed = False
    for node in model.graph.node:
        for attribute in node.attribute:
            if node.op_type == "MatMulNBits" and attribute.name == "accuracy_level" and attribute.i:
                attribute.i, changed = 0, True
    return model.SerializeToString() if changed else data


def _same_outputs(
    a: bytes,
    b: bytes,
    weights_folder: Path,
    feeds: Feeds,
    checks: tuple[tuple[int, int, int], ...],
    in_place: bool = False,
) -> bool:
    """Whether both graphs give the same outputs on ``checks`` (and, ``in_place``, on :data:`IN_PLACE_CHECKS` run
    with ``b``'s cache in a shared buffer), in float32 arithmetic (a rewritten graph that does not load or run is
    not the same). One session at a time: a float32 Original language model is 2 GB."""
    shared = IN_PLACE_CHECKS if in_place else ()
    probes = [*checks, *shared]
    first = _session(_exact(a), weights_folder)
    names = [o.name for o in first.get_outputs()]
    expected = [first.run(names, feeds(*probe)) for probe in probes]
    del first
    try:
        second = _session(_exact(b), weights_folder)
        got = [second.run(names, feeds(*probe)) for probe in checks]
        got += [_run_in_place(second, names, feeds(*probe)) for probe in shared]
        for want, have in zip(expected, got, strict=True):
            for x, y in zip(want, have, strict=True):
                if x.shape != y.shape or (x.size and float(np.max(np.abs(x.astype(np.float64) - y))) > TOLERANCE):
                    return False
    except Exception as exc:  # noqa: BLE001 - any failure of the rewritten graph means: keep the exported one
        log.info("the rewritten graph fails its check (%s)", exc)
        return False
    return True


def _run_in_place(session: Any, names: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """``session``'s outputs with each ``past_key_values.N.*`` in a buffer three positions longer than the run
    needs, bound as both the past and ``present.N.*`` (as :class:`~core.engine.generation.lm_runners.SharedKV`
    runs it); the presents come back cut to the positions in use."""
    import onnxruntime as ort

    io = session.io_binding()
    io.bind_output(names[0], "cpu")
    rooms: dict[str, np.ndarray] = {}
    for name, value in feeds.items():
        if not name.startswith("past_key_values."):
            io.bind_cpu_input(name, value)
            continue
        batch, heads, cached, dim = value.shape
        room = np.zeros((batch, heads, cached + feeds["inputs_embeds"].shape[1] + 3, dim), value.dtype)
        room[:, :, :cached] = value
        shared = ort.OrtValue.ortvalue_from_numpy(room)
        io.bind_ortvalue_input(name, shared)
        present = "present." + name[len("past_key_values.") :]
        io.bind_ortvalue_output(present, shared)
        rooms[present] = room
    session.run_with_iobinding(io)
    used = feeds["attention_mask"].shape[1]
    logits = io.get_outputs()[0].numpy()
    return [logits, *(rooms[name][:, :, :used] for name in names[1:])]


def _constants(graph: Any) -> set[str]:
    """Initializers, constants, and what is computed from them alone (e.g. a weight shared through ``Identity``)."""
    known = {t.name for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" or (
            node.op_type not in ("Shape", "Size") and node.input and all(not x or x in known for x in node.input)
        ):
            known.update(node.output)
    return known


def _shape_only(nodes: Iterable[Any], constants: set[str]) -> set[str]:
    """Tensors computed from shapes and constants only (their values depend on no input's values)."""
    known = set(constants)
    out: set[str] = set()
    for node in nodes:  # graphs are stored in topological order
        if node.op_type in ("Shape", "Size") or (
            node.op_type != "Constant" and node.input and all(not x or x in known for x in node.input)
        ):
            known.update(node.output)
            out.update(node.output)
    return out


def _types(graph: Any) -> dict[str, int]:
    """Element types of the tensors the probe reads (from each producer's kind; unknown ones are left out)."""
    import onnx

    types = {t.name: t.data_type for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            if value is not None:
                types[node.output[0]] = value.data_type
        elif node.op_type in ("Shape", "Size"):
            types[node.output[0]] = onnx.TensorProto.INT64
        elif node.op_type == "Cast":
            types[node.output[0]] = next(a.i for a in node.attribute if a.name == "to")
        elif node.op_type == "ConstantOfShape":
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            types[node.output[0]] = value.data_type if value is not None else onnx.TensorProto.FLOAT
        elif node.op_type in _BOOL:
            types[node.output[0]] = onnx.TensorProto.BOOL
        elif node.op_type == "Where" and len(node.input) > 1 and node.input[1] in types:
            types[node.output[0]] = types[node.input[1]]
        elif node.op_type in _SAME_TYPE and node.input and node.input[0] in types:
            types[node.output[0]] = types[node.input[0]]
    return types


def _constant_target(ins: list[np.ndarray], outs: list[np.ndarray], node: Any) -> list[int] | None:
    """A target that gives every probe's output shape: constants, ``0`` (copy the input's dim) and one ``-1``."""
    if any(a.name == "allowzero" and a.i for a in node.attribute) or len({len(o) for o in outs}) != 1:
        return None
    target: list[int | None] = []
    for d in range(len(outs[0])):
        dims = [int(o[d]) for o in outs]
        if all(x == dims[0] for x in dims) and dims[0] > 0:
            target.append(dims[0])
        elif all(d < len(i) and int(i[d]) == x for i, x in zip(ins, dims, strict=True)):
            target.append(0)
        else:
            target.append(None)
    if target.count(None) > 1:
        return None
    if None in target:
        if any(0 in o.tolist() for o in outs):  # -1 cannot be inferred next to an empty dim
            return None
        target[target.index(None)] = -1
    return [int(t) for t in target if t is not None]


def _drop_flatten_pair(
    graph: Any,
    first: Any,
    index: int,
    reshape_index: dict[str, int],
    runs: list[dict[str, np.ndarray]],
    consumers: dict[str, list[Any]],
    constants: set[str],
) -> int:
    """``Reshape(x, [-1, K]) → MatMulNBits/MatMul (→ Add bias) → Reshape(back to x's leading dims + [N])``: the
    product reads ``x`` and the second reshape goes. ``reshape_index``: the probed reshapes' numbers by output."""
    users = consumers.get(first.output[0], [])
    if len(users) != 1 or users[0].op_type not in _PRODUCTS or users[0].input[0] != first.output[0]:
        return 0
    product = users[0]
    if product.op_type == "MatMul" and product.input[1] not in constants:
        return 0
    tail = product
    after = consumers.get(tail.output[0], [])
    if len(after) == 1 and after[0].op_type == "Add" and any(x in constants for x in after[0].input):
        tail = after[0]
        after = consumers.get(tail.output[0], [])
    if len(after) != 1 or after[0].op_type != "Reshape" or after[0].output[0] not in reshape_index:
        return 0
    second = after[0]
    j = reshape_index[second.output[0]]
    for r in runs:
        x_shape, flat, back = r[f"__fold_shape_in_{index}"], r[f"__fold_shape_out_{index}"], r[f"__fold_shape_out_{j}"]
        if len(flat) != 2 or list(back[:-1]) != list(x_shape[:-1]) or int(flat[1]) != int(x_shape[-1]):
            return 0
    if any(output.name == second.output[0] for output in graph.output):
        return 0  # a graph output keeps its name: leave this pair
    product.input[0] = first.input[0]
    for node in consumers.get(second.output[0], []):
        for k, x in enumerate(node.input):
            if x == second.output[0]:
                node.input[k] = tail.output[0]
    first.output[0] = ""  # marks both reshapes dead (removed below)
    second.output[0] = ""
    return 1


def _remove_dead(graph: Any) -> None:
    """Drop nodes whose outputs nothing reads, then initializers nothing reads."""
    needed = {o.name for o in graph.output}
    keep = []
    for node in reversed(list(graph.node)):
        if any(o and o in needed for o in node.output):
            keep.append(node)
            needed.update(x for x in node.input if x)
    keep.reverse()
    del graph.node[:]
    graph.node.extend(keep)
    used = [t for t in graph.initializer if t.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(used)
