//! Trains a small convolutional network on the 8×8 handwritten digits
//! (1,797 images, UCI) and reports its accuracy on a held-out 20%.
//!
//! Each step builds the forward pass and the cross-entropy loss;
//! `Adam::minimize` adds the gradients and the parameter update and runs
//! all of it as one schedule. From the second step on, the schedule and
//! its kernels come from the caches: nothing is compiled.
//!
//! `cargo run --release --example digits [epochs]` (default 30).

#[path = "common/accuracy.rs"]
mod accuracy;
#[path = "common/digits.rs"]
mod digits;

use digits::{load, PIXELS};
use indicatif::{ProgressBar, ProgressStyle};
use morok::nn::{Conv2d, Linear};
use morok::optim::{Adam, AdamOptions, Optimizer};
use morok::{PoolOptions, Tensor};
use std::time::Instant;

const CHANNELS: usize = 32;
const BATCH: usize = 64;

/// 3×3 convolution (1 → 32 channels, padded), ReLU, 2×2 max pooling, and
/// a linear layer from the 32 × 4 × 4 features to the 10 class scores.
struct Cnn {
    conv: Conv2d,
    fc: Linear,
}

impl Cnn {
    fn new(seed: u64) -> morok::Result<Cnn> {
        Ok(Cnn {
            conv: Conv2d::init(1, CHANNELS, 3, 1, 1, seed)?,
            fc: Linear::init(CHANNELS * 16, 10, true, seed + 1)?,
        })
    }

    /// Class scores `[B, 10]` of the pixels `[B, 64]`.
    fn forward(&self, x: &Tensor) -> morok::Result<Tensor> {
        let b = x.shape()[0] as isize;
        let images = x.reshape(&[b, 1, 8, 8])?;
        let h = self
            .conv
            .forward(&images)?
            .relu()?
            .max_pool2d(PoolOptions::new((2, 2)))?;
        self.fc.forward(&h.reshape(&[b, (CHANNELS * 16) as isize])?)
    }

    fn parameters(&self) -> Vec<Tensor> {
        let mut named = Vec::new();
        self.conv.parameters("conv", &mut named);
        self.fc.parameters("fc", &mut named);
        named.into_iter().map(|(_, t)| t).collect()
    }
}

/// A deterministic shuffle (SplitMix64 driving Fisher–Yates).
fn shuffle(items: &mut [usize], state: &mut u64) {
    for i in (1..items.len()).rev() {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        items.swap(i, ((z ^ (z >> 31)) % (i as u64 + 1)) as usize);
    }
}

/// The given rows as a batch: pixels scaled to [0, 1], and labels.
fn batch(pixels: &[f32], labels: &[i32], rows: &[usize]) -> morok::Result<(Tensor, Tensor)> {
    let mut x = Vec::with_capacity(rows.len() * PIXELS);
    for &r in rows {
        x.extend(
            pixels[r * PIXELS..(r + 1) * PIXELS]
                .iter()
                .map(|v| v / 16.0),
        );
    }
    let y: Vec<i32> = rows.iter().map(|&r| labels[r]).collect();
    Ok((
        Tensor::from_vec(x, &[rows.len(), PIXELS])?,
        Tensor::from_vec(y, &[rows.len()])?,
    ))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let epochs: usize = match std::env::args().nth(1) {
        Some(a) => a.parse()?,
        None => 30,
    };
    let start = Instant::now();
    let (pixels, labels) = load()?;
    let mut state = 7u64;
    let mut order: Vec<usize> = (0..labels.len()).collect();
    shuffle(&mut order, &mut state);
    let (test_rows, train_rows) = order.split_at(labels.len() / 5);
    let mut train_rows = train_rows.to_vec();
    println!(
        "{} digits: training on {}, testing on {}",
        labels.len(),
        train_rows.len(),
        test_rows.len()
    );
    let (x_test, y_test) = batch(&pixels, &labels, test_rows)?;

    let model = Cnn::new(42)?;
    let mut opt = Adam::new(
        &model.parameters(),
        AdamOptions {
            lr: 0.01,
            ..AdamOptions::default()
        },
    )?;
    let steps = train_rows.len() / BATCH;
    let bar = ProgressBar::new((epochs * steps) as u64).with_style(ProgressStyle::with_template(
        "{bar:30} {pos}/{len} steps, {elapsed}",
    )?);
    let mut accuracy = 0.0;
    for epoch in 1..=epochs {
        shuffle(&mut train_rows, &mut state);
        let mut loss_sum = 0.0;
        for rows in train_rows.chunks_exact(BATCH) {
            let (x, y) = batch(&pixels, &labels, rows)?;
            let loss = model.forward(&x)?.cross_entropy(&y)?;
            loss_sum += opt.minimize(&loss)?.to_vec::<f32>()?[0];
            bar.inc(1);
        }
        accuracy = accuracy::accuracy(&model.forward(&x_test)?, &y_test)?;
        // Above the bar on a terminal; plain lines otherwise.
        bar.suspend(|| {
            println!(
                "epoch {epoch:>2}: loss {:.4}, test accuracy {accuracy:.4}",
                loss_sum / steps as f32
            )
        });
    }
    bar.finish_and_clear();
    println!("accuracy: {accuracy:.4}");
    println!(
        "{} steps in {:.1} s, {} kernels compiled",
        epochs * steps,
        start.elapsed().as_secs_f64(),
        morok::stats::kernel_compiles()
    );
    Ok(())
}
