//! Beam search over opt lists (`OptMode::Beam`): the optimizer tries
//! lists of the same [`Opt`] actions the heuristics use, measures each
//! candidate kernel on the device and keeps the fastest.
//!
//! One round expands the kernels of the beam within [`EXPAND_RATIO`] of
//! the best by every action of [`search_actions`] that the target accepts
//! ([`apply_opt`]'s validity rules) and that stays within the register
//! budget ([`MAX_UPCAST`] lanes of upcast × unroll, see [`neighbours`]),
//! drops candidates whose AST was seen before, builds the rest (in
//! parallel, [`Measure::build`]) and times them one at a time (the
//! fastest of several runs; a candidate whose first two runs are slower
//! than [`CUTOFF`] × the best so far is dropped, as is one that fails to
//! build or whose compile runs past [`BeamConfig::compile_limit`]). The
//! beam keeps the `width` fastest kernels seen; the search stops when a
//! round finds nothing at least 1% faster than the best.
//!
//! The first beam holds the heuristics' result and the kernel as
//! scheduled. Times taken minutes apart on a shared machine are not
//! comparable (a candidate timed while another process held a core looks
//! slower, one timed in a quiet moment faster), so the search ends with a
//! check: each kernel of the final beam runs against the heuristics'
//! kernel in alternating back-to-back pairs (`confirm_against`), and
//! the heuristics' kernel is returned unless one runs at most
//! `1 - `[`CONFIRM_MARGIN`] of its time. Every candidate is the original kernel with a list of opts
//! applied, so beam search changes results exactly as far as those opts
//! may (they keep the iteration and accumulation order; see
//! [`morok_core::search_actions`]).
//!
//! The search is device-independent: [`Measure`] builds and times
//! candidates ([`super::measure::DeviceMeasure`] does it on a
//! [`Device`](morok_core::device::Device)).

use morok_core::apply_heuristics;
use morok_core::target::Target;
use morok_core::uop::UOp;
use morok_core::{neighbours, search_actions};
use morok_core::{BeamConfig, Opt, OptKernel};
use std::collections::HashSet;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[cfg(doc)]
use morok_core::{apply_opt, MAX_UPCAST};

/// Only kernels of the beam within this factor of the best time are
/// expanded: one action rarely makes a kernel twice as fast, and most
/// of a search's time goes to compiling the neighbours of kernels far
/// behind (the kernel as scheduled next to the heuristics' tile).
pub const EXPAND_RATIO: u32 = 2;

/// A candidate whose first run takes longer than this many times the best
/// time so far is dropped without further runs (the per-candidate
/// timeout).
pub const CUTOFF: u32 = 3;

/// Builds and times candidate kernels for [`beam_search`].
pub trait Measure {
    /// A built candidate, ready to time.
    type Built: Send;

    /// Builds `optimized` (the original kernel with some opts applied);
    /// `Err` says why it cannot run. [`beam_search`] builds a round's
    /// candidates through [`Measure::build_all`].
    fn build(&self, optimized: &Arc<UOp>) -> Result<Self::Built, String>;

    /// Builds every candidate, in parallel where the implementation can
    /// (the default builds them in order).
    fn build_all(&self, candidates: &[Arc<UOp>]) -> Vec<Result<Self::Built, String>> {
        candidates.iter().map(|c| self.build(c)).collect()
    }

    /// Runs `built` `runs` times and returns the median time of one run.
    fn time(&self, built: &Self::Built, runs: usize) -> Result<Duration, String>;
}

/// What [`beam_search`] found.
#[derive(Clone, Debug)]
pub struct BeamResult {
    /// The fastest kernel: the original with [`BeamResult::opts`] applied.
    pub ast: Arc<UOp>,
    /// The opts that make it (empty: the kernel as scheduled was fastest).
    pub opts: Vec<Opt>,
    /// Its measured time: the heuristics' kernel's time in the search,
    /// times the winner's confirmed ratio to it when another kernel won.
    pub time: Duration,
    /// How many candidates were timed.
    pub timed: usize,
}

/// Held by the search that runs: searches in one process run one at a
/// time (see [`beam_search`]).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

static SEARCHES: AtomicUsize = AtomicUsize::new(0);
static TIMED: AtomicUsize = AtomicUsize::new(0);

/// How many beam searches ran in this process.
pub fn searches_run() -> usize {
    SEARCHES.load(Ordering::Relaxed)
}

