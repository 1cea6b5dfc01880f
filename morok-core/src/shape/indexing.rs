//! Shape rules of the ops that read or write by an index or a mask tensor:
//! `gather`, `index_select`, `masked_fill`, the scatter family.

use super::rules::{broadcast_shapes, normalize_axis, numel_of};
use super::{Dim, Dims, ShapeError};

/// Whether `a <= b` is known: both numbers in order, or the same dim. A
/// symbolic dim is not known to be at most another one.
pub(super) fn known_at_most<D: Dim>(a: &D, b: &D) -> bool {
    match (a.as_lit(), b.as_lit()) {
        (Some(x), Some(y)) => x <= y,
        _ => a == b,
    }
}

/// Whether `index` has `shape`'s rank and no axis known to be longer
/// than `shape`'s, except axis `d`.
fn fits_except<D: Dim>(index: &[D], shape: &[D], d: usize) -> bool {
    index.len() == shape.len()
        && index
            .iter()
            .zip(shape)
            .enumerate()
            .all(|(i, (a, b))| i == d || known_at_most(a, b))
}

/// `gather(axis, index)`: the index has the input's rank and no axis
/// longer than the input's except `axis`; the result has the index's
/// shape (a 0-d input takes a 0-d index).
pub fn gather_shape<D: Dim>(shape: &[D], index: &[D], axis: isize) -> Result<Dims<D>, ShapeError> {
    let d = normalize_axis("gather", shape, axis)?;
    if !fits_except(index, shape, d) {
        return Err(ShapeError::new(
            "gather",
            &[shape, index],
            format!("the index must have the input's rank and fit it except on axis {d}"),
        ));
    }
    Ok(index.iter().cloned().collect())
}

/// `index_select(axis, index)`: a 0-d or 1-D index; the axis takes the
/// index's length (a 0-d input gives the index's shape).
pub fn index_select_shape<D: Dim>(
    shape: &[D],
    index: &[D],
    axis: isize,
) -> Result<Dims<D>, ShapeError> {
    let d = normalize_axis("index_select", shape, axis)?;
    if index.len() > 1 {
        return Err(ShapeError::new(
            "index_select",
            &[shape, index],
            "the index must be 0-d or 1-D",
        ));
    }
    if shape.is_empty() {
        return Ok(index.iter().cloned().collect());
    }
    let mut out: Dims<D> = shape.iter().cloned().collect();
    out[d] = numel_of(index).unwrap_or_else(|| D::lit(1));
    Ok(out)
}

/// A mask, and a value tensor if any, that broadcast to the input's shape
/// (`op` is `masked_fill`); the result has the input's shape.
pub fn masked_shape<D: Dim>(
    op: &str,
    shape: &[D],
    mask: &[D],
    value: Option<&[D]>,
) -> Result<Dims<D>, ShapeError> {
    let parts = std::iter::once(("mask", mask)).chain(value.map(|v| ("value", v)));
    for (role, part) in parts {
        let joint = broadcast_shapes(op, shape, part)?;
        if joint.as_slice() != shape {
            return Err(ShapeError::new(
                op,
                &[shape, part],
                format!("the {role} must broadcast to the input's shape"),
            ));
        }
    }
    Ok(shape.iter().cloned().collect())
}

/// The scatter family (`op`: `scatter`, `scatter_add`, ...): input, index
/// and src have one rank (at least 1), the index fits src, and the input
/// except on `axis`; the result has the input's shape.
pub fn scatter_shape<D: Dim>(
    op: &str,
    shape: &[D],
    index: &[D],
    src: &[D],
    axis: isize,
) -> Result<Dims<D>, ShapeError> {
    let d = normalize_axis(op, shape, axis)?;
    let fits = !shape.is_empty()
        && src.len() == shape.len()
        && index.iter().zip(src).all(|(a, b)| known_at_most(a, b))
        && fits_except(index, shape, d);
    if !fits {
        return Err(ShapeError::new(
            op,
            &[shape, index, src],
            format!(
                "input, index and src must have one rank (at least 1), the index must fit \
                 src, and the input except on axis {d}"
            ),
        ));
    }
    Ok(shape.iter().cloned().collect())
}
