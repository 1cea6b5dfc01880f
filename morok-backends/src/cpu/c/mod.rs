//! The C codegen: programs rendered as C11 ([`CRenderer`]), compiled by
//! the system C compiler into shared objects ([`ObjectCache`], cached on
//! disk), loaded with `libloading`; or taken from the kernels compiled at
//! build time and linked into the program ([`aot`]).

mod alu;
pub mod aot;
pub mod compiler;
mod memory;
pub(crate) mod prelude;
mod registers;
pub mod render;
pub(crate) mod types;
mod warp;

pub use compiler::{Compiler, ObjectCache};
pub use render::CRenderer;

use super::codegen::{Codegen, KernelFn, LoadedKernel};
use morok_core::device::{DeviceError, DeviceResult};
use morok_core::program::Program;
use morok_core::render::Renderer;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Entries of the loaded-object map from which it drops those of unloaded
/// objects (again at every power of two), so it stays near the number of
/// live kernels.
const MAP_PRUNE_AT: usize = 64;

/// C through the system compiler.
pub struct CCodegen {
    cache_dir: PathBuf,
    compiler: Option<String>,
    objects: OnceLock<Result<ObjectCache, String>>,
    /// Loaded objects by source: programs that render to the same source
    /// (for example kernels that differ only in the trip count of their
    /// parallel loop, which the host passes in) share one while a kernel
    /// holds it. The map holds no object alive: an object is unloaded
    /// when its last kernel is dropped. A beam search builds dozens of
    /// candidates per kernel and keeps one; holding every candidate's
    /// object ran the differential suite under `MOROK_BEAM=2` into
    /// Linux's limit of 65530 memory mappings per process (43,000
    /// mappings of objects after 5 minutes; then no thread could start).
    by_source: Mutex<HashMap<String, Weak<libloading::Library>>>,
}

impl CCodegen {
    /// A C codegen whose object cache lives in `cache_dir`, using the
    /// compiler `compiler` names (or the first of `cc`, `clang`, `gcc`).
    pub fn new(cache_dir: PathBuf, compiler: Option<String>) -> CCodegen {
        CCodegen {
            cache_dir,
            compiler,
            objects: OnceLock::new(),
            by_source: Mutex::new(HashMap::new()),
        }
    }

    fn objects(&self) -> DeviceResult<&ObjectCache> {
        let o = self.objects.get_or_init(|| {
            if crate::host::sanitize_requested() && !crate::host::asan_runtime_loaded() {
                return Err(
                    "MOROK_SANITIZE=1 builds kernels with AddressSanitizer, whose runtime must \
                     be loaded first: run with LD_PRELOAD=$(cc -print-file-name=libasan.so) \
                     (and ASAN_OPTIONS=detect_leaks=0)"
                        .to_string(),
                );
            }
            Compiler::find(self.compiler.as_deref())
                .map(|c| ObjectCache::new(self.cache_dir.clone(), c))
                .map_err(|e| e.to_string())
        });
        o.as_ref().map_err(|e| DeviceError::NoCompiler(e.clone()))
    }

    /// [`Codegen::build`], the compiler stopped after `limit` when given.
    fn build_limited(
        &self,
        program: &Program,
        limit: Option<std::time::Duration>,
    ) -> DeviceResult<LoadedKernel> {
        if let Some(k) = aot::lookup(&program.source) {
            // Linked into the program: nothing to keep mapped.
            return Ok(LoadedKernel {
                func: k.func,
                code: Arc::new(()),
            });
        }
        aot::count_jit_build();
        let lock = || self.by_source.lock().unwrap_or_else(|e| e.into_inner());
        let cached = lock().get(&program.source).and_then(Weak::upgrade);
        let lib = match cached {
            Some(lib) => lib,
            None => {
                let lib = Arc::new(self.objects()?.load_or_build(
                    &program.source,
                    &program.entry,
                    limit,
                )?);
                let mut map = lock();
                if map.len() >= MAP_PRUNE_AT && map.len().is_power_of_two() {
                    map.retain(|_, lib| lib.strong_count() > 0);
                }
                map.insert(program.source.clone(), Arc::downgrade(&lib));
                lib
            }
        };
        // SAFETY: the symbol was rendered with exactly the `KernelFn`
        // signature (see `render.rs`).
        let func: KernelFn = unsafe {
            *lib.get::<KernelFn>(program.entry.as_bytes())
                .map_err(|e| DeviceError::Load {
                    kernel: program.name.clone(),
                    path: self.cache_dir.display().to_string(),
                    reason: e.to_string(),
                })?
        };
        Ok(LoadedKernel { func, code: lib })
    }
}

impl Codegen for CCodegen {
    fn device_name(&self) -> &str {
        "CPU"
    }

    fn renderer(&self) -> &dyn Renderer {
        &CRenderer
    }

    fn identity(&self) -> String {
        match self.objects() {
            Ok(o) => format!("c\0{}", o.identity()),
            Err(e) => format!("c\0{e}"),
        }
    }

    fn describe(&self) -> String {
        if self.objects.get().is_none() && aot::installed() > 0 {
            // Only kernels compiled ahead of time have run: describing the
            // JIT compiler would run it (`--version`).
            return "C (kernels compiled ahead of time)".to_string();
        }
        match self.objects() {
            Ok(o) => format!("C ({})", o.compiler_version()),
            Err(e) => format!("C ({e})"),
        }
    }

    fn build(&self, program: &Program) -> DeviceResult<LoadedKernel> {
        self.build_limited(program, None)
    }

    fn build_within(
        &self,
        program: &Program,
        limit: std::time::Duration,
    ) -> DeviceResult<LoadedKernel> {
        self.build_limited(program, Some(limit))
    }

    fn builds(&self) -> usize {
        match self.objects.get() {
            Some(Ok(o)) => o.invocations(),
            _ => 0,
        }
    }
}
