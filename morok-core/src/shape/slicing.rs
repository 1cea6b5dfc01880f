//! Python slicing: [`Slice`] (one axis' `start:end:step`) and the shape
//! of a sliced tensor, [`slice_shape`].

use super::{Dim, Dims, ShapeError};

/// One axis of `Tensor::slice`, with Python slice semantics:
/// `start` and `end` may be negative (counted from the end) or absent, and
/// out-of-range bounds are clamped; a negative `step` walks backwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    /// First index (default: the first element in walking order).
    pub start: Option<isize>,
    /// One past the last index (default: past the end in walking order).
    pub end: Option<isize>,
    /// Distance between picked elements; must not be 0.
    pub step: isize,
}

impl Slice {
    /// The whole axis (`:`).
    pub const fn all() -> Slice {
        Slice {
            start: None,
            end: None,
            step: 1,
        }
    }

    /// `start..end` (`start:end`).
    pub const fn range(start: isize, end: isize) -> Slice {
        Slice {
            start: Some(start),
            end: Some(end),
            step: 1,
        }
    }

    /// From `start` to the end (`start:`).
    pub const fn from(start: isize) -> Slice {
        Slice {
            start: Some(start),
            end: None,
            step: 1,
        }
    }

    /// Up to `end` (`:end`).
    pub const fn to(end: isize) -> Slice {
        Slice {
            start: None,
            end: Some(end),
            step: 1,
        }
    }

    /// The same slice with another step (`::step`).
    pub const fn step(self, step: isize) -> Slice {
        Slice { step, ..self }
    }

    /// Python's `slice.indices`: the first index and the number of
    /// elements picked on an axis of length `len`.
    pub fn resolve(self, len: usize) -> (usize, usize) {
        // i128 arithmetic: no bound or step can overflow it.
        let n = len as i128;
        let step = self.step as i128;
        let (lower, upper) = if step > 0 { (0, n) } else { (-1, n - 1) };
        let clamp = |v: isize| {
            let v = v as i128;
            let v = if v < 0 { v + n } else { v };
            v.clamp(lower, upper)
        };
        let start = self.start.map_or(if step > 0 { 0 } else { n - 1 }, clamp);
        let end = self.end.map_or(if step > 0 { n } else { -1 }, clamp);
        let span = if step > 0 { end - start } else { start - end };
        let stride = step.abs();
        let count = if span > 0 {
            (span + stride - 1) / stride
        } else {
            0
        };
        (start.max(0) as usize, count as usize)
    }
}

/// `slice(slices)`: at most one slice per leading axis, none with step 0;
/// each sliced axis keeps the count of its picked elements. A symbolic
/// axis can only be kept whole (`..`).
pub fn slice_shape<D: Dim>(shape: &[D], slices: &[Slice]) -> Result<Dims<D>, ShapeError> {
    if slices.len() > shape.len() {
        return Err(ShapeError::new(
            "slice",
            &[shape],
            format!("{} slices for {} axes", slices.len(), shape.len()),
        ));
    }
    if let Some(bad) = slices.iter().find(|s| s.step == 0) {
        return Err(ShapeError::new(
            "slice",
            &[shape],
            format!("{bad:?} has step 0"),
        ));
    }
    let mut out: Dims<D> = shape.iter().cloned().collect();
    for (axis, s) in slices.iter().enumerate() {
        match shape[axis].as_lit() {
            Some(n) => out[axis] = D::lit(s.resolve(n).1),
            None if *s == Slice::all() => {}
            None => {
                return Err(ShapeError::new(
                    "slice",
                    &[shape],
                    format!(
                        "slicing axis {axis} of size {} needs a known size (only `..` keeps it)",
                        shape[axis]
                    ),
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_slice_lengths() {
        let s = |sl: Slice| slice_shape(&[10usize], &[sl]).unwrap()[0];
        assert_eq!(s(Slice::range(2, 5)), 3);
        assert_eq!(s(Slice::from(-3)), 3);
        assert_eq!(s(Slice::all().step(-3)), 4);
        assert_eq!(s(Slice::range(8, 2).step(-2)), 3);
        assert_eq!(s(Slice::range(5, 2)), 0);
        assert!(slice_shape(&[3usize], &[Slice::all().step(0)]).is_err());
        assert!(slice_shape(&[3usize], &[Slice::all(), Slice::all()]).is_err());
    }
}
