//! The values the reference evaluator computes with: arrays of `f64` or
//! `i128` elements, wrapped to their dtype, and its errors.

use crate::dtype::ScalarType;
use crate::symbolic::eval::{cast_with, Undefined};
use crate::uop::op::{round_to_float, wrap_i, wrap_u};
use crate::uop::{ConstValue, UOp};

/// The value of a tensor-level graph: shape, element type and the elements
/// in row-major order, as f64 (64-bit integers beyond 2^53 are rounded).
#[derive(Clone, Debug, PartialEq)]
pub struct RefArray {
    /// The tensor's shape (empty for a scalar).
    pub shape: Vec<usize>,
    /// The element type the values were computed in.
    pub dtype: ScalarType,
    /// The elements, row-major.
    pub data: Vec<f64>,
}

/// Why a graph could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("reference evaluator: {op}: {message}")]
pub struct EvalError {
    /// The op of the node that failed (dump name).
    pub op: String,
    /// What is wrong.
    pub message: String,
}

impl EvalError {
    pub(super) fn new(node: &UOp, message: impl Into<String>) -> EvalError {
        EvalError {
            op: node.op().dump_name(),
            message: message.into(),
        }
    }
}

/// Element storage of an evaluated node: f64 for float dtypes, exact
/// integers for bool and integer dtypes.
#[derive(Clone, Debug)]
pub(crate) enum Vals {
    /// Float elements, already rounded to the dtype.
    F(Vec<f64>),
    /// Bool (0/1) or integer elements, already wrapped to the dtype.
    I(Vec<i128>),
}

/// An evaluated node.
#[derive(Clone, Debug)]
pub(crate) struct Arr {
    pub shape: Vec<usize>,
    pub dtype: ScalarType,
    pub vals: Vals,
}

impl Arr {
    pub(super) fn len(&self) -> usize {
        match &self.vals {
            Vals::F(v) => v.len(),
            Vals::I(v) => v.len(),
        }
    }

    pub(super) fn to_f64(&self) -> Vec<f64> {
        match &self.vals {
            Vals::F(v) => v.clone(),
            Vals::I(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }
}

/// Wraps an exact integer to the width of `t` (bool: non-zero is 1).
pub(crate) fn wrap(v: i128, t: ScalarType) -> i128 {
    match t {
        ScalarType::Bool => (v != 0) as i128,
        t if t.is_unsigned() => wrap_u(v, t) as i128,
        t => wrap_i(v, t) as i128,
    }
}

/// Converts f64 values to the canonical storage of dtype `t`: floats are
/// rounded to the type, integers truncate toward zero and saturate.
pub(crate) fn vals_from_f64(t: ScalarType, data: impl IntoIterator<Item = f64>) -> Vals {
    if t.is_float() {
        Vals::F(data.into_iter().map(|v| round_to_float(v, t)).collect())
    } else {
        Vals::I(data.into_iter().map(|v| int_from_f64(v, t)).collect())
    }
}

/// Float to integer conversion as Rust's `as` and the compiled code do it:
/// truncation toward zero, saturating at the type's range, NaN gives 0.
/// (The one cast semantics: `eval::cast_with` in its defined mode.)
pub(crate) fn int_from_f64(v: f64, t: ScalarType) -> i128 {
    cast_with(
        ConstValue::Float(v),
        crate::dtype::DType::scalar(t),
        Undefined::Define,
    )
    .and_then(ConstValue::as_i128)
    .unwrap_or(0)
}

/// The most elements a node may have for [`evaluate`](super::evaluate) (each is held as an
/// f64 or i128).
pub const MAX_ELEMENTS: usize = 1 << 26;
