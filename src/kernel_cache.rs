//! The kernel cache: (kernel AST, device, pipeline options) → compiled
//! kernel, in memory, for every device. A hit skips the whole per-kernel
//! pipeline (optimize, lower, render) and the device's compile step.
//! Devices may keep their own caches of built code below this one (the C
//! codegen's on-disk objects), keyed by what they build from.
//!
//! The cache holds at most [`kernel_cache_limit`] kernels (from
//! `MOROK_KERNEL_CACHE`, or [`set_kernel_cache_limit`]) and forgets the
//! least recently used past that; an evicted kernel's code is freed once
//! no plan or tensor holds it (the C codegen unloads its library, the LLVM
//! JIT removes its object), so a process that meets ever new shapes keeps
//! bounded memory. The schedule cache in `morok-core` has the same limit.

use crate::device::Device;
use lru::LruCache;
use morok_backends::compile_program;
use morok_core::device::CompiledKernel;
use morok_core::program::VarSlot;
use morok_core::CompileOptions;
use morok_core::UOp;
use std::num::NonZeroUsize;
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

/// Kernels the cache holds without `MOROK_KERNEL_CACHE`.
pub const DEFAULT_KERNEL_CACHE_LIMIT: usize = 4096;

static LIMIT: OnceLock<AtomicUsize> = OnceLock::new();

/// The limit, read from `MOROK_KERNEL_CACHE` on first use (a positive
/// count; anything else keeps the default). Also sets the schedule
/// cache's.
fn limit() -> &'static AtomicUsize {
    LIMIT.get_or_init(|| {
        let n = crate::config::get()
            .kernel_cache
            .unwrap_or(DEFAULT_KERNEL_CACHE_LIMIT);
        morok_core::set_schedule_cache_limit(n);
        AtomicUsize::new(n)
    })
}

fn capacity() -> NonZeroUsize {
    NonZeroUsize::new(limit().load(Ordering::Relaxed)).unwrap_or(NonZeroUsize::MIN)
}

fn cache() -> MutexGuard<'static, LruCache<Key, Entry>> {
    static CACHE: OnceLock<Mutex<LruCache<Key, Entry>>> = OnceLock::new();
    CACHE
        .get_or_init(|| Mutex::new(LruCache::new(capacity())))
        .lock()
        // Single map operations only: a poisoned lock holds a whole map.
        .unwrap_or_else(|e| e.into_inner())
}

/// How many compiled kernels the in-process cache holds before it forgets
/// the least recently used (`MOROK_KERNEL_CACHE`, default
/// [`DEFAULT_KERNEL_CACHE_LIMIT`]).
pub fn kernel_cache_limit() -> usize {
    limit().load(Ordering::Relaxed)
}

/// Sets [`kernel_cache_limit`] and the schedule cache's limit (at least
/// 1), forgetting the least recently used entries past it now.
///
/// ```
/// morok::set_kernel_cache_limit(256);
/// assert_eq!(morok::kernel_cache_limit(), 256);
/// assert!(morok::stats::kernel_cache_len() <= 256);
/// ```
pub fn set_kernel_cache_limit(n: usize) {
    let n = n.max(1);
    limit().store(n, Ordering::Relaxed);
    morok_core::set_schedule_cache_limit(n);
    cache().resize(capacity());
}

/// How many compiled kernels the in-process cache holds now.
pub fn kernel_cache_len() -> usize {
    cache().len()
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
    cache().contains(&key(device, ast, opts))
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
    let mut cache = cache();
    // Another thread may have compiled it meanwhile: keep the first.
    if let Some(e) = cache.get(&key) {
        return Ok(e.compiled.clone());
    }
    cache.put(
        key,
        Entry {
            _ast: ast.clone(),
            _device: device.clone(),
            compiled: compiled.clone(),
        },
    );
    Ok(compiled)
}
