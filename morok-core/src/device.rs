//! Device interfaces: what a backend implements so the runtime can
//! allocate buffers, compile lowered kernels and run them.

use crate::dtype::DType;
use crate::lower::{LowerError, LoweredKernel};
use crate::render::{Caps, RenderError};
use std::any::Any;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Everything that can go wrong on a device, each naming what failed.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// Lowering the kernel AST failed.
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// Rendering the linear program failed.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// No usable compiler, or it could not be started.
    #[error("no usable compiler: {0}")]
    NoCompiler(String),
    /// The compiler rejected the source.
    #[error("compiling kernel `{kernel}` with {compiler} failed:\n{stderr}")]
    Compile {
        /// The kernel's name.
        kernel: String,
        /// The compiler command.
        compiler: String,
        /// What the compiler printed.
        stderr: String,
    },
    /// Loading compiled code failed.
    #[error("loading kernel `{kernel}` from {path} failed: {reason}")]
    Load {
        /// The kernel's name.
        kernel: String,
        /// The object file.
        path: String,
        /// The loader's message.
        reason: String,
    },
    /// A file system operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done (with the path).
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A buffer could not be allocated.
    #[error("cannot allocate {count} elements of {dtype}: {reason}")]
    Alloc {
        /// Element type.
        dtype: DType,
        /// Element count.
        count: usize,
        /// Why.
        reason: String,
    },
    /// Arguments of a copy or kernel call do not match what it needs.
    #[error("bad arguments for {what}: {reason}")]
    BadArgs {
        /// The kernel or operation.
        what: String,
        /// The mismatch.
        reason: String,
    },
}

/// Result alias for device operations.
pub type DeviceResult<T> = Result<T, DeviceError>;

/// Memory on a device holding `len()` elements of `dtype()`.
pub trait DeviceBuffer: Send + Sync {
    /// Element type.
    fn dtype(&self) -> DType;

    /// Number of elements.
    fn len(&self) -> usize;

    /// True when the buffer holds no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size in bytes.
    fn nbytes(&self) -> usize {
        self.len() * self.dtype().itemsize()
    }

    /// Overwrites the whole buffer with `bytes` (exactly `nbytes()` long,
    /// the elements' native little-endian representation).
    fn copy_in(&mut self, bytes: &[u8]) -> DeviceResult<()>;

    /// Copies the whole buffer into `bytes` (exactly `nbytes()` long).
    fn copy_out(&self, bytes: &mut [u8]) -> DeviceResult<()>;

    /// The concrete buffer, for the device that made it.
    fn as_any(&self) -> &dyn Any;
}

/// A kernel ready to run on its device.
pub trait CompiledKernel: Send + Sync {
    /// The kernel's name.
    fn name(&self) -> &str;

    /// The source it was compiled from.
    fn source(&self) -> &str;

    /// Runs the kernel on `buffers`, in `DEFINE_GLOBAL` slot order. Checks
    /// the count, element types, sizes against the kernel's accesses and
    /// that no written buffer is passed twice, and fails instead of
    /// touching memory out of bounds.
    fn run(&self, buffers: &[&dyn DeviceBuffer]) -> DeviceResult<()>;

    /// Runs the kernel `iterations` times (at least once) and returns the
    /// fastest run's wall time (for beam search and benchmarks).
    fn time(&self, buffers: &[&dyn DeviceBuffer], iterations: usize) -> DeviceResult<Duration> {
        let mut best = Duration::MAX;
        for _ in 0..iterations.max(1) {
            let start = Instant::now();
            self.run(buffers)?;
            best = best.min(start.elapsed());
        }
        Ok(best)
    }
}

/// A device: allocates buffers and compiles kernels.
pub trait Device: Send + Sync {
    /// The device's name (`"CPU"`, ...).
    fn name(&self) -> &str;

    /// What its renderer evaluates natively (feeds [`crate::lower::LowerOptions`]).
    fn caps(&self) -> Caps;

    /// Allocates a buffer of `count` elements. Its contents are
    /// unspecified: callers write every element before reading it.
    fn allocate(&self, dtype: DType, count: usize) -> DeviceResult<Box<dyn DeviceBuffer>>;

    /// Compiles a lowered kernel (cached: compiling the same kernel twice
    /// returns the same program).
    fn compile(&self, kernel: &LoweredKernel) -> DeviceResult<Arc<dyn CompiledKernel>>;
}
