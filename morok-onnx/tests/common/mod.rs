//! Helpers shared by the ONNX test-data runners: reading a tensor's values
//! as `f64` and comparing outputs the way ONNX's own backend runner does.

use morok::{DType, ScalarType, Tensor};

/// ONNX's backend runner compares with `numpy.testing.assert_allclose` at
/// these tolerances.
pub const RTOL: f64 = 1e-3;
/// The absolute tolerance (see [`RTOL`]).
pub const ATOL: f64 = 1e-7;

/// The values of `t` as `f64`, whatever its dtype.
pub fn values_f64(t: &Tensor) -> Result<Vec<f64>, morok::Error> {
    Ok(match t.dtype().scalar_type() {
        ScalarType::Bool => t
            .to_vec::<bool>()?
            .into_iter()
            .map(|b| b as u8 as f64)
            .collect(),
        ScalarType::I64 => t.to_vec::<i64>()?.into_iter().map(|v| v as f64).collect(),
        ScalarType::U64 => t.to_vec::<u64>()?.into_iter().map(|v| v as f64).collect(),
        _ => t.cast(DType::F64)?.to_vec::<f64>()?,
    })
}

/// Whether `got` matches `want` elementwise (NaN matches NaN, infinities
/// must be equal), or the first mismatch described.
pub fn compare(got: &[f64], want: &[f64], rtol: f64, atol: f64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} values, expected {}", got.len(), want.len()));
    }
    let mut bad = 0usize;
    let mut first = None;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= atol + rtol * w.abs()
        };
        if !ok {
            bad += 1;
            first.get_or_insert((i, g, w));
        }
    }
    match first {
        None => Ok(()),
        Some((i, g, w)) => Err(format!(
            "{bad} of {} values differ (first at {i}: got {g}, expected {w})",
            want.len()
        )),
    }
}

/// Checks one output against its expected tensor: dtype, shape, values.
pub fn check_output(got: &Tensor, want: &Tensor, rtol: f64, atol: f64) -> Result<(), String> {
    if got.dtype() != want.dtype() {
        return Err(format!("dtype {}, expected {}", got.dtype(), want.dtype()));
    }
    if got.shape() != want.shape() {
        return Err(format!(
            "shape {:?}, expected {:?}",
            got.shape(),
            want.shape()
        ));
    }
    let g = values_f64(got).map_err(|e| format!("running: {e}"))?;
    let w = values_f64(want).map_err(|e| format!("reading expected: {e}"))?;
    compare(&g, &w, rtol, atol)
}
