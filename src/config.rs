//! Run-time configuration read once from the environment.
//!
//! `MOROK_DEBUG`: `1` kernels run and their times, `2` also the schedule,
//! `3` also the generated code, `ir` the IR after every compiler stage.
//! `MOROK_NOOPT=1` disables optional optimizations; `MOROK_BEAM=N` picks
//! kernels' opts by a beam search of width `N` (`MOROK_BEAM_CANDIDATES=M`
//! caps the candidates one search times). `MOROK_KERNEL_CACHE=N` bounds
//! the in-process kernel and schedule caches to `N` entries each (least
//! recently used evicted; default 4096). The CPU device reads
//! `MOROK_CACHE_DIR`, `MOROK_THREADS` and `MOROK_CC` itself. Code can
//! override the optimizer with [`crate::set_opt_mode`].

use morok_backends::settings::{env_count, env_flag, env_setting};
use morok_core::{BeamConfig, OptMode};
use std::sync::{OnceLock, RwLock};

/// The settings the runtime uses.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Config {
    /// Debug level (0 = quiet).
    pub debug: u8,
    /// How kernels are optimized (`MOROK_NOOPT`, `MOROK_BEAM`).
    pub mode: OptMode,
    /// Kernels the in-process caches hold (`MOROK_KERNEL_CACHE`).
    pub kernel_cache: Option<usize>,
}

/// The `MOROK_DEBUG` value `value`: comma-separated levels and `ir`
/// (`"2,ir"`), as (highest level, whether `ir` was named); `None` when a
/// part is neither.
fn debug_setting(value: &str) -> Option<(u8, bool)> {
    let mut level = 0;
    let mut ir = false;
    for part in value.split(',').map(str::trim) {
        match part {
            "ir" => ir = true,
            _ => level = level.max(part.parse::<u8>().ok()?),
        }
    }
    Some((level, ir))
}

/// The configuration, read from the environment on first use. Values
/// that do not parse keep their default with one warning each
/// ([`morok_backends::settings`]).
pub(crate) fn get() -> Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    *CONFIG.get_or_init(|| {
        let (level, dump_ir) = env_setting(
            "MOROK_DEBUG",
            "levels 1-3 and/or `ir`, comma-separated",
            debug_setting,
        )
        .unwrap_or((0, false));
        let noopt = env_flag("MOROK_NOOPT");
        let mode = match env_count("MOROK_BEAM") {
            _ if noopt => OptMode::None,
            Some(width) => OptMode::Beam(BeamConfig {
                max_candidates: env_count("MOROK_BEAM_CANDIDATES").unwrap_or(0),
                progress: level >= 1,
                ..BeamConfig::new(width)
            }),
            None => OptMode::Heuristics,
        };
        if dump_ir {
            crate::ir_dump::install();
        }
        Config {
            debug: level,
            mode,
            kernel_cache: env_count("MOROK_KERNEL_CACHE"),
        }
    })
}

fn mode_override() -> &'static RwLock<Option<OptMode>> {
    static MODE: RwLock<Option<OptMode>> = RwLock::new(None);
    &MODE
}

/// How kernels compiled from now on are optimized: the mode set with
/// [`crate::set_opt_mode`], else the environment's.
pub(crate) fn opt_mode() -> OptMode {
    mode_override()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or_else(|| get().mode)
}

/// Sets (or with `None` clears) the optimizer mode of this process.
pub(crate) fn set_opt_mode(mode: Option<OptMode>) {
    *mode_override().write().unwrap_or_else(|e| e.into_inner()) = mode;
}
