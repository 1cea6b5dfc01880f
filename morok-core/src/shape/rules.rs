//! The shape rules, generic over [`Dim`]: the tensor API calls them with
//! `usize` dims at run time, the macros with [`SymDim`](super::SymDim)s at
//! expansion time, so both report the same words.

use super::{window_count, Dim, Dims, Pads, ShapeError};

/// Number of elements of a shape (1 for a scalar), saturating at
/// `usize::MAX` when the product overflows (a zero size still gives 0).
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().fold(1usize, |acc, &d| acc.saturating_mul(d))
}

/// The element count of a shape as a dim; `None` on overflow.
pub fn numel_of<D: Dim>(shape: &[D]) -> Option<D> {
    if shape.iter().any(|d| d.as_lit() == Some(0)) {
        return Some(D::lit(0));
    }
    shape.iter().try_fold(D::lit(1), |acc, d| acc.mul(d))
}

/// Resolves a possibly negative axis against `rank` (`-1` is the last axis).
pub fn normalize_axis<D: Dim>(op: &str, shape: &[D], axis: isize) -> Result<usize, ShapeError> {
    let rank = shape.len() as isize;
    // A 0-d tensor has the axes 0 and -1, both the tensor itself (PyTorch).
    let a = if axis < 0 { axis + rank.max(1) } else { axis };
    if a < 0 || a >= rank.max(1) {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!("axis {axis} is out of range for a tensor of rank {rank}"),
        ));
    }
    Ok(a as usize)
}

/// Normalized, sorted, distinct reduction axes (`None`: all axes; a
/// scalar has none).
pub fn reduce_axes<D: Dim>(
    op: &str,
    shape: &[D],
    axes: Option<&[isize]>,
) -> Result<Vec<usize>, ShapeError> {
    let Some(axes) = axes else {
        return Ok((0..shape.len()).collect());
    };
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = normalize_axis(op, shape, a)?;
        if out.contains(&n) {
            return Err(ShapeError::new(
                op,
                &[shape],
                format!("axis {a} is listed twice"),
            ));
        }
        out.push(n);
    }
    if shape.is_empty() {
        out.clear();
    }
    out.sort_unstable();
    Ok(out)
}

/// The shape after reducing `axes` (already normalized); reduced axes
/// become 1 with `keepdim`, or are removed.
pub fn reduce_shape<D: Dim>(shape: &[D], axes: &[usize], keepdim: bool) -> Dims<D> {
    shape
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match (axes.contains(&i), keepdim) {
            (false, _) => Some(d.clone()),
            (true, true) => Some(D::lit(1)),
            (true, false) => None,
        })
        .collect()
}

/// NumPy broadcasting: align from the right; each pair of dimensions must
/// be equal or one of them 1.
pub fn broadcast_shapes<D: Dim>(op: &str, a: &[D], b: &[D]) -> Result<Dims<D>, ShapeError> {
    let rank = a.len().max(b.len());
    let one = D::lit(1);
    let mut out = Dims::with_capacity(rank);
    for i in 0..rank {
        let da = if i + a.len() >= rank {
            &a[i + a.len() - rank]
        } else {
            &one
        };
        let db = if i + b.len() >= rank {
            &b[i + b.len() - rank]
        } else {
            &one
        };
        out.push(if da == db || db.is_one() {
            da.clone()
        } else if da.is_one() {
            db.clone()
        } else {
            return Err(ShapeError::new(
                op,
                &[a, b],
                format!(
                    "dimension {i} of the broadcast shape: {da} and {db} differ and neither is 1"
                ),
            ));
        });
    }
    Ok(out)
}

/// The result shape of `a @ b` with NumPy/PyTorch `matmul` rules: 1-D
/// operands are promoted to a row (left) or column (right) vector and the
/// added axis removed again; batch axes broadcast.
pub fn matmul_shape<D: Dim>(a: &[D], b: &[D]) -> Result<Dims<D>, ShapeError> {
    if a.is_empty() || b.is_empty() {
        return Err(ShapeError::new(
            "matmul",
            &[a, b],
            "both operands need at least one axis",
        ));
    }
    let k_a = &a[a.len() - 1];
    let k_b = if b.len() == 1 { &b[0] } else { &b[b.len() - 2] };
    if k_a != k_b {
        return Err(ShapeError::new(
            "matmul",
            &[a, b],
            format!("inner dimensions differ ({k_a} vs {k_b})"),
        ));
    }
    let batch_a = &a[..a.len().saturating_sub(2)];
    let batch_b = &b[..b.len().saturating_sub(2)];
    let mut out = broadcast_shapes("matmul", batch_a, batch_b)
        .map_err(|e| ShapeError::new("matmul", &[a, b], format!("batch axes: {}", e.reason)))?;
    if a.len() >= 2 {
        out.push(a[a.len() - 2].clone());
    }
    if b.len() >= 2 {
        out.push(b[b.len() - 1].clone());
    }
    Ok(out)
}

