//! The one padding convention: a signed `(before, after)` pair per axis,
//! in axis order, where a negative amount crops. Every pad and every
//! convolution or pool `padding` option uses it.

use super::{Dim, Dims, ShapeError};

/// Padding of `N` axes: `(before, after)` per axis in axis order;
/// negative amounts remove elements instead of adding them.
///
/// `Pads::from(1)` pads every axis by 1 on both sides, `Pads::from((1,
/// 2))` pads the two axes by 1 and 2 on both sides (PyTorch's `padding=(1,
/// 2)`), and `Pads([(0, 1), (-1, 0)])` pads the first axis by one after
/// and crops one from the front of the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pads<const N: usize>(pub [(isize, isize); N]);

impl<const N: usize> Pads<N> {
    /// No padding.
    pub const ZERO: Pads<N> = Pads([(0, 0); N]);

    /// `p` on both sides of every axis.
    pub const fn same(p: isize) -> Pads<N> {
        Pads([(p, p); N])
    }

    /// The pairs, as a vector.
    pub fn to_vec(&self) -> Vec<(isize, isize)> {
        self.0.to_vec()
    }

    /// Whether every amount is 0.
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&p| p == (0, 0))
    }
}

impl<const N: usize> Default for Pads<N> {
    fn default() -> Self {
        Pads::ZERO
    }
}

impl<const N: usize> From<[(isize, isize); N]> for Pads<N> {
    fn from(pairs: [(isize, isize); N]) -> Self {
        Pads(pairs)
    }
}

impl<const N: usize> From<usize> for Pads<N> {
    fn from(p: usize) -> Self {
        Pads::same(p.min(isize::MAX as usize) as isize)
    }
}

impl From<(usize, usize)> for Pads<2> {
    fn from((a, b): (usize, usize)) -> Self {
        let s = |p: usize| p.min(isize::MAX as usize) as isize;
        Pads([(s(a), s(a)), (s(b), s(b))])
    }
}

impl From<(usize, usize, usize)> for Pads<3> {
    fn from((a, b, c): (usize, usize, usize)) -> Self {
        let s = |p: usize| p.min(isize::MAX as usize) as isize;
        Pads([(s(a), s(a)), (s(b), s(b)), (s(c), s(c))])
    }
}

/// The length of an axis of `size` after `(before, after)`: adds the
/// positive amounts and removes the negative ones; `None` when the crop
/// removes more than the axis (or overflows).
pub fn padded_len<D: Dim>(size: &D, (before, after): (isize, isize)) -> Option<D> {
    let grow = before
        .max(0)
        .unsigned_abs()
        .checked_add(after.max(0).unsigned_abs())?;
    let crop = before
        .min(0)
        .unsigned_abs()
        .checked_add(after.min(0).unsigned_abs())?;
    let grown = size.add(&D::lit(grow))?;
    if crop == 0 {
        return Some(grown);
    }
    // Cropping happens before growing: the crop must fit the axis itself.
    size.sub(&D::lit(crop))?;
    grown.sub(&D::lit(crop))
}

/// `pad(pads)`: one signed pair per axis; each axis becomes
/// [`padded_len`] long (`op` names the errors).
pub fn pad_shape<D: Dim>(
    op: &str,
    shape: &[D],
    pads: &[(isize, isize)],
) -> Result<Dims<D>, ShapeError> {
    if pads.len() != shape.len() {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!(
                "{} (before, after) pairs for {} axes",
                pads.len(),
                shape.len()
            ),
        ));
    }
    shape
        .iter()
        .zip(pads)
        .map(|(d, &p)| {
            padded_len(d, p).ok_or_else(|| {
                ShapeError::new(
                    op,
                    &[shape],
                    format!("padding {pads:?} removes more than the whole axis"),
                )
            })
        })
        .collect()
}

/// The `mode` of `Tensor::pad_mode`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PadMode {
    /// `"constant"` with the given value.
    Constant(f64),
    /// `"reflect"`: mirrored without repeating the edge (padding less
    /// than the axis length).
    Reflect,
    /// `"replicate"`: the edge element repeated.
    Replicate,
    /// `"circular"`: wrapped around (padding at most the axis length).
    Circular,
}

