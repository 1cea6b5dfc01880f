//! Sanitizer mode (`MOROK_SANITIZE=1`): C kernels are built with
//! AddressSanitizer and UndefinedBehaviorSanitizer.
//!
//! - Without the ASan runtime preloaded, the C device refuses to build
//!   and says how to run (always checked, in a child process).
//! - With it (`LD_PRELOAD=$(cc -print-file-name=libasan.so)
//!   ASAN_OPTIONS=detect_leaks=0 MOROK_SANITIZE=1`, as `.ci/run` runs this
//!   binary), a kernel that writes past its buffer aborts with ASan's
//!   report (in a child process), so the mode cannot be silently off.

use morok_backends::cpu::{Compiler, ObjectCache};
use morok_backends::host::{asan_runtime_loaded, sanitize_requested};
use std::process::Command;

/// The variable that makes this binary's child run the faulty kernel.
const CHILD: &str = "MOROK_SANITIZE_TEST_CHILD";

/// A kernel writing 3 elements past the `n` it is given.
const OUT_OF_BOUNDS: &str = "#include <stdint.h>\n\
    void oob(float *p, int64_t n) { p[n + 3] = 1.0f; }\n";

/// Re-runs this binary on the test `name` with `env` set.
fn child(name: &str, env: &[(&str, &str)], keep_preload: bool) -> std::process::Output {
    let exe = std::env::current_exe().expect("current exe");
    let mut cmd = Command::new(exe);
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1"]);
    if !keep_preload {
        cmd.env_remove("LD_PRELOAD");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("spawn the test binary")
}

/// The program of an `n`×`n`×`n` matmul rendered by `renderer`.
fn matmul_program(
    renderer: &dyn morok_core::render::Renderer,
    n: i64,
) -> morok_core::program::Program {
    let ast = morok_core::sample_kernels::matmul(n, n, n);
    let lowered =
        morok_core::lower(&ast, &morok_core::LowerOptions::new(renderer.caps())).expect("lower");
    morok_core::render_program(&ast, lowered, renderer).expect("render")
}

#[test]
fn sanitize_without_the_asan_runtime_is_a_clear_error() {
    if std::env::var(CHILD).is_ok_and(|v| v == "no-runtime") {
        use morok_backends::cpu::{CCodegen, Codegen};
        let dir = tempfile::tempdir().expect("temp dir");
        let codegen = CCodegen::new(dir.path().to_path_buf(), None);
        let program = matmul_program(codegen.renderer(), 2);
        match codegen.build(&program) {
            Ok(_) => panic!("a sanitized build without the ASan runtime succeeded"),
            Err(e) => eprintln!("BUILD ERROR: {e}"),
        }
        return;
    }
    let out = child(
        "sanitize_without_the_asan_runtime_is_a_clear_error",
        &[(CHILD, "no-runtime"), ("MOROK_SANITIZE", "1")],
        false,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {stderr}");
    assert!(
        stderr.contains("BUILD ERROR") && stderr.contains("LD_PRELOAD"),
        "the error should say how to preload the runtime: {stderr}"
    );
}

#[test]
fn a_sanitized_kernel_aborts_on_an_out_of_bounds_write() {
    if !sanitize_requested() {
        eprintln!("skipped: MOROK_SANITIZE is not set (see the module docs)");
        return;
    }
    assert!(
        asan_runtime_loaded(),
        "MOROK_SANITIZE=1 without the ASan runtime preloaded"
    );
    if std::env::var(CHILD).is_ok_and(|v| v == "oob") {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = ObjectCache::new(
            dir.path().to_path_buf(),
            Compiler::find(None).expect("a C compiler"),
        );
        let lib = cache
            .load_or_build(OUT_OF_BOUNDS, "oob", None)
            .expect("build");
        let mut data = vec![0.0f32; 4];
        // SAFETY: deliberately unsafe: the kernel writes past `data`, which
        // ASan must catch before anything else happens.
        unsafe {
            let f = lib
                .get::<unsafe extern "C" fn(*mut f32, i64)>(b"oob")
                .expect("symbol");
            f(data.as_mut_ptr(), data.len() as i64);
        }
        eprintln!("NO REPORT: {:?}", data);
        return;
    }
    let out = child(
        "a_sanitized_kernel_aborts_on_an_out_of_bounds_write",
        &[(CHILD, "oob")],
        true,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the child survived: {stderr}");
    assert!(
        stderr.contains("AddressSanitizer: heap-buffer-overflow"),
        "expected ASan's report: {stderr}"
    );
}

/// The LLVM device's bounds assertions: in the sanitizer mode its kernels
/// check every global access against `sizes[slot]`; a kernel called
/// directly (past the launch checks) with a size one smaller than its
/// buffer aborts with a report naming the kernel, the buffer and the
/// elements, and the same kernel with the true sizes runs. Without the
/// mode the IR has no check. (Child processes; no ASan runtime needed.)
#[cfg(feature = "llvm")]
#[test]
fn llvm_bounds_assertions_abort_with_a_report() {
    use morok_backends::cpu::{Codegen, LlvmCodegen};
    use std::ffi::c_void;
    let build = || {
        let dir = tempfile::tempdir().expect("temp dir");
        let codegen = LlvmCodegen::new(dir.path().to_path_buf());
        let program = matmul_program(codegen.renderer(), 4);
        (dir, codegen, program)
    };
    match std::env::var(CHILD).as_deref() {
        Ok(mode @ ("llvm-short" | "llvm-exact")) => {
            let (_dir, codegen, program) = build();
            assert!(
                program.source.contains("morok sanitize"),
                "no bounds checks"
            );
            let kernel = codegen.build(&program).expect("build");
            let mut bufs: Vec<Vec<f32>> =
                program.buffers().iter().map(|_| vec![1.0f32; 16]).collect();
            let mut sizes = vec![16i64; bufs.len()];
            if mode == "llvm-short" {
                sizes[1] = 15;
            }
            let ptrs: Vec<*mut c_void> = bufs.iter_mut().map(|b| b.as_mut_ptr().cast()).collect();
            let end = program.launch.parallel.unwrap_or(0) as i64;
            // SAFETY: every buffer holds 16 elements, all a 4×4×4 matmul
            // touches; the "short" size only makes the check fire.
            unsafe { (kernel.func)(ptrs.as_ptr(), sizes.as_ptr(), [].as_ptr(), 0, end) };
            eprintln!("RAN: {}", bufs[0][0]);
        }
        _ => {
            let (_dir, _codegen, program) = build();
            if !sanitize_requested() {
                assert!(
                    !program.source.contains("morok sanitize"),
                    "checks outside the mode"
                );
            }
            let name = "llvm_bounds_assertions_abort_with_a_report";
            let short = child(
                name,
                &[(CHILD, "llvm-short"), ("MOROK_SANITIZE", "1")],
                false,
            );
            let stderr = String::from_utf8_lossy(&short.stderr);
            assert!(!short.status.success(), "the child survived: {stderr}");
            assert!(
                stderr.contains("morok sanitize: kernel `")
                    && stderr.contains("of buffer 1, which has 15"),
                "expected the bounds report: {stderr}"
            );
            let exact = child(
                name,
                &[(CHILD, "llvm-exact"), ("MOROK_SANITIZE", "1")],
                false,
            );
            let stderr = String::from_utf8_lossy(&exact.stderr);
            assert!(exact.status.success(), "{stderr}");
            assert!(stderr.contains("RAN: 4"), "{stderr}");
        }
    }
}
