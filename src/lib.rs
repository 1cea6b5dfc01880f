//! Morok: lazy tensors compiled to fused kernels.
//!
//! Build a computation with [`Tensor`] ops (nothing runs), then call
//! [`Tensor::realize`] (or read the data with [`Tensor::to_vec`] /
//! [`Tensor::to_ndarray`]) to compile and run it. The first realization of
//! a graph runs the rewrite pipeline and JIT-compiles its kernels with the
//! system C compiler; realizing a graph of the same structure again (new
//! data, same ops and shapes) reuses both.
//!
//! ```
//! use morok::Tensor;
//! let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
//! let b = &a * 2.0 + 1.0;
//! assert_eq!(b.to_vec::<f32>()?, [3.0, 5.0, 7.0]);
//! # Ok::<(), morok::Error>(())
//! ```
//!
//! # Shapes, axes and broadcasting
//!
//! Semantics follow NumPy and PyTorch: binary ops broadcast from the
//! right, negative axes count from the end, reductions take a list of
//! axes (`None` for all) and a `keepdim` flag, and `matmul` follows the
//! usual vector / matrix / batched rules.
//!
//! ```
//! use morok::Tensor;
//! let m = Tensor::from_vec((0..6).map(|v| v as f32).collect(), &[2, 3])?;
//! let row = Tensor::from_slice(&[10.0f32, 20.0, 30.0]);
//! let shifted = &m + &row; // [2, 3] + [3]
//! let sums = shifted.sum(Some(&[-1]), false)?;
//! assert_eq!(sums.to_vec::<f32>()?, [63.0, 72.0]);
//! let t = m.try_transpose(0, 1)?; // [3, 2]
//! assert_eq!(m.matmul(&t)?.shape(), [2, 2]);
//! assert_eq!(m.argmax(Some(1))?.to_vec::<i32>()?, [2, 2]);
//! # Ok::<(), morok::Error>(())
//! ```
//!
//! # Errors
//!
//! Every fallible method returns [`Result`]. Operators (`+`, `*`, `-`, ...)
//! cannot return one, so a shape or dtype mismatch makes a tensor that
//! carries the error; the next fallible call returns it. An [`Error`]
//! names the op, the shapes or dtypes involved and the source location of
//! the call that went wrong.
//!
//! ```
//! use morok::Tensor;
//! let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
//! let b = Tensor::from_slice(&[1.0f32, 2.0]);
//! let c = &a + &b; // no panic here
//! let err = c.realize().unwrap_err();
//! assert_eq!(err.op(), "add");
//! assert!(err.to_string().starts_with("add: [3] and [2]"));
//! ```
//!
//! # Looking inside
//!
//! [`Tensor::uop`] is the graph (print it with `tree()`), and
//! [`Tensor::kernels`] lists the kernels a realization ran with their
//! generated code. The environment variable `MOROK_DEBUG` prints kernels
//! and their times (`1`), the schedule (`2`), the generated code (`3`) or
//! the IR after every stage (`ir`); `MOROK_NOOPT=1` turns optimizations
//! off. `docs/ARCHITECTURE.md` in the repository describes the pipeline.
//!
//! ```
//! use morok::Tensor;
//! let x = Tensor::from_slice(&[1.0f32, -2.0, 3.0]);
//! let y = (&x * &x).relu()?.realize()?;
//! let kernels = y.kernels();
//! assert_eq!(kernels.len(), 1); // multiply and relu fuse
//! assert!(kernels[0].code.contains(&kernels[0].name));
//! println!("{}", y.uop().tree());
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
pub use tensor::{
    AttentionOptions, ClassLossOptions, ConvOptions, Index, IntoOperand, MeshIndexing, Operand,
    PoolOptions, Reduction, RoundingMode, ScatterReduce, Slice, Tensor,
};
