//! The [`Codegen`] trait: how the CPU runtime turns a [`Program`] into a
//! function it can call. The runtime (`super`) owns buffers, threads and
//! the kernel ABI; a codegen owns rendering and building. C through the
//! system compiler ([`super::c::CCodegen`]) is the first implementation.

use morok_core::device::DeviceResult;
use morok_core::program::Program;
use morok_core::render::{RenderError, Renderer};
use morok_core::uop::UOp;
use morok_core::LoweredKernel;
use std::any::Any;
use std::ffi::c_void;
use std::sync::Arc;

/// The kernel ABI every CPU codegen implements:
///
/// ```c
/// void f(void *const *bufs, const int64_t *sizes, const int64_t *vars,
///        int64_t gstart, int64_t gend);
/// ```
///
/// `bufs[i]`/`sizes[i]`: the buffer of slot `i` and its element count;
/// `vars[k]`: the `k`-th scalar variable; `[gstart, gend)`: the iterations
/// of the parallel loop to run (ignored without one).
pub type KernelFn = unsafe extern "C" fn(*const *mut c_void, *const i64, *const i64, i64, i64);

/// A built kernel: its entry point and whatever keeps the code mapped.
pub struct LoadedKernel {
    /// The entry point, with the [`KernelFn`] ABI.
    pub func: KernelFn,
    /// Owner of the code `func` points into (a loaded library, a JIT
    /// engine); the function may be called while this lives.
    pub code: Arc<dyn Any + Send + Sync>,
}

/// A CPU code generator: a renderer plus a way to build its output into a
/// callable [`KernelFn`].
pub trait Codegen: Send + Sync {
    /// The device name the codegen is selected by (`"CPU"` for C,
    /// `"LLVM"`, ...).
    fn device_name(&self) -> &str;

    /// The renderer whose programs [`Codegen::build`] accepts.
    fn renderer(&self) -> &dyn Renderer;

    /// What identifies the built code, for cache keys: the codegen, its
    /// tool versions and flags, and the host CPU.
    fn identity(&self) -> String;

    /// One human-readable line naming the code generator and its tool
    /// version (see `Device::describe`).
    fn describe(&self) -> String;

    /// Builds a program rendered by [`Codegen::renderer`] into a loaded
    /// kernel (a codegen may cache builds by source).
    fn build(&self, program: &Program) -> DeviceResult<LoadedKernel>;

    /// [`Codegen::build`] stopped with an error once it has run for
    /// `limit` (see `Device::compile_within`); the default cannot stop a
    /// build and ignores the limit.
    fn build_within(
        &self,
        program: &Program,
        limit: std::time::Duration,
    ) -> DeviceResult<LoadedKernel> {
        let _ = limit;
        self.build(program)
    }

    /// How many times this codegen has run its compiler (cache misses).
    fn builds(&self) -> usize;
}

/// Checks that `kernel`'s name can be its exported symbol (a C
/// identifier), as every CPU renderer requires.
pub(crate) fn check_entry_name(kernel: &LoweredKernel, renderer: &str) -> Result<(), RenderError> {
    let name = &kernel.name;
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(RenderError {
            renderer: renderer.to_string(),
            node: name.clone(),
            what: "kernel name is not a C identifier".to_string(),
        })
    }
}

/// Whether the `RANGE` node `n` is the kernel's parallel loop, which runs
/// only the launch's iterations `[gstart, gend)` (the host splits it
/// across threads).
pub(crate) fn is_parallel_loop(kernel: &LoweredKernel, n: &Arc<UOp>) -> bool {
    kernel
        .parallel
        .as_ref()
        .is_some_and(|p| Arc::ptr_eq(&p.range, n))
}
