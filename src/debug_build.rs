//! The one-time hint for debug builds of Morok itself.
//!
//! A crate's dev profile compiles its dependencies without optimization
//! unless told otherwise, and then Morok's compiler (scheduling, the
//! optimizer, lowering, rendering) runs many times slower (a toy MLP's
//! first call was measured at 5–10 s instead of 0.5 s). `build.rs` sets
//! `cfg(morok_unoptimized)` in such a build; the cold paths then add up
//! their time here, and past [`HINT_AFTER`] the process prints, once,
//! how to fix it. Optimized builds measure nothing.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Time spent preparing kernels after which the hint is printed.
const HINT_AFTER: Duration = Duration::from_millis(1000);

/// Whether this build of Morok is unoptimized (see the module doc).
pub(crate) const UNOPTIMIZED: bool = cfg!(morok_unoptimized);

/// A start time when this build is unoptimized (nothing is measured
/// otherwise).
pub(crate) fn start() -> Option<Instant> {
    UNOPTIMIZED.then(Instant::now)
}

/// Adds the time since `start` to the process's preparation time and
/// prints the hint once that passes [`HINT_AFTER`].
pub(crate) fn add(start: Option<Instant>) {
    let Some(start) = start else { return };
    static SPENT_MICROS: AtomicU64 = AtomicU64::new(0);
    static HINTED: AtomicBool = AtomicBool::new(false);
    let micros = start.elapsed().as_micros() as u64;
    let spent = SPENT_MICROS.fetch_add(micros, Ordering::Relaxed) + micros;
    if spent >= HINT_AFTER.as_micros() as u64 && !HINTED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "morok: hint: this build of Morok is not optimized (your crate's dev profile): \
             preparing kernels has taken {:.1} s so far, and Morok's own part of that (all \
             of it once the kernel cache is warm) runs many times faster with\n\
             \n    [profile.dev.package.\"*\"]\n    opt-level = 2\n\n\
             in your Cargo.toml (README.md, \"Use it in your crate\")",
            spent as f64 / 1e6
        );
    }
}
