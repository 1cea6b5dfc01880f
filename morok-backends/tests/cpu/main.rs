//! CPU backend tests: hand-built kernel ASTs following the contract,
//! lowered, rendered to C, compiled with the system compiler and run,
//! compared with values computed in Rust.

mod beam;
mod cache_dir;
mod common;
mod elementwise;
#[cfg(feature = "llvm")]
mod llvm;
mod opts;
mod reduce;
mod runtime;
mod threads;
mod transcendental;
mod vector_math;
mod vectors;
