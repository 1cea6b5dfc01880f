//! Run-time configuration read once from the environment.
//!
//! `MOROK_DEBUG`: `1` kernels run and their times, `2` also the schedule,
//! `3` also the generated code, `ir` the IR after every compiler stage.
//! `MOROK_NOOPT=1` disables optional optimizations. The CPU device reads
//! `MOROK_CACHE_DIR`, `MOROK_THREADS` and `MOROK_CC` itself.

use std::sync::OnceLock;

/// The settings the runtime uses.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Config {
    /// Debug level (0 = quiet).
    pub debug: u8,
    /// Disable optional optimizations.
    pub noopt: bool,
}

/// The configuration, read from the environment on first use.
pub(crate) fn get() -> Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    *CONFIG.get_or_init(|| {
        let debug = std::env::var("MOROK_DEBUG").unwrap_or_default();
        let dump_ir = debug.split(',').any(|p| p.trim() == "ir");
        let level = debug
            .split(',')
            .filter_map(|p| p.trim().parse::<u8>().ok())
            .max()
            .unwrap_or(0);
        let noopt = std::env::var("MOROK_NOOPT").is_ok_and(|v| v != "0" && !v.is_empty());
        if dump_ir {
            crate::ir_dump::install();
        }
        Config {
            debug: level,
            noopt,
        }
    })
}
