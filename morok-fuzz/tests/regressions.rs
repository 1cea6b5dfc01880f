//! Replays the reproducers the fuzzer wrote, on the C device and, when
//! this build has it, on LLVM, under the optimizer mode each was found
//! with:
//!
//! - `morok-fuzz/regressions/`: programs that failed, each with the fix it
//!   led to; every compiled value must now match the reference;
//! - `morok-fuzz/not-comparable/`: programs whose failure was the
//!   comparison's, not the compiler's (a comparison of two roundings of
//!   one value, a gradient at a tie, 64-bit integers beyond the
//!   reference's f64): they must replay without a failure *and* with the
//!   values in question marked as ones whose difference is not a mismatch
//!   (`morok_fuzz::trust`; whether they differ depends on the device's
//!   rounding), so that the checker's rule, not luck, is what passes them.

use morok_fuzz::check::Outcome;
use morok_fuzz::Reproducer;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Replays set the process's default device and optimizer mode: one
/// test replays at a time.
static REPLAYING: Mutex<()> = Mutex::new(());

/// The reproducers in `dir` (sorted), parsed.
fn reproducers(dir: &str) -> Vec<(PathBuf, Reproducer)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no reproducers in {}", dir.display());
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).expect("a reproducer");
            let r: Reproducer =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            (f, r)
        })
        .collect()
}

/// Replays every reproducer of `dir` on each device: each must replay
/// without a failure and with `count` of its outcome (what the directory
/// promises, named `what`) above 0.
fn replay_all(dir: &str, what: &str, count: impl Fn(&Outcome) -> usize) {
    let _one_at_a_time = REPLAYING.lock().unwrap_or_else(|e| e.into_inner());
    let mut devices = vec!["CPU"];
    if morok::Device::get("LLVM").is_ok() {
        devices.push("LLVM");
    }
    let all = reproducers(dir);
    let mut failures = Vec::new();
    for (f, r) in &all {
        for dev in &devices {
            let out = r
                .replay_on(dev)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let why = if !out.failures.is_empty() {
                "failed".to_string()
            } else if count(&out) == 0 {
                format!("nothing {what}")
            } else {
                continue;
            };
            failures.push(format!("{} on {dev}: {why}: {out:?}", f.display()));
        }
    }
    eprintln!("{} reproducers of {dir} replayed on {devices:?}", all.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_reproducer_matches_the_reference() {
    replay_all("regressions", "compared", |out| out.compared);
}

#[test]
fn every_false_alarm_is_counted_as_not_comparable() {
    replay_all(
        "not-comparable",
        "the checker counts as not comparable",
        |out| out.unreliable,
    );
}
