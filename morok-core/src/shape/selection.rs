//! Shape rules of the selection and rearrangement ops: `roll`,
//! `diagonal`, `diag`, `unfold`, `repeat_interleave` and `shrink`.

use super::indexing::known_at_most;
use super::rules::{normalize_axis, numel_of};
use super::{Dim, Dims, ShapeError};

/// `roll(shifts, dims)`: one shift per axis of `dims`, or a single shift
/// of the flattened tensor when `dims` is empty; the shape is kept.
pub fn roll_shape<D: Dim>(
    shape: &[D],
    shifts: &[isize],
    dims: &[isize],
) -> Result<Dims<D>, ShapeError> {
    let op = "roll";
    if dims.is_empty() && shifts.len() != 1 {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!("{} shifts without dims", shifts.len()),
        ));
    }
    if !dims.is_empty() && shifts.len() != dims.len() {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!("{} shifts for {} dims", shifts.len(), dims.len()),
        ));
    }
    for &d in dims {
        normalize_axis(op, shape, d)?;
    }
    Ok(shape.iter().cloned().collect())
}

/// `diagonal(offset, dim1, dim2)`: removes the two (distinct) axes and
/// appends the diagonal's length, `offset` above the main diagonal
/// (below for a negative one). The length of a diagonal of symbolic axes
/// is known only for the main diagonal of two equal axes.
pub fn diagonal_shape<D: Dim>(
    shape: &[D],
    offset: isize,
    dim1: isize,
    dim2: isize,
) -> Result<Dims<D>, ShapeError> {
    let op = "diagonal";
    if shape.len() < 2 {
        return Err(ShapeError::new(op, &[shape], "needs at least 2 axes"));
    }
    let (a, b) = (
        normalize_axis(op, shape, dim1)?,
        normalize_axis(op, shape, dim2)?,
    );
    if a == b {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!("dim1 and dim2 are both axis {a}"),
        ));
    }
    let (rows, cols) = (&shape[a], &shape[b]);
    let len = match (rows.as_lit(), cols.as_lit()) {
        (Some(r), Some(c)) => {
            let skip = offset.unsigned_abs();
            let (r, c) = if offset >= 0 {
                (r, c - skip.min(c))
            } else {
                (r - skip.min(r), c)
            };
            D::lit(r.min(c))
        }
        _ if offset == 0 && rows == cols => rows.clone(),
        _ => {
            return Err(ShapeError::new(
                op,
                &[shape],
                format!("the length of diagonal {offset} of axes {rows} and {cols} is not known"),
            ))
        }
    };
    let mut out: Dims<D> = (0..shape.len())
        .filter(|&i| i != a && i != b)
        .map(|i| shape[i].clone())
        .collect();
    out.push(len);
    Ok(out)
}

/// `diag(diagonal)`: a 1-D input of `n` becomes the `n + |diagonal|`
/// square matrix, a 2-D input gives its diagonal `diagonal`
/// ([`diagonal_shape`]).
pub fn diag_shape<D: Dim>(shape: &[D], diagonal: isize) -> Result<Dims<D>, ShapeError> {
    match shape.len() {
        2 => diagonal_shape(shape, diagonal, 0, 1),
        1 => {
            let n = shape[0]
                .add(&D::lit(diagonal.unsigned_abs()))
                .ok_or_else(|| {
                    ShapeError::new("diag", &[shape], format!("diagonal {diagonal} overflows"))
                })?;
            Ok([n.clone(), n].into_iter().collect())
        }
        _ => Err(ShapeError::new(
            "diag",
            &[shape],
            "needs a 1-D or 2-D tensor",
        )),
    }
}

