//! The kernel optimizer: the step of the per-kernel pipeline
//! ([`crate::pipeline::compile_program`]) that rewrites a kernel AST's
//! ranges (upcast, unroll, threads, ...) before lowering.
//!
//! - [`actions`]: the [`Opt`] model and each opt's validity rules;
//! - [`kernel`]: the kernel's ranges as opts address them, and the range
//!   split (`shift_to`) every opt is built from;
//! - [`apply_opts`]: a list of opts applied in order (deterministic);
//! - [`heuristic`]: the opts chosen by hand-written rules;
//! - [`reduce_strategy`]: the `PARTIALS` opt and the heuristic's choice
//!   of how reductions use the cores.
//! - [`search`]: beam search over measured candidates, [`measure`] builds
//!   and times them on a device, [`beam_cache`] keeps the results on disk.
//! - [`compile_cost`]: the cap on how far the heuristic unrolls a small
//!   reduction under upcast lanes (C compile time);
//! - [`threads`]: the heuristic's `THREAD` axis for large kernels, at most
//!   [`OptLimits::max_threads`] (the device's cap, `MOROK_THREADS`).
//!
//! [`optimize`] runs the heuristics, or the beam search when the mode asks
//! for it and a device is there to time candidates on (without one,
//! `Beam` runs the heuristics); `OptMode::None` lowers the kernel as
//! scheduled.

pub mod actions;
pub mod beam_cache;
pub mod compile_cost;
pub mod heuristic;
pub mod kernel;
pub mod measure;
pub mod reduce_strategy;
pub mod search;
pub mod threads;

pub use actions::{apply_opt, Opt, OptArg, OptOps};
pub use kernel::OptKernel;
pub use search::BeamConfig;

use crate::caps::Caps;
use crate::device::Device;
use crate::uop::UOp;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// How kernels are optimized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OptMode {
    /// No optional optimization (`MOROK_NOOPT=1`).
    None,
    /// Hand-written heuristics (the default).
    #[default]
    Heuristics,
    /// Beam search over measured candidates (`MOROK_BEAM=N`).
    Beam(BeamConfig),
}

/// The target's limits that decide which opts are valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OptLimits {
    /// Workgroups with local memory exist (GPUs): LOCAL, GROUP, GROUPTOP.
    pub has_local: bool,
    /// Bytes of shared memory per workgroup (GROUP's budget).
    pub shared_max: usize,
    /// Tensor cores exist (TC).
    pub tensor_cores: bool,
    /// Most threads a THREAD axis may use (1: none).
    pub max_threads: usize,
    /// Largest UPCAST amount.
    pub max_upcast: i64,
    /// Bytes of the target's vector registers (`Caps::vector_bytes`; 0:
    /// no vectors): the heuristics upcast by whole vectors and size
    /// register tiles by it.
    pub vector_bytes: u16,
    /// Bytes of one core's L2 cache (0: unknown): the heuristics order a
    /// register tile's loops so a matmul's strided operand stays in it
    /// (see `heuristic::order_tile_loops`).
    pub l2_bytes: usize,
}

impl OptLimits {
    /// The host CPU: no locals, no tensor cores, one THREAD lane per
    /// available core.
    pub fn host_cpu() -> OptLimits {
        OptLimits {
            has_local: false,
            shared_max: 0,
            tensor_cores: false,
            max_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_upcast: 16,
            vector_bytes: 0,
            l2_bytes: host_l2_bytes(),
        }
    }

    /// These limits with at most `threads` threads for a `THREAD` axis
    /// (the device's cap, e.g. `MOROK_THREADS`; 0 counts as 1).
    pub fn with_threads(mut self, threads: usize) -> OptLimits {
        self.max_threads = threads.max(1);
        self
    }

    /// These limits for a target whose vectors have `bytes` bytes: upcasts
    /// may span four vectors of 4-byte lanes (a register tile's row: two
    /// vectors, or a whole image row of 56 `f32` in 3 vectors of 16 and
    /// one of 8), and never less than 16.
    pub fn with_vector_bytes(mut self, bytes: u16) -> OptLimits {
        self.vector_bytes = bytes;
        self.max_upcast = self.max_upcast.max(i64::from(bytes));
        self
    }
}

/// The host's per-core L2 cache in bytes as Linux reports it
/// (`/sys/devices/system/cpu/cpu0/cache/index*/`, the level-2 data or
/// unified cache), read once; 0 where it is not reported.
pub fn host_l2_bytes() -> usize {
    static L2: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *L2.get_or_init(|| {
        let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
        let read = |p: std::path::PathBuf| std::fs::read_to_string(p).unwrap_or_default();
        (0..8)
            .map(|i| dir.join(format!("index{i}")))
            .filter(|d| {
                read(d.join("level")).trim() == "2" && read(d.join("type")).trim() != "Instruction"
            })
            .find_map(|d| parse_cache_size(read(d.join("size")).trim()))
            .unwrap_or(0)
    })
}

