//! A kernel cache directory that cannot be used degrades to compiling
//! without it: a path that cannot be a directory (under a regular file:
//! unwritable even for root) and a directory whose every entry is
//! corrupt both still run kernels correctly, on every CPU codegen.

use super::common::{c_device_in, exec, Arg};
use morok_backends::CpuDevice;
use morok_core::dtype::DType;
use morok_core::sample_kernels::matmul;

/// Runs a 3×4 · 4×2 matmul of ones on `dev` and checks every element is 4.
fn matmul_runs(dev: &CpuDevice) {
    let mut args = [
        Arg::zeros(DType::F32, 6),
        Arg::new(DType::F32, &[1.0f32; 12]),
        Arg::new(DType::F32, &[1.0f32; 8]),
    ];
    exec(dev, &matmul(3, 4, 2), &mut args);
    assert_eq!(args[0].get::<f32>(), vec![4.0f32; 6]);
}

/// Every CPU device this build has, with its object cache in `dir`.
fn devices_in(dir: &std::path::Path) -> Vec<CpuDevice> {
    #[allow(unused_mut)]
    let mut devs = vec![c_device_in(dir, 1)];
    #[cfg(feature = "llvm")]
    devs.push(super::common::llvm_device_in(dir, 1));
    devs
}

#[test]
fn a_cache_path_that_cannot_be_a_directory_still_runs_kernels() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let file = tmp.path().join("a-file");
    std::fs::write(&file, b"not a directory").expect("write");
    for dev in devices_in(&file.join("cache")) {
        matmul_runs(&dev);
    }
}

#[test]
fn a_cache_of_corrupt_entries_still_runs_kernels() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("cache");
    for dev in devices_in(&dir) {
        matmul_runs(&dev);
    }
    // Every file in the cache (objects and checksums) becomes garbage.
    let mut stack = vec![dir.clone()];
    let mut corrupted = 0;
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read cache dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                std::fs::write(&path, b"\x7fELF garbage").expect("corrupt");
                corrupted += 1;
            }
        }
    }
    assert!(corrupted > 0, "the first run stored objects");
    for dev in devices_in(&dir) {
        matmul_runs(&dev);
    }
}
