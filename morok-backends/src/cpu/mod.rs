//! The CPU device: kernels rendered as C, compiled by the system C
//! compiler, loaded with `libloading`, run on host buffers with rayon
//! splitting the outermost parallel loop.

pub mod buffer;
pub mod compiler;
pub mod kernel;
pub mod render;

pub use buffer::CpuBuffer;
pub use compiler::{Compiler, ObjectCache};
pub use kernel::CpuKernel;
pub use render::CRenderer;

use morok_core::device::{CompiledKernel, Device, DeviceBuffer, DeviceError, DeviceResult};
use morok_core::dtype::DType;
use morok_core::lower::{lower, LowerOptions, LoweredKernel};
use morok_core::render::{Caps, Renderer};
use morok_core::uop::UOp;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// Settings of a [`CpuDevice`].
#[derive(Clone, Debug)]
pub struct CpuConfig {
    /// Directory of the on-disk object cache.
    pub cache_dir: PathBuf,
    /// Worker threads for parallel loops (1 disables threading).
    pub threads: usize,
    /// The C compiler to use instead of searching `cc`, `clang`, `gcc`.
    pub compiler: Option<String>,
}

impl CpuConfig {
    /// Settings from the environment: `MOROK_CACHE_DIR` (default: the
    /// user's cache directory + `morok`, or the temp directory when there
    /// is none), `MOROK_THREADS` (default: available cores), `MOROK_CC`.
    pub fn from_env() -> CpuConfig {
        let cache_dir = std::env::var_os("MOROK_CACHE_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                dirs::cache_dir()
                    .unwrap_or_else(std::env::temp_dir)
                    .join("morok")
            });
        let threads = std::env::var("MOROK_THREADS")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .filter(|n| *n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        CpuConfig {
            cache_dir,
            threads,
            compiler: std::env::var("MOROK_CC").ok().filter(|s| !s.is_empty()),
        }
    }
}

/// Key of the in-memory cache by AST: the AST node (kept alive, so its id
/// cannot be reused) and the options.
type AstKey = (u64, LowerOptions);

/// The in-memory kernel cache by AST.
type AstCache = HashMap<AstKey, (Arc<UOp>, Arc<CpuKernel>)>;

/// The CPU device.
pub struct CpuDevice {
    config: CpuConfig,
    objects: OnceLock<Result<ObjectCache, String>>,
    pool: OnceLock<Option<Arc<rayon::ThreadPool>>>,
    /// Loaded objects by source. Kernels that differ only in the trip
    /// count of their parallel loop (which the host passes in) share one.
    by_source: Mutex<HashMap<String, Arc<libloading::Library>>>,
    by_ast: Mutex<AstCache>,
}

impl Default for CpuDevice {
    fn default() -> Self {
        CpuDevice::new()
    }
}

impl CpuDevice {
    /// A CPU device configured from the environment ([`CpuConfig::from_env`]).
    pub fn new() -> CpuDevice {
        CpuDevice::with_config(CpuConfig::from_env())
    }

    /// A CPU device with explicit settings.
    pub fn with_config(config: CpuConfig) -> CpuDevice {
        CpuDevice {
            config,
            objects: OnceLock::new(),
            pool: OnceLock::new(),
            by_source: Mutex::new(HashMap::new()),
            by_ast: Mutex::new(HashMap::new()),
        }
    }

    /// The settings.
    pub fn config(&self) -> &CpuConfig {
        &self.config
    }

    /// How many times this device has run the C compiler.
    pub fn compiler_invocations(&self) -> usize {
        match self.objects.get() {
            Some(Ok(o)) => o.invocations(),
            _ => 0,
        }
    }

    fn objects(&self) -> DeviceResult<&ObjectCache> {
        let o = self.objects.get_or_init(|| {
            Compiler::find(self.config.compiler.as_deref())
                .map(|c| ObjectCache::new(self.config.cache_dir.clone(), c))
                .map_err(|e| e.to_string())
        });
        o.as_ref().map_err(|e| DeviceError::NoCompiler(e.clone()))
    }

    fn pool(&self) -> Option<Arc<rayon::ThreadPool>> {
        self.pool
            .get_or_init(|| {
                (self.config.threads > 1).then(|| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(self.config.threads)
                        .thread_name(|i| format!("morok-cpu-{i}"))
                        .build()
                        .ok()
                        .map(Arc::new)
                })?
            })
            .clone()
    }

    /// Lowers, compiles and caches a kernel AST; a second call with the
    /// same AST and options returns the cached kernel without lowering.
    pub fn compile_ast(
        &self,
        ast: &Arc<UOp>,
        opts: &LowerOptions,
    ) -> DeviceResult<Arc<dyn CompiledKernel>> {
        let key = (ast.id(), opts.clone());
        if let Some((_, k)) = self.lock_ast().get(&key) {
            return Ok(k.clone());
        }
        let lowered = lower(ast, opts)?;
        let k = self.compile_cpu(&lowered)?;
        self.lock_ast().insert(key, (ast.clone(), k.clone()));
        Ok(k)
    }

    fn lock_ast(&self) -> std::sync::MutexGuard<'_, AstCache> {
        self.by_ast.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Compiles a lowered kernel to a [`CpuKernel`] (the object is cached
    /// by source in memory and on disk).
    pub fn compile_cpu(&self, kernel: &LoweredKernel) -> DeviceResult<Arc<CpuKernel>> {
        for (i, b) in kernel.buffers.iter().enumerate() {
            if !render::storable(b.dtype) {
                return Err(DeviceError::BadArgs {
                    what: format!("kernel `{}`", kernel.name),
                    reason: format!("slot {i} has element type {}, not storable", b.dtype),
                });
            }
        }
        let rendered = CRenderer.render(kernel)?;
        let lock = || self.by_source.lock().unwrap_or_else(|e| e.into_inner());
        let cached = lock().get(&rendered.source).cloned();
        let lib = match cached {
            Some(lib) => lib,
            None => {
                let lib = Arc::new(
                    self.objects()?
                        .load_or_build(&rendered.source, &rendered.entry)?,
                );
                lock().insert(rendered.source.clone(), lib.clone());
                lib
            }
        };
        // SAFETY: the symbol was rendered with exactly the `KernelFn`
        // signature (see `render.rs`).
        let func: kernel::KernelFn = unsafe {
            *lib.get::<kernel::KernelFn>(rendered.entry.as_bytes())
                .map_err(|e| DeviceError::Load {
                    kernel: kernel.name.clone(),
                    path: self.config.cache_dir.display().to_string(),
                    reason: e.to_string(),
                })?
        };
        Ok(Arc::new(CpuKernel::new(
            kernel,
            rendered.source,
            lib,
            func,
            self.config.threads,
            self.pool(),
        )))
    }
}

impl Device for CpuDevice {
    fn name(&self) -> &str {
        "CPU"
    }

    fn caps(&self) -> Caps {
        CRenderer.caps()
    }

    fn allocate(&self, dtype: DType, count: usize) -> DeviceResult<Box<dyn DeviceBuffer>> {
        if !render::storable(dtype) {
            return Err(DeviceError::Alloc {
                dtype,
                count,
                reason: "not a storable element type".to_string(),
            });
        }
        Ok(Box::new(CpuBuffer::new(dtype, count)?))
    }

    fn compile(&self, kernel: &LoweredKernel) -> DeviceResult<Arc<dyn CompiledKernel>> {
        Ok(self.compile_cpu(kernel)?)
    }
}
