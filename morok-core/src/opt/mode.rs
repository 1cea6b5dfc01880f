//! How kernels are optimized: [`OptMode`] (part of every kernel cache
//! key) and the settings of a beam search, which a driver outside core
//! runs (`morok_backends::beam`).

use std::time::Duration;

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
    /// The opts of a seeded random walk through the beam search's space
    /// ([`crate::opt::random_opts`]): valid, but not chosen for speed. The
    /// fuzzer (`morok-fuzz`) compiles programs under it to reach opt
    /// combinations the heuristics never pick.
    Random(u64),
}

/// Settings of a beam search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BeamConfig {
    /// How many kernels the beam keeps per round (`MOROK_BEAM=N`).
    pub width: usize,
    /// Most candidates built and timed in one search (`0`: no limit).
    /// Candidates past the limit are not built (tests use it to bound the
    /// cost).
    pub max_candidates: usize,
    /// Show a progress bar on stderr even when it is not a terminal (a
    /// terminal always gets one).
    pub progress: bool,
    /// Longest one candidate's compile may run; a candidate whose compile
    /// is stopped at it is dropped and the search goes on (default
    /// [`COMPILE_LIMIT`]).
    pub compile_limit: Duration,
}

impl BeamConfig {
    /// A search of `width` with no candidate limit.
    pub fn new(width: usize) -> BeamConfig {
        BeamConfig {
            width: width.max(1),
            max_candidates: 0,
            progress: false,
            compile_limit: COMPILE_LIMIT,
        }
    }
}

/// The default per-candidate compile time limit
/// ([`BeamConfig::compile_limit`]): the register tiles the search builds
/// compile in well under a second; one that takes longer would not win.
pub const COMPILE_LIMIT: Duration = Duration::from_secs(10);
