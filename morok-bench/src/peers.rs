//! The peers, run from where they live (`<peers dir>`, default
//! `../shared/bench` beside the repository), each in its own process:
//!
//! - Python (`python/bench_*.py`): NumPy, PyTorch, JAX and tinygrad. Each
//!   script writes one JSON line per (variant, workload) with its median;
//!   `ONLY` selects the workloads. NumPy runs with `OPENBLAS_CORETYPE`
//!   and `OPENBLAS_L2_SIZE` removed from its environment (they halve its
//!   matmul); tinygrad with `DEV=CPU CACHELEVEL=0`.
//! - Rust (`rust-peers`, built on its own): candle and ndarray. The binary
//!   prints tab-separated `RESULT` lines.
//! - The training steps W8/W9, which the shared scripts do not have:
//!   this crate's `peers/bench_train.py` (PyTorch eager and
//!   `torch.compile`, JAX `jit`, tinygrad `TinyJit`), run with the same
//!   Python from the shared scripts' folder (it uses their timing rule);
//!   likewise `peers/bench_onnx.py` (ONNX Runtime) for W10 and
//!   `peers/bench_block.py` for W11.
//! - On a GPU (`MOROK_DEVICE=CUDA`, [`on_gpu`]), only PyTorch on the GPU:
//!   `peers/bench_torch_cuda.py` for W1–W7.
//!
//! A peer that is not installed is skipped with a line saying why.

use crate::workloads::Workload;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// One peer's median for one variant of one workload.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerResult {
    /// The framework (`numpy`, `jax`, `candle`, ...).
    pub peer: String,
    /// How the framework ran it (`jit`, `eager`, ...).
    pub variant: String,
    /// The workload id (`W1`, `W2a`, ...).
    pub workload: String,
    /// Median time of a warm call.
    pub median_ms: f64,
    /// The peer's own correctness check against NumPy, when it has one.
    pub correct: Option<bool>,
    /// Its first call in a fresh process (compile or session creation
    /// included), when its script times one.
    pub first_ms: Option<f64>,
    /// The medians of each round of fresh processes, when the workload ran
    /// in several (`rounds.rs`); `median_ms` is then their median.
    pub rounds: Vec<f64>,
}

/// Where to find the peers.
#[derive(Clone, Debug)]
pub struct PeerConfig {
    /// The shared bench folder (holds `python/` and `rust-peers/`).
    pub dir: PathBuf,
    /// The Python interpreter of the peers' venv.
    pub python: PathBuf,
    /// The built `rust-peers-bench` binary.
    pub rust_bin: PathBuf,
    /// `BENCH_RUNS` for the Rust peers.
    pub runs: usize,
}

/// What running the peers gave: results and one line per skipped peer.
#[derive(Debug, Default)]
pub struct PeerRun {
    /// Every result line of every peer that ran.
    pub results: Vec<PeerResult>,
    /// `name: why` for each peer that was skipped or failed.
    pub skipped: Vec<String>,
    /// `name: seconds` each peer took.
    pub took: Vec<(String, f64)>,
}

/// A Python peer: the module it needs, its script, its environment.
struct PyPeer {
    name: &'static str,
    module: &'static str,
    script: &'static str,
    set: &'static [(&'static str, &'static str)],
    unset: &'static [&'static str],
}

const PY_PEERS: [PyPeer; 4] = [
    PyPeer {
        name: "numpy",
        module: "numpy",
        script: "bench_numpy.py",
        set: &[],
        unset: &["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"],
    },
    PyPeer {
        name: "torch",
        module: "torch",
        script: "bench_torch.py",
        set: &[],
        unset: &[],
    },
    PyPeer {
        name: "jax",
        module: "jax",
        script: "bench_jax.py",
        set: &[],
        unset: &[],
    },
    PyPeer {
        name: "tinygrad",
        module: "tinygrad",
        script: "bench_tinygrad.py",
        set: &[("DEV", "CPU"), ("CACHELEVEL", "0")],
        unset: &[],
    },
];

