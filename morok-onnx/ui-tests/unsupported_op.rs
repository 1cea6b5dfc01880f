morok_onnx::onnx!(Determinant = "ui-models/unsupported.onnx");

fn main() {}
