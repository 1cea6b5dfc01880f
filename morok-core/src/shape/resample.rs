//! `interpolate`'s [`InterpolateMode`] and output shape,
//! [`interpolate_shape`].

use super::{Dim, Dims, ShapeError};

/// The `mode` of `Tensor::interpolate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterpolateMode {
    /// `"nearest"`: source `floor(o · in / out)`.
    Nearest,
    /// `"nearest-exact"`: source `floor((o + 0.5) · in / out)`.
    NearestExact,
    /// `"linear"` (3-D input).
    Linear,
    /// `"bilinear"` (4-D input).
    Bilinear,
    /// `"trilinear"` (5-D input).
    Trilinear,
}

impl InterpolateMode {
    /// The spatial rank a linear mode needs (`None` for the nearest
    /// modes, which take any).
    pub fn linear_rank(self) -> Option<usize> {
        match self {
            InterpolateMode::Linear => Some(1),
            InterpolateMode::Bilinear => Some(2),
            InterpolateMode::Trilinear => Some(3),
            _ => None,
        }
    }
}

/// `interpolate(size, mode, align_corners)` (`op` names the errors): an
/// input `[N, C, *spatial]` with one size per spatial axis (as many as a
/// linear mode's rank), `align_corners` with a linear mode only, and no
/// empty axis resampled to another length; the result is `[N, C, *size]`.
pub fn interpolate_shape<D: Dim>(
    op: &str,
    shape: &[D],
    size: &[usize],
    mode: InterpolateMode,
    align_corners: bool,
) -> Result<Dims<D>, ShapeError> {
    let spatial = shape.len().saturating_sub(2);
    let linear_rank = mode.linear_rank();
    let fits = shape.len() >= 3
        && size.len() == spatial
        && linear_rank.is_none_or(|r| r == spatial)
        && (linear_rank.is_some() || !align_corners);
    if !fits {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!(
                "size {size:?} with {mode:?} (align_corners {align_corners}) needs \
                 [N, C, *spatial] with one size per spatial axis"
            ),
        ));
    }
    for (k, &o) in size.iter().enumerate() {
        let axis = 2 + k;
        if shape[axis].as_lit() == Some(0) && o != 0 {
            return Err(ShapeError::new(
                op,
                &[shape],
                format!("cannot resample the empty axis {axis} to {o}"),
            ));
        }
    }
    let mut out: Dims<D> = shape[..2].iter().cloned().collect();
    out.extend(size.iter().map(|&o| D::lit(o)));
    Ok(out)
}
