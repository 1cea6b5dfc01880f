"""Writes the small ONNX models that `onnx!`'s example and ui-tests read.

Run with the pinned `onnx` package (1.19.0):
    python morok-onnx/models/make_models.py
The weights come from a fixed seed, so the files are reproducible.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def mlp():
    """A 4 -> 8 -> 3 classifier over a symbolic batch: x [batch, 4] -> probs [batch, 3]."""
    rng = np.random.default_rng(7)
    w1 = numpy_helper.from_array(rng.standard_normal((4, 8)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.standard_normal((8, 3)).astype(np.float32), "w2")
    b2 = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b2")
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], name="fc2"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 3])],
        [w1, b1, w2, b2],
    )
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "mlp.onnx")


def unsupported():
    """A graph with one node of an op Morok does not implement (Det)."""
    graph = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"], name="determinant")],
        "unsupported",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
    )
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "unsupported.onnx")


def malformed():
    """Bytes that are no protobuf message."""
    with open(os.path.join(HERE, "malformed.onnx"), "wb") as f:
        f.write(b"\xff\xff\xff\xff this is not an ONNX model")


if __name__ == "__main__":
    mlp()
    unsupported()
    malformed()
