//! `morok-bench`: Morok's float32 workloads W1–W11 timed against the
//! machine's limits and the installed peers, in one invocation.
//!
//! ```text
//! cargo run --release -p morok-bench -- [OPTIONS] [WORKLOADS]
//! ```
//!
//! For each workload: the median warm time, the rate (GB/s or GFLOP/s)
//! and its share of the machine's limit, the first-call latency (this
//! binary run again in a fresh process with an empty `MOROK_CACHE_DIR`),
//! and each installed peer's median with Morok's time ÷ the peer's. The
//! table goes to `<out>/bench.md` and a bar chart to `<out>/bench.svg`.
//! `--codegens` instead compares the C and LLVM CPU codegens
//! (`codegens.rs`, `<out>/codegens.md`). See `morok-bench/README.md` for
//! the options and for installing the peers.

#![warn(missing_docs)]

mod block;
mod codegens;
mod first_call_profile;
mod limits;
mod onnx_models;
mod peers;
mod report;
mod rounds;
mod verdict;
mod workloads;

use morok::Tensor;
use peers::{PeerConfig, PeerRun};
use report::{Report, Row};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};
use workloads::{Bound, HostInput, Session, Workload};

/// The hidden flag of the first-call child process.
const CHILD_FLAG: &str = "--first-call-child";

const USAGE: &str = "\
usage: morok-bench [OPTIONS] [WORKLOADS]

WORKLOADS   comma- or space-separated id prefixes (W1, W2, W2b, W4a, ...); all when absent
--runs N    at most N timed warm calls per workload (default 2000; no more once 2.5 s have
            been spent, but at least 10, or 1 when the first call took longer than that, as
            the Python peers time); also the Rust peers' BENCH_RUNS (default 15)
