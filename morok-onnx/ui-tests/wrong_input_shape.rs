use morok_onnx::{Fixed, Named, Typed};

morok_onnx::onnx!(Mlp = "ui-models/mlp.onnx");

// The model's input is x [batch, 4]; a tensor typed [_, 5] is no argument.
fn call(model: &Mlp, x: &Typed<f32, (Named, Fixed<5>)>) {
    let _ = model.forward(x);
}

fn main() {}
