//! Kernels compiled ahead of time: at build time, into the program, so
//! that fixed-shape `#[morok::kernel]` functions run on a machine with no
//! C compiler.
//!
//! A kernel qualifies when every dim of its signature is a literal or is
//! fixed by the attribute (`#[morok::kernel(B = 32)]`). Beside each
//! function the attribute generates a hidden [`KernelSpec`] (its
//! signature and embedded graph); [`kernels!`] names them. The crate's build
//! script includes the module that defines the kernels and hands the
//! specs to `morok_build::compile`, which calls [`render`] (the kernels'
//! C sources, from the same scheduler and per-kernel pipeline the run
//! time uses), compiles them with the build machine's C compiler into a
//! static library linked into the crate, and writes the table of entry
//! points that [`include_kernels!`](crate::aot_include_kernels) brings
//! in. The program [`install`]s the table at start.
//!
//! At run time a cold call still schedules the graph and renders each
//! kernel (no compiler); the C device then finds the program by its
//! source's key (a hash of the rendered source, the architecture and the
//! vector width, `morok_backends::cpu::c::aot`) and runs the linked code.
//! A program whose source differs in any byte (another Morok version,
//! other options, a machine with another vector width) misses and goes
//! to the JIT compiler, so a table can never run a wrong kernel.
//! [`crate::stats::aot_kernel_hits`] and
//! [`crate::stats::jit_kernel_builds`] count both paths.
//!
//! With the `llvm` feature [`render`] also builds each kernel for the
//! `LLVM` device: the object its JIT would build on the build machine
//! (`morok_backends::cpu::llvm::aot_object`), linked beside the C
//! objects and keyed by the LLVM object cache key, so the LLVM device
//! finds it only where its JIT would build those very bytes.

use crate::device::Device;
use crate::dsl::graph::Graph;
use crate::dsl::rt::Signature;
use crate::realize::compile_options;
use crate::{Error, Result, Tensor};
use morok_backends::compile_program;
use morok_backends::cpu::c::aot::source_key;
pub use morok_backends::cpu::c::aot::{object_flags, AotKernel};
use morok_core::schedule_cached;
use std::collections::HashSet;

pub use morok_macros::aot_kernels as kernels;

/// What `#[morok::kernel]` generates beside a function for build scripts:
/// its signature and its embedded graph.
#[derive(Clone, Copy, Debug)]
pub struct KernelSpec {
    /// The function's signature (dims, fixed values).
    pub sig: &'static Signature,
    /// The function's body as static data.
    pub graph: &'static Graph,
}

/// One rendered kernel, ready for the build machine's C compiler (or
/// already compiled, for the LLVM device).
#[derive(Clone, Debug)]
pub struct AotSource {
    /// The `#[morok::kernel]` function it belongs to (the first, where
    /// several share it).
    pub function: String,
    /// The kernel's name (its C entry point in `source`).
    pub entry: String,
    /// The run-time lookup key (see the module docs).
    pub key: String,
    /// The C source.
    pub source: String,
    /// The C compiler flags its object is built with.
    pub flags: Vec<&'static str>,
    /// For a kernel of the LLVM device: its object file, whose entry
    /// point is `entry` (unique per key); `source` is then its IR and
    /// `flags` is empty.
    pub object: Option<Vec<u8>>,
}

/// The C kernels of `specs`, each once: every function's graph built at
/// its fixed shapes, scheduled, and run through the per-kernel pipeline
/// with the options of this process's environment (`MOROK_NOOPT`, ...),
/// rendered for the build machine's architecture and vector width. With
/// the `llvm` feature, followed by the same kernels compiled for the
/// `LLVM` device (see the module docs).
#[track_caller]
pub fn render(specs: &[KernelSpec]) -> Result<Vec<AotSource>> {
    let mut out = Vec::new();
    for_each_program(specs, "CPU", |name, program| {
        let arch = std::env::consts::ARCH;
        let vector_bytes = morok_backends::host::host_vector_bytes();
        let key = source_key(&program.source, arch, vector_bytes);
        out.push(AotSource {
            function: name.to_string(),
            entry: program.entry,
            key,
            source: program.source,
            flags: object_flags(arch, vector_bytes),
            object: None,
        });
        Ok(())
    })?;
    // An LLVM object's key is a function of its IR text on this machine:
    // each text is compiled once.
    #[cfg(feature = "llvm")]
    let mut compiled = HashSet::new();
    #[cfg(feature = "llvm")]
    for_each_program(specs, "LLVM", |name, program| {
        if !compiled.insert(program.source.clone()) {
            return Ok(());
        }
        let built = morok_backends::cpu::llvm::aot_object(&program)
            .map_err(|e| Error::runtime("aot", format!("kernel `{name}` on LLVM: {e}")))?;
        out.push(AotSource {
            function: name.to_string(),
            entry: built.symbol,
            key: built.key,
            source: program.source,
            flags: Vec::new(),
            object: Some(built.object),
        });
        Ok(())
    })?;
    let mut seen = HashSet::new();
    out.retain(|k| seen.insert(k.key.clone()));
    Ok(out)
}

/// Calls `f` with the function's name and each program of `specs` built
/// for device `device` (see [`render`]).
#[track_caller]
fn for_each_program(
    specs: &[KernelSpec],
    device: &str,
    mut f: impl FnMut(&str, morok_core::program::Program) -> Result<()>,
) -> Result<()> {
    let device = Device::get(device)?;
    let backend = device.backend();
    let opts = compile_options();
    for spec in specs {
        let name = spec.sig.kernel;
        let Some(shapes) = spec.sig.fixed_shapes() else {
            return Err(Error::runtime(
                "aot",
                format!(
                    "kernel `{name}` has named dims [{}]: fix each to a value (`#[morok::kernel({} = 32)]`) to compile it ahead of time",
                    spec.sig.names.join(", "),
                    spec.sig.names.first().copied().unwrap_or("B"),
                ),
            ));
        };
        let mut args = Vec::with_capacity(shapes.len());
        for (p, shape) in spec.sig.params.iter().zip(&shapes) {
            args.push(Tensor::placeholder(p.dtype, shape)?);
        }
        let refs: Vec<&Tensor> = args.iter().collect();
        let root = spec.graph.build(spec.sig, &refs, &[], &[])?.uop();
        let sched = schedule_cached(&[root])
            .map_err(|e| Error::runtime("aot", format!("kernel `{name}`: {e}")))?;
        for item in &sched.items {
            let program = compile_program(&item.ast, backend, &opts)
                .map_err(|e| Error::runtime("aot", format!("kernel `{name}`: {e}")))?;
            f(name, program)?;
        }
    }
    Ok(())
}

/// Makes the kernels of a table generated by `morok_build` available to
/// the C device (call once at start; see
/// [`include_kernels!`](crate::aot_include_kernels)).
pub fn install(kernels: &'static [AotKernel]) {
    morok_backends::cpu::c::aot::install(kernels);
}

/// Includes the table of kernels that `morok_build::compile` generated in
/// the crate's build script: a `static MOROK_AOT_KERNELS: &[AotKernel]`
/// to pass to [`aot::install`](crate::aot::install).
#[macro_export]
macro_rules! aot_include_kernels {
    () => {
        include!(concat!(env!("OUT_DIR"), "/morok_aot.rs"));
    };
}

pub use crate::aot_include_kernels as include_kernels;
