//! Pooling windows: [`PoolGeometry`] (PyTorch's pooling arguments over
//! the last `n` axes) and the output shape of a pool, [`pool_shape`].

use super::padding::{padded_len, window_count};
use super::{shape_text, Dim, Dims, ShapeError};

/// A pooling over the last `kernel.len()` axes (all vectors have that
/// length), PyTorch's pooling arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolGeometry {
    /// Window size per axis.
    pub kernel: Vec<usize>,
    /// Step between windows.
    pub stride: Vec<usize>,
    /// Padding (negative: cropping), `(before, after)` per axis.
    pub padding: Vec<(isize, isize)>,
    /// Distance between window taps.
    pub dilation: Vec<usize>,
    /// `ceil_mode`: a last, partial window is kept where it starts inside
    /// the input or the left padding.
    pub ceil_mode: bool,
    /// `count_include_pad` (average pooling).
    pub count_include_pad: bool,
    /// `divisor_override` (average pooling).
    pub divisor_override: Option<usize>,
}

impl PoolGeometry {
    /// The number of pooled axes.
    pub fn rank(&self) -> usize {
        self.kernel.len()
    }

    /// The last axis' window alone (the 1-D pools of 2-D options).
    pub fn last_axis(&self) -> PoolGeometry {
        let last = |v: &[usize]| v.last().map_or_else(Vec::new, |&x| vec![x]);
        PoolGeometry {
            kernel: last(&self.kernel),
            stride: last(&self.stride),
            padding: self.padding.last().map_or_else(Vec::new, |&p| vec![p]),
            dilation: last(&self.dilation),
            ceil_mode: self.ceil_mode,
            count_include_pad: self.count_include_pad,
            divisor_override: self.divisor_override,
        }
    }

    /// The padding still to add on axis `j` once its negative amounts
    /// are cropped.
    pub fn grow(&self, j: usize) -> (usize, usize) {
        let (a, b) = self.padding[j];
        (a.max(0) as usize, b.max(0) as usize)
    }

    /// The pads of an input of rank `r`: none on the leading axes, the
    /// geometry's on the pooled ones.
    pub fn input_pads(&self, r: usize) -> Vec<(isize, isize)> {
        let mut pads = vec![(0, 0); r - self.rank()];
        pads.extend(&self.padding);
        pads
    }

    /// The extra cells `ceil_mode` adds after the right padding of an
    /// axis of (cropped) length `i` (0 without it, or when the windows
    /// fit).
    pub fn ceil_extra(&self, j: usize, i: usize) -> usize {
        let (k, s, (before, after), d) = (
            self.kernel[j],
            self.stride[j],
            self.grow(j),
            self.dilation[j],
        );
        // Checked: arguments too large to fit give 0 here and an error
        // where the padding is applied.
        let extra = || -> Option<usize> {
            if !self.ceil_mode {
                return None;
            }
            let reach = d.checked_mul(k.checked_sub(1)?)?.checked_add(1)?;
            let span = i.checked_add(before)?.checked_add(after)?;
            if s == 0 || span < reach {
                return None;
            }
            let mut out = (span - reach).div_ceil(s) + 1;
            // The last window starts inside the input or the left padding.
            if (out - 1).checked_mul(s)? >= i.checked_add(before)? {
                out -= 1;
            }
            Some(
                (out - 1)
                    .checked_mul(s)?
                    .checked_add(reach)?
                    .saturating_sub(span),
            )
        };
        extra().unwrap_or(0)
    }
}

/// The output shape of pooling `shape`'s last `g.rank()` axes by `g`
/// (`op` names the errors): the leading axes, then the window count of
/// each pooled axis after cropping, padding and the cells `ceil_mode`
/// adds. `ceil_mode` needs axes of known size.
pub fn pool_shape<D: Dim>(op: &str, shape: &[D], g: &PoolGeometry) -> Result<Dims<D>, ShapeError> {
    let n = g.rank();
    if shape.len() < n {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!("{n}-d pooling needs at least {n} axes"),
        ));
    }
    let lead = shape.len() - n;
    let mut out: Dims<D> = shape[..lead].iter().cloned().collect();
    for j in 0..n {
        let (a, b) = g.padding[j];
        let cropped = padded_len(&shape[lead + j], (a.min(0), b.min(0))).ok_or_else(|| {
            ShapeError::new(
                op,
                &[shape],
                format!("padding {:?} removes more than the whole axis", g.padding),
            )
        })?;
        let extra = match (g.ceil_mode, cropped.as_lit()) {
            (false, _) => 0,
            (true, Some(i)) => g.ceil_extra(j, i),
            (true, None) => {
                return Err(ShapeError::new(
                    op,
                    &[shape],
                    format!(
                        "ceil_mode needs axes of known size, not {}",
                        shape_text(shape)
                    ),
                ))
            }
        };
        let (before, after) = g.grow(j);
        let count = after.checked_add(extra).and_then(|after| {
            let pad = (isize::try_from(before).ok()?, isize::try_from(after).ok()?);
            window_count(
                &cropped,
                &D::lit(g.kernel[j]),
                g.stride[j],
                pad,
                g.dilation[j],
            )
        });
        let Some(count) = count else {
            return Err(ShapeError::new(
                op,
                &[shape],
                format!(
                    "the {:?} window (stride {:?}, padding {:?}, dilation {:?}) does not fit",
                    g.kernel, g.stride, g.padding, g.dilation
                ),
            ));
        };
        out.push(count);
    }
    Ok(out)
}

