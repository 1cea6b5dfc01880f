"""Exports W10's small transformer encoder (PyTorch nn.TransformerEncoder,
d_model 256, 4 heads, 4 layers, feed-forward 1024, input [batch, 128, 256],
batch symbolic) to ONNX with random weights from a fixed seed.

    python morok-bench/peers/export_encoder.py OUT.onnx
Needs torch and onnx (the legacy TorchScript exporter, opset 17).
"""
import sys

import torch

torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(
    d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0, batch_first=True
)
# enable_nested_tensor=False keeps the exported graph to plain ops.
model = torch.nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False).eval()
x = torch.randn(1, 128, 256)
torch.onnx.export(
    model,
    (x,),
    sys.argv[1],
    input_names=["x"],
    output_names=["y"],
    dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
    opset_version=17,
    dynamo=False,
)
