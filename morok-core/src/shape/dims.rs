//! Shapes as lists of dims, and the error every shape rule reports.

use smallvec::SmallVec;
use std::fmt;

/// A list of dims (a shape over any [`Dim`](super::Dim)).
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
    /// `op: [a] and [b]: reason`, or `op: reason` without shapes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.op)?;
        if !self.shapes.is_empty() {
            write!(f, "{}: ", self.shapes.join(" and "))?;
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for ShapeError {}
