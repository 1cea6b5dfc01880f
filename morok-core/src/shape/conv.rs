//! Convolutions over any number of spatial axes: [`ConvNd`] (PyTorch's
//! convolution arguments) and the output shapes of a convolution,
//! [`conv_nd_shape`], and of a transposed one, [`conv_transpose_nd_shape`].

use super::padding::{padded_len, window_count};
use super::{shape_text, Dim, Dims, ShapeError};

/// A convolution over `stride.len()` spatial axes (every vector has that
/// length; `output_padding` is used by the transposes only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvNd {
    /// Step between windows.
    pub stride: Vec<usize>,
    /// Padding (negative: cropping), `(before, after)` per axis; of a
    /// transpose, removed from its output.
    pub padding: Vec<(isize, isize)>,
    /// Extra cells at a transpose's output end.
    pub output_padding: Vec<usize>,
    /// Distance between kernel taps.
    pub dilation: Vec<usize>,
    /// Channel groups.
    pub groups: usize,
}

impl ConvNd {
    /// The number of spatial axes.
    pub fn rank(&self) -> usize {
        self.stride.len()
    }

    /// The last axis' geometry alone (`conv_transpose1d` takes the second
    /// components of 2-D options).
    pub fn last_axis(&self) -> ConvNd {
        let last = |v: &[usize]| v.last().map_or_else(Vec::new, |&x| vec![x]);
        ConvNd {
            stride: last(&self.stride),
            padding: self.padding.last().map_or_else(Vec::new, |&p| vec![p]),
            output_padding: last(&self.output_padding),
            dilation: last(&self.dilation),
            groups: self.groups,
        }
    }
}

/// The convolution (`op`: `conv1d`, `conv3d`, ...) of `x` (`[N, C,
/// spatial..]`) with `w` (`[O, C/groups, kernel..]`) and an optional bias
/// (`[O]`): `[N, O, windows..]`, each axis' windows counted after its
/// padding.
pub fn conv_nd_shape<D: Dim>(
    op: &str,
    x: &[D],
    w: &[D],
    bias: Option<&[D]>,
    g: &ConvNd,
) -> Result<Dims<D>, ShapeError> {
    let (n, groups) = (g.rank(), g.groups);
    let fits = x.len() == n + 2
        && w.len() == n + 2
        && groups > 0
        && w[1].mul(&D::lit(groups)).as_ref() == Some(&x[1])
        && w[0].div_exact(&D::lit(groups)).is_some()
        && bias.is_none_or(|b| b == [w[0].clone()]);
    if !fits {
        return Err(ShapeError::new(
            op,
            &[x, w],
            format!(
                "input [N, C, {n} spatial axes], weight [O, C/{groups}, {n} kernel axes] and \
                 bias [O] do not fit {groups} group(s)"
            ),
        ));
    }
    let mut out: Dims<D> = [x[0].clone(), w[0].clone()].into_iter().collect();
    for j in 0..n {
        let (before, after) = g.padding[j];
        let cropped = padded_len(&x[2 + j], (before.min(0), after.min(0)));
        let count = cropped.and_then(|c| {
            window_count(
                &c,
                &w[2 + j],
                g.stride[j],
                (before.max(0), after.max(0)),
                g.dilation[j],
            )
        });
        let Some(count) = count else {
            return Err(ShapeError::new(
                op,
                &[x, w],
                format!(
                    "the kernel {} (stride {:?}, padding {:?}, dilation {:?}) does not fit",
                    shape_text(&w[2..]),
                    g.stride,
                    g.padding,
                    g.dilation
                ),
            ));
        };
        out.push(count);
    }
    Ok(out)
}

