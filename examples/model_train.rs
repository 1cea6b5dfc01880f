//! Trains the `model!` network `DigitsMlp` (the DSL's digits perceptron,
//! `examples/common/mlp.rs`) on the handwritten digits: its `forward` is
//! a lazy, differentiable graph, and its `parameters()` (named as in its
//! safetensors files) go to an optimizer. The model ends in a softmax, so
//! the loss is the mean negative log-probability of the labels.
//!
//! `cargo run --release --example model_train [epochs]` (default 20).

#[path = "common/accuracy.rs"]
mod accuracy;
#[path = "common/digits.rs"]
mod digits;
#[path = "common/mlp.rs"]
mod shared_mlp;

use digits::{load, PIXELS};
use morok::optim::{Adam, AdamOptions, Optimizer};
use morok::Tensor;
use shared_mlp::DigitsMlp;

const BATCH: usize = 64;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let epochs: usize = match std::env::args().nth(1) {
        Some(a) => a.parse()?,
        None => 20,
    };
    let (pixels, labels) = load()?;
    let rows = labels.len();
    let test_rows = rows / 5;
    let train_rows = rows - test_rows;
    let scaled: Vec<f32> = pixels.iter().map(|v| v / 16.0).collect();
    let x_test = Tensor::from_vec(scaled[train_rows * PIXELS..].to_vec(), &[test_rows, PIXELS])?;
    let y_test = Tensor::from_slice(&labels[train_rows..]);
    let classes = Tensor::arange(0, 10, 1)?;

    let model = DigitsMlp::new(3)?;
    let named = model.parameters();
    let names: Vec<&str> = named.iter().map(|(n, _)| n.as_str()).collect();
    println!("training {}", names.join(", "));
    let params: Vec<Tensor> = named.iter().map(|(_, t)| t.clone()).collect();
    let mut opt = Adam::new(
        &params,
        AdamOptions {
            lr: 0.003,
            ..AdamOptions::default()
        },
    )?;
    let mut accuracy = 0.0;
    for epoch in 1..=epochs {
        let mut loss_sum = 0.0;
        let steps = train_rows / BATCH;
        for b in 0..steps {
            let rows = b * BATCH..(b + 1) * BATCH;
            let x = Tensor::from_vec(
                scaled[rows.start * PIXELS..rows.end * PIXELS].to_vec(),
                &[BATCH, PIXELS],
            )?;
            let y = Tensor::from_slice(&labels[rows]);
            let logp = model.forward(&x)?.log()?;
            let picked = y.unsqueeze(1)?.eq(&classes)?.where_(&logp, 0.0f32)?;
            let loss = picked.sum(None, false)?.div(-(BATCH as f32))?;
            loss_sum += opt.minimize(&loss)?.to_vec::<f32>()?[0];
        }
        accuracy = accuracy::accuracy(&model.forward(&x_test)?, &y_test)?;
        println!(
            "epoch {epoch:>2}: loss {:.4}, test accuracy {accuracy:.4}",
            loss_sum / steps as f32
        );
    }
    println!("accuracy: {accuracy:.4}");
    Ok(())
}
