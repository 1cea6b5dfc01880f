morok_onnx::onnx!(Broken = "ui-models/malformed.onnx");

fn main() {}
