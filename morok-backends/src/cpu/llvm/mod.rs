//! The LLVM codegen (feature `llvm`, device `LLVM`): programs built as
//! LLVM IR with inkwell's builder (`ir.rs`), optimized at O3 for the host
//! CPU and linked in process by an ORC JIT (`jit.rs`), with object code
//! cached on disk. [`emit_object`] compiles a kernel to a `.o` for any
//! triple and CPU.
//!
//! # Caches
//!
//! In memory, built kernels are kept by IR text (as the C codegen keeps
//! its libraries by source). On disk, `<dir>/llvm/<key>.o` holds the
//! object and `<key>.o.blake3` its blake3 checksum, where `key =
//! blake3(IR text, LLVM version, triple, CPU name, CPU features, flags)`.
//! Both files are written to temporary files in the directory and renamed
//! into place, the object first; an entry whose checksum does not match
//! or that fails to link is rebuilt. The kernel's symbol in the object is
//! its name plus the first 16 hex digits of the key, so kernels that share
//! a name never clash in the JIT.
//!
//! # Build-time kernels
//!
//! [`aot_object`] builds, at build time, exactly the object the JIT would
//! build for a program on this machine, under its key;
//! `morok_build` links it into the program and registers it in the
//! build-time table (`crate::cpu::c::aot`) under
//! [`aot::llvm_key`] of that key. The device
//! looks every program up there first: the key covers the IR text, the
//! LLVM version, the triple, the CPU name and features and the flags, so
//! a kernel runs from the table only where the JIT would have built
//! these very bytes.

mod alu;
mod bounds;
mod half;
mod ir;
mod jit;
mod memory;
mod target;
mod vector;

pub use jit::{Jit, Linked};
pub use target::{emit_assembly, emit_object, llvm_version, TargetSpec};

use super::c::aot;
use super::c::compiler::warn_cache_unusable;
use super::codegen::{Codegen, KernelFn, LoadedKernel};
use crate::disk_cache::{read_checked, store};
use inkwell::context::Context;
use morok_core::device::{DeviceError, DeviceResult};
use morok_core::profile::{timed, Stage};
use morok_core::program::Program;
use morok_core::render::{Caps, OpSet, RenderError, RenderedKernel, Renderer};
use morok_core::uop::Op;
use morok_core::LoweredKernel;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Settings that change the generated code, part of every cache key.
const FLAGS: &str = "default<O3>;no-unroll;pic;small";

/// Renders linear programs as LLVM IR text (the builder's module,
/// printed).
#[derive(Clone, Copy, Debug, Default)]
pub struct LlvmRenderer;

impl Renderer for LlvmRenderer {
    fn name(&self) -> &str {
        "llvm"
    }

    /// Native: `SQRT` and `RSQRT` (`llvm.sqrt`, correctly rounded like
    /// libm's `sqrt`). Every other transcendental (`EXP`, `EXP2`, `LOG`,
    /// `LOG2`, `SIN`, `COS`, `TAN`, `TANH`, `ERF`, `POW`) is decomposed by
    /// the core into polynomial code: LLVM 19 has no intrinsic for `TAN`,
    /// `TANH` or `ERF`, and its `llvm.exp`/`llvm.sin`/... become scalar
    /// libm calls that block vectorization; the decompositions are
    /// accuracy-tested against the reference and vectorize. `MULACC`
    /// (formed by the optimizer in accumulations and used by the
    /// decompositions) is `llvm.fma`, listed only where the host has FMA,
    /// as for the C renderer. Vector
    /// masks (`Caps::vector_masks`, as the C renderer): comparisons,
    /// selects, bitcasts and the integer ops of vector lanes are LLVM
    /// vector instructions (`<w x i1>` masks), so the decompositions'
    /// range reductions run on vectors too.
    fn caps(&self) -> Caps {
        let native = if crate::host::host_has_fma() {
            OpSet::of(&[Op::Sqrt, Op::Rsqrt, Op::MulAcc])
        } else {
            OpSet::of(&[Op::Sqrt, Op::Rsqrt])
        };
        Caps {
            native,
            // The host's vector registers (detected at run time), filled
            // with explicit LLVM vector types exactly as the C renderer
            // fills its vector typedefs (see `vector.rs`).
            vector_bytes: crate::host::host_vector_bytes(),
            // 64-bit index arithmetic: with `i32` indices LLVM widens
            // every address computation itself (`IndVarSimplify` was a
            // third of the O3 time of W4a's matmul kernel; `i64` cut the
            // pipeline's instructions for W4a's kernels by about 38%),
            // with the same warm times on the bench workloads.
            index_i64: true,
            launch: None,
        }
        .with_vector_masks()
    }

