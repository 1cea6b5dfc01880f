//! The UOp: one hash-consed node type for every level of the compiler.
//!
//! A [`UOp`] is an operation ([`Op`]), a result [`DType`](crate::dtype::DType), its operands
//! (`src`) and an [`Arg`]. Nodes are immutable and interned: building the
//! same node twice returns the same `Arc`, so pointer equality is
//! structural equality. Each node remembers the source location of the
//! code that first built it (provenance), which errors quote.

mod build;
pub mod fast_hash;
mod node;
pub mod op;
mod print;
mod shape;
mod tensor_build;

pub use fast_hash::{IdMap, IdSet};
pub use node::{interned_count, new_buffer_id, CachedTerms, NodeCache, Srcs, UOp};
pub use op::{Arg, AxisType, ConstValue, Op, OpGroup, ReduceOp};
pub use shape::{shape_of, tensor_shape};

pub use crate::shape::Shape;

#[cfg(test)]
mod tests;
