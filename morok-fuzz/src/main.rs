//! The fuzzer's command line (see `--help`). The process started by the
//! user supervises a worker process (itself with `--worker`) that runs the
//! programs and reports each on stdout; a worker killed by a signal (a
//! kernel that faults, a sanitizer's abort) is a crash of the program it
//! was running, and a new worker goes on after it.

use morok_fuzz::check::{self, FailureKind};
use morok_fuzz::generate::{generate, Limits};
use morok_fuzz::{shrink::shrink, Opts, Reproducer};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::Mutex;
use std::time::Instant;

const HELP: &str = "\
morok-fuzz: random tensor programs compiled by Morok, compared with the reference evaluator

  --programs N      programs to run (default 100)
  --start K         index of the first program (default 0): a run covers K..K+N
  --seed S          the run's seed (default 1)
  --device D        C (the default CPU device) or LLVM (built with feature `llvm`)
  --opts O          heuristic | random | beam-sample | mixed (default mixed)
  --max-ops N       most ops per program (default 8)
  --max-elements N  most elements of a node (default 128)
  --out DIR         where minimized reproducers go (default fuzz-failures)
  --shrink-budget N most candidates tried when shrinking (default 150)
  --jobs N          worker processes at once, each a part of the range (default 1)
  --show            prints each program
  --replay FILE     runs one reproducer and prints its outcome";

/// The command line.
#[derive(Clone, Debug)]
struct Args {
    programs: u64,
    start: u64,
    seed: u64,
    device: String,
    opts: Opts,
    limits: Limits,
    out: PathBuf,
    shrink_budget: usize,
    jobs: u64,
    show: bool,
    worker: bool,
    replay: Option<PathBuf>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        programs: 100,
        start: 0,
        seed: 1,
        device: "CPU".into(),
        opts: Opts::Mixed,
        limits: Limits {
            max_ops: 8,
            max_elements: 128,
        },
        out: PathBuf::from("fuzz-failures"),
        shrink_budget: 150,
        jobs: 1,
        show: false,
        worker: false,
        replay: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--worker" {
            a.worker = true;
            continue;
        }
        if flag == "--show" {
            a.show = true;
            continue;
        }
        if flag == "--help" || flag == "-h" {
            return Err(HELP.into());
        }
        let v = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{HELP}"))?;
        let num = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--programs" => a.programs = num(&v)?,
            "--start" => a.start = num(&v)?,
            "--seed" => a.seed = num(&v)?,
            "--device" => a.device = if v == "C" { "CPU".into() } else { v },
            "--opts" => a.opts = Opts::named(&v).ok_or_else(|| format!("--opts {v}\n{HELP}"))?,
            "--max-ops" => a.limits.max_ops = num(&v)? as usize,
            "--max-elements" => a.limits.max_elements = num(&v)? as usize,
            "--out" => a.out = PathBuf::from(v),
            "--shrink-budget" => a.shrink_budget = num(&v)? as usize,
            "--jobs" => a.jobs = num(&v)?,
            "--replay" => a.replay = Some(PathBuf::from(v)),
            _ => return Err(format!("unknown option {flag}\n{HELP}")),
        }
    }
    Ok(a)
}

/// What the worker reports about one program.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Report {
    index: u64,
    kernels: usize,
    compared: usize,
    grads: usize,
    /// Values not compared (see `morok_fuzz::trust`).
    #[serde(default)]
    unchecked: usize,
    /// `Mismatch`, `Crash`, `Compile`, `Reference` or `Invalid`.
    kind: Option<String>,
    message: Option<String>,
    reproducer: Option<String>,
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let r = if let Some(file) = &args.replay {
        replay(file)
    } else if args.worker {
        worker(&args)
    } else {
        supervise(&args)
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("morok-fuzz: {e}");
            ExitCode::from(2)
        }
    }
}

fn replay(file: &PathBuf) -> Result<bool, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let r: Reproducer =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let out = r.replay()?;
    println!("{}\n{out:?}", r.program.text());
    Ok(!out.failed())
}

