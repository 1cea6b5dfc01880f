//! Scheduling tests: tensor-level graphs are scheduled, the kernels run in
//! the AST interpreter, and the values compared with ones computed here.

mod common;
mod fusion;
mod memory;
mod ops;
mod range_reduce;
