"""Writes W10's models, inputs and expected outputs into one folder:

  resnet50.onnx   ResNet-50 (the torchvision layout: bottleneck stages
                  3-4-6-3, stride on the 3x3 convolution, 1000 classes),
                  written out in plain PyTorch so torchvision is not needed;
                  random weights from a fixed seed and random batch-norm
                  statistics (so no layer is an identity), exported in
                  evaluation mode (batch norm folds into the convolutions),
                  batch symbolic;
  encoder.onnx    nn.TransformerEncoder, d_model 256, 4 heads, 4 layers,
                  feed-forward 1024, input [batch, 128, 256], batch
                  symbolic, random weights from a fixed seed;
  <id>.input.f32, <id>.expected.f32
                  for each W10 workload, its input (xorshift values in
                  [-1, 1), the sequence morok-bench uses, seed 20) and
                  PyTorch's output, raw little-endian float32.

    python morok-bench/peers/export_models.py OUT_DIR
Needs torch and onnx (the TorchScript exporter, opset 17). Writes
`done` last, so a folder without it is incomplete.
"""
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_main import data  # noqa: E402

# id: (model file, input shape); morok-bench's `onnx_models.rs` lists the same.
WORKLOADS = {
    "W10a": ("resnet50.onnx", (1, 3, 224, 224)),
    "W10b": ("resnet50.onnx", (8, 3, 224, 224)),
    "W10c": ("encoder.onnx", (8, 128, 256)),
}
SEED = 20


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = 4 * width
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class ResNet50(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)
        )
        blocks, cin = [], 64
        for width, count, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
            for i in range(count):
                blocks.append(Bottleneck(cin, width, stride if i == 0 else 1))
                cin = 4 * width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(2048, 1000)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def resnet50():
    torch.manual_seed(0)
    model = ResNet50()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.weight.data.uniform_(0.5, 1.0)
            m.bias.data.uniform_(-0.1, 0.1)
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    return model.eval(), torch.randn(1, 3, 224, 224)


def encoder():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0, batch_first=True)
    # enable_nested_tensor=False keeps the exported graph to plain ops.
    model = nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False).eval()
    return model, torch.randn(1, 128, 256)


def export(model, example, path):
    torch.onnx.export(
        model,
        (example,),
        path,
        input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )


def main(out):
    os.makedirs(out, exist_ok=True)
    models = {"resnet50.onnx": resnet50(), "encoder.onnx": encoder()}
    for file, (model, example) in models.items():
        export(model, example, os.path.join(out, file))
    for wid, (file, shape) in WORKLOADS.items():
        x = data(int(np.prod(shape)), SEED).reshape(shape)
        with torch.no_grad():
            y = models[file][0](torch.from_numpy(x)).numpy().astype("<f4")
        x.astype("<f4").tofile(os.path.join(out, f"{wid}.input.f32"))
        y.tofile(os.path.join(out, f"{wid}.expected.f32"))
    open(os.path.join(out, "done"), "w").close()


if __name__ == "__main__":
    main(sys.argv[1])
