//! The program of README.md's "Use it in your crate" section, as a user
//! writes it in `src/main.rs` of a crate that depends on `morok`: input
//! tensors, a `#[morok::kernel]` function, a `model!` with its
//! constructor, parameters, forward function and safetensors files.
//! (`tests/examples.rs` checks the README shows this file verbatim.)

use morok::dsl::model;
use morok::{DType, Tensor};

/// A two-layer perceptron; `B` is any batch size.
#[morok::kernel]
fn mlp(
    x: Tensor<f32, B, 64>,
    w1: Tensor<f32, 64, 128>,
    w2: Tensor<f32, 128, 10>,
) -> Tensor<f32, B, 10> {
    x.dot(w1).relu().dot(w2).softmax(-1)
}

model! {
    /// The same perceptron with its own parameters.
    pub struct Mlp {
        fc1: Linear(64 -> 128),
        fc2: Linear(128 -> 10),
    }
    pub fn forward(x: f32[B, 64]) -> f32[B, 10] {
        fc2(fc1(x).relu()).softmax(-1)
    }
}

fn main() -> morok::Result<()> {
    // Inputs: random, zeros, or your data.
    Tensor::manual_seed(0);
    let x = Tensor::rand(&[32, 64], DType::F32);
    let w1 = Tensor::randn(&[64, 128], DType::F32);
    let w2 = Tensor::randn(&[128, 10], DType::F32);
    let data = Tensor::from_vec(vec![0.5f32; 2 * 64], &[2, 64])?;

    // A kernel call checks the shapes and returns the realized result.
    let y = mlp(&x, &w1, &w2)?;
    println!("mlp: {:?}", y.shape());
    let row: f32 = y.to_vec::<f32>()?[..10].iter().sum();
    println!("first row sums to {row:.3}");

    // A model: new parameters from a seed, a lazy forward, save and load.
    let model = Mlp::new(42)?;
    for (name, p) in model.parameters() {
        println!("{name}: {:?}", p.shape());
    }
    let p = model.forward(&data)?.realize()?;
    let path = std::env::temp_dir().join(format!("mlp-{}.safetensors", std::process::id()));
    model.save_safetensors(&path)?;
    let loaded = Mlp::load_safetensors(&path)?;
    let same = loaded.forward(&data)?.to_vec::<f32>()? == p.to_vec::<f32>()?;
    println!("reloaded model gives the same output: {same}");
    std::fs::remove_file(&path).ok();
    Ok(())
}
