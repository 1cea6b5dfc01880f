//! Shape rules, in one place.
//!
//! The pure functions of [`rules`] (broadcasting, matmul, reductions,
//! reshape with `-1`, permute / transpose / expand, linear and conv) are
//! the only definition of the shape rules. They are generic over a
//! [`Dim`]: the tensor API calls them with `usize` dims at run time and the
//! macros with symbolic [`SymDim`]s at expansion time, so both report the
//! same error text.
//!
//! This module depends on nothing else in the crate; the shape of a UOp
//! node (checked and cached on the node) is `uop::shape_of`, built on it.

mod dim;
pub mod rules;

pub use dim::{Dim, SymDim};
pub use rules::*;

use smallvec::SmallVec;
use std::fmt;

/// A list of dims (a shape over any [`Dim`]).
pub type Dims<D> = SmallVec<[D; 4]>;

/// A concrete tensor shape.
pub type Shape = Dims<usize>;

/// A shape rule was violated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    /// The operation that was asked for (`add`, `reshape`, `matmul`, ...).
    pub op: String,
    /// The shapes involved, in operand order, as written (`[B, 64]`).
    pub shapes: Vec<String>,
    /// What is wrong.
    pub reason: String,
}

/// Writes a shape as `[d0, d1, ...]`.
pub fn shape_text<D: fmt::Display>(shape: &[D]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

impl ShapeError {
    /// A new error for `op` over `shapes`.
    pub fn new<D: fmt::Display>(
        op: impl Into<String>,
        shapes: &[&[D]],
        reason: impl Into<String>,
    ) -> Self {
        ShapeError {
            op: op.into(),
            shapes: shapes.iter().map(|s| shape_text(s)).collect(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.op)?;
        f.write_str(&self.shapes.join(" and "))?;
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for ShapeError {}
