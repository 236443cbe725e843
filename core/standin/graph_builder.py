"""A thin helper over ``onnx.helper`` so the stand-in graphs read like the maths they compute."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 18
IR_VERSION = 10  # onnx writes IR 14 by default, which current onnxruntime rejects

F32, F16, I64, BOOL = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64, TensorProto.BOOL


class GraphBuilder:
    def __init__(self, name: str):
        self.name = name
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self._ids = itertools.count()
        self.uses_ms_domain = False

    def input(self, name: str, elem_type: int, shape: list) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def output(self, value: str, name: str, elem_type: int, shape: list) -> str:
        if value != name:
            self.op("Identity", value, out=name)
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def init(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def const(self, value, dtype=np.float32) -> str:
        return self.init(f"const_{next(self._ids)}", np.asarray(value, dtype=dtype))

    def op(self, op_type: str, *inputs: str, out: str | None = None, n_out: int = 1, domain: str = "", **attrs):
        outs = [out] if out else [f"{op_type.lower()}_{next(self._ids)}" for _ in range(n_out)]
        if domain:
            self.uses_ms_domain = True
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, domain=domain or None, **attrs))
        return outs[0] if n_out == 1 else outs

    # Shorthands for the ops used over and over.
    def matmul(self, a: str, b: str) -> str:
        return self.op("MatMul", a, b)

    def add(self, a: str, b: str) -> str:
        return self.op("Add", a, b)

    def mul(self, a: str, b: str) -> str:
        return self.op("Mul", a, b)

    def dim(self, tensor: str, axis: int) -> str:
        """A 1-element int64 tensor holding ``tensor.shape[axis]``."""
        return self.op("Shape", tensor, start=axis, end=axis + 1)

    def rename(self, mapping: dict[str, str]) -> None:
        """Give graph inputs and outputs other names (every node that reads or writes them follows)."""
        if not mapping:
            return
        for value in self.inputs + self.outputs:
            value.name = mapping.get(value.name, value.name)
        for node in self.nodes:
            node.input[:] = [mapping.get(n, n) for n in node.input]
            node.output[:] = [mapping.get(n, n) for n in node.output]

    def save(self, path: Path) -> None:
        """Write ``path`` and its ``.onnx_data`` sidecar, as the real exports are laid out."""
        opsets = [helper.make_opsetid("", OPSET)]
        if self.uses_ms_domain:
            opsets.append(helper.make_opsetid("com.microsoft", 1))
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=opsets, producer_name="chatterbox-desk-standin")
        model.ir_version = IR_VERSION
        path.parent.mkdir(parents=True, exist_ok=True)
        data_name = path.name + "_data"
        (path.parent / data_name).unlink(missing_ok=True)
        onnx.save_model(
            model,
            str(path),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=data_name,
            size_threshold=1024,  # small constants stay inline: shape inference must read them
        )