/// `"1024K"`, `"2M"` or `"512"` as bytes.
fn parse_cache_size(s: &str) -> Option<usize> {
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let n: usize = digits.parse().ok()?;
    match unit {
        "" => Some(n),
        "K" => Some(n << 10),
        "M" => Some(n << 20),
        _ => None,
    }
}

/// What the optimizer knows about the target of one kernel.
pub struct OptTarget<'a> {
    /// What the target's renderer evaluates natively.
    pub caps: Caps,
    /// Which opts the target allows.
    pub limits: OptLimits,
    /// The device that will run the kernel (beam search compiles and times
    /// candidates on it).
    pub device: Option<&'a dyn Device>,
}

/// Why a kernel could not be optimized.
#[derive(Debug, thiserror::Error)]
#[error("optimizing kernel `{kernel}` failed: {what}")]
pub struct OptError {
    /// The kernel's name.
    pub kernel: String,
    /// What went wrong.
    pub what: String,
}

impl OptError {
    fn new(ast: &Arc<UOp>, what: String) -> OptError {
        OptError {
            kernel: crate::program::kernel_name(ast),
            what,
        }
    }
}

/// Applies `opts` in order to the kernel `ast` for a target with
/// `limits`; the first refused opt fails the whole list (its error names
/// the opt, its position and the reason). Deterministic: the same AST and
/// list give the same result.
pub fn apply_opts(ast: &Arc<UOp>, opts: &[Opt], limits: OptLimits) -> Result<Arc<UOp>, OptError> {
    let mut k = OptKernel::new(ast, limits);
    for (i, opt) in opts.iter().enumerate() {
        apply_opt(&mut k, opt).map_err(|e| OptError::new(ast, format!("opt {i} {opt}: {e}")))?;
        k.applied.push(*opt);
    }
    Ok(k.ast)
}

/// Optimizes one kernel AST for `target` (see the module docs).
pub fn optimize(
    ast: &Arc<UOp>,
    mode: OptMode,
    target: &OptTarget<'_>,
) -> Result<Arc<UOp>, OptError> {
    match mode {
        OptMode::None => Ok(ast.clone()),
        OptMode::Beam(config) if target.device.is_some() => Ok(beam(ast, &config, target)),
        OptMode::Heuristics | OptMode::Beam(_) => {
            let mut k = OptKernel::new(ast, target.limits);
            heuristic::hand_coded_optimizations(&mut k);
            Ok(k.ast)
        }
    }
}

static BEAM_CACHE_HITS: AtomicUsize = AtomicUsize::new(0);

/// How many kernels took their opts from the on-disk beam cache in this
/// process (no search ran for them).
pub fn beam_cache_hits() -> usize {
    BEAM_CACHE_HITS.load(Ordering::Relaxed)
}

/// `OptMode::Beam` on `target.device`: the opts cached for this kernel
/// and device when an entry replays, else a [`search::beam_search`] whose
/// result is stored (in `beam/` under the device's cache directory). If
/// no candidate builds, the heuristics' result goes on to lowering, which
/// reports the error.
fn beam(ast: &Arc<UOp>, config: &BeamConfig, target: &OptTarget<'_>) -> Arc<UOp> {
    let Some(device) = target.device else {
        return ast.clone();
    };
    let cache = device
        .cache_dir()
        .map(|d| beam_cache::BeamCache::new(d.join("beam")));
    let key = beam_cache::BeamCache::key(ast, &device.identity(), config);
    if let Some(opts) = cache.as_ref().and_then(|c| c.load(&key)) {
        if let Ok(tuned) = apply_opts(ast, &opts, target.limits) {
            BEAM_CACHE_HITS.fetch_add(1, Ordering::Relaxed);
            return tuned;
        }
    }
    let options = crate::pipeline::CompileOptions {
        mode: OptMode::Beam(*config),
    };
    let measure =
        measure::DeviceMeasure::new(device, ast, options).with_compile_limit(config.compile_limit);
    match search::beam_search(ast, target.limits, config, &measure) {
        Ok(found) => {
            if let Some(c) = &cache {
                if let Err(e) = c.store(&key, &found.opts) {
                    tracing::warn!("storing a beam search result in {}: {e}", c.dir().display());
                }
            }
            found.ast
        }
        Err(_) => {
            let mut k = OptKernel::new(ast, target.limits);
            heuristic::hand_coded_optimizations(&mut k);
            k.ast
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
