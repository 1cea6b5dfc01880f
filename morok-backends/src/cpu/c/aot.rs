//! Kernels compiled ahead of time (at build time, into the program) for
//! the C codegen and the LLVM codegen (one table, keys that name the
//! codegen).
//!
//! A build script renders a crate's fixed-shape kernels with the same
//! pipeline the run time uses, compiles the C sources with the build
//! machine's compiler into a static library linked into the crate, and
//! generates a table of [`AotKernel`]s (`morok-build`). The program
//! [`install`]s the table at start; [`CCodegen::build`](super::CCodegen)
//! then looks every program up here before it runs the JIT compiler.
//!
//! The key is [`source_key`]: a hash of the rendered C source (which the
//! kernel's AST, the renderer and the pipeline options determine), the
//! host's vector width (which the renderer and the objects' target
//! features follow), the architecture and the AOT format version. A
//! kernel whose rendered source differs in any byte misses, so a table
//! from another Morok version, other options or another machine can never
//! run a wrong kernel: the call falls back to the JIT.
//!
//! The LLVM codegen's kernels are objects its own compiler built at build
//! time (`crate::cpu::llvm::aot_object`), keyed by [`llvm_key`] of its
//! object cache key (the IR text, LLVM version, triple, CPU name and
//! features, flags): they run only where the JIT would build the same
//! object. A C key never equals an LLVM key.

use super::super::codegen::KernelFn;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{OnceLock, RwLock};

/// Version of the AOT key and table format.
const FORMAT: &str = "morok-aot-1";

/// One kernel compiled at build time.
#[derive(Clone, Copy, Debug)]
pub struct AotKernel {
    /// Its [`source_key`].
    pub key: &'static str,
    /// The kernel's name (for messages).
    pub name: &'static str,
    /// The linked entry point (the kernel ABI, [`KernelFn`]).
    pub func: KernelFn,
}

/// The C compiler flags an ahead-of-time object is built with for kernels
/// rendered at vector width `vector_bytes`: the JIT's flags without
/// `-march=native` and `-shared`, plus exactly the instruction-set
/// extensions that the run time's detection of that width implies
/// (`host_vector_bytes`: 64 needs AVX-512F, 32 AVX2 and FMA), so an
/// object runs on every machine whose rendering gives its key.
pub fn object_flags(arch: &str, vector_bytes: u16) -> Vec<&'static str> {
    let mut flags = vec![
        "-O3",
        "-fPIC",
        "-std=c11",
        "-fno-math-errno",
        "-ffp-contract=off",
    ];
    if arch == "x86_64" {
        match vector_bytes {
            64 => flags.extend(["-mavx512f", "-mavx2", "-mfma"]),
            32 => flags.extend(["-mavx2", "-mfma"]),
            _ => {}
        }
    }
    flags
}

/// The key of a rendered C source for architecture `arch` at vector width
/// `vector_bytes` (hex blake3).
pub fn source_key(source: &str, arch: &str, vector_bytes: u16) -> String {
    let mut h = blake3::Hasher::new();
    for part in [FORMAT, arch, &vector_bytes.to_string(), source] {
        h.update(part.as_bytes());
        h.update(&[0]);
    }
    h.finalize().to_hex().to_string()
}

/// The table key of an LLVM object whose object cache key (see
/// `crate::cpu::llvm`) is `object_key`.
pub fn llvm_key(object_key: &str) -> String {
    format!("llvm:{object_key}")
}

fn table() -> &'static RwLock<HashMap<&'static str, AotKernel>> {
    static TABLE: OnceLock<RwLock<HashMap<&'static str, AotKernel>>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

static HITS: AtomicUsize = AtomicUsize::new(0);
static JIT_BUILDS: AtomicUsize = AtomicUsize::new(0);

/// Makes `kernels` available to every CPU device of this process (a key
/// installed twice keeps its first kernel).
pub fn install(kernels: &'static [AotKernel]) {
    let mut t = table().write().unwrap_or_else(|e| e.into_inner());
    for k in kernels {
        t.entry(k.key).or_insert(*k);
    }
}

/// How many installed kernels there are.
pub fn installed() -> usize {
    table().read().unwrap_or_else(|e| e.into_inner()).len()
}

/// The installed kernel for `source` rendered on this host, counting a
/// hit.
pub(crate) fn lookup(source: &str) -> Option<AotKernel> {
    if installed() == 0 {
        return None;
    }
    let key = source_key(
        source,
        std::env::consts::ARCH,
        crate::host::host_vector_bytes(),
    );
    lookup_key(&key)
}

/// The installed kernel under table key `key`, counting a hit.
pub(crate) fn lookup_key(key: &str) -> Option<AotKernel> {
    let k = table()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(key)
        .copied()?;
    HITS.fetch_add(1, Ordering::Relaxed);
    Some(k)
}

/// Counts a program a CPU codegen built or loaded through its JIT.
pub(crate) fn count_jit_build() {
    JIT_BUILDS.fetch_add(1, Ordering::Relaxed);
}

/// How many programs the CPU codegens (C and LLVM) of this process took
/// from the AOT table.
pub fn hits() -> usize {
    HITS.load(Ordering::Relaxed)
}

/// How many programs the CPU codegens (C and LLVM) of this process took
/// through their JIT path (compiled, or loaded from their caches; not
/// from the AOT table).
pub fn jit_builds() -> usize {
    JIT_BUILDS.load(Ordering::Relaxed)
}