/// `unfold(dimension, size, step)`: the axis becomes the number of
/// windows of `size` elements `step` apart, and a last axis of `size` is
/// added (a 0-d tensor counts as `[1]`).
pub fn unfold_shape<D: Dim>(
    shape: &[D],
    dimension: isize,
    size: usize,
    step: usize,
) -> Result<Dims<D>, ShapeError> {
    let op = "unfold";
    let mut out: Dims<D> = if shape.is_empty() {
        std::iter::once(D::lit(1)).collect()
    } else {
        shape.iter().cloned().collect()
    };
    let d = normalize_axis(op, &out, dimension)?;
    let n = out[d].clone();
    let free = n.sub(&D::lit(size));
    let windows = match free {
        Some(free) if step > 0 => free.floor_div(step).add(&D::lit(1)),
        _ => None,
    };
    let Some(windows) = windows else {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!("window {size} with step {step} does not fit axis {d} of size {n}"),
        ));
    };
    out[d] = if size == 0 {
        n.floor_div(step)
            .add(&D::lit(1))
            .unwrap_or_else(|| windows.clone())
    } else {
        windows
    };
    out.push(D::lit(size));
    Ok(out)
}

/// `repeat_interleave(repeats, dim)` with a count: the axis (of the
/// flattened tensor for `None`; a 0-d tensor counts as `[1]`) grows
/// `repeats` times.
pub fn repeat_interleave_shape<D: Dim>(
    shape: &[D],
    repeats: usize,
    dim: Option<isize>,
) -> Result<Dims<D>, ShapeError> {
    let op = "repeat_interleave";
    let mut x: Dims<D> = match dim {
        Some(_) if !shape.is_empty() => shape.iter().cloned().collect(),
        Some(_) => std::iter::once(D::lit(1)).collect(),
        None => std::iter::once(numel_of(shape).unwrap_or_else(|| D::lit(usize::MAX))).collect(),
    };
    let d = normalize_axis(op, &x, dim.unwrap_or(0))?;
    x[d] = x[d].mul(&D::lit(repeats)).ok_or_else(|| {
        ShapeError::new(op, &[shape], format!("{repeats} repeats overflow axis {d}"))
    })?;
    Ok(x)
}

/// `shrink(bounds)`: one `(begin, end)` per axis with `begin <= end <=`
/// the axis' size (known; a symbolic axis only takes its own size as
/// the end).
pub fn shrink_shape<D: Dim>(shape: &[D], bounds: &[(usize, usize)]) -> Result<Dims<D>, ShapeError> {
    let fits = bounds.len() == shape.len()
        && bounds
            .iter()
            .zip(shape)
            .all(|(&(b, e), d)| b <= e && known_at_most(&D::lit(e), d));
    if !fits {
        return Err(ShapeError::new(
            "shrink",
            &[shape],
            format!("bounds {bounds:?} do not fit"),
        ));
    }
    Ok(bounds.iter().map(|&(b, e)| D::lit(e - b)).collect())
}

#[cfg(test)]
mod tests {
    use super::super::SymDim;
    use super::*;

    #[test]
    fn selection_shapes() {
        assert_eq!(
            diagonal_shape(&[2usize, 3, 4], 1, 1, 2).unwrap().as_slice(),
            &[2, 3]
        );
        assert_eq!(
            diagonal_shape(&[3usize, 4], -2, 0, 1).unwrap().as_slice(),
            &[1]
        );
        assert!(diagonal_shape(&[3usize, 4], 0, 1, -1).is_err());
        assert_eq!(
            unfold_shape(&[7usize], 0, 3, 2).unwrap().as_slice(),
            &[3, 3]
        );
        assert!(unfold_shape(&[2usize], 0, 3, 1).is_err());
        assert_eq!(
            repeat_interleave_shape(&[2usize, 3], 2, None)
                .unwrap()
                .as_slice(),
            &[12]
        );
        assert_eq!(
            shrink_shape(&[4usize, 5], &[(1, 3), (0, 5)])
                .unwrap()
                .as_slice(),
            &[2, 5]
        );
        assert!(roll_shape(&[4usize], &[1, 2], &[0]).is_err());
    }

    #[test]
    fn symbolic_axes() {
        let b = SymDim::name("B");
        let one = std::slice::from_ref(&b);
        let sq = [b.clone(), b.clone()];
        assert_eq!(diagonal_shape(&sq, 0, 0, 1).unwrap().as_slice(), one);
        assert!(diagonal_shape(&sq, 1, 0, 1).is_err());
        let w = unfold_shape(one, 0, 2, 2).unwrap();
        assert_eq!(w[0].to_string(), "(B - 2) / 2 + 1");
        assert!(shrink_shape(one, &[(0, 2)]).is_err());
    }
}
