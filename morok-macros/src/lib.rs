//! Compile-time front ends for Morok: `kernel!`, `model!` and
//! `#[morok::kernel]`, with shape errors reported at compile time.
//!
//! Not implemented yet: the macros arrive with the macro-DSL issue. The
//! crate exists now so the workspace has its final shape (it depends on
//! `morok-core`, which is why `patterns!` lives in its own crate); it
//! exports nothing, so no code can come to rely on a placeholder.
#![warn(missing_docs)]
