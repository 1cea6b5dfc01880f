//! Where a first call's time goes: the time spent in each stage of the
//! compile path ([`Stage`]), summed over the threads that run it, for
//! the bench's `--first-call-profile` table.
//!
//! Off by default: a disabled [`timed`] costs one relaxed atomic load.
//! [`set_enabled`] turns it on for the whole process; [`snapshot`] reads
//! the totals and [`reset`] clears them. Stages nest only where the
//! stage list says so (none does today), so the totals add up to the time
//! the compile path took on all threads together; parallel kernel
//! compiles make that sum larger than the wall-clock time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A stage of the compile path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Tensor graph → schedule of kernel ASTs (rangeify, kernel
    /// splitting, ordering, memory plan), cache look-ups included.
    Schedule,
    /// Choosing and applying the kernel's opts (heuristics or a beam
    /// search).
    Optimize,
    /// Kernel AST → linear program.
    Lower,
    /// Linear program → source text.
    Render,
    /// Source → machine code (the C compiler process, LLVM's passes and
    /// code generation, NVRTC), on-disk cache look-ups included.
    Compile,
    /// Machine code → callable function (`dlopen`, LLVM's JIT linker,
    /// loading a CUDA module).
    Load,
    /// Launching the kernels and waiting for them.
    Run,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 7] = [
        Stage::Schedule,
        Stage::Optimize,
        Stage::Lower,
        Stage::Render,
        Stage::Compile,
        Stage::Load,
        Stage::Run,
    ];

    /// The stage's name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Schedule => "schedule",
            Stage::Optimize => "optimize",
            Stage::Lower => "lower",
            Stage::Render => "render",
            Stage::Compile => "compile",
            Stage::Load => "load",
            Stage::Run => "run",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static NANOS: [AtomicU64; 7] = [const { AtomicU64::new(0) }; 7];
static COUNTS: [AtomicU64; 7] = [const { AtomicU64::new(0) }; 7];

/// Turns the stage timers on or off for the whole process.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether the stage timers are on.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Clears every stage's totals.
pub fn reset() {
    for (n, c) in NANOS.iter().zip(&COUNTS) {
        n.store(0, Ordering::Relaxed);
        c.store(0, Ordering::Relaxed);
    }
}

/// Runs `f`, adding its time to `stage` when the timers are on.
pub fn timed<T>(stage: Stage, f: impl FnOnce() -> T) -> T {
    if !enabled() {
        return f();
    }
    let start = Instant::now();
    let out = f();
    let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    NANOS[stage.index()].fetch_add(ns, Ordering::Relaxed);
    COUNTS[stage.index()].fetch_add(1, Ordering::Relaxed);
    out
}

/// Each stage's total time and the number of times it ran, in pipeline
/// order.
pub fn snapshot() -> Vec<(Stage, Duration, u64)> {
    Stage::ALL
        .iter()
        .map(|&s| {
            let ns = NANOS[s.index()].load(Ordering::Relaxed);
            (
                s,
                Duration::from_nanos(ns),
                COUNTS[s.index()].load(Ordering::Relaxed),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_add_up_only_while_enabled() {
        reset();
        timed(Stage::Lower, || {
            std::thread::sleep(Duration::from_millis(2))
        });
        assert_eq!(snapshot()[2].2, 0, "off by default");
        set_enabled(true);
        let v = timed(Stage::Lower, || {
            std::thread::sleep(Duration::from_millis(2));
            7
        });
        set_enabled(false);
        assert_eq!(v, 7);
        let (stage, took, count) = snapshot()[2];
        assert_eq!((stage, count), (Stage::Lower, 1));
        assert!(took >= Duration::from_millis(2), "{took:?}");
        reset();
        assert_eq!(snapshot()[2].1, Duration::ZERO);
    }
}
