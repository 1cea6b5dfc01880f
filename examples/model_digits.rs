//! `model!`: the digits MLP with seeded PyTorch-style weights, checked
//! against the same computation written with the tensor API, then saved
//! and reloaded through safetensors.

#[path = "common/digits.rs"]
mod digits;

use morok::Tensor;

#[path = "common/mlp.rs"]
mod shared_mlp;
use shared_mlp::DigitsMlp;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (pixels, labels) = digits::load()?;
    let rows = labels.len();
    let x = Tensor::from_vec(pixels, &[rows, digits::PIXELS])?.div(16.0)?;
    let m = DigitsMlp::new(42)?;
    for (name, t) in m.parameters() {
        println!("{name}: {:?}", t.shape());
    }
    let p = m.forward(&x)?.realize()?;

    // The same computation with the tensor API.
    let params = m.parameters();
    let h = x.linear(&params[0].1, Some(&params[1].1))?.relu()?;
    let want = h.linear(&params[2].1, Some(&params[3].1))?.softmax(-1)?;
    let diff = p
        .to_vec::<f32>()?
        .iter()
        .zip(want.to_vec::<f32>()?)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!(
        "{rows} digits: output {:?}, max difference from the tensor API {diff:e}",
        p.shape()
    );
    assert!(diff < 1e-5);

    let path =
        std::env::temp_dir().join(format!("model_digits-{}.safetensors", std::process::id()));
    m.save_safetensors(&path)?;
    let m2 = DigitsMlp::load_safetensors(&path)?;
    let same = m2.forward(&x)?.to_vec::<f32>()? == p.to_vec::<f32>()?;
    std::fs::remove_file(&path)?;
    println!("reloaded from safetensors: identical = {same}");
    assert!(same);
    Ok(())
}
