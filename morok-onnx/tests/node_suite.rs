//! ONNX's backend node test suite (about 1,600 single-op models with inputs
//! and expected outputs, shipped in the `onnx` Python package), run through
//! the importer and compared at the suite's tolerances.
//!
//! Point `MOROK_ONNX_NODE_DIR` at the suite (`onnx/backend/test/data/node`
//! inside the installed package; `.ci/run` installs it). Without it the
//! test prints why it skips. Every case that does not pass is listed in
//! `tests/node_expected_failures.txt` with its status and reason; the test
//! fails on a case whose status differs from the list (a new failure, or a
//! listed case that now passes). `MOROK_ONNX_UPDATE_EXPECTED=1` rewrites the
//! list from the run.

mod common;

use common::{check_output, ATOL, RTOL};
use morok_onnx::proto::ModelProto;
use morok_onnx::{tensor_from_pb, Model};
use prost::Message;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

const EXPECTED: &str = "tests/node_expected_failures.txt";

/// How a case ended.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Pass,
    Fail(String),
    Unsupported(String),
}

impl Outcome {
    fn kind(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail(_) => "fail",
            Outcome::Unsupported(_) => "unsupported",
        }
    }
}

/// The op a case is counted under: its single node's op, or the ops of a
/// multi-node (function-expanded) model.
fn op_group(model: &ModelProto) -> String {
    let nodes = model
        .graph
        .as_ref()
        .map(|g| g.node.as_slice())
        .unwrap_or(&[]);
    match nodes {
        [one] => one.op_type.clone().unwrap_or_default(),
        _ => "(multi-node)".into(),
    }
}

/// The sorted `input_*.pb` or `output_*.pb` files of a data set.
fn data_files(set: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut files: Vec<(usize, PathBuf)> = std::fs::read_dir(set)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let index = name
                .strip_prefix(prefix)?
                .strip_suffix(".pb")?
                .parse()
                .ok()?;
            Some((index, e.path()))
        })
        .collect();
    files.sort();
    files.into_iter().map(|(_, p)| p).collect()
}

fn run_case(dir: &Path) -> Outcome {
    let model = match Model::load(dir.join("model.onnx")) {
        Ok(m) => m,
        Err(e) if e.is_unsupported() => return Outcome::Unsupported(e.to_string()),
        Err(e) => return Outcome::Fail(format!("load: {e}")),
    };
    if let Some(v) = model
        .inputs()
        .iter()
        .chain(model.outputs())
        .find(|v| v.dtype.is_none())
    {
        return Outcome::Unsupported(format!("{}: type {}", v.name, v.type_name));
    }
    let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    sets.sort();
    for set in sets {
        let read = |p: &PathBuf| tensor_from_pb(&std::fs::read(p).unwrap_or_default());
        let inputs: Result<Vec<_>, _> = data_files(&set, "input_").iter().map(read).collect();
        let expected: Result<Vec<_>, _> = data_files(&set, "output_").iter().map(read).collect();
        let (inputs, expected) = match (inputs, expected) {
            (Ok(i), Ok(o)) => (i, o),
            (Err(e), _) | (_, Err(e)) if e.is_unsupported() => {
                return Outcome::Unsupported(e.to_string())
            }
            (Err(e), _) | (_, Err(e)) => return Outcome::Fail(format!("test data: {e}")),
        };
        if inputs.len() != model.inputs().len() {
            return Outcome::Fail(format!(
                "{} inputs for {} model inputs",
                inputs.len(),
                model.inputs().len()
            ));
        }
        let named: Vec<(&str, &morok::Tensor)> = model
            .inputs()
            .iter()
            .map(|i| i.name.as_str())
            .zip(&inputs)
            .collect();
        let outputs = match model.run(&named) {
            Ok(o) => o,
            Err(e) if e.is_unsupported() => return Outcome::Unsupported(e.to_string()),
            Err(e) => return Outcome::Fail(format!("run: {e}")),
        };
        if outputs.len() != expected.len() {
            return Outcome::Fail(format!(
                "{} outputs, expected {}",
                outputs.len(),
                expected.len()
            ));
        }
        for (i, (got, want)) in outputs.iter().zip(&expected).enumerate() {
            if let Err(e) = check_output(got, want, RTOL, ATOL) {
                return Outcome::Fail(format!("output {i}: {e}"));
            }
        }
    }
    Outcome::Pass
}

/// The expected-failures list: case name -> (status, reason).
fn read_expected(path: &Path) -> HashMap<String, (String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (status, rest) = l.split_once(' ')?;
            let (case, reason) = rest.split_once(": ").unwrap_or((rest, ""));
            Some((
                case.trim().to_string(),
                (status.to_string(), reason.to_string()),
            ))
        })
        .collect()
}

fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let trimmed = match flat.find(" at /") {
        Some(i) => flat[..i].to_string(),
        None => flat,
    };
    trimmed.chars().take(200).collect()
}