/// One entry of a reshape target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReshapeDim<D> {
    /// `-1`: inferred from the element count.
    Infer,
    /// A size.
    Size(D),
    /// A negative number other than `-1` (always an error).
    Negative(isize),
}

impl<D: Dim> std::fmt::Display for ReshapeDim<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReshapeDim::Infer => f.write_str("-1"),
            ReshapeDim::Size(d) => write!(f, "{d}"),
            ReshapeDim::Negative(n) => write!(f, "{n}"),
        }
    }
}

impl ReshapeDim<usize> {
    /// A numeric target dim: `-1` infers, another negative number is an
    /// error, the rest are sizes.
    pub fn from_signed(d: isize) -> Self {
        match d {
            -1 => ReshapeDim::Infer,
            d if d < 0 => ReshapeDim::Negative(d),
            d => ReshapeDim::Size(d as usize),
        }
    }
}

/// Resolves a reshape target with at most one `-1` against `shape`.
pub fn reshape_dims<D: Dim>(shape: &[D], target: &[ReshapeDim<D>]) -> Result<Dims<D>, ShapeError> {
    let err = |reason: String| {
        let t: Vec<String> = target.iter().map(|d| d.to_string()).collect();
        ShapeError::new(
            "reshape",
            &[shape],
            format!("to [{}]: {reason}", t.join(", ")),
        )
    };
    let overflow = || err("the sizes' product overflows".into());
    let total = numel_of(shape).ok_or_else(overflow)?;
    let mut infer = None;
    // The product of the non-zero sizes, checked: a zero beside huge sizes
    // must not hide an overflow.
    let mut nonzero = D::lit(1);
    let mut zero = false;
    for (i, d) in target.iter().enumerate() {
        match d {
            ReshapeDim::Infer if infer.is_none() => infer = Some(i),
            ReshapeDim::Infer => return Err(err("more than one dimension is -1".into())),
            ReshapeDim::Negative(n) => return Err(err(format!("dimension {n} is negative"))),
            ReshapeDim::Size(d) if d.as_lit() == Some(0) => zero = true,
            ReshapeDim::Size(d) => nonzero = nonzero.mul(d).ok_or_else(overflow)?,
        }
    }
    let known = if zero { D::lit(0) } else { nonzero };
    let mut out: Dims<D> = target
        .iter()
        .map(|d| match d {
            ReshapeDim::Size(d) => d.clone(),
            _ => D::lit(0),
        })
        .collect();
    if let Some(i) = infer {
        match total.div_exact(&known) {
            Some(q) if known.as_lit() != Some(0) => out[i] = q,
            _ => return Err(err(format!("cannot infer -1 from {total} elements"))),
        }
    } else if known != total {
        return Err(err(format!("{total} elements cannot be viewed as {known}")));
    }
    Ok(out)
}

/// [`reshape_dims`] for a numeric target where `-1` is inferred.
pub fn reshape_target(shape: &[usize], target: &[isize]) -> Result<Dims<usize>, ShapeError> {
    let t: Vec<ReshapeDim<usize>> = target.iter().map(|&d| ReshapeDim::from_signed(d)).collect();
    reshape_dims(shape, &t)
}

/// Checks that `perm` (negative axes allowed) is a permutation of the
/// axes of `shape`; the normalized permutation and the permuted shape.
pub fn permute_shape<D: Dim>(
    shape: &[D],
    perm: &[isize],
) -> Result<(Vec<usize>, Dims<D>), ShapeError> {
    let mut axes = Vec::with_capacity(perm.len());
    for &p in perm {
        axes.push(normalize_axis("permute", shape, p)?);
    }
    let mut seen = axes.clone();
    seen.sort_unstable();
    seen.dedup();
    if axes.len() != shape.len() || seen.len() != axes.len() {
        return Err(ShapeError::new(
            "permute",
            &[shape],
            format!("{perm:?} is not a permutation of {} axes", shape.len()),
        ));
    }
    let out = axes.iter().map(|&a| shape[a].clone()).collect();
    Ok((axes, out))
}

