//! Shared helpers of the integration tests: a seeded generator, random
//! input tensors (contiguous and as non-contiguous views), and the
//! comparison of compiled results with the reference evaluator (all from
//! `morok_fuzz::data`), and child-process test helpers.

#![allow(dead_code)] // each test binary uses a different part

pub mod interp_device;

use morok::Tensor;

/// The generator, inputs and oracle comparison, shared with the fuzzer.
#[allow(unused_imports)] // each test binary uses a different part
pub use morok_fuzz::data::{
    check, compare, compiled, input, reference, tensor, tolerance, values, Domain, Layout, Rng,
    DTYPES, LAYOUTS,
};
#[allow(unused_imports)] // each test binary uses a different part
pub use morok_fuzz::with_element;

/// Writes a summary line straight to stderr, past the test harness's
/// output capture, so `cargo test` shows it for passing tests too.
pub fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// A command that runs the test `test` of this test binary alone, in a
/// child process (set its environment, then pass it to
/// [`child_summary`]).
pub fn child_test(test: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([test, "--exact", "--test-threads=1", "--nocapture"]);
    cmd
}

/// Runs `cmd`, asserts that it succeeds, and returns the first line of
/// its stderr that starts with `prefix` (the child's [`report`]).
pub fn child_summary(mut cmd: std::process::Command, prefix: &str) -> String {
    let out = cmd.output().expect("running a child test process");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stderr
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?}:\n{stderr}"))
        .to_string()
}

/// Whether this process runs with the optimizer off: `MOROK_NOOPT` set
/// to anything but `0` or empty, as the runtime reads it.
pub fn optimizer_off() -> bool {
    std::env::var("MOROK_NOOPT").is_ok_and(|v| v != "0" && !v.is_empty())
}

/// Runs the test `test` of this test binary in a child process with the
/// optimizer off (`MOROK_NOOPT=1`, no `MOROK_BEAM`) and the extra
/// environment `env`, asserts that it succeeds, and reports its summary
/// line (the one starting with `prefix`, see [`child_summary`]). Does
/// nothing in a process that already runs with the optimizer off (the
/// child itself, or a whole test run under `MOROK_NOOPT`).
pub fn passes_without_optimizer(test: &str, prefix: &str, env: &[(&str, &str)]) {
    if optimizer_off() {
        return;
    }
    let mut cmd = child_test(test);
    cmd.env("MOROK_NOOPT", "1").env_remove("MOROK_BEAM");
    cmd.envs(env.iter().copied());
    let summary = child_summary(cmd, prefix);
    report(&format!("under MOROK_NOOPT=1: {summary}"));
}

/// The reference values of `t`, flattened (panics with the error).
pub fn vals(t: &Tensor) -> Vec<f64> {
    match t.reference() {
        Ok(a) => a.iter().copied().collect(),
        Err(e) => panic!("{e}"),
    }
}

/// Asserts `got` matches `want` within `1e-5` relative (NaN matches NaN).
pub fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        let ok = g == w || (g - w).abs() <= 1e-5 * (1.0 + w.abs()) || (g.is_nan() && w.is_nan());
        assert!(ok, "{got:?} vs {want:?}");
    }
}

/// An `f32` tensor of `shape` holding `data`.
pub fn f32s(data: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(data.to_vec(), shape).unwrap()
}
