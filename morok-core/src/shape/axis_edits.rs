//! Shape rules of the ops that add, remove, merge, split, reverse or tile
//! axes: `flip`, `squeeze`, `unsqueeze`, `flatten`, `unflatten`, `repeat`.

use super::rules::{normalize_axis, numel_of, reshape_dims, ReshapeDim};
use super::{Dim, Dims, ShapeError};

/// The distinct normalized axes of `flip(axes)`, sorted.
pub fn flip_axes<D: Dim>(shape: &[D], axes: &[isize]) -> Result<Vec<usize>, ShapeError> {
    let mut norm = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = normalize_axis("flip", shape, a)?;
        if norm.contains(&n) {
            return Err(ShapeError::new(
                "flip",
                &[shape],
                format!("axis {a} is listed twice in {axes:?}"),
            ));
        }
        norm.push(n);
    }
    norm.sort_unstable();
    Ok(norm)
}

/// The shape without axis `axis`, which must have size 1 (a 0-d tensor
/// stays 0-d).
pub fn squeeze_shape<D: Dim>(shape: &[D], axis: isize) -> Result<Dims<D>, ShapeError> {
    let d = normalize_axis("squeeze", shape, axis)?;
    let mut out: Dims<D> = shape.iter().cloned().collect();
    if shape.is_empty() {
        return Ok(out);
    }
    if !shape[d].is_one() {
        return Err(ShapeError::new(
            "squeeze",
            &[shape],
            format!("axis {axis} has size {}, not 1", shape[d]),
        ));
    }
    out.remove(d);
    Ok(out)
}

/// The shape without any size-1 axis (PyTorch's `squeeze()`; a symbolic
/// dim is kept, since it is never known to be 1).
pub fn squeeze_all_shape<D: Dim>(shape: &[D]) -> Dims<D> {
    shape.iter().filter(|d| !d.is_one()).cloned().collect()
}

/// The shape with axis `axis` split into `sizes` (one may be `-1`), whose
/// product is the axis' length (PyTorch's `unflatten`).
pub fn unflatten_shape<D: Dim>(
    shape: &[D],
    axis: isize,
    sizes: &[ReshapeDim<D>],
) -> Result<Dims<D>, ShapeError> {
    let d = normalize_axis("unflatten", shape, axis)?;
    if shape.is_empty() || sizes.is_empty() {
        return Err(ShapeError::new(
            "unflatten",
            &[shape],
            "needs an axis and at least one size",
        ));
    }
    let parts = reshape_dims(&shape[d..=d], sizes)
        .map_err(|e| ShapeError::new("unflatten", &[shape], format!("axis {axis} {}", e.reason)))?;
    let mut out: Dims<D> = shape[..d].iter().cloned().collect();
    out.extend(parts);
    out.extend(shape[d + 1..].iter().cloned());
    Ok(out)
}

/// The shape with a size-1 axis inserted at `axis` (`-1` appends).
pub fn unsqueeze_shape<D: Dim>(shape: &[D], axis: isize) -> Result<Dims<D>, ShapeError> {
    let mut out: Dims<D> = shape.iter().cloned().collect();
    let mut extended = out.clone();
    extended.push(D::lit(1));
    let d = normalize_axis("unsqueeze", &extended, axis)?;
    out.insert(d, D::lit(1));
    Ok(out)
}

/// The shape with axes `start..=end` merged into one (a 0-d tensor
/// becomes `[1]`).
pub fn flatten_shape<D: Dim>(shape: &[D], start: isize, end: isize) -> Result<Dims<D>, ShapeError> {
    if shape.is_empty() {
        return Ok(std::iter::once(D::lit(1)).collect());
    }
    let s = normalize_axis("flatten", shape, start)?;
    let e = normalize_axis("flatten", shape, end)?;
    if s > e {
        return Err(ShapeError::new(
            "flatten",
            &[shape],
            format!("start axis {start} comes after end axis {end}"),
        ));
    }
    let merged = numel_of(&shape[s..=e])
        .ok_or_else(|| ShapeError::new("flatten", &[shape], "the merged size overflows"))?;
    let mut out: Dims<D> = shape[..s].iter().cloned().collect();
    out.push(merged);
    out.extend(shape[e + 1..].iter().cloned());
    Ok(out)
}

/// The shape of `repeat(reps)` (`op` names the caller): axis `i` grows
/// `reps[i]` times; extra leading entries add axes.
pub fn repeat_shape<D: Dim>(op: &str, shape: &[D], reps: &[usize]) -> Result<Dims<D>, ShapeError> {
    if reps.len() < shape.len() {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!("{} repetitions for {} axes", reps.len(), shape.len()),
        ));
    }
    let lead = reps.len() - shape.len();
    let mut out = Dims::with_capacity(reps.len());
    for (i, &r) in reps.iter().enumerate() {
        let d = match i.checked_sub(lead) {
            Some(j) => shape[j].clone(),
            None => D::lit(1),
        };
        out.push(d.mul(&D::lit(r)).ok_or_else(|| {
            ShapeError::new(op, &[shape], format!("{reps:?} repetitions overflow"))
        })?);
    }
    Ok(out)
}
