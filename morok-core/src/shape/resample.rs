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

/// `interpolate` by `scale_factor` (`op` names the errors): one positive
/// finite factor per spatial axis of `[N, C, *spatial]`, each output axis
/// `floor(i · scale)` long (a symbolic axis needs a known size, an empty
/// axis a factor of 1) and the checks of [`interpolate_shape`].
pub fn interpolate_scale_shape<D: Dim>(
    op: &str,
    shape: &[D],
    scale_factor: &[f64],
    mode: InterpolateMode,
    align_corners: bool,
) -> Result<Dims<D>, ShapeError> {
    let spatial = shape.len().saturating_sub(2);
    let bad = scale_factor.iter().any(|f| !f.is_finite() || *f <= 0.0);
    if scale_factor.len() != spatial || shape.len() < 3 || bad {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!(
                "scale_factor {scale_factor:?} needs [N, C, *spatial] and one positive \
                 finite factor per spatial axis"
            ),
        ));
    }
    let mut size = Vec::with_capacity(spatial);
    for (k, &f) in scale_factor.iter().enumerate() {
        let axis = 2 + k;
        let Some(i) = shape[axis].as_lit() else {
            return Err(ShapeError::new(
                op,
                &[shape],
                format!(
                    "scaling axis {axis} of size {} needs a known size",
                    shape[axis]
                ),
            ));
        };
        let o = (i as f64 * f).floor();
        if o >= isize::MAX as f64 {
            return Err(ShapeError::new(
                op,
                &[shape],
                format!("scale_factor {f} makes axis {axis} too long"),
            ));
        }
        size.push(o as usize);
    }
    let out = interpolate_shape(op, shape, &size, mode, align_corners)?;
    let empty = scale_factor
        .iter()
        .enumerate()
        .find(|&(k, &f)| shape[2 + k].as_lit() == Some(0) && f != 1.0);
    if let Some((k, _)) = empty {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!("cannot resample the empty axis {} to 0", 2 + k),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_lengths() {
        let s = |shape: &[usize], f: &[f64]| {
            interpolate_scale_shape("i", shape, f, InterpolateMode::Nearest, false)
                .map(|d| d.to_vec())
        };
        assert_eq!(s(&[1, 2, 5, 4], &[2.0, 1.5]), Ok(vec![1, 2, 10, 6]));
        assert_eq!(s(&[1, 2, 0], &[1.0]), Ok(vec![1, 2, 0]));
        assert!(s(&[1, 2, 0], &[2.0]).is_err());
        assert!(s(&[1, 2, 5], &[0.0]).is_err());
        assert!(s(&[1, 2, 5], &[2.0, 2.0]).is_err());
    }
}