    fn render(&self, kernel: &LoweredKernel) -> Result<RenderedKernel, RenderError> {
        let cx = Context::create();
        let module = ir::build_module(&cx, kernel, cfg!(target_arch = "x86_64"))?;
        module.verify().map_err(|e| RenderError {
            renderer: "LLVM".to_string(),
            node: kernel.name.clone(),
            what: format!("invalid IR: {e}"),
        })?;
        Ok(RenderedKernel {
            source: module.print_to_string().to_string(),
            entry: kernel.name.clone(),
        })
    }
}

/// LLVM through an in-process ORC JIT, for the host CPU.
pub struct LlvmCodegen {
    cache_dir: PathBuf,
    /// The host target, described on first use.
    spec: OnceLock<Result<TargetSpec, String>>,
    /// The JIT, made on the first build that is not in the build-time
    /// table.
    jit: OnceLock<Result<Arc<Jit>, String>>,
    /// Linked kernels by IR text, while some kernel holds them (a dead
    /// entry is pruned when another is added).
    by_source: Mutex<HashMap<String, Weak<Linked>>>,
    builds: AtomicUsize,
}

impl LlvmCodegen {
    /// An LLVM codegen whose object cache lives in `cache_dir/llvm`. The
    /// first one in a process starts LLVM's warm-up in the background
    /// (see `target::warm_up`).
    pub fn new(cache_dir: PathBuf) -> LlvmCodegen {
        target::warm_up();
        LlvmCodegen {
            cache_dir: cache_dir.join("llvm"),
            spec: OnceLock::new(),
            jit: OnceLock::new(),
            by_source: Mutex::new(HashMap::new()),
            builds: AtomicUsize::new(0),
        }
    }

    fn spec(&self) -> DeviceResult<&TargetSpec> {
        self.spec
            .get_or_init(|| TargetSpec::host().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| DeviceError::NoCompiler(e.clone()))
    }

    fn jit(&self) -> DeviceResult<&Arc<Jit>> {
        self.jit
            .get_or_init(|| {
                Jit::new()
                    .map(Arc::new)
                    .map_err(|e| format!("LLVM JIT: {e}"))
            })
            .as_ref()
            .map_err(|e| DeviceError::NoCompiler(e.clone()))
    }

    /// The object for `program` under `key`: from the disk cache when a
    /// valid entry exists (unless `fresh`), else compiled and stored.
    fn object(
        &self,
        program: &Program,
        spec: &TargetSpec,
        key: &str,
        symbol: &str,
        fresh: bool,
    ) -> DeviceResult<Vec<u8>> {
        let obj = self.cache_dir.join(format!("{key}.o"));
        let sum = self.cache_dir.join(format!("{key}.o.blake3"));
        if !fresh {
            if let Some(bytes) = read_checked(&obj, &sum) {
                return Ok(bytes);
            }
        }
        self.builds.fetch_add(1, Ordering::Relaxed);
        let bytes = compile_object(program, spec, symbol)?;
        // The JIT links from memory: a directory that cannot store the
        // object (read-only, full) costs only the cache entry.
        if let Err(e) = store(&self.cache_dir, &obj, &sum, &bytes) {
            warn_cache_unusable(&self.cache_dir, &e);
        }
        Ok(bytes)
    }
}

/// The cache key of IR text `source` for target `spec` (see the module
/// docs).
fn object_key(source: &str, spec: &TargetSpec) -> String {
    let mut h = blake3::Hasher::new();
    for part in [
        source,
        &llvm_version(),
        &spec.triple,
        &spec.cpu,
        &spec.features,
        FLAGS,
    ] {
        h.update(part.as_bytes());
        h.update(&[0]);
    }
    h.finalize().to_hex().to_string()
}

/// The symbol of the kernel of `entry` in its object under `key`.
fn object_symbol(entry: &str, key: &str) -> String {
    format!("{entry}_{}", &key[..16])
}

/// Compiles `program` at O3 for `spec` into an object whose kernel is
/// named `symbol`.
fn compile_object(program: &Program, spec: &TargetSpec, symbol: &str) -> DeviceResult<Vec<u8>> {
    spec.with_machine(|machine| {
        let cx = Context::create();
        let module = target::target_module(&cx, &program.lowered, machine, true)?;
        let func = module
            .get_function(&program.entry)
            .ok_or_else(|| DeviceError::Load {
                kernel: program.name.clone(),
                path: "LLVM module".to_string(),
                reason: format!("no function `{}`", program.entry),
            })?;
        func.as_global_value().set_name(symbol);
        target::optimize_and_emit(
            &program.name,
            &module,
            machine,
            inkwell::targets::FileType::Object,
        )
    })
}

