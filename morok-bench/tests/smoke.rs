//! Smoke test: the harness builds and runs end to end on tiny sizes
//! (`--quick --no-peers`), including the first-call child processes, the
//! machine-limit kernels and both report files.

use std::process::Command;

#[test]
fn quick_run_writes_the_report() {
    let out = tempfile::tempdir().unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_morok-bench"))
        .args(["--quick", "--no-peers", "--runs", "2", "--out"])
        .arg(out.path())
        .env("MOROK_CACHE_DIR", out.path().join("cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "morok-bench failed:\n{stderr}");
    let md = std::fs::read_to_string(out.path().join("bench.md")).unwrap();
    for id in [
        "W1", "W2a", "W2b", "W2c", "W3", "W4a", "W4b", "W5a", "W5b", "W6", "W7",
    ] {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {id} ")))
            .unwrap_or_else(|| panic!("no row for {id} in\n{md}"));
        assert!(!row.contains("failed"), "{row}");
    }
    assert!(md.contains("machine limits"), "{md}");
    let svg = std::fs::read_to_string(out.path().join("bench.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
}
