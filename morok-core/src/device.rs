//! Device interfaces: what a backend implements so the runtime can
//! allocate buffers, compile [`Program`]s and run and time them.
//!
//! A device is the only door between the runtime and a backend: the
//! runtime runs the per-kernel pipeline
//! ([`crate::pipeline::compile_program`]) with the device's
//! [`Renderer`], hands the [`Program`] to [`Device::compile`], and runs
//! the result on buffers the device allocated.

use crate::caps::Caps;
use crate::dtype::DType;
use crate::program::Program;
use crate::render::{RenderError, Renderer};
use crate::target::Target;
use std::any::Any;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Everything that can go wrong on a device, each naming what failed.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
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
    /// A call into a device's driver failed (a GPU's allocation, copy or
    /// launch).
    #[error("{what}: {reason}")]
    Driver {
        /// What was being done (`CUDA: copying to the device`).
        what: String,
        /// The driver's message.
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

    /// Overwrites the whole buffer with `source`'s contents without going
    /// through the host, where this buffer's device can read `source`
    /// directly (two GPUs of one backend); `Ok(false)` where it cannot,
    /// and the caller copies through the host. `source` has this buffer's
    /// type and length.
    fn copy_from(&mut self, source: &dyn DeviceBuffer) -> DeviceResult<bool> {
        let _ = source;
        Ok(false)
    }

    /// The concrete buffer, for the device that made it.
    fn as_any(&self) -> &dyn Any;
}

/// A kernel ready to run on its device.
pub trait CompiledKernel: Send + Sync {
    /// The kernel's name.
    fn name(&self) -> &str;

    /// The source it was compiled from.
    fn source(&self) -> &str;

    /// Runs the kernel on `buffers`, in `DEFINE_GLOBAL` slot order, with
    /// the values of its scalar variables ([`Program::vars`] order).
    /// Checks the count, element types, sizes against the kernel's
    /// accesses, the variables against their bounds, and that no written
    /// buffer is passed twice, and fails instead of touching memory out
    /// of bounds.
    fn run(&self, buffers: &[&dyn DeviceBuffer], vars: &[i64]) -> DeviceResult<()>;

    /// The concrete kernel, for its own device's launch paths (the CPU
    /// device's [`Device::prepare_launches`] finds its kernels' entry
    /// points through it); `None` (the default) where the kernel runs only
    /// through [`CompiledKernel::run`]. Code outside the backend never
    /// needs it.
    fn as_any(&self) -> Option<&dyn Any> {
        None
    }

    /// Waits until every launch of this kernel so far has finished: a
    /// no-op (the default) where [`CompiledKernel::run`] returns only when
    /// the kernel is done (the CPU); a GPU waits for its stream.
    fn finish(&self) -> DeviceResult<()> {
        Ok(())
    }

    /// Runs the kernel `runs` times (at least once) and returns the
    /// median wall time of one run, each to its [`CompiledKernel::finish`]
    /// (for beam search and benchmarks).
    fn time(
        &self,
        buffers: &[&dyn DeviceBuffer],
        vars: &[i64],
        runs: usize,
    ) -> DeviceResult<Duration> {
        self.finish()?;
        let mut times = Vec::with_capacity(runs.max(1));
        for _ in 0..runs.max(1) {
            let start = Instant::now();
            self.run(buffers, vars)?;
            self.finish()?;
            times.push(start.elapsed());
        }
        times.sort();
        Ok(times[times.len() / 2])
    }
}

/// One buffer of a run's frame (the buffers a sequence of launches
/// touches, by frame index), as every buffer bound to it must match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSlot {
    /// Its element type.
    pub dtype: DType,
    /// Its element count (a bound buffer may hold more).
    pub len: usize,
    /// Whether a launch may write it (a run locks it exclusively).
    pub written: bool,
}

/// One launch of a sequence run on a frame: a kernel of the device, the
/// frame index of each of its buffer slots (`DEFINE_GLOBAL` order) and
/// its variables' values ([`Program::vars`] order).
#[derive(Clone, Copy)]
pub struct FrameLaunch<'a> {
    /// The kernel, compiled by the device asked to prepare the launch.
    pub kernel: &'a dyn CompiledKernel,
    /// The frame index of each of the kernel's buffer slots.
    pub slots: &'a [usize],
    /// The values of the kernel's variables.
    pub vars: &'a [i64],
}

