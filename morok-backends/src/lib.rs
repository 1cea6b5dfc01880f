//! Morok devices. The CPU device (C rendered for the system compiler) is
//! the default and always present.

#![warn(missing_docs)]

pub mod beam;
pub mod compile;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(any(feature = "llvm", feature = "cuda"))]
mod disk_cache;
pub mod host;
pub mod launch_check;
pub mod settings;

pub use compile::compile_program;

pub use cpu::{CpuConfig, CpuDevice};
