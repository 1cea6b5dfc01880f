//! The kernel cache: (kernel AST, device, pipeline options) → compiled
//! kernel, in memory, for every device. A hit skips the whole per-kernel
//! pipeline (optimize, lower, render) and the device's compile step.
//! Devices may keep their own caches of built code below this one (the C
//! codegen's on-disk objects), keyed by what they build from.

use crate::device::Device;
use morok_backends::compile_program;
use morok_core::device::CompiledKernel;
use morok_core::program::VarSlot;
use morok_core::CompileOptions;
use morok_core::UOp;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Key: the AST node's id, the device instance, the options.
type Key = (u64, usize, CompileOptions);

/// An entry keeps its AST and device alive, so neither the node id nor
/// the device's address can be reused by another while it is cached.
struct Entry {
    _ast: Arc<UOp>,
    _device: Device,
    compiled: Compiled,
}

/// A compiled kernel and the scalar variables it takes at launch.
#[derive(Clone)]
pub(crate) struct Compiled {
    /// The kernel.
    pub kernel: Arc<dyn CompiledKernel>,
    /// Its `DEFINE_VAR`s, in the order `CompiledKernel::run` takes their
    /// values (`Program::vars`).
    pub vars: Vec<VarSlot>,
}

fn cache() -> MutexGuard<'static, HashMap<Key, Entry>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Entry>>> = OnceLock::new();
    CACHE
        .get_or_init(Default::default)
        .lock()
        // Single map operations only: a poisoned lock holds a whole map.
        .unwrap_or_else(|e| e.into_inner())
}

static PIPELINE_COMPILES: AtomicUsize = AtomicUsize::new(0);

/// How many kernels went through the per-kernel pipeline in this process
/// (kernel cache misses).
pub fn kernel_compiles() -> usize {
    PIPELINE_COMPILES.load(Ordering::Relaxed)
}

/// The cache key of `ast` compiled for `device` with `opts`.
fn key(device: &Device, ast: &Arc<UOp>, opts: CompileOptions) -> Key {
    (
        ast.id(),
        Arc::as_ptr(device.backend_arc()) as *const () as usize,
        opts,
    )
}

/// True if the cache holds the kernel for `ast` on `device`.
pub(crate) fn is_cached(device: &Device, ast: &Arc<UOp>, opts: CompileOptions) -> bool {
    cache().contains_key(&key(device, ast, opts))
}

/// The compiled kernel for `ast` on `device`, from the cache or through
/// the per-kernel pipeline and the device's compiler.
pub(crate) fn get_or_compile(
    device: &Device,
    ast: &Arc<UOp>,
    opts: CompileOptions,
) -> Result<Arc<dyn CompiledKernel>, String> {
    get_or_compile_with_vars(device, ast, opts).map(|c| c.kernel)
}

/// [`get_or_compile`], with the kernel's scalar variables.
pub(crate) fn get_or_compile_with_vars(
    device: &Device,
    ast: &Arc<UOp>,
    opts: CompileOptions,
) -> Result<Compiled, String> {
    let key = key(device, ast, opts);
    if let Some(e) = cache().get(&key) {
        return Ok(e.compiled.clone());
    }
    PIPELINE_COMPILES.fetch_add(1, Ordering::Relaxed);
    let backend = device.backend();
    let program = compile_program(ast, backend, &opts).map_err(|e| e.to_string())?;
    let compiled = Compiled {
        kernel: backend.compile(&program).map_err(|e| e.to_string())?,
        vars: program.vars,
    };
    cache().entry(key).or_insert_with(|| Entry {
        _ast: ast.clone(),
        _device: device.clone(),
        compiled: compiled.clone(),
    });
    Ok(compiled)
}
