//! Replays every reproducer in `morok-fuzz/regressions/` (programs the
//! fuzzer found failing, minimized, each with the fix it led to) on the C
//! device and, when this build has it, on LLVM, under the optimizer mode
//! each was found with: every compiled value must match the reference.

use morok_fuzz::Reproducer;

#[test]
fn every_reproducer_matches_the_reference() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the regressions directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no reproducers in {}", dir.display());
    let mut devices = vec!["CPU"];
    if morok::Device::get("LLVM").is_ok() {
        devices.push("LLVM");
    }
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("a reproducer");
        let r: Reproducer =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for dev in &devices {
            let out = r
                .replay_on(dev)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            if !out.failures.is_empty() || out.compared == 0 {
                failures.push(format!("{} on {dev}: {:?}", f.display(), out));
            }
        }
    }
    eprintln!("{} reproducers replayed on {devices:?}", files.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