/// The transposed convolution (`op`) of `x` (`[N, Cin, spatial..]`) with
/// `w` (`[Cin, Cout/groups, kernel..]`) and an optional bias (`[Cout]`):
/// each axis is `(i - 1)·s + d·(k - 1) + output_padding + 1` less its
/// padding, which must leave at least 1; `output_padding` is less than the
/// stride or the dilation.
pub fn conv_transpose_nd_shape<D: Dim>(
    op: &str,
    x: &[D],
    w: &[D],
    bias: Option<&[D]>,
    g: &ConvNd,
) -> Result<Dims<D>, ShapeError> {
    let (n, groups) = (g.rank(), g.groups);
    let cout = (w.len() == n + 2)
        .then(|| w[1].mul(&D::lit(groups)))
        .flatten();
    let fits = x.len() == n + 2
        && w.len() == n + 2
        && groups > 0
        && w[0] == x[1]
        && x[1].div_exact(&D::lit(groups)).is_some()
        && bias.is_none_or(|b| cout.as_ref().is_some_and(|c| b == [c.clone()]));
    let Some(cout) = cout.filter(|_| fits) else {
        return Err(ShapeError::new(
            op,
            &[x, w],
            format!(
                "input [N, Cin, {n} spatial axes], weight [Cin, Cout/{groups}, {n} kernel axes] \
                 and bias [Cout] do not fit {groups} group(s)"
            ),
        ));
    };
    let mut out: Dims<D> = [x[0].clone(), cout].into_iter().collect();
    let limit = isize::MAX as usize / 4;
    for j in 0..n {
        let (s, d, extra, (before, after)) = (
            g.stride[j],
            g.dilation[j],
            g.output_padding[j],
            g.padding[j],
        );
        let k = &w[2 + j];
        let grown = before.min(0).unsigned_abs() + after.min(0).unsigned_abs();
        let cut = before.max(0).unsigned_abs() + after.max(0).unsigned_abs();
        let len = (|| {
            let ok = s > 0
                && d > 0
                && k.as_lit() != Some(0)
                && x[2 + j].as_lit() != Some(0)
                && extra < s.max(d)
                && before.unsigned_abs() < limit
                && after.unsigned_abs() < limit;
            if !ok {
                return None;
            }
            let span = x[2 + j]
                .sub(&D::lit(1))?
                .mul(&D::lit(s))?
                .add(&k.sub(&D::lit(1))?.mul(&D::lit(d))?)?
                .add(&D::lit(extra + 1))?;
            if span.as_lit().is_some_and(|v| v >= limit) {
                return None;
            }
            let len = span.add(&D::lit(grown))?.sub(&D::lit(cut))?;
            // At least one output cell, and within the size limit.
            len.sub(&D::lit(1))?;
            match len.as_lit() {
                Some(v) if v >= limit => None,
                _ => Some(len),
            }
        })();
        let Some(len) = len else {
            return Err(ShapeError::new(
                op,
                &[x, w],
                format!(
                    "stride {:?}, padding {:?}, output_padding {:?}, dilation {:?} with kernel \
                     {} do not fit the input",
                    g.stride,
                    g.padding,
                    g.output_padding,
                    g.dilation,
                    shape_text(&w[2..])
                ),
            ));
        };
        out.push(len);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(stride: usize, pad: (isize, isize), out_pad: usize) -> ConvNd {
        ConvNd {
            stride: vec![stride],
            padding: vec![pad],
            output_padding: vec![out_pad],
            dilation: vec![1],
            groups: 1,
        }
    }

    #[test]
    fn convolution_lengths() {
        let conv = |g: &ConvNd| conv_nd_shape("c", &[1usize, 2, 9], &[4, 2, 3], None, g);
        assert_eq!(
            conv(&geometry(2, (1, 0), 0)).unwrap().as_slice(),
            &[1, 4, 4]
        );
        assert!(conv(&geometry(1, (-4, -4), 0)).is_err());
        let t = |g: &ConvNd| conv_transpose_nd_shape("t", &[1usize, 2, 4], &[2, 3, 3], None, g);
        assert_eq!(t(&geometry(2, (0, 0), 1)).unwrap().as_slice(), &[1, 3, 10]);
        assert_eq!(t(&geometry(1, (1, 2), 0)).unwrap().as_slice(), &[1, 3, 3]);
        assert!(t(&geometry(1, (3, 3), 0)).is_err());
    }
}