/// How many candidate kernels beam searches timed in this process.
pub fn candidates_timed() -> usize {
    TIMED.load(Ordering::Relaxed)
}

/// A progress bar on stderr when it is a terminal or `progress` asks for
/// one; hidden otherwise.
fn progress_bar(name: &str, progress: bool) -> indicatif::ProgressBar {
    if !progress && !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(0).with_prefix(format!("beam {name}"));
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{prefix} {bar:30} {pos}/{len} {msg} [{elapsed}]")
    {
        bar.set_style(style);
    }
    bar
}

/// One kernel of the beam: its opts, its time and, for all but the
/// heuristics' kernel (kept apart as the reference), its built code for
/// the final check ([`confirm_against`]).
struct Entry<B> {
    kernel: OptKernel,
    time: Duration,
    built: Option<B>,
}

/// Searches opt lists for `ast` on `target` (see the module
/// docs). Fails only when not even the kernel as scheduled could be
/// built and timed.
///
/// Searches in one process run one at a time (a second waits for the
/// first): a first call compiles its kernels on several threads at once,
/// and a search's candidates timed while another search compiles on
/// every core, or runs its candidates on them, would be timed on a
/// fraction of the machine, each by how much the other happened to be
/// doing at that moment. One search builds on every core by itself.
pub fn beam_search<M: Measure>(
    ast: &Arc<UOp>,
    target: &Target,
    config: &BeamConfig,
    measure: &M,
) -> Result<BeamResult, String> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    SEARCHES.fetch_add(1, Ordering::Relaxed);
    let actions = search_actions();
    let base = OptKernel::new(ast, *target);
    let mut heuristic = base.clone();
    apply_heuristics(&mut heuristic);
    let heuristic_id = heuristic.ast.id();
    let mut seen: HashSet<u64> = HashSet::new();
    // The heuristics' kernel is timed first: it is usually much faster,
    // so the unoptimized one is cut off after its first run.
    let mut start = vec![heuristic];
    if start[0].ast.id() != base.ast.id() {
        start.push(base);
    }
    for k in &start {
        seen.insert(k.ast.id());
    }
    let bar = progress_bar(&morok_core::program::kernel_name(ast), config.progress);
    let (mut tried, mut timed) = (0usize, 0usize);
    let mut expanded: HashSet<u64> = HashSet::new();
    let mut beam: Vec<Entry<M::Built>> = Vec::new();
    // The heuristics' kernel, built and timed: what the winner must beat.
    let mut reference: Option<(OptKernel, M::Built, Duration)> = None;
    let width = config.width.max(1);
    let mut pending = start;
    loop {
        if config.max_candidates > 0 {
            pending.truncate(config.max_candidates.saturating_sub(tried));
        }
        if pending.is_empty() {
            break;
        }
        tried += pending.len();
        bar.inc_length(pending.len() as u64);
        let asts: Vec<Arc<UOp>> = pending.iter().map(|k| k.ast.clone()).collect();
        let built = measure.build_all(&asts);
        let best_before = beam.first().map(|b| b.time);
        for (k, b) in pending.drain(..).zip(built) {
            bar.inc(1);
            let Ok(b) = b else { continue };
            timed += 1;
            TIMED.fetch_add(1, Ordering::Relaxed);
            let cutoff = beam.first().map(|best| {
                let last = beam.last().map_or(best.time, |l| l.time);
                if beam.len() >= width {
                    (best.time * CUTOFF).min(last + last / 4)
                } else {
                    best.time * CUTOFF
                }
            });
            let Some(time) = time_candidate(measure, &b, cutoff) else {
                continue;
            };
            let built = if k.ast.id() == heuristic_id {
                reference = Some((k.clone(), b, time));
                None
            } else {
                Some(b)
            };
            beam.push(Entry {
                kernel: k,
                time,
                built,
            });
            beam.sort_by_key(|e| e.time);
            beam.truncate(width);
        }
        if let Some(best) = beam.first() {
            bar.set_message(format!("best {:.2?}", best.time));
        }
        let improved = match (best_before, beam.first()) {
            (None, Some(_)) => true,
            (Some(old), Some(new)) => new.time.as_secs_f64() < old.as_secs_f64() * 0.99,
            _ => false,
        };
        if !improved {
            break;
        }
        let best = beam.first().map_or(Duration::ZERO, |b| b.time);
        let promising = beam
            .iter()
            .filter(|e| e.time <= best * EXPAND_RATIO)
            .filter(|e| expanded.insert(e.kernel.ast.id()));
        for e in promising {
            for n in neighbours(&e.kernel, &actions) {
                if seen.insert(n.ast.id()) {
                    pending.push(n);
                }
            }
        }
    }
    bar.finish_and_clear();
    let Some((heuristic, reference, reference_time)) = reference else {
        // The heuristics' kernel did not build or time: the search's
        // fastest is all there is.
        let best = beam
            .into_iter()
            .next()
            .ok_or("no candidate could be built and timed")?;
        return Ok(BeamResult {
            ast: best.kernel.ast,
            opts: best.kernel.applied,
            time: best.time,
            timed,
        });
    };
    let mut winner: Option<(Entry<M::Built>, f64)> = None;
    for e in beam {
        let Some(built) = &e.built else { continue };
        let Some(ratio) = confirm_against(measure, built, &reference, reference_time) else {
            continue;
        };
        if ratio <= 1.0 - CONFIRM_MARGIN && winner.as_ref().is_none_or(|(_, r)| ratio < *r) {
            winner = Some((e, ratio));
        }
    }
    Ok(match winner {
        Some((e, ratio)) => BeamResult {
            ast: e.kernel.ast,
            opts: e.kernel.applied,
            time: reference_time.mul_f64(ratio),
            timed,
        },
        None => BeamResult {
            ast: heuristic.ast,
            opts: heuristic.applied,
            time: reference_time,
            timed,
        },
    })
}

