//! The held-out accuracy of a classifier, shared by the training
//! examples.

use morok::{DType, Tensor};

/// The fraction of rows of `scores` (`[rows, classes]`: logits or
/// probabilities) whose largest entry is at the row's label.
pub fn accuracy(scores: &Tensor, labels: &Tensor) -> morok::Result<f32> {
    let predicted = scores.argmax(Some(1))?;
    Ok(predicted
        .eq(labels)?
        .cast(DType::F32)?
        .mean(None, false)?
        .to_vec::<f32>()?[0])
}