/// A program of the LLVM device compiled at build time (see the module
/// docs): the object the JIT would build for it on this machine.
#[derive(Clone, Debug)]
pub struct AotObject {
    /// Its key in the build-time table ([`aot::llvm_key`]).
    pub key: String,
    /// The kernel's symbol in `object` (unique per key).
    pub symbol: String,
    /// The relocatable object file.
    pub object: Vec<u8>,
}

/// Compiles `program` (rendered by [`LlvmRenderer`]) for this machine
/// exactly as [`LlvmCodegen`] would, for linking into a program at build
/// time.
pub fn aot_object(program: &Program) -> DeviceResult<AotObject> {
    let spec = TargetSpec::host()?;
    let key = object_key(&program.source, &spec);
    let symbol = object_symbol(&program.entry, &key);
    let object = compile_object(program, &spec, &symbol)?;
    Ok(AotObject {
        key: aot::llvm_key(&key),
        symbol,
        object,
    })
}

impl Codegen for LlvmCodegen {
    fn device_name(&self) -> &str {
        "LLVM"
    }

    fn renderer(&self) -> &dyn Renderer {
        &LlvmRenderer
    }

    fn describe(&self) -> String {
        match self.spec() {
            Ok(spec) => format!("LLVM {} ({}, {})", llvm_version(), spec.cpu, spec.triple),
            Err(e) => format!("LLVM {} ({e})", llvm_version()),
        }
    }

    fn identity(&self) -> String {
        match self.spec() {
            Ok(spec) => format!(
                "llvm\0{}\0{}\0{}\0{}\0{FLAGS}",
                llvm_version(),
                spec.triple,
                spec.cpu,
                spec.features
            ),
            Err(e) => format!("llvm\0{e}"),
        }
    }

    fn build(&self, program: &Program) -> DeviceResult<LoadedKernel> {
        let spec = self.spec()?;
        let key = (aot::installed() > 0).then(|| object_key(&program.source, spec));
        if let Some(k) = key
            .as_deref()
            .and_then(|k| aot::lookup_key(&aot::llvm_key(k)))
        {
            // Linked into the program: nothing to keep mapped.
            return Ok(LoadedKernel {
                func: k.func,
                code: Arc::new(()),
            });
        }
        aot::count_jit_build();
        let jit = self.jit()?;
        let lock = || self.by_source.lock().unwrap_or_else(|e| e.into_inner());
        let cached = lock().get(&program.source).and_then(Weak::upgrade);
        let linked = match cached {
            Some(l) => l,
            None => {
                let key = key.unwrap_or_else(|| object_key(&program.source, spec));
                let symbol = object_symbol(&program.entry, &key);
                let object = timed(Stage::Compile, || {
                    self.object(program, spec, &key, &symbol, false)
                })?;
                // Adding and recording under the map's lock: two threads
                // building the same kernel add it once.
                let mut map = lock();
                match map.get(&program.source).and_then(Weak::upgrade) {
                    Some(l) => l,
                    None => {
                        let added = timed(Stage::Load, || jit.add_and_lookup(&object, &symbol));
                        let linked = added.or_else(|_| {
                            // A cached object that does not link is rebuilt.
                            let object = self.object(program, spec, &key, &symbol, true)?;
                            jit.add_and_lookup(&object, &symbol).map_err(|reason| {
                                DeviceError::Load {
                                    kernel: program.name.clone(),
                                    path: self.cache_dir.display().to_string(),
                                    reason,
                                }
                            })
                        })?;
                        let linked = Arc::new(linked);
                        map.retain(|_, l| l.strong_count() > 0);
                        map.insert(program.source.clone(), Arc::downgrade(&linked));
                        linked
                    }
                }
            }
        };
        // SAFETY: the address is that of a function built from this
        // program with exactly the `KernelFn` signature (see `ir.rs`); the
        // code stays mapped while `linked` (held by the kernel) lives.
        let func: KernelFn = unsafe { std::mem::transmute::<usize, KernelFn>(linked.addr()) };
        Ok(LoadedKernel { func, code: linked })
    }

    fn builds(&self) -> usize {
        self.builds.load(Ordering::Relaxed)
    }
}