/// The Rust peers' backends (`rust-peers-bench <backend>`).
const RUST_PEERS: [&str; 2] = ["candle", "ndarray"];

/// The peer names in table order.
pub const ORDER: [&str; 8] = [
    "numpy",
    "torch",
    "torch-cuda",
    "jax",
    "tinygrad",
    "candle",
    "ndarray",
    "onnxruntime",
];

/// Runs every installed peer on `workloads` (full sizes), one after the
/// other, printing a line as each starts and ends.
pub fn run_all(cfg: &PeerConfig, workloads: &[Workload]) -> PeerRun {
    let mut run = PeerRun::default();
    let ids: Vec<&str> = workloads.iter().map(|w| w.id).collect();
    // The shared scripts time W1 to W7 only: they do not start for the
    // other workloads.
    let shared: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| SHARED_WORKLOADS.contains(id))
        .collect();
    if on_gpu() {
        // Morok on a GPU is compared with PyTorch on the GPU only (the
        // CPU peers would measure another machine).
        if !shared.is_empty() {
            run_project_script(
                cfg,
                "bench_torch_cuda.py",
                "PyTorch CUDA",
                &shared,
                &mut run,
            );
        }
        return run;
    }
    if !shared.is_empty() {
        run_python(cfg, &shared, &mut run);
        run_rust(cfg, &shared, &mut run);
    }
    for (script, label, ours) in PROJECT_SCRIPTS {
        let wanted: Vec<&str> = ids.iter().copied().filter(|id| ours.contains(id)).collect();
        if !wanted.is_empty() {
            run_project_script(cfg, script, label, &wanted, &mut run);
        }
    }
    run
}

/// Whether Morok runs on a GPU in this bench (`MOROK_DEVICE=CUDA` or
/// `CUDA:N`, a build with the feature `cuda`).
pub fn on_gpu() -> bool {
    std::env::var("MOROK_DEVICE").is_ok_and(|d| d.trim().to_ascii_uppercase().starts_with("CUDA"))
}

/// The project's own peer scripts (`morok-bench/peers/`), for the
/// workloads the shared scripts do not have: the script, its label in
/// the log, and its workloads.
const PROJECT_SCRIPTS: [(&str, &str, &[&str]); 3] = [
    ("bench_train.py", "training peers", &["W8", "W9"]),
    ("bench_onnx.py", "ONNX Runtime", &["W10a", "W10b", "W10c"]),
    ("bench_block.py", "encoder-layer peers", &["W11"]),
];

/// The workloads the shared peer scripts (`python/`, `rust-peers/`) time.
const SHARED_WORKLOADS: [&str; 11] = [
    "W1", "W2a", "W2b", "W2c", "W3", "W4a", "W4b", "W5a", "W5b", "W6", "W7",
];

/// Runs the project's peer script `script` (in `morok-bench/peers/`) on
/// the workloads `wanted`, from the shared scripts' folder (it imports
/// their timing rule); `label` names it in the log.
fn run_project_script(
    cfg: &PeerConfig,
    script: &str,
    label: &str,
    wanted: &[&str],
    run: &mut PeerRun,
) {
    if !cfg.python.exists() {
        run.skipped
            .push(format!("{label}: no Python at {}", cfg.python.display()));
        return;
    }
    let script = repo_root().join("morok-bench/peers").join(script);
    let out = match tempfile::NamedTempFile::new() {
        Ok(f) => f,
        Err(e) => {
            run.skipped.push(format!("{label}: temp file: {e}"));
            return;
        }
    };
    eprintln!("peers of {} ...", wanted.join(", "));
    let start = Instant::now();
    let status = Command::new(&cfg.python)
        .arg(&script)
        .arg(out.path())
        .current_dir(cfg.dir.join("python"))
        .env("ONLY", wanted.join(","))
        .env("MOROK_BENCH_MODELS", crate::onnx_models::models_dir())
        .env("DEV", "CPU")
        .env("CACHELEVEL", "0")
        .stdout(Stdio::null())
        .status();
    let secs = start.elapsed().as_secs_f64();
    run.took.push((label.to_string(), secs));
    let found = parse_jsonl(&std::fs::read_to_string(out.path()).unwrap_or_default());
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => run
            .skipped
            .push(format!("{label}: exited with {s} (kept their lines)")),
        Err(e) => run.skipped.push(format!("{label}: cannot run: {e}")),
    }
    eprintln!("{label}: {} results in {secs:.0} s", found.len());
    run.results.extend(found);
}

