//! A nearest-centroid classifier for the 8×8 handwritten digits (no
//! training: `cargo run --release --example digits` trains a network), written
//! with tensor ops only.
//!
//! Centroids are masked means: a one-hot label matrix (labels compared with
//! `arange`) transposed and multiplied with the pixel matrix gives the
//! per-class pixel sums, divided by the class counts. Squared distances
//! come from one matrix product, `|x|² - 2 x·c + |c|²`, and the predicted
//! class is the nearest centroid.

#[path = "common/digits.rs"]
mod digits;

use digits::{load, PIXELS};
use morok::{DType, Tensor};

const TRAIN: usize = 1200;
const CLASSES: i32 = 10;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (pixels, labels) = load()?;
    let rows = labels.len();
    println!(
        "{rows} digits, training on {TRAIN}, testing on {}",
        rows - TRAIN
    );

    let x_train = Tensor::from_vec(pixels[..TRAIN * PIXELS].to_vec(), &[TRAIN, PIXELS])?;
    let x_test = Tensor::from_vec(pixels[TRAIN * PIXELS..].to_vec(), &[rows - TRAIN, PIXELS])?;
    let y_train = Tensor::from_slice(&labels[..TRAIN]);
    let y_test = Tensor::from_slice(&labels[TRAIN..]);

    // One-hot labels [TRAIN, 10] and per-class means [10, 64].
    let classes = Tensor::arange(0, CLASSES, 1)?;
    let onehot = y_train.unsqueeze(1)?.eq(&classes)?.cast(DType::F32)?;
    let counts = onehot.sum(Some(&[0]), false)?.unsqueeze(1)?;
    let centroids = onehot.transpose(0, 1)?.matmul(&x_train)?.div(&counts)?;

    // Squared distances [test, 10] and the nearest class.
    let x_norm = x_test.mul(&x_test)?.sum(Some(&[1]), true)?;
    let c_norm = centroids.mul(&centroids)?.sum(Some(&[1]), false)?;
    let cross = x_test.matmul(&centroids.transpose(0, 1)?)?;
    let distances = x_norm.sub(&cross.mul(2.0)?)?.add(&c_norm)?;
    let predicted = distances.argmin(Some(1))?;

    let accuracy = predicted.eq(&y_test)?.cast(DType::F32)?.mean(None, false)?;
    let accuracy = accuracy.realize()?.to_vec::<f32>()?;
    println!("accuracy: {:.3}", accuracy[0]);
    Ok(())
}
