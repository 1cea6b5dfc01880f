//! The order of reductions: which may be reassociated, and the balanced
//! tree that combines partial results (the optimizer's `PARTIALS`, the
//! scheduler's split reductions and lowering's vector accumulators).
//!
//! **Float order.** Reassociating a float sum or product changes its
//! rounding; a balanced tree of partials has an error bound no worse than
//! the serial loop's, so `f32`/`f64` adds and products may reorder.
//! Halves (`f16`, `bf16`) keep their order: their few mantissa bits make
//! the order visible in results users compare. Integer adds and products
//! (wrapping) and every `max`/`min` are exact in any order.

use crate::dtype::DType;
use crate::uop::{ReduceOp, UOp};
use std::sync::Arc;

/// True if the order of a `op` reduction of `dtype` may change (see the
/// module docs).
pub fn reorderable(op: ReduceOp, dtype: DType) -> bool {
    match op {
        ReduceOp::Max | ReduceOp::Min => true,
        ReduceOp::Add | ReduceOp::Mul => {
            !dtype.is_float() || matches!(dtype, DType::F32 | DType::F64)
        }
    }
}
/// Folds `parts` with `op` as a balanced tree (neighbours first); `None`
/// for no parts. Also combines the vector accumulators of a tree in
/// lowering (`lower::partial_vectors`).
pub fn combine_pairwise(op: ReduceOp, mut parts: Vec<Arc<UOp>>) -> Option<Arc<UOp>> {
    while parts.len() > 1 {
        parts = parts
            .chunks(2)
            .map(|c| c[1..].iter().fold(c[0].clone(), |a, b| a.bin(op.alu(), b)))
            .collect();
    }
    parts.pop()
}
