//! Shape rules of the losses beyond [`super::loss_shape`]:
//! `cross_entropy` with class labels and the weighted binary
//! cross-entropies.

use super::rules::{broadcast_shapes, loss_shape};
use super::{Dim, Dims, ShapeError};

/// `cross_entropy(labels)` with class labels: the logits have the
/// classes on axis 1 (axis 0 of a 1-D input), the labels their shape
/// without it; the mean loss is 0-d.
pub fn cross_entropy_shape<D: Dim>(logits: &[D], labels: &[D]) -> Result<Dims<D>, ShapeError> {
    let class_axis = usize::from(logits.len() >= 2);
    let without: Vec<D> = logits
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != class_axis)
        .map(|(_, d)| d.clone())
        .collect();
    if logits.is_empty() || without[..] != labels[..] {
        return Err(ShapeError::new(
            "cross_entropy",
            &[logits, labels],
            format!("labels must have the logits' shape without the class axis {class_axis}"),
        ));
    }
    Ok(Dims::new())
}

/// A loss of `input` against a `target` of its shape (`op`, reduced
/// unless `kept`), whose optional per-element weights (`weight`,
/// `pos_weight`) broadcast to the input's shape.
pub fn weighted_loss_shape<D: Dim>(
    op: &str,
    input: &[D],
    target: &[D],
    weights: &[Option<&[D]>],
    kept: bool,
) -> Result<Dims<D>, ShapeError> {
    let out = loss_shape(op, input, target, kept)?;
    for w in weights.iter().flatten() {
        let joint = broadcast_shapes(op, input, w)?;
        if joint.as_slice() != input {
            return Err(ShapeError::new(
                op,
                &[input, w],
                "the weight must broadcast to the input's shape",
            ));
        }
    }
    Ok(out)
}
