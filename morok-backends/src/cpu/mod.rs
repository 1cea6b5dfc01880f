//! The CPU device: a host runtime plus a codegen.
//!
//! The runtime ([`CpuDevice`]) owns what every CPU codegen shares: host
//! buffers and their pool ([`buffer`]), the worker threads that split a
//! kernel's parallel loop, the kernel ABI and argument checks
//! ([`kernel`]). A [`Codegen`] ([`codegen`]) renders a program and builds
//! it into a callable function; C through the system compiler ([`c`]) is
//! the default one, LLVM through an in-process ORC JIT (`llvm`, feature
//! `llvm`) the other.

pub mod buffer;
pub mod c;
pub mod codegen;
mod guard;
pub mod kernel;
#[cfg(feature = "llvm")]
pub mod llvm;
pub mod pool;
pub mod prepared;
pub mod stream;

pub use buffer::{pooled_bytes, CpuBuffer};
pub use c::{CCodegen, CRenderer, Compiler, ObjectCache};
pub use codegen::{Codegen, KernelFn, LoadedKernel};
pub use kernel::CpuKernel;
#[cfg(feature = "llvm")]
pub use llvm::{LlvmCodegen, LlvmRenderer};
pub use pool::WorkerPool;
pub use prepared::{Frame, FrameSlot, FrameTable, PreparedLaunch};

use morok_core::device::{
    CompiledKernel, Device, DeviceBuffer, DeviceError, DeviceResult, FrameLaunch, PreparedLaunches,
};
use morok_core::dtype::DType;
use morok_core::program::Program;
use morok_core::render::Renderer;
use morok_core::target::Target;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

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
        let threads = crate::settings::env_count("MOROK_THREADS")
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        CpuConfig {
            cache_dir,
            threads,
            compiler: std::env::var("MOROK_CC").ok().filter(|s| !s.is_empty()),
        }
    }
}

/// The CPU device: host runtime plus one [`Codegen`].
pub struct CpuDevice {
    config: CpuConfig,
    codegen: Arc<dyn Codegen>,
    pool: OnceLock<Option<Arc<WorkerPool>>>,
}

impl Default for CpuDevice {
    fn default() -> Self {
        CpuDevice::new()
    }
}

impl CpuDevice {
    /// The C device configured from the environment ([`CpuConfig::from_env`]).
    pub fn new() -> CpuDevice {
        CpuDevice::with_config(CpuConfig::from_env())
    }

    /// The C device with explicit settings.
    pub fn with_config(config: CpuConfig) -> CpuDevice {
        let codegen = Arc::new(CCodegen::new(
            config.cache_dir.clone(),
            config.compiler.clone(),
        ));
        CpuDevice::with_codegen(config, codegen)
    }

    /// A CPU device whose kernels are built by `codegen`.
    pub fn with_codegen(config: CpuConfig, codegen: Arc<dyn Codegen>) -> CpuDevice {
        CpuDevice {
            config,
            codegen,
            pool: OnceLock::new(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &CpuConfig {
        &self.config
    }

    /// How many times this device's codegen has run its compiler.
    pub fn compiler_invocations(&self) -> usize {
        self.codegen.builds()
    }

    fn pool(&self) -> Option<Arc<WorkerPool>> {
        self.pool
            .get_or_init(|| {
                (self.config.threads > 1)
                    .then(|| WorkerPool::new(self.config.threads).map(Arc::new))?
            })
            .clone()
    }

    /// Refuses a program with a buffer the C side cannot store.
    fn check_storable(&self, program: &Program) -> DeviceResult<()> {
        for (i, b) in program.buffers().iter().enumerate() {
            if !c::types::storable(b.dtype) {
                return Err(DeviceError::BadArgs {
                    what: format!("kernel `{}`", program.name),
                    reason: format!("slot {i} has element type {}, not storable", b.dtype),
                });
            }
        }
        Ok(())
    }

    /// The runnable kernel of `program` built into `loaded`.
    fn kernel(&self, program: &Program, loaded: LoadedKernel) -> Arc<dyn CompiledKernel> {
        Arc::new(CpuKernel::new(
            program,
            loaded,
            self.config.threads,
            self.pool(),
        ))
    }
}

impl Device for CpuDevice {
    fn name(&self) -> &str {
        self.codegen.device_name()
    }

    fn identity(&self) -> String {
        self.codegen.identity()
    }

    fn describe(&self) -> String {
        self.codegen.describe()
    }

    fn cache_dir(&self) -> Option<PathBuf> {
        Some(self.config.cache_dir.clone())
    }

    fn renderer(&self) -> &dyn Renderer {
        self.codegen.renderer()
    }

    fn target(&self) -> Target {
        crate::host::cpu_target()
            .with_vector_bytes(self.renderer().caps().vector_bytes)
            .with_threads(self.config.threads)
    }

    fn allocate(&self, dtype: DType, count: usize) -> DeviceResult<Box<dyn DeviceBuffer>> {
        if !c::types::storable(dtype) {
            return Err(DeviceError::Alloc {
                dtype,
                count,
                reason: "not a storable element type".to_string(),
            });
        }
        Ok(Box::new(CpuBuffer::new(dtype, count)?))
    }

    fn compile(&self, program: &Program) -> DeviceResult<Arc<dyn CompiledKernel>> {
        self.check_storable(program)?;
        let loaded = self.codegen.build(program)?;
        Ok(self.kernel(program, loaded))
    }

    fn compile_within(
        &self,
        program: &Program,
        limit: std::time::Duration,
    ) -> DeviceResult<Arc<dyn CompiledKernel>> {
        self.check_storable(program)?;
        let loaded = self.codegen.build_within(program, limit)?;
        Ok(self.kernel(program, loaded))
    }

    fn prepare_launches(
        &self,
        frame: &[FrameSlot],
        launches: &[FrameLaunch<'_>],
    ) -> Option<Box<dyn PreparedLaunches>> {
        prepared::prepare_launches(frame, launches)
    }
}
