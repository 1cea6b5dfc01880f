//! Beam search's per-candidate compile time limit on the C codegen: a
//! compiler still running at the limit is killed, its candidate dropped,
//! and the search goes on with the others.

use super::reduce::matmul_ast;
use morok_backends::beam::{beam_search, DeviceMeasure, Measure};
use morok_backends::{CpuConfig, CpuDevice};
use morok_core::device::Device;
use morok_core::uop::{AxisType, UOp};
use morok_core::BeamConfig;
use morok_core::OptKernel;
use morok_core::{lower_optimized, CompileOptions};
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A C device whose "compiler" is a script that hangs (sleeps for a
/// minute) on every source but the one its renderer gives `ast` as
/// scheduled (unoptimized), and runs `cc` on that one.
fn device_hanging_on_optimized(dir: &std::path::Path, ast: &Arc<UOp>) -> CpuDevice {
    let script = dir.join("slow-cc");
    let dev = CpuDevice::with_config(CpuConfig {
        cache_dir: dir.join("cache"),
        threads: 1,
        compiler: Some(script.display().to_string()),
    });
    let plain = lower_optimized(ast, ast, dev.renderer(), &CompileOptions::default())
        .expect("the unoptimized kernel renders");
    let plain_path = dir.join("plain.c");
    std::fs::write(&plain_path, plain.source).unwrap();
    let body = format!(
        "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.c) if ! cmp -s \"$a\" '{}'; then sleep 60; fi;; esac; done\nexec cc \"$@\"\n",
        plain_path.display()
    );
    std::fs::write(&script, body).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    dev
}

#[test]
fn a_compile_past_the_limit_is_stopped_and_the_search_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    // Every candidate the optimizer changed hangs, whatever the target
    // renders (its source differs from the kernel as scheduled); the
    // kernel as scheduled compiles.
    let ast = matmul_ast(16, 16, 16);
    let dev = device_hanging_on_optimized(dir.path(), &ast);
    // Long enough for `cc` on a small kernel on a busy machine.
    let limit = Duration::from_secs(4);
    let measure =
        DeviceMeasure::new(&dev, &ast, CompileOptions::default()).with_compile_limit(limit);

    // One hanging compile: stopped at the limit, not after the minute.
    let limits = super::common::scalar_host().with_threads(1);
    let mut tiled = OptKernel::new(&ast, limits);
    morok_core::hand_coded_optimizations(&mut tiled);
    assert!(!tiled.ranges_of(&[AxisType::Upcast]).is_empty());
    let start = Instant::now();
    let Err(e) = measure.build(&tiled.ast) else {
        panic!("the hanging compile finished");
    };
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert!(e.contains("compile time limit"), "{e}");

    // The search drops every optimized candidate and returns the only
    // kernel that compiled.
    let config = BeamConfig {
        max_candidates: 4,
        compile_limit: limit,
        ..BeamConfig::new(2)
    };
    let start = Instant::now();
    let found = beam_search(
        &ast,
        &limits,
        &config,
        &DeviceMeasure::new(&dev, &ast, CompileOptions::default()).with_compile_limit(limit),
    )
    .expect("the unoptimized kernel compiles");
    assert!(
        start.elapsed() < Duration::from_secs(50),
        "{:?}",
        start.elapsed()
    );
    assert!(found.opts.is_empty(), "{:?}", found.opts);
    assert_eq!(found.timed, 1);
}