fn run_python(cfg: &PeerConfig, ids: &[&str], run: &mut PeerRun) {
    let dir = cfg.dir.join("python");
    if !cfg.python.exists() {
        for p in &PY_PEERS {
            run.skipped.push(format!(
                "{}: no Python at {} (make the venv with `python/setup.sh`, see morok-bench/README.md)",
                p.name,
                cfg.python.display()
            ));
        }
        return;
    }
    let out_dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            run.skipped.push(format!("python peers: temp dir: {e}"));
            return;
        }
    };
    for p in &PY_PEERS {
        let script = dir.join(p.script);
        if !script.exists() {
            run.skipped
                .push(format!("{}: no script {}", p.name, script.display()));
            continue;
        }
        let import = Command::new(&cfg.python)
            .args(["-c", &format!("import {}", p.module)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if !matches!(import, Ok(s) if s.success()) {
            run.skipped.push(format!(
                "{}: `import {}` fails in {}",
                p.name,
                p.module,
                cfg.python.display()
            ));
            continue;
        }
        let out = out_dir.path().join(format!("{}.jsonl", p.name));
        let mut cmd = Command::new(&cfg.python);
        cmd.arg(&script)
            .arg(&out)
            .current_dir(&dir)
            .env("ONLY", ids.join(","))
            .stdout(Stdio::null());
        for (k, v) in p.set {
            cmd.env(k, v);
        }
        for k in p.unset {
            cmd.env_remove(k);
        }
        eprintln!("peer {} ...", p.name);
        let start = Instant::now();
        let status = cmd.status();
        let secs = start.elapsed().as_secs_f64();
        run.took.push((p.name.to_string(), secs));
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        let found = parse_jsonl(&text);
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => run
                .skipped
                .push(format!("{}: exited with {s} (kept its lines)", p.name)),
            Err(e) => run.skipped.push(format!("{}: cannot run: {e}", p.name)),
        }
        eprintln!("peer {}: {} results in {secs:.0} s", p.name, found.len());
        run.results.extend(found);
    }
}

/// The results in the Python scripts' JSON lines; a line with an error
/// (or without a median) is left out.
pub fn parse_jsonl(text: &str) -> Vec<PeerResult> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            let workload = v.get("workload")?.as_str()?;
            Some(PeerResult {
                peer: v.get("fw")?.as_str()?.to_string(),
                variant: v.get("variant")?.as_str()?.to_string(),
                workload: workload.split('_').next()?.to_string(),
                median_ms: v.get("median_ms")?.as_f64()?,
                correct: v.get("correct").and_then(|c| c.as_bool()),
                first_ms: v.get("first_call_ms").and_then(|f| f.as_f64()),
                rounds: Vec::new(),
            })
        })
        .collect()
}