/// `pad_mode(pads, mode)`: [`pad_shape`] (the crops), then each axis in
/// order is filled by `mode` from the cropped tensor: `Reflect` needs each
/// amount less than the axis' length, `Circular` at most it, and
/// `Replicate` a non-empty axis. An error shows the shape as padded up to
/// that axis. A symbolic axis takes only the constant mode.
pub fn pad_mode_shape<D: Dim>(
    shape: &[D],
    pads: &[(isize, isize)],
    mode: PadMode,
) -> Result<Dims<D>, ShapeError> {
    let op = "pad";
    pad_shape(op, shape, pads)?;
    let mut now: Dims<D> = shape
        .iter()
        .zip(pads)
        .map(|(d, &(a, b))| padded_len(d, (a.min(0), b.min(0))).unwrap_or_else(|| d.clone()))
        .collect();
    for (axis, &(a, b)) in pads.iter().enumerate() {
        let (before, after) = (a.max(0).unsigned_abs(), b.max(0).unsigned_abs());
        if before == 0 && after == 0 {
            continue;
        }
        let fits = |n: usize| match mode {
            PadMode::Constant(_) => None,
            PadMode::Reflect => (before >= n || after >= n).then_some("less than"),
            PadMode::Replicate => (n == 0).then_some("an axis of at least 1, not"),
            PadMode::Circular => (before > n || after > n).then_some("at most"),
        };
        let wrong = match (now[axis].as_lit(), mode) {
            (_, PadMode::Constant(_)) => None,
            (Some(n), _) => fits(n).map(|rule| format!("must be {rule} its length {n}")),
            (None, _) => Some(format!("needs a known length, not {}", now[axis])),
        };
        if let Some(why) = wrong {
            return Err(ShapeError::new(
                op,
                &[&now],
                format!("padding ({before}, {after}) of axis {axis} {why}"),
            ));
        }
        now[axis] = now[axis]
            .add(&D::lit(before))
            .and_then(|d| d.add(&D::lit(after)))
            .ok_or_else(|| ShapeError::new(op, &[shape], format!("padding {pads:?} overflows")))?;
    }
    Ok(now)
}

/// The number of windows of `k` taps `dilation` apart, `stride` apart,
/// along an axis of `size` padded by `pad`: `(padded - dilation·(k-1) - 1)
/// / stride + 1`, or `None` when the window does not fit (or an argument
/// is 0).
pub fn window_count<D: Dim>(
    size: &D,
    k: &D,
    stride: usize,
    pad: (isize, isize),
    dilation: usize,
) -> Option<D> {
    if stride == 0 || dilation == 0 || k.as_lit() == Some(0) {
        return None;
    }
    let padded = padded_len(size, pad)?;
    let reach = k.sub(&D::lit(1))?.mul(&D::lit(dilation))?.add(&D::lit(1))?;
    let free = padded.sub(&reach)?;
    free.floor_div(stride).add(&D::lit(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_lengths_grow_and_crop() {
        assert_eq!(padded_len(&5usize, (1, 2)), Some(8));
        assert_eq!(padded_len(&5usize, (-1, 2)), Some(6));
        assert_eq!(padded_len(&5usize, (-3, -2)), Some(0));
        assert_eq!(padded_len(&5usize, (-3, -3)), None);
        assert_eq!(padded_len(&2usize, (-3, 4)), None);
    }

    #[test]
    fn windows_count_asymmetric_padding() {
        assert_eq!(window_count(&5usize, &3, 1, (0, 0), 1), Some(3));
        assert_eq!(window_count(&5usize, &3, 1, (1, 0), 1), Some(4));
        assert_eq!(window_count(&5usize, &3, 2, (-1, 1), 1), Some(2));
        assert_eq!(window_count(&2usize, &3, 1, (0, 0), 1), None);
    }

    #[test]
    fn conversions_are_symmetric() {
        assert_eq!(Pads::<2>::from((1, 2)), Pads([(1, 1), (2, 2)]));
        assert_eq!(Pads::<3>::from(1), Pads([(1, 1); 3]));
        assert!(Pads::<2>::default().is_zero());
    }
}
