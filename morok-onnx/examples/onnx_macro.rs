//! `onnx!` on a small classifier (`models/mlp.onnx`, x [batch, 4] ->
//! probs [batch, 3]): the macro reads the file while this example
//! compiles, checks its ops and types `forward`; the weights load at run
//! time (`Mlp`) or are embedded in the binary (`MlpEmbedded`).
//!
//! `cargo run -p morok-onnx --example onnx_macro`

use morok::Tensor;
use morok_onnx::{onnx, Fixed, Named, Typed};

onnx!(Mlp = "models/mlp.onnx");
onnx!(MlpEmbedded = "models/mlp.onnx", embed);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rows: [[f32; 4]; 2] = [[0.5, -1.0, 2.0, 0.25], [-0.75, 0.0, 1.5, -2.0]];
    let flat: Vec<f32> = rows.iter().flatten().copied().collect();
    let x = Tensor::from_vec(flat, &[2, 4])?;
    // The model declares x as [batch, 4]: the 4 is a const dim of the type,
    // so a tensor typed [_, 5] does not compile as an argument.
    let x: Typed<f32, (Named, Fixed<4>)> = Typed::new(x)?;

    let from_file = Mlp::load()?;
    let probs: Typed<f32, (Named, Fixed<3>)> = from_file.forward(&x)?;
    let probs = probs.tensor().realize()?.to_vec::<f32>()?;

    let embedded = MlpEmbedded::load()?;
    let again = embedded.forward(&x)?.tensor().realize()?.to_vec::<f32>()?;
    if again != probs {
        return Err(format!("embedded model gave {again:?}, file model {probs:?}").into());
    }
    for (row, p) in probs.chunks(3).enumerate() {
        println!("row {row}: probs {:.4} {:.4} {:.4}", p[0], p[1], p[2]);
    }
    Ok(())
}
