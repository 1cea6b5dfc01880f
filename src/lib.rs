//! Morok: lazy tensors compiled to fused kernels.
pub use morok_core as core;
