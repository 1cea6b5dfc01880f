//! `morok-core`: the device-independent compiler.
//!
//! - [`dtype`]: scalar, vector and pointer types and type promotion;
//! - [`uop`]: the hash-consed IR node and the op set;
//! - [`rewrite`]: pattern matchers and the fixpoint graph rewriter;
//! - [`gradient`]: reverse-mode differentiation of tensor-level graphs;
//! - [`lower`]: kernel AST → linear program (reduces, index types,
//!   decompositions, linearization);
//! - [`opt`]: the kernel optimizer (the pipeline's optimization step);
//! - [`pipeline`]: the per-kernel pipeline, kernel AST → [`program::Program`];
//! - [`caps`], [`render`] and [`device`]: the interfaces backends implement;
//! - [`schedule`]: rangeify, kernel splitting, schedule, memory planning;
//! - `interp` (feature `testing`): a kernel-AST interpreter (test oracle);
//! - [`reference`](mod@reference): the f64 reference evaluator of tensor-level graphs (the test oracle);
//! - [`random`]: Threefry-2x32, the counter-based generator behind `Op::Threefry`;
//!
//! The `patterns!` macro (from `morok-patterns`) is re-exported here.

#![warn(missing_docs)]

extern crate self as morok_core;

pub mod caps;
pub mod device;
pub mod dtype;
pub mod gradient;
#[cfg(any(test, feature = "testing"))]
pub mod interp;
pub mod kernel;
pub mod lower;
pub mod opt;
pub mod pipeline;
pub mod program;
pub mod random;
pub mod reference;
pub mod render;
pub mod rewrite;
#[cfg(any(test, feature = "testing"))]
pub mod sample_kernels;
pub mod schedule;
pub mod shape;
pub mod symbolic;
pub mod target;
pub mod uop;

pub use dtype::{AddrSpace, DType, ScalarType};
pub use morok_patterns::patterns;
pub use rewrite::{graph_rewrite, PatternMatcher};
pub use uop::{new_buffer_id, Arg, AxisType, ConstValue, Op, ReduceOp, Shape, UOp};