/// A kernel of the final beam replaces the heuristics' only when it runs
/// at most `1 - CONFIRM_MARGIN` of their time in `confirm_against`'s
/// paired runs: a smaller gain is within what a busy machine makes of two
/// equal kernels, and the heuristics' kernel is the default.
pub const CONFIRM_MARGIN: f64 = 0.03;

/// Time one confirmation ([`confirm_against`]) aims to spend on the
/// pairs of runs (it runs at least [`CONFIRM_PAIRS`]`.0` and at most
/// `.1` pairs).
const CONFIRM_BUDGET: Duration = Duration::from_millis(400);
/// Fewest and most pairs of runs of one confirmation.
const CONFIRM_PAIRS: (usize, usize) = (7, 31);

/// Re-times `challenger` against `reference` (the heuristics' kernel, of
/// search time `reference_time`) in alternating pairs of runs, each pair
/// back to back, and returns the median of the pairs' time ratios
/// (challenger ÷ reference), or `None` when a run fails. A candidate's
/// time in the search comes from runs minutes apart from the
/// heuristics' on a machine whose load changes in between (other
/// processes, the other core's work); the two runs of a pair see the
/// same load, so their ratio is what it would be on a quiet machine, and
/// the median drops the pairs a load change split.
fn confirm_against<M: Measure>(
    measure: &M,
    challenger: &M::Built,
    reference: &M::Built,
    reference_time: Duration,
) -> Option<f64> {
    let per_pair = reference_time.as_secs_f64().max(1e-6) * 2.0;
    let pairs = ((CONFIRM_BUDGET.as_secs_f64() / per_pair) as usize)
        .clamp(CONFIRM_PAIRS.0, CONFIRM_PAIRS.1);
    let mut ratios = Vec::with_capacity(pairs);
    for i in 0..pairs {
        // Alternate which one runs first: the second of a pair finds the
        // caches as the first left them.
        let (c, r) = if i % 2 == 0 {
            let c = measure.time(challenger, 1).ok()?;
            (c, measure.time(reference, 1).ok()?)
        } else {
            let r = measure.time(reference, 1).ok()?;
            (measure.time(challenger, 1).ok()?, r)
        };
        ratios.push(c.as_secs_f64() / r.as_secs_f64().max(1e-9));
    }
    ratios.sort_by(f64::total_cmp);
    Some(ratios[ratios.len() / 2])
}