/// The shape with axes `a` and `b` (negative allowed) swapped, and the
/// two normalized axes.
pub fn transpose_shape<D: Dim>(
    shape: &[D],
    a: isize,
    b: isize,
) -> Result<((usize, usize), Dims<D>), ShapeError> {
    let a = normalize_axis("transpose", shape, a)?;
    let b = normalize_axis("transpose", shape, b)?;
    let mut out: Dims<D> = shape.iter().cloned().collect();
    if !out.is_empty() {
        out.swap(a, b);
    }
    Ok(((a, b), out))
}

/// Checks that `src` broadcasts to exactly `target` (`op` names the
/// caller: `broadcast_to`, `expand`).
pub fn broadcast_to_shape<D: Dim>(op: &str, src: &[D], target: &[D]) -> Result<(), ShapeError> {
    let joint = broadcast_shapes(op, src, target)?;
    if joint.as_slice() != target {
        return Err(ShapeError::new(
            op,
            &[src, target],
            "the target must be the broadcast shape",
        ));
    }
    Ok(())
}

/// PyTorch `expand`: `None` (written `-1`) keeps the size of the aligned
/// axis; the source must broadcast to the result.
pub fn expand_shape<D: Dim>(src: &[D], target: &[Option<D>]) -> Result<Dims<D>, ShapeError> {
    let lead = target.len().saturating_sub(src.len());
    let mut out = Dims::with_capacity(target.len());
    for (i, d) in target.iter().enumerate() {
        match (d, i.checked_sub(lead)) {
            (Some(d), _) => out.push(d.clone()),
            (None, Some(j)) => out.push(src[j].clone()),
            (None, None) => {
                let t: Vec<String> = target
                    .iter()
                    .map(|d| d.as_ref().map_or("-1".into(), |d| d.to_string()))
                    .collect();
                return Err(ShapeError::new(
                    "expand",
                    &[src],
                    format!("to [{}]: -1 is only allowed on existing axes", t.join(", ")),
                ));
            }
        }
    }
    broadcast_to_shape("expand", src, &out)?;
    Ok(out)
}

/// [`expand_shape`] of a target written as reshape dims: `-1` keeps the
/// aligned axis, any other negative number is an error.
pub fn expand_dims<D: Dim>(src: &[D], target: &[ReshapeDim<D>]) -> Result<Dims<D>, ShapeError> {
    let mut wanted = Vec::with_capacity(target.len());
    for d in target {
        wanted.push(match d {
            ReshapeDim::Size(d) => Some(d.clone()),
            ReshapeDim::Infer => None,
            ReshapeDim::Negative(n) => {
                return Err(ShapeError::new(
                    "expand",
                    &[src],
                    format!("dimension {n} is negative"),
                ))
            }
        });
    }
    expand_shape(src, &wanted)
}

/// A loss of `input` against `target` (`op` names it): one shape; the
/// input's shape when the per-element losses are `kept` (no reduction),
/// else a scalar.
pub fn loss_shape<D: Dim>(
    op: &str,
    input: &[D],
    target: &[D],
    kept: bool,
) -> Result<Dims<D>, ShapeError> {
    if input != target {
        return Err(ShapeError::new(
            op,
            &[input, target],
            "the input and the target must have one shape",
        ));
    }
    Ok(if kept {
        input.iter().cloned().collect()
    } else {
        Dims::new()
    })
}

/// `x @ weight.T + bias` (PyTorch `linear`): `weight` is `[out, in]` (or
/// `[in]`), `x` is `[..., in]`; the output shape.
pub fn linear_shape<D: Dim>(x: &[D], w: &[D], bias: Option<&[D]>) -> Result<Dims<D>, ShapeError> {
    if !matches!(w.len(), 1 | 2) {
        return Err(ShapeError::new(
            "linear",
            &[x, w],
            "the weight must be [out_features, in_features] or [in_features]",
        ));
    }
    if x.last() != w.last() {
        return Err(ShapeError::new(
            "linear",
            &[x, w],
            "the input's last axis must match the weight's in_features",
        ));
    }
    let mut out: Dims<D> = x[..x.len() - 1].iter().cloned().collect();
    if w.len() == 2 {
        out.push(w[0].clone());
    }
    if let Some(b) = bias {
        if broadcast_shapes("linear", &out, b).ok().as_deref() != Some(out.as_slice()) {
            return Err(ShapeError::new(
                "linear",
                &[&out, b],
                "the bias must broadcast to the output",
            ));
        }
    }
    Ok(out)
}