/// `max_unpool` over the last `g.rank()` axes (`op` names the errors):
/// the input and its `indices` have one shape of at least that many axes;
/// each unpooled axis becomes `output_size`'s entry, or by default
/// `(i - 1)·stride - before - after + kernel` (the inverse of the pool's
/// window count).
pub fn unpool_shape<D: Dim>(
    op: &str,
    input: &[D],
    indices: &[D],
    g: &PoolGeometry,
    output_size: Option<&[usize]>,
) -> Result<Dims<D>, ShapeError> {
    let n = g.rank();
    if input != indices || input.len() < n {
        return Err(ShapeError::new(
            op,
            &[input, indices],
            format!("input and indices need one shape of at least {n} axes"),
        ));
    }
    let lead = input.len() - n;
    let mut out: Dims<D> = input[..lead].iter().cloned().collect();
    if let Some(sizes) = output_size {
        if sizes.len() != n {
            return Err(ShapeError::new(
                op,
                &[input],
                format!("output_size {sizes:?} needs {n} sizes"),
            ));
        }
        out.extend(sizes.iter().map(|&s| D::lit(s)));
        return Ok(out);
    }
    for j in 0..n {
        let (before, after) = g.padding[j];
        let cut = before as i128 + after as i128;
        let size = input[lead + j]
            .sub(&D::lit(1))
            .and_then(|v| v.mul(&D::lit(g.stride[j])))
            .and_then(|v| v.add(&D::lit(g.kernel[j])))
            .and_then(|v| match usize::try_from(cut.unsigned_abs()) {
                Ok(c) if cut >= 0 => v.sub(&D::lit(c)),
                Ok(c) => v.add(&D::lit(c)),
                Err(_) => None,
            });
        match size {
            Some(s) => out.push(s),
            None => {
                return Err(ShapeError::new(
                    op,
                    &[input],
                    format!(
                        "kernel {:?}, stride {:?}, padding {:?} give no output size",
                        g.kernel, g.stride, g.padding
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

    fn geometry(kernel: usize, stride: usize, pad: (isize, isize), ceil: bool) -> PoolGeometry {
        PoolGeometry {
            kernel: vec![kernel],
            stride: vec![stride],
            padding: vec![pad],
            dilation: vec![1],
            ceil_mode: ceil,
            count_include_pad: true,
            divisor_override: None,
        }
    }

    #[test]
    fn pooled_lengths() {
        let s = |g: &PoolGeometry, n: usize| pool_shape("p", &[2usize, n], g).map(|d| d.to_vec());
        assert_eq!(s(&geometry(2, 2, (0, 0), false), 5), Ok(vec![2, 2]));
        assert_eq!(s(&geometry(2, 2, (0, 0), true), 5), Ok(vec![2, 3]));
        assert_eq!(s(&geometry(3, 1, (1, -1), false), 5), Ok(vec![2, 3]));
        assert!(s(&geometry(7, 1, (0, 0), false), 5).is_err());
        assert!(s(&geometry(1, 1, (-3, -3), false), 5).is_err());
    }

    #[test]
    fn unpooled_lengths() {
        let g = geometry(2, 2, (0, 0), false);
        let s = |x: &[usize], i: &[usize], o: Option<&[usize]>| {
            unpool_shape("u", x, i, &g, o).map(|d| d.to_vec())
        };
        assert_eq!(s(&[2, 3], &[2, 3], None), Ok(vec![2, 6]));
        assert_eq!(s(&[2, 3], &[2, 3], Some(&[7])), Ok(vec![2, 7]));
        assert!(s(&[2, 3], &[2, 2], None).is_err());
        assert!(s(&[2, 3], &[2, 3], Some(&[7, 7])).is_err());
        let cropped = geometry(3, 1, (1, -2), false);
        assert_eq!(
            unpool_shape("u", &[4usize], &[4], &cropped, None).map(|d| d.to_vec()),
            Ok(vec![7])
        );
    }
}
