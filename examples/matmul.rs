//! Hands-On, example 3: matrix multiplication.

use morok::Tensor;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Input: 4 samples, 3 features each → shape [4, 3]
    let input = Tensor::from_slice(&[
        1.0f32, 2.0, 3.0, // sample 0
        4.0, 5.0, 6.0, // sample 1
        7.0, 8.0, 9.0, // sample 2
        10.0, 11.0, 12.0, // sample 3
    ])
    .reshape(&[4, 3])?;

    // Weights: 3 inputs → 2 outputs → shape [3, 2]
    let weights = Tensor::from_slice(&[
        0.1f32, 0.2, // feature 0 → outputs
        0.3, 0.4, // feature 1 → outputs
        0.5, 0.6, // feature 2 → outputs
    ])
    .reshape(&[3, 2])?;

    // Matrix multiply: [4, 3] @ [3, 2] → [4, 2]
    let output = input.dot(&weights)?;

    let result = output.realize()?;
    println!("Output shape: {:?}", result.shape()); // [4, 2]
    println!("{:?}", result.to_ndarray::<f32>()?);
    // Each row: weighted sum of that sample's features

    Ok(())
}
