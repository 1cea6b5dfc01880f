//! The `aot` binary runs its kernels from the build-time table with no C
//! compiler reachable, and a program whose kernels render differently
//! (other options) does not run them.

use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs the built binary with `PATH` pointing nowhere (no `cc`, `clang`,
/// `gcc`), no `MOROK_CC`, a fresh kernel cache directory, and `extra`
/// (which may set `PATH` again).
fn run_without_compiler(extra: &[(&str, &str)]) -> Output {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let cache = std::env::temp_dir().join(format!(
        "morok-aot-test-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_aot"));
    cmd.env("PATH", "/nonexistent")
        .env("MOROK_CACHE_DIR", &cache)
        .env_remove("MOROK_CC")
        .env_remove("MOROK_DEVICE")
        .env_remove("MOROK_NOOPT")
        .env_remove("MOROK_BEAM");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the aot binary starts");
    let _ = std::fs::remove_dir_all(&cache);
    out
}

/// The number after `label` in `out`.
fn count(out: &str, label: &str) -> usize {
    out.lines()
        .find_map(|l| l.strip_prefix(label))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{out}"))
}

fn error(out: &str, label: &str) -> f64 {
    out.lines()
        .find_map(|l| l.strip_prefix(label))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{out}"))
}

#[test]
fn runs_build_time_kernels_without_a_compiler() {
    let out = run_without_compiler(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(count(&stdout, "kernels linked into the program:") > 0);
    assert!(count(&stdout, "aot kernels used:") > 0, "{stdout}");
    assert_eq!(count(&stdout, "jit kernel builds:"), 0, "{stdout}");
    assert_eq!(count(&stdout, "warm calls:"), 3, "{stdout}");
    assert!(error(&stdout, "scale_add max error:") < 1e-6, "{stdout}");
    assert!(error(&stdout, "mlp max error:") < 1e-5, "{stdout}");
    assert!(
        stdout.contains(
            "batch 7: mlp: dim `B` is 7 in parameter `x` (dim 0) but the kernel fixes it to 32"
        ),
        "{stdout}"
    );
}

/// With the `llvm` feature the build script also linked the LLVM
/// device's objects: under `MOROK_DEVICE=LLVM` every kernel comes from
/// the table and the LLVM JIT builds nothing.
#[cfg(feature = "llvm")]
#[test]
fn the_llvm_device_runs_its_build_time_objects() {
    let out = run_without_compiler(&[("MOROK_DEVICE", "LLVM")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(count(&stdout, "aot kernels used:") > 0, "{stdout}");
    assert_eq!(count(&stdout, "jit kernel builds:"), 0, "{stdout}");
    assert!(error(&stdout, "scale_add max error:") < 1e-6, "{stdout}");
    assert!(error(&stdout, "mlp max error:") < 1e-5, "{stdout}");
}

#[test]
fn never_runs_a_compiler_that_is_there() {
    // Fake compilers that leave a mark when anything runs them.
    let bin = std::env::temp_dir().join(format!("morok-aot-fake-cc-{}", std::process::id()));
    std::fs::create_dir_all(&bin).expect("temp dir");
    for name in ["cc", "clang", "gcc"] {
        let path = bin.join(name);
        std::fs::write(&path, "#!/bin/sh\n: > \"$0.ran\"\nexit 1\n").expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    let path = bin.to_string_lossy().into_owned();
    let out = run_without_compiler(&[("PATH", path.as_str())]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ran: Vec<_> = ["cc", "clang", "gcc"]
        .iter()
        .filter(|n| bin.join(format!("{n}.ran")).exists())
        .collect();
    let _ = std::fs::remove_dir_all(&bin);
    assert!(out.status.success(), "{stdout}");
    assert_eq!(count(&stdout, "jit kernel builds:"), 0, "{stdout}");
    assert!(ran.is_empty(), "ran {ran:?}");
}

#[test]
fn kernels_that_render_differently_miss_the_table() {
    // Without the optimizer the sources differ from the table's keys, so
    // the device needs the JIT compiler, which is not there.
    let out = run_without_compiler(&[("MOROK_NOOPT", "1")]);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("found on PATH"), "{all}");
}