/// Runs programs `start..start + programs`, one report line each.
fn worker(args: &Args) -> Result<bool, String> {
    let dev = morok::Device::get(&args.device).map_err(|e| e.to_string())?;
    morok::Device::set_default(&dev);
    let stdout = std::io::stdout();
    for index in args.start..args.start + args.programs {
        writeln!(stdout.lock(), "start {index}").map_err(|e| e.to_string())?;
        let report = run_program(args, index);
        let line = serde_json::to_string(&report).map_err(|e| e.to_string())?;
        writeln!(stdout.lock(), "result {line}").map_err(|e| e.to_string())?;
    }
    Ok(true)
}

/// Generates, runs and (when it fails) shrinks program `index`.
fn run_program(args: &Args, index: u64) -> Report {
    let generated = generate(args.seed, index, args.limits);
    if args.show {
        eprintln!("program {index}:\n{}", generated.program.text());
    }
    let mode = args.opts.mode(args.seed, index);
    morok::set_opt_mode(Some(mode));
    let mut out = check::run(&generated.program);
    for r in &generated.refused {
        out.failures.push(check::Failure {
            kind: FailureKind::Invalid,
            message: format!("the API refused a generated op: {r}"),
        });
    }
    let mut report = Report {
        index,
        kernels: out.kernels,
        compared: out.compared,
        grads: out.grads,
        unchecked: out.unchecked,
        ..Report::default()
    };
    if let Some(worst) = out.worst() {
        report.kind = Some(format!("{:?}", worst.kind));
        report.message = Some(worst.message.clone());
        if worst.kind > FailureKind::Invalid {
            let kind = worst.kind;
            let small = shrink(&generated.program, args.shrink_budget, |p| {
                check::run(p).worst().is_some_and(|f| f.kind == kind)
            });
            let failure = check::run(&small)
                .worst()
                .map_or(worst.message.clone(), |f| f.message.clone());
            let rep = Reproducer::new(args.seed, index, &args.device, mode, &failure, small);
            report.reproducer = write_reproducer(args, &rep);
        }
    }
    morok::set_opt_mode(None);
    report
}

fn write_reproducer(args: &Args, rep: &Reproducer) -> Option<String> {
    std::fs::create_dir_all(&args.out).ok()?;
    let path = args.out.join(format!(
        "{}-seed{}-{}.json",
        rep.device.to_lowercase(),
        rep.seed,
        rep.index
    ));
    let text = serde_json::to_string_pretty(rep).ok()?;
    std::fs::write(&path, text + "\n").ok()?;
    Some(path.display().to_string())
}

/// Figures of a run.
#[derive(Default)]
struct Totals {
    programs: u64,
    kernels: usize,
    compared: usize,
    grads: usize,
    unchecked: usize,
    mismatches: u64,
    crashes: u64,
    errors: u64,
}

/// Runs the programs in `--jobs` worker processes at once (each a
/// contiguous part of the range; a new worker after one dies) and prints
/// the figures; `Ok(false)` when any program failed.
fn supervise(args: &Args) -> Result<bool, String> {
    let started = Instant::now();
    let _cache = private_cache_dir()?;
    let end = args.start + args.programs;
    let jobs = args.jobs.clamp(1, args.programs.max(1));
    let per = args.programs.div_ceil(jobs);
    let totals = Mutex::new(Totals::default());
    let results: Vec<Result<(), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .map(|j| {
                let lo = args.start + j * per;
                let hi = (lo + per).min(end);
                let totals = &totals;
                s.spawn(move || supervise_range(args, lo, hi, totals))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a supervisor thread panicked".into()))
            })
            .collect()
    });
    results.into_iter().collect::<Result<Vec<()>, String>>()?;
    let t = totals.into_inner().unwrap_or_else(|e| e.into_inner());
    let secs = started.elapsed().as_secs_f64();
    println!(
        "morok-fuzz: seed {} programs {}..{} on {} ({:?}, {} jobs): {} programs, {} kernels \
         compiled, {} outputs compared ({} gradients), {} not comparable, {} mismatches, \
         {} crashes, {} errors, {:.1} s ({:.3} s per program)",
        args.seed,
        args.start,
        end,
        args.device,
        args.opts,
        jobs,
        t.programs,
        t.kernels,
        t.compared,
        t.grads,
        t.unchecked,
        t.mismatches,
        t.crashes,
        t.errors,
        secs,
        secs / t.programs.max(1) as f64
    );
    Ok(t.mismatches + t.crashes + t.errors == 0)
}

