//! `--codegens`: the two CPU code generators (C through the system
//! compiler, LLVM in process) side by side on the same workloads (W1 and
//! W4a unless others are named), in one invocation.
//!
//! Each round runs this binary once per codegen (a child process with
//! `MOROK_DEVICE` set to `CPU` or `LLVM`, so each has its own default
//! device); the child measures what the main table measures (median warm
//! time; first call in a fresh process with an empty kernel cache, which
//! inherits `MOROK_DEVICE`). Rounds alternate the codegens so slow drift
//! of a shared machine hits both; the table gives the median over rounds
//! and LLVM ÷ C. It goes to `<out>/codegens.md`.

use crate::workloads::{self, Workload};
use crate::{bench_morok, Options};
use std::fmt::Write;
use std::process::{Command, ExitCode};

/// The hidden flag of a codegen's child process.
pub const CHILD_FLAG: &str = "--codegen-child";

/// The codegens compared: the `MOROK_DEVICE` name and the column name.
const CODEGENS: [(&str, &str); 2] = [("CPU", "C"), ("LLVM", "LLVM")];

/// One codegen's figures for one workload in one round.
#[derive(Clone, Copy, Debug, Default)]
struct Figures {
    warm_ms: f64,
    first_ms: f64,
}

/// The workloads compared when none are named.
pub fn default_workloads() -> Vec<String> {
    vec!["W1".to_string(), "W4a".to_string()]
}

/// The parent: `rounds` alternating rounds over both codegens, then the
/// table, printed and written to `<out>/codegens.md`. `Ok(false)` when a
/// workload failed.
pub fn run(opts: &Options, selected: &[Workload], rounds: usize) -> Result<bool, String> {
    let mut figures: Vec<Vec<Vec<Figures>>> = vec![vec![vec![]; CODEGENS.len()]; selected.len()];
    let mut devices = vec![String::new(); CODEGENS.len()];
    let mut ok = true;
    for round in 0..rounds {
        for (c, (device, name)) in CODEGENS.iter().enumerate() {
            eprintln!("round {}/{rounds}: {name} ...", round + 1);
            let out = child(opts, selected, device)?;
            for line in out.lines() {
                let mut f = line.split('\t');
                match (f.next(), f.next(), f.next(), f.next()) {
                    (Some("DEVICE"), Some(d), _, _) => devices[c] = d.to_string(),
                    (Some("ROW"), Some(id), Some(warm), Some(first)) => {
                        let i = selected.iter().position(|w| w.id == id);
                        if let (Some(i), Ok(warm_ms), Ok(first_ms)) =
                            (i, warm.parse::<f64>(), first.parse::<f64>())
                        {
                            eprintln!("  {id}: warm {warm_ms:.3} ms, first call {first_ms:.1} ms");
                            figures[i][c].push(Figures { warm_ms, first_ms });
                        }
                    }
                    (Some("FAILED"), Some(id), Some(e), _) => {
                        eprintln!("  {id} on {name}: FAILED: {e}");
                        ok = false;
                    }
                    _ => {}
                }
            }
        }
    }
    let md = table(opts, selected, &figures, &devices, rounds);
    std::fs::create_dir_all(&opts.out)
        .map_err(|e| format!("creating {}: {e}", opts.out.display()))?;
    let path = opts.out.join("codegens.md");
    std::fs::write(&path, &md).map_err(|e| format!("writing {}: {e}", path.display()))?;
    println!("{md}");
    eprintln!("wrote {}", path.display());
    Ok(ok)
}

/// Runs the child for `device` on the selected workloads; its stdout.
fn child(opts: &Options, selected: &[Workload], device: &str) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg(CHILD_FLAG)
        .arg("--runs")
        .arg(opts.runs.to_string())
        .env("MOROK_DEVICE", device);
    if opts.quick {
        cmd.arg("--quick");
    }
    cmd.args(selected.iter().map(|w| w.id));
    let out = cmd.output().map_err(|e| format!("spawning: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the {device} child exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The child: the device it runs on, then one line per workload (`ROW`,
/// id, warm ms, first-call ms; or `FAILED`, id, reason), tab-separated.
pub fn child_main(args: &[String]) -> ExitCode {
    let opts = match crate::parse_args(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{CHILD_FLAG}: {e}");
            return ExitCode::from(2);
        }
    };
    let selected = match workloads::select(&opts.filters) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{CHILD_FLAG}: {e}");
            return ExitCode::from(2);
        }
    };
    match morok::Device::default_device() {
        Ok(d) => println!("DEVICE\t{}", d.backend().describe()),
        Err(e) => {
            eprintln!("{CHILD_FLAG}: {e}");
            return ExitCode::FAILURE;
        }
    }
    for w in &selected {
        let row = bench_morok(w, &opts);
        match (row.morok_ms, row.first_ms, row.error) {
            (Some(warm), Some(first), None) => println!("ROW\t{}\t{warm}\t{first}", w.id),
            (_, _, e) => println!(
                "FAILED\t{}\t{}",
                w.id,
                e.unwrap_or_default().replace(['\t', '\n'], " ")
            ),
        }
    }
    ExitCode::SUCCESS
}

/// The median of a codegen's figures over the rounds (`None` when none
/// succeeded).
fn median_of(f: &[Figures], pick: impl Fn(&Figures) -> f64) -> Option<f64> {
    let mut v: Vec<f64> = f.iter().map(pick).collect();
    (!v.is_empty()).then(|| crate::median(&mut v))
}

/// The Markdown report: one row per workload, first call and warm time
/// of each codegen and LLVM ÷ C.
fn table(
    opts: &Options,
    selected: &[Workload],
    figures: &[Vec<Vec<Figures>>],
    devices: &[String],
    rounds: usize,
) -> String {
    let mut s = String::from("# Morok's CPU codegens: C vs LLVM\n\n");
    let _ = writeln!(
        s,
        "{}; {}; 1-minute load average {} at the end; median over {rounds} alternating \
         round(s), each with at most {} warm calls per workload. First call: a fresh process \
         with an empty kernel cache (graph build, scheduling, lowering, code generation, run). \
         Below 1 means LLVM is faster.\n",
        crate::utc_now(),
        morok::backends::host::cpu_model(),
        crate::load_average(),
        opts.runs
    );
    for ((_, name), d) in CODEGENS.iter().zip(devices) {
        let _ = writeln!(s, "- {name}: {d}");
    }
    if let Some(n) = &opts.note {
        let _ = writeln!(s, "- {n}");
    }
    s.push_str(
        "\n| workload | C first call ms | LLVM first call ms | LLVM ÷ C | C warm ms | LLVM warm ms | LLVM ÷ C |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    let fmt =
        |x: Option<f64>, digits: usize| x.map_or("–".to_string(), |v| format!("{v:.digits$}"));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(l), Some(c)) if c > 0.0 => format!("{:.2}", l / c),
        _ => "–".to_string(),
    };
    for (w, f) in selected.iter().zip(figures) {
        let first = |c: usize| median_of(&f[c], |x| x.first_ms);
        let warm = |c: usize| median_of(&f[c], |x| x.warm_ms);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            w.label(opts.quick),
            fmt(first(0), 1),
            fmt(first(1), 1),
            ratio(first(1), first(0)),
            fmt(warm(0), 3),
            fmt(warm(1), 3),
            ratio(warm(1), warm(0)),
        );
    }
    s
}
