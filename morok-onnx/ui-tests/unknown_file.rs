morok_onnx::onnx!(Missing = "ui-models/missing.onnx");

fn main() {}
