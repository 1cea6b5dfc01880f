//! Morok: lazy tensors compiled to fused kernels.
//!
//! Build a computation with [`Tensor`] ops (nothing runs), then call
//! [`Tensor::realize`] (or read the data with [`Tensor::to_vec`] /
//! [`Tensor::to_ndarray`]) to compile and run it.
//!
//! ```no_run
//! use morok::Tensor;
//! let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
//! let b = &a * 2.0 + 1.0;
//! println!("{:?}", b.realize()?.to_vec::<f32>()?);
//! # Ok::<(), morok::Error>(())
//! ```

#![warn(missing_docs)]

pub use morok_core as core;

mod config;
mod device;
mod error;
mod ir_dump;
mod kernel;
mod realize;
pub mod storage;
mod tensor;

pub use error::{Error, Result};

/// Counters that show what the runtime did (for tests and benchmarks).
pub mod stats {
    pub use crate::realize::kernel_launches;
    pub use morok_core::schedule::pipeline_runs;
}
pub use kernel::KernelInfo;
pub use morok_core::dtype::Element;
pub use morok_core::{DType, ScalarType};
pub use tensor::{ConvOptions, IntoOperand, Operand, PoolOptions, Slice, Tensor};
