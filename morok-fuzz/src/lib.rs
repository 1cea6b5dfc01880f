//! `morok-fuzz`: differential fuzzing of Morok at scale.
//!
//! Random tensor programs ([`generate`]) are compiled under the
//! heuristics, a random valid opt list ([`morok::OptMode::Random`]) or a
//! small beam search, on the C or LLVM device, and every realized tensor
//! (intermediates, outputs, gradients) is compared with the reference
//! evaluator ([`check`]). A failing program is shrunk ([`shrink`]) and
//! written as a [`Reproducer`] (JSON) that `tests/regressions.rs` replays
//! from `morok-fuzz/regressions/`.
//!
//! The binary (`cargo run --release -p morok-fuzz -- --help`) runs a range
//! of program indices; program `i` depends only on the seed and `i`, so
//! shards run apart add up. `tests/graph_fuzz.rs` of the root package
//! uses the same generator.

pub mod check;
pub mod data;
pub mod generate;
pub mod program;
pub mod shrink;
pub mod trust;

use morok::{BeamConfig, OptMode};
use program::Program;
use serde::{Deserialize, Serialize};

/// How the programs of a run are optimized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opts {
    /// The heuristics.
    Heuristic,
    /// A random valid opt list per kernel (seeded by the program).
    Random,
    /// A beam search of width 2 (`MOROK_BEAM=2`), at most
    /// [`BEAM_CANDIDATES`] candidates per kernel.
    BeamSample,
    /// Even programs under the heuristics, odd ones under random opts,
    /// and every [`BEAM_EVERY`]th under the beam search.
    Mixed,
}

/// Most candidates a fuzzing beam search builds per kernel.
pub const BEAM_CANDIDATES: usize = 12;
/// In [`Opts::Mixed`], program `i` with `i % BEAM_EVERY == BEAM_EVERY - 1`
/// runs under the beam search.
pub const BEAM_EVERY: u64 = 100;

impl Opts {
    /// The optimizer mode of program `index` of the run seeded `seed`.
    pub fn mode(self, seed: u64, index: u64) -> OptMode {
        let random = OptMode::Random(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let beam = OptMode::Beam(BeamConfig {
            max_candidates: BEAM_CANDIDATES,
            ..BeamConfig::new(2)
        });
        match self {
            Opts::Heuristic => OptMode::Heuristics,
            Opts::Random => random,
            Opts::BeamSample => beam,
            Opts::Mixed if index % BEAM_EVERY == BEAM_EVERY - 1 => beam,
            Opts::Mixed if index % 2 == 1 => random,
            Opts::Mixed => OptMode::Heuristics,
        }
    }

    /// The choice named `name` (`heuristic`, `random`, `beam-sample`,
    /// `mixed`).
    pub fn named(name: &str) -> Option<Opts> {
        Some(match name {
            "heuristic" => Opts::Heuristic,
            "random" => Opts::Random,
            "beam-sample" => Opts::BeamSample,
            "mixed" => Opts::Mixed,
            _ => return None,
        })
    }
}

/// `mode` as a [`Reproducer`] writes it: `none`, `heuristic`,
/// `random:<seed>` or `beam:<width>:<candidates>`.
pub fn mode_text(mode: OptMode) -> String {
    match mode {
        OptMode::None => "none".into(),
        OptMode::Heuristics => "heuristic".into(),
        OptMode::Random(s) => format!("random:{s}"),
        OptMode::Beam(b) => format!("beam:{}:{}", b.width, b.max_candidates),
    }
}

/// The mode [`mode_text`] wrote as `text`.
pub fn mode_from_text(text: &str) -> Result<OptMode, String> {
    let parts: Vec<&str> = text.split(':').collect();
    let num = |s: &str| s.parse::<u64>().map_err(|e| format!("mode {text:?}: {e}"));
    Ok(match parts.as_slice() {
        ["none"] => OptMode::None,
        ["heuristic"] => OptMode::Heuristics,
        ["random", s] => OptMode::Random(num(s)?),
        ["beam", w, c] => OptMode::Beam(BeamConfig {
            max_candidates: num(c)? as usize,
            ..BeamConfig::new(num(w)? as usize)
        }),
        _ => return Err(format!("unknown mode {text:?}")),
    })
}

/// A failing program, minimized, as a regression test replays it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Reproducer {
    /// The run's seed.
    pub seed: u64,
    /// The program's index in the run.
    pub index: u64,
    /// The device it failed on (`CPU` is the C device, or `LLVM`).
    pub device: String,
    /// The optimizer mode ([`mode_text`]).
    pub mode: String,
    /// How it failed when found.
    pub failure: String,
    /// The minimized program as text, for people.
    pub text: Vec<String>,
    /// The minimized program.
    pub program: Program,
}

impl Reproducer {
    /// A reproducer of `program`.
    pub fn new(
        seed: u64,
        index: u64,
        device: &str,
        mode: OptMode,
        failure: &str,
        program: Program,
    ) -> Reproducer {
        Reproducer {
            seed,
            index,
            device: device.into(),
            mode: mode_text(mode),
            failure: failure.into(),
            text: program.text().lines().map(String::from).collect(),
            program,
        }
    }

    /// Runs the program on its device (the default device when it is not
    /// available in this build) under its mode.
    pub fn replay(&self) -> Result<check::Outcome, String> {
        self.replay_on(&self.device)
    }

    /// Runs the program on `device` (the default device when it is not
    /// available in this build) under its mode.
    pub fn replay_on(&self, device: &str) -> Result<check::Outcome, String> {
        let mode = mode_from_text(&self.mode)?;
        if let Ok(dev) = morok::Device::get(device) {
            morok::Device::set_default(&dev);
        }
        morok::set_opt_mode(Some(mode));
        let out = check::run(&self.program);
        morok::set_opt_mode(None);
        Ok(out)
    }
}
