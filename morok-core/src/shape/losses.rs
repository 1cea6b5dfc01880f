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

/// A class loss (`nll_loss`, `cross_entropy_with`; `op` names the
/// errors) of scores `[N, C, ...]` (or `[C]`: the class axis is 1, or 0
/// of a 1-D input) against class indices of the scores' shape without the
/// class axis (`int_target`) or class probabilities of the scores' shape,
/// with an optional weight of shape `[C]`. The loss is 0-d, or with
/// `kept` (no reduction) the scores' shape without the class axis.
pub fn class_loss_shape<D: Dim>(
    op: &str,
    input: &[D],
    target: &[D],
    weight: Option<&[D]>,
    int_target: bool,
    kept: bool,
) -> Result<Dims<D>, ShapeError> {
    let fail = |why: String| ShapeError::new(op, &[input, target], why);
    if input.is_empty() {
        return Err(fail("the input needs a class axis".into()));
    }
    let class_axis = usize::from(input.len() >= 2);
    let classes = &input[class_axis];
    let without: Dims<D> = input
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != class_axis)
        .map(|(_, d)| d.clone())
        .collect();
    if int_target && target != without.as_slice() {
        return Err(fail(
            "class-index targets must have the input's shape without the class axis".into(),
        ));
    }
    if !int_target && target != input {
        return Err(fail(
            "probability targets must have the input's shape".into(),
        ));
    }
    if let Some(w) = weight {
        if w != std::slice::from_ref(classes) {
            return Err(fail(format!("the weight must have shape [{classes}]")));
        }
    }
    Ok(if kept { without } else { Dims::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_loss_shapes() {
        let s = |x: &[usize], t: &[usize], w: Option<&[usize]>, int: bool, kept: bool| {
            class_loss_shape("l", x, t, w, int, kept).map(|d| d.to_vec())
        };
        assert_eq!(
            s(&[4, 3, 5], &[4, 5], Some(&[3]), true, true),
            Ok(vec![4, 5])
        );
        assert_eq!(s(&[4, 3], &[4], None, true, false), Ok(vec![]));
        assert_eq!(s(&[4, 3], &[4, 3], None, false, true), Ok(vec![4]));
        assert_eq!(s(&[3], &[], None, true, true), Ok(vec![]));
        assert!(s(&[4, 3], &[3], None, true, false).is_err());
        assert!(s(&[4, 3], &[4], Some(&[4]), true, false).is_err());
        assert!(s(&[], &[], None, true, false).is_err());
    }
}