/// Runs programs `start..end` in worker processes, one after another (a
/// new one after a worker dies), adding their reports to `totals`.
fn supervise_range(
    args: &Args,
    start: u64,
    end: u64,
    totals: &Mutex<Totals>,
) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut next = start;
    let add = |r: &Report| count(&mut totals.lock().unwrap_or_else(|e| e.into_inner()), r);
    while next < end {
        let mut child = Command::new(&exe)
            .args(std::env::args().skip(1))
            .args(["--worker", "--start", &next.to_string()])
            .args(["--programs", &(end - next).to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting a worker: {e}"))?;
        let stdout = child.stdout.take().ok_or("no worker stdout")?;
        let mut running = None;
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| e.to_string())?;
            if let Some(i) = line.strip_prefix("start ") {
                running = i.parse::<u64>().ok();
            } else if let Some(json) = line.strip_prefix("result ") {
                let r: Report = serde_json::from_str(json).map_err(|e| e.to_string())?;
                add(&r);
                running = None;
                next = r.index + 1;
            }
        }
        let status = child.wait().map_err(|e| e.to_string())?;
        match running {
            Some(i) => {
                add(&crash_report(args, i, &format!("worker died: {status}")));
                next = i + 1;
            }
            None if !status.success() && next < end => {
                return Err(format!("the worker failed before a program: {status}"));
            }
            None => {}
        }
    }
    Ok(())
}

/// Adds one program's report to the figures, printing its failure.
fn count(t: &mut Totals, r: &Report) {
    t.programs += 1;
    t.kernels += r.kernels;
    t.compared += r.compared;
    t.grads += r.grads;
    t.unchecked += r.unchecked;
    let Some(kind) = &r.kind else { return };
    match kind.as_str() {
        "Mismatch" => t.mismatches += 1,
        "Crash" => t.crashes += 1,
        _ => t.errors += 1,
    }
    eprintln!(
        "program {}: {kind}: {}\n  reproducer: {}",
        r.index,
        r.message.as_deref().unwrap_or(""),
        r.reproducer.as_deref().unwrap_or("(not written)")
    );
}

/// The report of program `index`, whose worker died: a crash, with the
/// program (not shrunk: shrinking would kill the supervisor) written.
fn crash_report(args: &Args, index: u64, why: &str) -> Report {
    let program = generate(args.seed, index, args.limits).program;
    let mode = args.opts.mode(args.seed, index);
    let rep = Reproducer::new(args.seed, index, &args.device, mode, why, program);
    Report {
        index,
        kind: Some("Crash".into()),
        message: Some(why.into()),
        reproducer: write_reproducer(args, &rep),
        ..Report::default()
    }
}

/// A fresh kernel cache directory for the run when `MOROK_CACHE_DIR` is
/// not set (a long run compiles many thousands of kernels; the directory
/// is removed when the run ends).
fn private_cache_dir() -> Result<Option<tempfile::TempDir>, String> {
    if std::env::var_os("MOROK_CACHE_DIR").is_some() {
        return Ok(None);
    }
    let dir = tempfile::tempdir().map_err(|e| format!("a kernel cache directory: {e}"))?;
    // Set before any thread starts: the workers inherit it.
    std::env::set_var("MOROK_CACHE_DIR", dir.path());
    Ok(Some(dir))
}