#[test]
fn onnx_node_suite() {
    let Some(root) = std::env::var_os("MOROK_ONNX_NODE_DIR") else {
        println!("skipped: MOROK_ONNX_NODE_DIR is not set (point it at onnx/backend/test/data/node of the onnx package; .ci/run does)");
        return;
    };
    let root = PathBuf::from(root);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", root.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("model.onnx").exists())
        .collect();
    cases.sort();
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(String, String, Outcome)>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(dir) = cases.get(i) else { break };
                let name = dir
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                let group = std::fs::read(dir.join("model.onnx"))
                    .ok()
                    .and_then(|b| ModelProto::decode(b.as_slice()).ok())
                    .map_or_else(|| "(unreadable)".to_string(), |m| op_group(&m));
                let outcome = std::panic::catch_unwind(|| run_case(dir)).unwrap_or_else(|p| {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    Outcome::Fail(format!("panic: {msg}"))
                });
                results.lock().unwrap().push((name, group, outcome));
            });
        }
    });
    let elapsed = start.elapsed();
    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| a.0.cmp(&b.0));

    let mut per_op: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    let mut totals = [0usize; 3];
    for (_, group, outcome) in &results {
        let k = match outcome {
            Outcome::Pass => 0,
            Outcome::Fail(_) => 1,
            Outcome::Unsupported(_) => 2,
        };
        per_op.entry(group).or_default()[k] += 1;
        totals[k] += 1;
    }
    println!(
        "{:<36} {:>6} {:>6} {:>11}",
        "op", "passed", "failed", "unsupported"
    );
    for (op, [p, f, u]) in &per_op {
        println!("{op:<36} {p:>6} {f:>6} {u:>11}");
    }
    println!(
        "total: {} cases, {} passed, {} failed, {} unsupported in {:.1} s on {workers} threads",
        results.len(),
        totals[0],
        totals[1],
        totals[2],
        elapsed.as_secs_f64()
    );

    if let Some(table) = std::env::var_os("MOROK_ONNX_OP_TABLE") {
        std::fs::write(&table, op_table(&results)).expect("write the op table");
        println!("wrote {}", Path::new(&table).display());
    }

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(EXPECTED);
    if std::env::var_os("MOROK_ONNX_UPDATE_EXPECTED").is_some() {
        let mut text = String::from(
            "# Node-suite cases that do not pass: `status case: reason` (status: fail or unsupported).\n# Regenerate with MOROK_ONNX_UPDATE_EXPECTED=1 (see tests/node_suite.rs).\n",
        );
        for (name, _, outcome) in &results {
            match outcome {
                Outcome::Pass => {}
                Outcome::Fail(r) | Outcome::Unsupported(r) => {
                    text += &format!("{} {name}: {}\n", outcome.kind(), one_line(r));
                }
            }
        }
        std::fs::write(&path, text).expect("write the expected-failures list");
        println!("wrote {}", path.display());
        return;
    }
    let expected = read_expected(&path);
    let mut surprises = Vec::new();
    for (name, _, outcome) in &results {
        let listed = expected
            .get(name)
            .map(|(s, _)| s.as_str())
            .unwrap_or("pass");
        if listed != outcome.kind() {
            let why = match outcome {
                Outcome::Pass => String::new(),
                Outcome::Fail(r) | Outcome::Unsupported(r) => format!(": {}", one_line(r)),
            };
            surprises.push(format!(
                "{name}: listed as {listed}, now {}{why}",
                outcome.kind()
            ));
        }
    }
    assert!(
        surprises.is_empty(),
        "{} cases differ from {EXPECTED}:\n{}",
        surprises.len(),
        surprises.join("\n")
    );
}

/// The per-op results as a Markdown table (for docs/ONNX.md), with the
/// first reason an op's cases did not pass.
fn op_table(results: &[(String, String, Outcome)]) -> String {
    let mut rows: BTreeMap<&str, ([usize; 3], Option<String>)> = BTreeMap::new();
    for (_, group, outcome) in results {
        let row = rows.entry(group).or_default();
        match outcome {
            Outcome::Pass => row.0[0] += 1,
            Outcome::Fail(r) | Outcome::Unsupported(r) => {
                row.0[if matches!(outcome, Outcome::Fail(_)) {
                    1
                } else {
                    2
                }] += 1;
                let reason = one_line(r);
                let short = reason
                    .rsplit("unsupported: ")
                    .next()
                    .unwrap_or(&reason)
                    .to_string();
                row.1.get_or_insert(short.replace('|', "/"));
            }
        }
    }
    let mut out = String::from(
        "| op | passed | failed | unsupported | first reason |\n|---|---:|---:|---:|---|\n",
    );
    for (op, ([p, f, u], reason)) in rows {
        out += &format!(
            "| {op} | {p} | {f} | {u} | {} |\n",
            reason.unwrap_or_default()
        );
    }
    out
}