--quick     small sizes, no peers (a smoke test)
--no-peers  skip the peers
--no-limits skip measuring the machine's bandwidth and FMA peak
--out DIR   where bench.md and bench.svg go (default: docs/ of the repository)
--note TEXT a line added to the report (e.g. \"busy machine\")
--codegens  compare the C and LLVM CPU codegens (first call and warm time; W1 and W4a
            unless workloads are named) into codegens.md; needs the `llvm` feature
--first-call-profile
            the first call of each workload (W1 unless workloads are named) broken down by
            stage (schedule, optimize, lower, render, compile, load, run), with the C device
            and, built with `llvm`, the LLVM device, into first-call-profile.md
--rounds N  rounds of fresh processes for the memory-bound workloads when peers run, and
            alternating rounds of --codegens (default 3; the tables give medians)
--peers-dir DIR   the shared bench folder (default ../shared/bench beside the repository;
                  env MOROK_BENCH_PEERS)
--python PATH     the peers' Python (default <peers-dir>/python/venv/bin/python; env MOROK_BENCH_PYTHON)
--rust-peers PATH the rust-peers-bench binary (default target/rust-peers/release/rust-peers-bench;
                  env MOROK_BENCH_RUST_PEERS)";

/// The parsed command line.
struct Options {
    filters: Vec<String>,
    runs: usize,
    quick: bool,
    peers: bool,
    limits: bool,
    out: PathBuf,
    note: Option<String>,
    peer_cfg: PeerConfig,
    /// `--codegens`: compare the CPU codegens instead of the main table.
    codegens: bool,
    /// Rounds of `--codegens`.
    rounds: usize,
    /// `--first-call-profile`: the per-stage first-call table instead.
    first_call_profile: bool,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let env_path = |k: &str| std::env::var_os(k).map(PathBuf::from);
    let mut o = Options {
        filters: vec![],
        runs: MAX_RUNS,
        quick: false,
        peers: true,
        limits: true,
        out: peers::repo_root().join("docs"),
        note: None,
        peer_cfg: PeerConfig {
            dir: env_path("MOROK_BENCH_PEERS").unwrap_or_else(peers::default_dir),
            python: PathBuf::new(),
            rust_bin: env_path("MOROK_BENCH_RUST_PEERS").unwrap_or_else(peers::default_rust_bin),
            runs: RUST_PEER_RUNS,
        },
        codegens: false,
        rounds: 3,
        first_call_profile: false,
    };
    let mut python = env_path("MOROK_BENCH_PYTHON");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--runs" => {
                let v = value("--runs")?;
                o.runs = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--runs needs a positive number, got `{v}`"))?;
            }
            "--rounds" => {
                let v = value("--rounds")?;
                o.rounds = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--rounds needs a positive number, got `{v}`"))?;
            }
            "--codegens" => o.codegens = true,
            "--first-call-profile" => o.first_call_profile = true,
            "--quick" => o.quick = true,
            "--no-peers" => o.peers = false,
            "--no-limits" => o.limits = false,
            "--out" => o.out = PathBuf::from(value("--out")?),
            "--note" => o.note = Some(value("--note")?),
            "--peers-dir" => o.peer_cfg.dir = PathBuf::from(value("--peers-dir")?),
            "--python" => python = Some(PathBuf::from(value("--python")?)),
            "--rust-peers" => o.peer_cfg.rust_bin = PathBuf::from(value("--rust-peers")?),
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with('-') => return Err(format!("unknown option `{flag}`")),
            list => o
                .filters
                .extend(list.split(',').filter(|s| !s.is_empty()).map(String::from)),
        }
    }
    o.peer_cfg.python = python.unwrap_or_else(|| o.peer_cfg.dir.join("python/venv/bin/python"));
    if args.iter().any(|a| a == "--runs") {
        o.peer_cfg.runs = o.runs;
    }
    Ok(o)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(CHILD_FLAG) {
        return first_call_child(&args[1..]);
    }
    if args.first().map(String::as_str) == Some(codegens::CHILD_FLAG) {
        return codegens::child_main(&args[1..]);
    }
    if args.first().map(String::as_str) == Some(rounds::CHILD_FLAG) {
        return rounds::child_main(&args[1..]);
    }
    let opts = match parse_args(&args) {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("morok-bench: {e}\n");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let filters = if opts.codegens && opts.filters.is_empty() {
        codegens::default_workloads()
    } else if opts.first_call_profile && opts.filters.is_empty() {
        vec!["W1".to_string()]
    } else {
        opts.filters.clone()
    };
    let selected = match workloads::select(&filters) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("morok-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let result = if opts.first_call_profile {
        first_call_profile::run(&opts, &selected)
    } else if opts.codegens {
        if cfg!(feature = "llvm") {
            codegens::run(&opts, &selected, opts.rounds)
        } else {
            Err("--codegens needs the LLVM device: build with `--features llvm`".to_string())
        }
    } else {
        run(&opts, &selected)
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("morok-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs everything and writes the report; `Ok(false)` when a Morok
/// workload failed or gave a wrong result.
fn run(opts: &Options, selected: &[Workload]) -> Result<bool, String> {
    let start = Instant::now();
    let mut about = vec![format!(
        "{}; {} ({} cores); load average at start {}",
        utc_now(),
        morok::backends::host::cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        load_average()
    )];
    if opts.quick {
        about.push("`--quick`: small sizes, a smoke test; the figures mean nothing".into());
    }
    if let Some(n) = &opts.note {
        about.push(n.clone());
    }
    let limits = if opts.limits {
        eprintln!("measuring the machine's bandwidth and FMA peak ...");
        match limits::measure(opts.quick) {
            Ok(l) => Some(l),
            Err(e) => {
                eprintln!("machine limits not measured: {e}");
                about.push(format!("machine limits not measured: {e}"));
                None
            }
        }
    } else {
        None
    };
    let selected = with_models(opts, selected, &mut about);
    let mut rows = Vec::new();
    for w in &selected {
        let row = bench_morok(w, opts);
        match (&row.morok_ms, &row.error) {
            (_, Some(e)) => eprintln!("{}: FAILED: {e}", row.label),
            (Some(ms), None) => eprintln!(
                "{}: {ms:.3} ms median of {}, first call {:.1} ms",
                row.label,
                row.runs,
                row.first_ms.unwrap_or(f64::NAN)
            ),
            (None, None) => {}
        }
        rows.push(row);
    }
    let peer_run = if opts.quick {
        PeerRun {
            skipped: vec!["all peers: they run full sizes only, skipped with --quick".into()],
            ..PeerRun::default()
        }
    } else if opts.peers {
        peers::run_all(&opts.peer_cfg, &selected)
    } else {
        PeerRun {
            skipped: vec!["all peers: --no-peers".into()],
            ..PeerRun::default()
        }
    };
    for s in &peer_run.skipped {
        eprintln!("skipped {s}");
    }
    let mut limits = limits;
    if !peer_run.took.is_empty() {
        // The machine drifts (memory bandwidth 42-75 GB/s within minutes
        // on the VMs of this kind): a second pass after the peers brackets
        // their minutes, so Morok's figures are not from a luckier or
        // unluckier moment than theirs.
        eprintln!("timing Morok again after the peers ...");
        for row in rows.iter_mut().filter(|r| r.error.is_none()) {
            retime(row, opts);
        }
        if let Some(before) = limits {
            limits = Some(match limits::measure(opts.quick) {
                Ok(after) => before.best(&after),
                Err(_) => before,
            });
        }
        about.push(
            "two passes: Morok's warm figure is the median of its calls before and after \
             the peers ran, each machine limit the better of two measurements (before Morok's \
             first pass and after its second)"
                .into(),
        );
    }
    let mut peer_run = peer_run;
    if !peer_run.took.is_empty() && opts.rounds > 1 {
        more_rounds(opts, &selected, &mut rows, &mut peer_run);
        about.push(format!(
            "{} rounds for the memory-bound workloads (those compared with a bandwidth limit): \
             each round after the first runs Morok in a fresh process, then every peer again; \
             each side's figure is the median over the rounds of its per-process medians (the \
             rounds are listed below the table)",
            opts.rounds
        ));
    }
    let mut took = format!("this run took {:.0} s", start.elapsed().as_secs_f64());
    for (p, s) in &peer_run.took {
        took.push_str(&format!("; {p} {s:.0} s"));
    }
    let report = Report {
        rows: &rows,
        limits,
        peers: &peer_run,
        about,
        took,
    };
    let md = report.markdown();
    std::fs::create_dir_all(&opts.out)
        .map_err(|e| format!("creating {}: {e}", opts.out.display()))?;
    let md_path = opts.out.join("bench.md");
    std::fs::write(&md_path, &md).map_err(|e| format!("writing {}: {e}", md_path.display()))?;
    let svg_path = opts.out.join("bench.svg");
    report.chart(&svg_path)?;
    verdict::chart(&report, &opts.out.join("bench-verdict.svg"))?;
    println!("{md}");
    eprintln!("wrote {} and {}", md_path.display(), svg_path.display());
    Ok(rows.iter().all(|r| r.error.is_none()))
}

/// `selected`, with W10's models exported when it has W10 workloads. When
/// they cannot be (no PyTorch) or with `--quick` (W10 has full sizes
/// only), W10 is left out with a line in the report, unless the command
/// line named it: then its rows fail with the reason.
fn with_models(opts: &Options, selected: &[Workload], about: &mut Vec<String>) -> Vec<Workload> {
    let is_onnx = |w: &Workload| matches!(w.kind, workloads::Kind::Onnx(..));
    if !selected.iter().any(is_onnx) {
        return selected.to_vec();
    }
    let named = opts.filters.iter().any(|f| {
        selected
            .iter()
            .any(|w| is_onnx(w) && workloads::selects(f, w.id))
    });
    let missing = if opts.quick && !named {
        Some("--quick (its models have full sizes only)".to_string())
    } else {
        onnx_models::ensure_models(&opts.peer_cfg.python).err()
    };
    match missing {
        Some(why) if !named => {
            eprintln!("W10 left out: {why}");
            about.push(format!("W10 left out: {why}"));
            selected.iter().filter(|w| !is_onnx(w)).copied().collect()
        }
        Some(why) => {
            eprintln!("W10: {why}");
            about.push(format!("W10: {why}"));
            selected.to_vec()
        }
        None => selected.to_vec(),
    }
}

/// Rounds 2..=`opts.rounds` of fresh processes for the memory-bound
/// workloads that ran without error (see `rounds.rs`): Morok's child, then
/// every peer; the rows' and the peers' figures become medians over the
/// rounds. A round whose Morok child fails is reported in `peer_run`'s
/// skipped lines and leaves Morok's figures to the rounds that worked.
fn more_rounds(opts: &Options, selected: &[Workload], rows: &mut [Row], peer_run: &mut PeerRun) {
    let memory: Vec<Workload> = selected
        .iter()
        .filter(|w| w.bound() != Bound::Fma)
        .filter(|w| {
            rows.iter()
                .any(|r| r.workload.id == w.id && r.error.is_none())
        })
        .copied()
        .collect();
    if memory.is_empty() {
        return;
    }
    let ids: Vec<&str> = memory.iter().map(|w| w.id).collect();
    for row in rows.iter_mut().filter(|r| ids.contains(&r.workload.id)) {
        row.rounds = row.morok_ms.into_iter().collect();
    }
    let mut later = Vec::new();
    for round in 2..=opts.rounds {
        eprintln!(
            "round {round} of {}: {} in fresh processes ...",
            opts.rounds,
            ids.join(" ")
        );
        match rounds::morok_round(&ids, opts.runs) {
            Ok(ms) => {
                for (id, ms) in ids.iter().zip(ms) {
                    if let Some(row) = rows.iter_mut().find(|r| r.workload.id == *id) {
                        row.rounds.push(ms);
                    }
                }
            }
            Err(e) => peer_run
                .skipped
                .push(format!("morok: round {round} failed: {e}")),
        }
        let run = peers::run_all(&opts.peer_cfg, &memory);
        for (p, s) in run.took {
            match peer_run.took.iter_mut().find(|(q, _)| *q == p) {
                Some((_, t)) => *t += s,
                None => peer_run.took.push((p, s)),
            }
        }
        for s in run.skipped {
            peer_run.skipped.push(format!("round {round}: {s}"));
        }
        later.push(run.results);
    }
    for row in rows.iter_mut().filter(|r| !r.rounds.is_empty()) {
        row.morok_ms = Some(median(&mut row.rounds.clone()));
    }
    rounds::merge_peer_rounds(&mut peer_run.results, &later, &ids);
}

/// Uploads the inputs of `w`, as a user would.
fn upload(w: &Workload, quick: bool) -> Result<(Vec<HostInput>, Session), String> {
    let host = w.inputs(quick)?;
    let tensors = host
        .iter()
        .map(|(shape, v)| Tensor::from_vec(v.clone(), shape))
        .collect::<morok::Result<Vec<_>>>()
        .map_err(|e| e.to_string())?;
    let session = w.session(tensors)?;
    Ok((host, session))
}

/// One call ([`Workload::call`]: compile on the first call, caches
/// afterwards).
fn call(w: &Workload, s: &mut Session) -> Result<Tensor, String> {
    w.call(s)
}

/// Morok's row for one workload: a checked first call in this process,
/// the warm-up calls (see [`warm_up`]), then the timed warm calls; the
/// first call in a fresh process comes from the child.
fn bench_morok(w: &Workload, opts: &Options) -> Row {
    let mut row = Row {
        workload: *w,
        label: w.label(opts.quick),
        work: w.work(opts.quick),
        morok_ms: None,
        samples: Vec::new(),
        runs: 0,
        rounds: Vec::new(),
        first_ms: None,
        llvm_first_ms: None,
        error: None,
    };
    let result = (|| -> Result<(), String> {
        let (host, mut t) = upload(w, opts.quick)?;
        let t0 = Instant::now();
        let out = call(w, &mut t)?;
        let first = t0.elapsed();
        let values = out.to_vec::<f32>().map_err(|e| e.to_string())?;
        w.check(&host, &values)?;
        warm_up(w, &mut t, first)?;
        row.samples = time_warm(w, &mut t, opts.runs, first)?;
        row.runs = row.samples.len();
        row.morok_ms = Some(median(&mut row.samples.clone()));
        Ok(())
    })();
    if let Err(e) = result {
        row.error = Some(e);
        return row;
    }
    match first_call(w, opts.quick) {
        Ok(ms) => row.first_ms = Some(ms),
        Err(e) => row.error = Some(format!("first call: {e}")),
    }
    if cfg!(feature = "llvm") && default_device_is_c() {
        match first_call_child_output(w, opts.quick, &[], Some("LLVM"))
            .and_then(|out| first_call_ms(&out))
        {
            Ok(ms) => row.llvm_first_ms = Some(ms),
            Err(e) => row.error = Some(format!("LLVM first call: {e}")),
        }
    }
    row
}

/// Whether the default device is the C one (`MOROK_DEVICE` unset or
/// `CPU`): then the LLVM first call is a second column.
fn default_device_is_c() -> bool {
    std::env::var("MOROK_DEVICE").map_or(true, |d| d.trim().eq_ignore_ascii_case("CPU"))
}

/// Untimed calls after the checked first call, as the peers' scripts
/// make (`warmup=3` in `shared/bench/python/common.py`): the first calls
/// after a fresh output's page faults (or after the peers ran) find the
/// inputs outside the cache, and an L3-sized workload needs several calls
/// to settle (W7's kernel took 0.78, 0.69, 0.68, 0.51, 0.41 ms in its first
/// five warm calls on the Zen 5 VM, then 0.24–0.40 ms). Timing them would
/// make the median of 10 calls a measure of that warm-up, which the peers'
/// figures leave out.
const WARM_UP_CALLS: usize = 3;

/// Makes the [`WARM_UP_CALLS`] untimed calls, unless one call takes
/// seconds (the naive W4b: `first` over 1 s); returns how many it made.
fn warm_up(w: &Workload, t: &mut Session, first: Duration) -> Result<usize, String> {
    let calls = if first < Duration::from_secs(1) {
        WARM_UP_CALLS
    } else {
        0
    };
    for _ in 0..calls {
        call(w, t)?;
    }
    Ok(calls)
}

/// Time spent on the timed warm calls of one workload, as the Python
/// peers' scripts spend (`budget_s=2.5` in `shared/bench/python/common.py`).
const TIME_BUDGET: Duration = Duration::from_millis(2500);

/// Fewest timed warm calls (the peers' `min_iters`).
const MIN_RUNS: usize = 10;

/// Most timed warm calls by default (the peers' `max_iters`; `--runs`).
const MAX_RUNS: usize = 2000;

/// Timed calls of each Rust peer (`BENCH_RUNS`, their harness's own
/// default) unless `--runs` says otherwise.
const RUST_PEER_RUNS: usize = 15;

/// Times warm calls of `w` on the uploaded `t` as the peers' scripts do:
/// calls until [`TIME_BUDGET`] is spent, at least [`MIN_RUNS`] (1 when the
/// `first` call alone took longer than the budget) and at most `runs`.
/// A median over hundreds of calls of a short workload is not moved by
/// the few calls that follow another process's time slice on a busy
/// machine, as a median of 10 was. Milliseconds, in call order.
fn time_warm(
    w: &Workload,
    t: &mut Session,
    runs: usize,
    first: Duration,
) -> Result<Vec<f64>, String> {
    let min_runs = if first > TIME_BUDGET {
        1
    } else {
        runs.min(MIN_RUNS)
    };
    let mut times = Vec::with_capacity(runs.min(MAX_RUNS));
    let begin = Instant::now();
    while times.len() < runs && (times.len() < min_runs || begin.elapsed() < TIME_BUDGET) {
        let t0 = Instant::now();
        call(w, t)?;
        times.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    Ok(times)
}

/// The second pass of a row after the peers ran: one more checked call
/// (its kernels are compiled already), the warm-up calls and warm calls
/// timed as in the first pass; the row's figure becomes the median of both
/// passes' calls.
fn retime(row: &mut Row, opts: &Options) {
    let w = row.workload;
    let result = (|| -> Result<Vec<f64>, String> {
        let (host, mut t) = upload(&w, opts.quick)?;
        let t0 = Instant::now();
        let out = call(&w, &mut t)?;
        let first = t0.elapsed();
        let values = out.to_vec::<f32>().map_err(|e| e.to_string())?;
        w.check(&host, &values)?;
        warm_up(&w, &mut t, first)?;
        time_warm(&w, &mut t, opts.runs, first)
    })();
    match result {
        Ok(times) => {
            row.samples.extend(times);
            row.runs = row.samples.len();
            row.morok_ms = Some(median(&mut row.samples.clone()));
        }
        Err(e) => row.error = Some(format!("second pass: {e}")),
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Runs this binary again with the hidden child flag and a new, empty
/// kernel cache directory; returns the child's first-call time.
fn first_call(w: &Workload, quick: bool) -> Result<f64, String> {
    first_call_child_output(w, quick, &[], None).and_then(|out| first_call_ms(&out))
}

/// The `FIRST_CALL_MS` figure of a first-call child's output.
pub(crate) fn first_call_ms(stdout: &str) -> Result<f64, String> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("FIRST_CALL_MS ")?.trim().parse().ok())
        .ok_or_else(|| format!("no FIRST_CALL_MS line in {stdout:?}"))
}

/// Runs the first-call child for `w` (with `extra` arguments, and
/// `MOROK_DEVICE=device` when given) in a new, empty kernel cache
/// directory; returns its standard output.
pub(crate) fn first_call_child_output(
    w: &Workload,
    quick: bool,
    extra: &[&str],
    device: Option<&str>,
) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
    let cache = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg(CHILD_FLAG)
        .arg(w.id)
        .args(extra)
        .env("MOROK_CACHE_DIR", cache.path());
    if let Some(d) = device {
        cmd.env("MOROK_DEVICE", d);
    }
    if quick {
        cmd.arg("--quick");
    }
    let out = cmd.output().map_err(|e| format!("spawning: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "child exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The child: uploads the inputs, then times one graph build + realize
/// (schedule, lowering, C compilation, run) and prints it.
fn first_call_child(args: &[String]) -> ExitCode {
    let quick = args.iter().any(|a| a == "--quick");
    let Some(w) = args
        .first()
        .and_then(|id| workloads::ALL.iter().find(|w| w.id == id))
    else {
        eprintln!("{CHILD_FLAG}: unknown workload {:?}", args.first());
        return ExitCode::from(2);
    };
    // An ONNX model's first call includes reading and preparing the file
    // (its session's `Model::load`), as ONNX Runtime's includes creating
    // its session.
    let loads_model = matches!(w.kind, workloads::Kind::Onnx(..));
    let profile = args.iter().any(|a| a == first_call_profile::PROFILE_FLAG);
    morok::profile::set_enabled(profile);
    let t0 = Instant::now();
    let result = upload(w, quick).and_then(|(_, mut t)| {
        let t1 = Instant::now();
        call(w, &mut t)?;
        let start = if loads_model { t0 } else { t1 };
        Ok(start.elapsed().as_secs_f64() * 1e3)
    });
    match result {
        Ok(ms) => {
            println!("FIRST_CALL_MS {ms}");
            if profile {
                first_call_profile::print_stages();
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// The 1-minute load average (Linux), to tell a busy machine.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "unknown".into())
}

/// The current UTC time as `YYYY-MM-DD HH:MM UTC`.
pub(crate) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rest / 3600,
        (rest % 3600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse() {
        let args: Vec<String> = ["W1,W4", "--runs", "5", "--no-peers", "W7"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let o = parse_args(&args).unwrap();
        assert_eq!(o.filters, ["W1", "W4", "W7"]);
        assert_eq!((o.runs, o.peer_cfg.runs), (5, 5));
        assert!(!o.peers && !o.quick);
        let o = parse_args(&[]).unwrap();
        assert_eq!((o.runs, o.peer_cfg.runs), (MAX_RUNS, RUST_PEER_RUNS));
        assert!(parse_args(&["--runs".to_string(), "0".to_string()]).is_err());
        assert!(parse_args(&["--bogus".to_string()]).is_err());
        let o = parse_args(&[
            "--codegens".to_string(),
            "--rounds".to_string(),
            "2".to_string(),
        ])
        .unwrap();
        assert!(o.codegens && o.rounds == 2 && o.filters.is_empty());
    }

    #[test]
    fn short_workloads_are_warmed_up_like_the_peers() {
        let w = workloads::ALL
            .iter()
            .find(|w| w.id == "W7")
            .expect("W7 is a workload");
        let (_, mut t) = upload(w, true).unwrap();
        let launches = morok::stats::kernel_launches();
        assert_eq!(warm_up(w, &mut t, Duration::from_millis(5)), Ok(3));
        assert!(morok::stats::kernel_launches() >= launches + 3);
        // a call of seconds is not repeated
        assert_eq!(warm_up(w, &mut t, Duration::from_secs(2)), Ok(0));
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
