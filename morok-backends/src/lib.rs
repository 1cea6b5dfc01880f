//! Morok devices. The CPU device (C rendered for the system compiler) is
//! the default and always present.

#![warn(missing_docs)]

pub mod cpu;

pub use cpu::{CpuConfig, CpuDevice};