/// A sequence of launches that its device checked once against a frame
/// ([`Device::prepare_launches`]): a run checks each buffer once against
/// its frame slot, not each launch's arguments.
pub trait PreparedLaunches: Send + Sync {
    /// Runs the launches in order on `buffers` (frame order), each buffer
    /// checked against its [`FrameSlot`] (type, at least its count, bound
    /// once) and locked for the whole run, exclusively where written;
    /// Where `done` is given, `done(i)` is called after launch `i`
    /// returned (reports that time each launch); a run without one pays
    /// no call per launch.
    fn run(
        &self,
        buffers: &[&dyn DeviceBuffer],
        done: Option<&mut dyn FnMut(usize)>,
    ) -> DeviceResult<()>;
}

/// A device: allocates buffers, compiles programs into runnable kernels.
pub trait Device: Send + Sync {
    /// The device's name (`"CPU"`, `"LLVM"`, ...), as `MOROK_DEVICE`
    /// spells it.
    fn name(&self) -> &str;

    /// What identifies the code this device produces, for cache keys:
    /// the codegen, its version and the host it targets. Two devices with
    /// equal identities produce interchangeable kernels.
    fn identity(&self) -> String;

    /// One human-readable line naming the device's code generator and its
    /// version (`C (cc: gcc (Debian 12.2.0-14) 12.2.0)`, `LLVM 19.1.7
    /// (znver4, x86_64-unknown-linux-gnu)`), shown by `Tensor::kernels()`.
    fn describe(&self) -> String {
        self.name().to_string()
    }

    /// The directory where this device keeps on-disk caches (compiled
    /// objects, beam search results), if it has one.
    fn cache_dir(&self) -> Option<std::path::PathBuf> {
        None
    }

    /// The renderer the per-kernel pipeline uses for this device.
    fn renderer(&self) -> &dyn Renderer;

    /// What the device's renderer evaluates natively.
    fn caps(&self) -> Caps {
        self.renderer().caps()
    }

    /// The machine this device runs kernels on, as the optimizer sees it
    /// (vector width, caches, threads: a CPU device probes its host and
    /// caps the threads at `MOROK_THREADS` or its configuration).
    fn target(&self) -> Target;

    /// Allocates a buffer of `count` elements. Its contents are
    /// unspecified: callers write every element before reading it.
    fn allocate(&self, dtype: DType, count: usize) -> DeviceResult<Box<dyn DeviceBuffer>>;

    /// Compiles a program rendered by [`Device::renderer`] into a kernel
    /// that runs on this device's buffers.
    fn compile(&self, program: &Program) -> DeviceResult<Arc<dyn CompiledKernel>>;

    /// Checks `launches` of this device's kernels once against `frame`
    /// (buffer count and types, access ranges at the given variable values
    /// within the frame's counts, variable bounds, written buffers marked
    /// written and in no other slot) for a cached plan that runs them many
    /// times ([`PreparedLaunches::run`]). `None` (the default) where the
    /// device has no such path or a launch fails a check: the caller then
    /// runs each launch with [`CompiledKernel::run`], which checks it
    /// every time and says what is wrong.
    fn prepare_launches(
        &self,
        frame: &[FrameSlot],
        launches: &[FrameLaunch<'_>],
    ) -> Option<Box<dyn PreparedLaunches>> {
        let _ = (frame, launches);
        None
    }

    /// [`Device::compile`] that gives up once the compile has run for
    /// `limit` (beam search's per-candidate timeout): a device that can
    /// stop its compiler (the C codegen kills the compiler process) fails
    /// with an error saying so; the default has no way to stop one and
    /// compiles as [`Device::compile`] does.
    fn compile_within(
        &self,
        program: &Program,
        limit: std::time::Duration,
    ) -> DeviceResult<Arc<dyn CompiledKernel>> {
        let _ = limit;
        self.compile(program)
    }

    /// Waits until everything queued on the device has finished: a no-op
    /// (the default) where launches return when their kernel is done (the
    /// CPU); a GPU waits for its stream.
    fn synchronize(&self) -> DeviceResult<()> {
        Ok(())
    }
}
