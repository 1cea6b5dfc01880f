//! Hands-On, example 2: reshape, transpose and broadcasting.

use morok::Tensor;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Create a 1D tensor with 6 elements
    let data = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    println!("Original shape: {:?}", data.shape()); // [6]

    // Reshape to a 2x3 matrix
    let matrix = data.reshape(&[2, 3])?;
    println!("Matrix shape: {:?}", matrix.shape()); // [2, 3]

    // Transpose to 3x2
    let transposed = matrix.transpose(0, 1)?;
    println!("Transposed shape: {:?}", transposed.shape()); // [3, 2]

    // Broadcasting: add a row vector to every row
    // [3, 2] + [1, 2] → [3, 2]
    let bias = Tensor::from_slice(&[100.0f32, 200.0]).reshape(&[1, 2])?;
    let biased = &transposed + &bias;

    let result = biased.realize()?;
    println!("{:?}", result.to_ndarray::<f32>()?);
    // [[101, 204],
    //  [102, 205],
    //  [103, 206]]

    // [3, 2] + [3] cannot broadcast: the error names the shapes and this line.
    let wrong = &transposed + &Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    if let Err(e) = wrong.realize() {
        println!("Error: {e}");
    }

    Ok(())
}
