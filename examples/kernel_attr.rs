//! `#[morok::kernel]`: an annotated function whose shapes are checked at
//! compile time and whose arguments are checked at every call.

use morok::{DType, Tensor};

#[path = "common/mlp.rs"]
mod shared_mlp;
use shared_mlp::mlp;

fn main() -> morok::Result<()> {
    let w1 = Tensor::rand_seeded(&[64, 128], DType::F32, 1);
    let w2 = Tensor::rand_seeded(&[128, 10], DType::F32, 2);
    for b in [1, 7] {
        let x = Tensor::rand_seeded(&[b, 64], DType::F32, 3);
        let y = mlp(&x, &w1, &w2)?;
        let by_hand = x.dot(&w1)?.relu()?.dot(&w2)?.softmax(-1)?;
        let diff = y
            .to_vec::<f32>()?
            .iter()
            .zip(by_hand.to_vec::<f32>()?)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        println!(
            "B = {b}: output shape {:?}, max difference from the tensor API {diff:e}",
            y.shape()
        );
        assert!(diff < 1e-5);
    }
    // A wrong argument is an error naming the parameter, the dim and both values.
    let wrong = Tensor::rand_seeded(&[2, 32], DType::F32, 4);
    match mlp(&wrong, &w1, &w2) {
        Err(e) => println!("Error: {e}"),
        Ok(_) => unreachable!("a [2, 32] input does not fit f32[B, 64]"),
    }
    Ok(())
}
