//! Warm time per call of the DSL against the same code through `Tensor` +
//! `realize()`: the `mlp` of `docs/DSL.md` on a batch of one, and a
//! 4-element `kernel!`. A warm DSL call finds its call site's plan (checks
//! the arguments, binds their buffers, allocates the output, launches);
//! the `Tensor` side builds its graph and hits the schedule and kernel
//! caches.
//!
//! Run: `cargo bench --bench dsl`.

use morok::dsl::kernel;
use morok::{DType, Tensor};
use std::time::{Duration, Instant};

/// Warm calls timed per case (`MOROK_DSL_BENCH_RUNS` overrides, e.g. for
/// a longer `perf record`).
fn runs() -> usize {
    std::env::var("MOROK_DSL_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2001)
}

#[path = "../examples/common/mlp.rs"]
mod shared_mlp;
use shared_mlp::mlp;

/// Whether the `Tensor` + `realize()` side is timed
/// (`MOROK_DSL_BENCH_ONLY=dsl` skips it, e.g. to profile the macro path
/// alone).
fn with_tensor_side() -> bool {
    std::env::var("MOROK_DSL_BENCH_ONLY").map_or(true, |v| v != "dsl")
}

/// The median time of `f` over [`runs`] warm calls (after one warm-up).
fn warm(mut f: impl FnMut()) -> Duration {
    f();
    let runs = runs();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

/// [`warm`], or zero when [`with_tensor_side`] says to skip.
fn warm_tensor(f: impl FnMut()) -> Duration {
    if with_tensor_side() {
        warm(f)
    } else {
        Duration::ZERO
    }
}

fn row(name: &str, dsl: Duration, api: Duration) {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{name:<16} dsl {:>8.2} µs   tensor+realize {:>8.2} µs",
        us(dsl),
        us(api)
    );
}

fn main() -> morok::Result<()> {
    let seeded = |shape: &[usize], seed| Tensor::rand_seeded(shape, DType::F32, seed).realize();
    let (x, w1, w2) = (
        seeded(&[1, 64], 1)?,
        seeded(&[64, 128], 2)?,
        seeded(&[128, 10], 3)?,
    );
    let dsl = warm(|| {
        mlp(&x, &w1, &w2).expect("mlp runs");
    });
    let api = warm_tensor(|| {
        let h = x.dot(&w1).and_then(|h| h.relu()).expect("layer 1");
        h.dot(&w2)
            .and_then(|y| y.softmax(-1))
            .and_then(|y| y.realize())
            .expect("layer 2");
    });
    row("mlp, B = 1", dsl, api);

    let f = kernel!(|a: f32[N], b: f32[N]| (a * b + 1.0).relu());
    let (a, b) = (seeded(&[4], 4)?, seeded(&[4], 5)?);
    let dsl = warm(|| {
        f(&a, &b).expect("kernel runs");
    });
    let api = warm_tensor(|| {
        let y = a.mul(&b).and_then(|y| y.add(1.0)).and_then(|y| y.relu());
        y.and_then(|y| y.realize()).expect("tensor runs");
    });
    row("kernel!, 4 elems", dsl, api);
    Ok(())
}