fn run_rust(cfg: &PeerConfig, ids: &[&str], run: &mut PeerRun) {
    if !cfg.rust_bin.exists() {
        for p in RUST_PEERS {
            run.skipped.push(format!(
                "{p}: no rust-peers binary at {} (build it, see morok-bench/README.md)",
                cfg.rust_bin.display()
            ));
        }
        return;
    }
    // The binary filters on the family (`W2`), not on `W2a`.
    let mut families: Vec<String> = ids
        .iter()
        .map(|id| crate::workloads::family(id).to_string())
        .collect();
    families.dedup();
    for p in RUST_PEERS {
        eprintln!("peer {p} ...");
        let start = Instant::now();
        let out = Command::new(&cfg.rust_bin)
            .arg(p)
            .arg(families.join(","))
            .env("BENCH_RUNS", cfg.runs.to_string())
            .stderr(Stdio::piped())
            .output();
        let secs = start.elapsed().as_secs_f64();
        match out {
            Ok(o) if o.status.success() => {
                let found: Vec<PeerResult> =
                    parse_result_lines(&String::from_utf8_lossy(&o.stdout))
                        .into_iter()
                        .filter(|r| ids.contains(&r.workload.as_str()))
                        .collect();
                eprintln!("peer {p}: {} results in {secs:.0} s", found.len());
                run.took.push((p.to_string(), secs));
                run.results.extend(found);
            }
            Ok(o) => run.skipped.push(format!(
                "{p}: {} ({})",
                String::from_utf8_lossy(&o.stderr).trim(),
                o.status
            )),
            Err(e) => run.skipped.push(format!("{p}: cannot run: {e}")),
        }
    }
}

/// The results in `RESULT\tbackend\tworkload\tvariant\tmedian_ms=...`
/// lines; workload names are mapped to our ids.
pub fn parse_result_lines(text: &str) -> Vec<PeerResult> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            if f.len() < 5 || f[0] != "RESULT" {
                return None;
            }
            let median_ms = f[4].strip_prefix("median_ms=")?.parse().ok()?;
            Some(PeerResult {
                peer: f[1].to_string(),
                variant: f[3].to_string(),
                workload: rust_workload_id(f[2])?.to_string(),
                median_ms,
                correct: None,
                first_ms: None,
                rounds: Vec::new(),
            })
        })
        .collect()
}

/// Our id for a Rust peer's workload name (`W2 row-sum 4096^2` → `W2a`).
fn rust_workload_id(name: &str) -> Option<&'static str> {
    let has = |s: &str| name.contains(s);
    Some(match name.get(..2)? {
        "W1" => "W1",
        "W2" if has("row") => "W2a",
        "W2" if has("col") => "W2b",
        "W2" if has("full") => "W2c",
        "W3" => "W3",
        "W4" if has("1024") => "W4a",
        "W4" if has("2048") => "W4b",
        "W5" if has("batch 1024") => "W5b",
        "W5" if has("batch 64") => "W5a",
        "W6" => "W6",
        "W7" => "W7",
        _ => return None,
    })
}

/// The default place of the shared bench folder: `../shared/bench` next
/// to the repository this crate was built from.
pub fn default_dir() -> PathBuf {
    repo_root().join("../shared/bench")
}

/// The default `rust-peers-bench` binary: built into `target/rust-peers`.
pub fn default_rust_bin() -> PathBuf {
    repo_root().join("target/rust-peers/release/rust-peers-bench")
}

/// The repository this crate was built from.
pub fn repo_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_python_lines() {
        let text = r#"{"fw": "jax", "variant": "jit", "workload": "W4a_matmul_1024", "median_ms": 13.1, "correct": true}
{"fw": "jax", "variant": "jit", "workload": "W6_conv3x3_b8_64c_56", "error": "boom"}
not json"#;
        let r = parse_jsonl(text);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].workload, "W4a");
        assert_eq!(r[0].median_ms, 13.1);
        assert_eq!(r[0].correct, Some(true));
    }

    #[test]
    fn parses_rust_lines() {
        let text = "# backend=candle\n\
            RESULT\tcandle\tW2 row-sum 4096^2\tsum_keepdim(1)\tmedian_ms=4.500\tmin_ms=4.1\t15 GB/s\truns=15\n\
            RESULT\tcandle\tW5 MLP 784-128-10 batch 1024\tx\tmedian_ms=2.000\tmin_ms=1.9\t1 GFLOP/s\truns=15\n";
        let r = parse_result_lines(text);
        let ids: Vec<&str> = r.iter().map(|r| r.workload.as_str()).collect();
        assert_eq!(ids, ["W2a", "W5b"]);
        assert_eq!(r[0].median_ms, 4.5);
    }
}
