//! Concurrency: `realize` from 8 threads on shared and on separate graphs
//! gives the results of the same calls made alone, and 4 processes
//! compiling the same kernels into one fresh cache directory at once each
//! compute correctly and leave only complete entries (every object's
//! checksum matches, no temporary files).

mod common;

use morok::{DType, Tensor};
use std::process::Stdio;

/// The values' bit patterns, comma-separated (exact comparison).
fn bits(v: &[f32]) -> String {
    v.iter()
        .map(|x| x.to_bits().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The variable that makes this binary's child run [`workload`].
const CHILD: &str = "MOROK_CONCURRENCY_CHILD";

/// A few kernels of different kinds (elementwise, reduce, matmul,
/// softmax) over inputs derived from `seed`; their values, flattened.
fn workload(seed: u64) -> morok::Result<Vec<f32>> {
    let x = Tensor::rand_seeded(&[33, 17], DType::F32, seed).realize()?;
    let w = Tensor::rand_seeded(&[17, 9], DType::F32, seed + 1).realize()?;
    let h = x.dot(&w)?.relu()?;
    let s = h.softmax(-1)?;
    let total = (&s * 2.0f32).sum(Some(&[0]), false)?;
    let mut out = s.realize()?.to_vec::<f32>()?;
    out.extend(total.realize()?.to_vec::<f32>()?);
    Ok(out)
}

#[test]
fn eight_threads_realize_like_one() -> morok::Result<()> {
    let seeds: Vec<u64> = (0..8).collect();
    let alone: Vec<Vec<f32>> = seeds
        .iter()
        .map(|&s| workload(100 + s % 2))
        .collect::<morok::Result<_>>()?;
    // Separate graphs of two shapes of work, and one shared lazy graph
    // realized by every thread.
    let shared = Tensor::rand_seeded(&[64, 64], DType::F32, 7)
        .dot(&Tensor::rand_seeded(&[64, 64], DType::F32, 8))?
        .sum(Some(&[1]), false)?;
    let shared_alone = shared.clone().realize()?.to_vec::<f32>()?;
    std::thread::scope(|scope| {
        let handles: Vec<_> = seeds
            .iter()
            .map(|&s| {
                let shared = shared.clone();
                scope.spawn(move || -> morok::Result<(Vec<f32>, Vec<f32>)> {
                    let mut last = (Vec::new(), Vec::new());
                    for _ in 0..5 {
                        last = (
                            workload(100 + s % 2)?,
                            shared.clone().realize()?.to_vec::<f32>()?,
                        );
                    }
                    Ok(last)
                })
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            let (mine, shared_got) = h.join().expect("a realizing thread panicked")?;
            assert_eq!(mine, alone[i], "thread {i}: its own graph");
            assert_eq!(shared_got, shared_alone, "thread {i}: the shared graph");
        }
        Ok(())
    })
}

#[test]
fn four_processes_share_one_fresh_cache_directory() {
    if let Ok(seed) = std::env::var(CHILD) {
        let seed: u64 = seed.parse().expect("seed");
        let v = workload(seed).expect("workload in a child");
        common::report(&format!("RESULT {}", bits(&v)));
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache");
    // All four start before any is waited for: they compile at once.
    let children: Vec<_> = (0..4)
        .map(|_| {
            let mut cmd = common::child_test("four_processes_share_one_fresh_cache_directory");
            cmd.env(CHILD, "5")
                .env("MOROK_CACHE_DIR", &cache)
                .env("MOROK_DEVICE", "CPU")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd.spawn().expect("spawn a child")
        })
        .collect();
    let want = format!("RESULT {}", bits(&workload(5).expect("workload")));
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().expect("wait for a child");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child {i}: {stderr}");
        let got = stderr
            .lines()
            .find(|l| l.starts_with("RESULT "))
            .unwrap_or_else(|| panic!("child {i} reported no result: {stderr}"));
        assert_eq!(got, want, "child {i}");
    }
    // Complete entries only: every object has its checksum, which
    // matches, and no build left a temporary file.
    let mut objects = 0;
    for entry in std::fs::read_dir(&cache).expect("the children filled the cache") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            !name.starts_with(".build-"),
            "a temporary file was left: {name}"
        );
        if name.ends_with(".so") {
            objects += 1;
            let bytes = std::fs::read(&path).expect("read object");
            let sum = std::fs::read_to_string(path.with_extension("so.blake3")).expect("checksum");
            assert_eq!(
                blake3_hex(&bytes),
                sum.trim(),
                "{name}: object and checksum disagree"
            );
        }
    }
    assert!(objects > 0, "the children stored objects");
}

/// The checksum the C device stores beside an object.
fn blake3_hex(bytes: &[u8]) -> String {
    morok::backends::cpu::c::compiler::checksum_hex(bytes)
}
