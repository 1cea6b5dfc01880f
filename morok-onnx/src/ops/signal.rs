//! Window functions (`HannWindow`, `HammingWindow`, `BlackmanWindow`),
//! computed on the host from their length (a scalar input).

use super::{host_scalar, invalid, OpCtx, OpError, OpFn, OpResult};
use crate::data::dtype_of;
use morok::Tensor;
use std::f64::consts::PI;

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("HannWindow", hann_window),
    ("HammingWindow", hamming_window),
    ("BlackmanWindow", blackman_window),
];

/// `f(2π n / N)` for `n` in `0..size`, where `N` is `size` for a periodic
/// window and `size - 1` for a symmetric one.
fn window(ctx: &OpCtx<'_>, f: fn(f64) -> f64) -> OpResult {
    let size = host_scalar(ctx.input(0)?)?;
    if !(0.0..=super::MAX_CREATED as f64).contains(&size) {
        invalid!("window length {size}");
    }
    let size = size as usize;
    let periodic = ctx.int("periodic", 1)? != 0;
    let n = if periodic {
        size as f64
    } else {
        size as f64 - 1.0
    };
    let values: Vec<f64> = (0..size)
        .map(|i| {
            if n > 0.0 {
                f(2.0 * PI * i as f64 / n)
            } else {
                f(0.0)
            }
        })
        .collect();
    let dtype = dtype_of(ctx.int("output_datatype", 1)? as i32).map_err(OpError::Unsupported)?;
    Ok(vec![Tensor::from_vec(values, &[size])?.cast(dtype)?])
}

fn hann_window(ctx: &OpCtx<'_>) -> OpResult {
    window(ctx, |a| 0.5 - 0.5 * a.cos())
}
fn hamming_window(ctx: &OpCtx<'_>) -> OpResult {
    window(ctx, |a| 25.0 / 46.0 - 21.0 / 46.0 * a.cos())
}
fn blackman_window(ctx: &OpCtx<'_>) -> OpResult {
    window(ctx, |a| 0.42 - 0.5 * a.cos() + 0.08 * (2.0 * a).cos())
}