/// Times one built candidate: a first run, after which the candidate is
/// dropped when it and a second run are both slower than `cutoff`
/// ([`CUTOFF`] × the best so far, or 1.25 × the slowest kernel of a full
/// beam: it could not enter the beam); then the fastest of those runs and
/// a few more (more for fast kernels, whose times are noisier). The
/// fastest run, not the median: on a busy machine other processes only
/// ever add time, so the fastest run is the closest to what the kernel
/// costs on its own.
fn time_candidate<M: Measure>(
    measure: &M,
    built: &M::Built,
    cutoff: Option<Duration>,
) -> Option<Duration> {
    let mut best = measure.time(built, 1).ok()?;
    if cutoff.is_some_and(|c| best > c) {
        // One more try: the first run pays for cold code and caches, and
        // may have shared the cores with another process.
        best = best.min(measure.time(built, 1).ok()?);
        if cutoff.is_some_and(|c| best > c) {
            return None;
        }
    }
    let runs = if best < Duration::from_millis(1) {
        9
    } else if best < Duration::from_millis(20) {
        5
    } else {
        3
    };
    for _ in 1..runs {
        best = best.min(measure.time(built, 1).ok()?);
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use morok_core::apply_opts;
    use morok_core::sample_kernels::{matmul, run_seeded as interpret};
    use morok_core::{apply_opt, OptOps};
    use morok_core::{upcast_lanes, MAX_UPCAST};

    /// The host CPU without vectors (the register tiles the cost models
    /// below reward are scalar lanes).
    fn host_cpu() -> Target {
        Target::cpu(0, crate::host::l2_bytes(), crate::host::available_threads())
    }

    /// "Builds" a candidate by running it on the interpreter and checking
    /// its output against the original kernel's (every mismatch is
    /// recorded); its "time" is a cost model that rewards register tiles,
    /// so the search goes on for several rounds.
    struct InterpMeasure {
        sizes: Vec<usize>,
        want: Vec<f64>,
        mismatches: Mutex<Vec<String>>,
        built: Mutex<usize>,
    }

    impl Measure for InterpMeasure {
        type Built = Duration;

        fn build(&self, optimized: &Arc<UOp>) -> Result<Duration, String> {
            *self.built.lock().unwrap() += 1;
            if interpret(optimized, &self.sizes) != self.want {
                self.mismatches.lock().unwrap().push(optimized.tree());
            }
            let k = OptKernel::new(optimized, host_cpu());
            let lanes = upcast_lanes(&k) as u64;
            Ok(Duration::from_micros(
                10_000 / lanes + optimized.toposort().len() as u64,
            ))
        }

        fn time(&self, built: &Duration, _runs: usize) -> Result<Duration, String> {
            Ok(*built)
        }
    }

    fn measure_for(ast: &Arc<UOp>, sizes: Vec<usize>) -> InterpMeasure {
        InterpMeasure {
            want: interpret(ast, &sizes),
            sizes,
            mismatches: Mutex::new(Vec::new()),
            built: Mutex::new(0),
        }
    }

    #[test]
    fn every_candidate_matches_the_original_on_the_interpreter() {
        let ast = matmul(6, 8, 12);
        let m = measure_for(&ast, vec![6 * 12, 6 * 8, 8 * 12]);
        let limits = Target {
            threads: 4,
            ..host_cpu()
        };
        let found = beam_search(&ast, &limits, &BeamConfig::new(2), &m).unwrap();
        let mismatches = m.mismatches.lock().unwrap();
        assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
        // Several rounds ran, the winner has a register tile and replays.
        assert!(found.timed > 10, "{} candidates", found.timed);
        assert_eq!(found.timed, *m.built.lock().unwrap());
        assert!(found.opts.len() >= 2, "{:?}", found.opts);
        assert!(upcast_lanes(&OptKernel::new(&found.ast, limits)) > 1);
        let replayed = apply_opts(&ast, &found.opts, &limits).unwrap();
        assert!(Arc::ptr_eq(&replayed, &found.ast));
        assert_eq!(interpret(&found.ast, &m.sizes), m.want);
        // Never slower than the heuristics' kernel.
        let mut h = OptKernel::new(&ast, limits);
        apply_heuristics(&mut h);
        assert!(found.time <= m.build(&h.ast).unwrap());
    }

    /// Times on a machine that was busy while the heuristics' kernel was
    /// timed (the first runs of a search): those runs take 4× as long.
    /// Every other kernel costs 1.5× the heuristics' one, less a little
    /// per upcast lane (so the search goes on for a few rounds).
    struct BusyAtFirst {
        heuristic: u64,
        busy_runs: usize,
        runs: AtomicUsize,
    }

    impl Measure for BusyAtFirst {
        type Built = (u64, i64);

        fn build(&self, optimized: &Arc<UOp>) -> Result<(u64, i64), String> {
            let k = OptKernel::new(optimized, host_cpu());
            Ok((optimized.id(), upcast_lanes(&k)))
        }

        fn time(&self, &(id, lanes): &(u64, i64), _runs: usize) -> Result<Duration, String> {
            let quiet = if id == self.heuristic {
                Duration::from_micros(1000)
            } else {
                Duration::from_micros(1500 - lanes.min(256) as u64)
            };
            let busy = self.runs.fetch_add(1, Ordering::Relaxed) < self.busy_runs;
            Ok(if busy { quiet * 4 } else { quiet })
        }
    }

    #[test]
    fn a_busy_moment_does_not_make_the_search_return_a_slower_kernel() {
        let ast = matmul(16, 16, 16);
        let limits = host_cpu();
        let mut h = OptKernel::new(&ast, limits);
        apply_heuristics(&mut h);
        let m = BusyAtFirst {
            heuristic: h.ast.id(),
            busy_runs: 12,
            runs: AtomicUsize::new(0),
        };
        let found = beam_search(&ast, &limits, &BeamConfig::new(3), &m).unwrap();
        // The search saw the others as faster (1.5 ms against 4 ms) ...
        assert!(found.timed > 3, "{} candidates", found.timed);
        // ... and the paired check kept the heuristics' kernel.
        assert!(Arc::ptr_eq(&found.ast, &h.ast), "{:?}", found.opts);
        assert_eq!(found.opts, h.applied);
    }

    /// Records when each of its runs started and ended, under its own
    /// search's number; each run sleeps a little.
    struct Recording {
        search: usize,
        runs: Arc<Mutex<Vec<(usize, std::time::Instant, std::time::Instant)>>>,
    }

    impl Measure for Recording {
        type Built = i64;

        fn build(&self, optimized: &Arc<UOp>) -> Result<i64, String> {
            Ok(upcast_lanes(&OptKernel::new(optimized, host_cpu())))
        }

        fn time(&self, lanes: &i64, _runs: usize) -> Result<Duration, String> {
            let start = std::time::Instant::now();
            std::thread::sleep(Duration::from_micros(200));
            let end = std::time::Instant::now();
            self.runs.lock().unwrap().push((self.search, start, end));
            Ok(Duration::from_micros(1000 - (*lanes).min(256) as u64))
        }
    }

    #[test]
    fn searches_started_together_time_their_candidates_one_after_the_other() {
        let runs = Arc::new(Mutex::new(Vec::new()));
        let config = BeamConfig {
            max_candidates: 12,
            ..BeamConfig::new(2)
        };
        std::thread::scope(|s| {
            for search in 0..2 {
                let runs = runs.clone();
                s.spawn(move || {
                    let m = Recording { search, runs };
                    let ast = matmul(8 + 8 * search as i64, 16, 16);
                    beam_search(&ast, &host_cpu(), &config, &m).unwrap();
                });
            }
        });
        let runs = runs.lock().unwrap();
        let span = |search: usize| {
            let mine = runs.iter().filter(|r| r.0 == search);
            let first = mine.clone().map(|r| r.1).min().unwrap();
            (first, mine.map(|r| r.2).max().unwrap())
        };
        let (a, b) = (span(0), span(1));
        // One search's runs all end before the other's first starts.
        assert!(a.1 <= b.0 || b.1 <= a.0, "{a:?} {b:?}");
    }

    #[test]
    fn the_candidate_limit_bounds_the_search() {
        let ast = matmul(4, 4, 4);
        let m = measure_for(&ast, vec![16, 16, 16]);
        let config = BeamConfig {
            max_candidates: 5,
            ..BeamConfig::new(3)
        };
        let found = beam_search(&ast, &host_cpu(), &config, &m).unwrap();
        assert_eq!(found.timed, 5);
        assert_eq!(*m.built.lock().unwrap(), 5);
        assert!(m.mismatches.lock().unwrap().is_empty());
    }

    #[test]
    fn candidates_stay_within_the_register_budget() {
        let ast = matmul(64, 64, 64);
        let limits = host_cpu();
        let mut k = OptKernel::new(&ast, limits);
        for opt in [
            Opt::new(OptOps::Upcast, 0, 16),
            Opt::new(OptOps::Upcast, 1, 16),
        ] {
            apply_opt(&mut k, &opt).unwrap();
            k.applied.push(opt);
        }
        let next = neighbours(&k, &search_actions());
        assert!(!next.is_empty());
        assert!(next.iter().all(|n| upcast_lanes(n) <= MAX_UPCAST));
        // UNROLL would make 512 lanes: none is offered.
        assert!(next
            .iter()
            .all(|n| n.applied.last().unwrap().op != OptOps::Unroll));
    }
}