/// Geometry of a 2-D convolution: `(height, width)` pairs and groups
/// (the default is PyTorch's: stride 1, no padding, no dilation, one
/// group).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Step between windows.
    pub stride: (usize, usize),
    /// Zeros added (negative: cropped), `(before, after)` per spatial
    /// axis ([`Pads`]).
    pub padding: Pads<2>,
    /// Distance between kernel taps.
    pub dilation: (usize, usize),
    /// Number of channel groups.
    pub groups: usize,
}

impl Default for ConvGeometry {
    fn default() -> Self {
        ConvGeometry {
            stride: (1, 1),
            padding: Pads::ZERO,
            dilation: (1, 1),
            groups: 1,
        }
    }
}

/// The output shape `[N, C_out, OH, OW]` of a 2-D convolution of an NCHW
/// input with OIHW weights `[C_out, C_in / groups, KH, KW]` and an
/// optional bias `[C_out]`.
pub fn conv2d_shape<D: Dim>(
    x: &[D],
    w: &[D],
    bias: Option<&[D]>,
    g: ConvGeometry,
) -> Result<Dims<D>, ShapeError> {
    if x.len() != 4 || w.len() != 4 {
        return Err(ShapeError::new(
            "conv2d",
            &[x, w],
            "input and weight must both have 4 axes (NCHW, OIHW)",
        ));
    }
    let (cin, cout, cin_g) = (&x[1], &w[0], &w[1]);
    let groups = D::lit(g.groups);
    let fits = g.groups > 0
        && cin_g.mul(&groups).as_ref() == Some(cin)
        && cout.div_exact(&groups).is_some();
    if !fits {
        return Err(ShapeError::new(
            "conv2d",
            &[x, w],
            format!(
                "{cin} input channels and {cout} output channels do not fit {} group(s) of {cin_g}",
                g.groups
            ),
        ));
    }
    if let Some(b) = bias {
        if b != [cout.clone()] {
            return Err(ShapeError::new(
                "conv2d",
                &[x, w, b],
                format!("the bias must have shape [{cout}]"),
            ));
        }
    }
    let oh = window_count(&x[2], &w[2], g.stride.0, g.padding.0[0], g.dilation.0);
    let ow = window_count(&x[3], &w[3], g.stride.1, g.padding.0[1], g.dilation.1);
    match (oh, ow) {
        (Some(oh), Some(ow)) => Ok([x[0].clone(), cout.clone(), oh, ow].into_iter().collect()),
        _ => Err(ShapeError::new(
            "conv2d",
            &[x, w],
            format!(
                "the {}x{} kernel (stride {:?}, padding {:?}, dilation {:?}) does not fit the input",
                w[2], w[3], g.stride, g.padding.0, g.dilation
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::SymDim;
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(
            broadcast_shapes("add", &[3, 2], &[1, 2])
                .unwrap()
                .as_slice(),
            &[3, 2]
        );
        assert_eq!(
            broadcast_shapes("add", &[3, 2], &[2]).unwrap().as_slice(),
            &[3, 2]
        );
        let e = broadcast_shapes("add", &[3, 2], &[3]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "add: [3, 2] and [3]: dimension 1 of the broadcast shape: 2 and 3 differ and neither is 1"
        );
    }

    #[test]
    fn symbolic_rules_say_the_same_words() {
        let b = SymDim::name("B");
        let x = [b.clone(), SymDim::from(128)];
        let e = broadcast_shapes("add", &x, &[SymDim::from(64)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "add: [B, 128] and [64]: dimension 1 of the broadcast shape: 128 and 64 differ and neither is 1"
        );
        let ok = broadcast_shapes("add", &x, &[SymDim::from(1), SymDim::from(128)]).unwrap();
        assert_eq!(ok.as_slice(), &x);
        let e = matmul_shape(&x, &[SymDim::from(64), SymDim::from(10)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "matmul: [B, 128] and [64, 10]: inner dimensions differ (128 vs 64)"
        );
        let r = reshape_dims(
            &x,
            &[
                ReshapeDim::Size(b.clone()),
                ReshapeDim::Size(SymDim::from(2)),
                ReshapeDim::Infer,
            ],
        )
        .unwrap();
        assert_eq!(r[2], SymDim::from(64));
        let flat = reshape_dims(&x, &[ReshapeDim::Infer]).unwrap();
        assert_eq!(flat[0].to_string(), "128*B");
        let e = reshape_dims(&x, &[ReshapeDim::Size(SymDim::from(128))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "reshape: [B, 128]: to [128]: 128*B elements cannot be viewed as 128"
        );
    }

    #[test]
    fn matmul_rules() {
        assert_eq!(matmul_shape(&[4, 3], &[3, 2]).unwrap().as_slice(), &[4, 2]);
        assert_eq!(matmul_shape(&[3], &[3, 2]).unwrap().as_slice(), &[2]);
        assert_eq!(matmul_shape(&[4, 3], &[3]).unwrap().as_slice(), &[4]);
        assert_eq!(
            matmul_shape(&[5, 4, 3], &[5, 3, 2]).unwrap().as_slice(),
            &[5, 4, 2]
        );
        assert_eq!(
            matmul_shape(&[5, 4, 3], &[3, 2]).unwrap().as_slice(),
            &[5, 4, 2]
        );
        assert_eq!(
            matmul_shape(&[3], &[3]).unwrap().as_slice(),
            &[] as &[usize]
        );
        assert!(matmul_shape(&[4, 3], &[2, 2])
            .unwrap_err()
            .to_string()
            .contains("inner dimensions differ (3 vs 2)"));
    }

    #[test]
    fn reshape_with_minus_one() {
        assert_eq!(reshape_target(&[6], &[-1, 3]).unwrap().as_slice(), &[2, 3]);
        assert!(reshape_target(&[6], &[-1, 4]).is_err());
        assert!(reshape_target(&[6], &[-1, -1]).is_err());
        assert!(reshape_target(&[6], &[4]).is_err());
        // A zero size does not hide sizes whose product overflows.
        let e = reshape_target(&[0], &[isize::MAX, isize::MAX, 0]).unwrap_err();
        assert!(e.to_string().contains("product overflows"), "{e}");
        assert_eq!(
            reshape_target(&[0, 3], &[3, -1, 0]).unwrap_err().reason,
            "to [3, -1, 0]: cannot infer -1 from 0 elements"
        );
        assert_eq!(numel(&[usize::MAX, 2, 0]), 0);
        assert_eq!(numel(&[usize::MAX, 2]), usize::MAX);
        assert_eq!(normalize_axis("sum", &[2, 3], -1).unwrap(), 1);
        assert!(normalize_axis("sum", &[2, 3], 2).is_err());
    }

    #[test]
    fn movement_and_conv() {
        assert_eq!(
            permute_shape(&[2, 3, 4], &[2, 0, 1]).unwrap().1.as_slice(),
            &[4, 2, 3]
        );
        assert!(permute_shape(&[2, 3], &[0, 0]).is_err());
        assert_eq!(
            transpose_shape(&[2, 3], 0, -1).unwrap().1.as_slice(),
            &[3, 2]
        );
        assert_eq!(
            expand_shape(&[1, 3], &[Some(4), None]).unwrap().as_slice(),
            &[4, 3]
        );
        assert!(expand_shape(&[2, 3], &[None, Some(2), Some(3)]).is_err());
        let g = ConvGeometry {
            stride: (1, 1),
            padding: Pads::same(1),
            dilation: (1, 1),
            groups: 1,
        };
        assert_eq!(
            conv2d_shape(&[2, 3, 8, 8], &[4, 3, 3, 3], None, g)
                .unwrap()
                .as_slice(),
            &[2, 4, 8, 8]
        );
        let h = SymDim::name("H");
        let x = [SymDim::name("B"), SymDim::from(3), h.clone(), h.clone()];
        let w = [
            SymDim::from(4),
            SymDim::from(3),
            SymDim::from(3),
            SymDim::from(3),
        ];
        let s2 = ConvGeometry {
            stride: (2, 2),
            padding: Pads::ZERO,
            ..g
        };
        assert_eq!(
            conv2d_shape(&x, &w, None, s2).unwrap()[2].to_string(),
            "(H - 3) / 2 + 1"
        );
        let e = conv2d_shape(&[1, 2, 4, 4], &[4, 3, 3, 3], None, g).unwrap_err();
        assert!(e.to_string().contains("do not fit"), "{e}");
        assert_eq!(
            linear_shape(&[5, 64], &[10, 64], Some(&[10]))
                .unwrap()
                .as_slice(),
            &[5, 10]
        );
    }
}
