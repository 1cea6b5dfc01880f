//! First-call latency and warm time per call of Morok against ndarray,
//! side by side in one run, on two workloads:
//!
//! - W1: `relu(a * b + c)` over 1024×1024 f32;
//! - W4: a 512×512 by 512×512 f32 matmul.
//!
//! "First call" builds the graph and realizes it in a fresh process with an
//! empty kernel cache directory (schedule, lowering, C compilation, run).
//! "Warm" rebuilds the same graph over the same inputs each call, so it
//! measures the schedule-cache hit, the kernel-cache hit, buffer traffic
//! and the kernel itself. ndarray runs the same computation eagerly,
//! allocating its output as its users do.
//!
//! Run: `cargo bench --bench latency`.

use morok::Tensor;
use ndarray::{Array2, Zip};
use std::time::{Duration, Instant};

const WARM_RUNS: usize = 21;

fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed(), out)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

struct Row {
    workload: &'static str,
    first: Duration,
    warm: Duration,
    peer: Duration,
}

fn w1(n: usize) -> Row {
    let (va, vb, vc) = (data(n * n, 1), data(n * n, 2), data(n * n, 3));
    let a = Tensor::from_vec(va.clone(), &[n, n]).unwrap();
    let b = Tensor::from_vec(vb.clone(), &[n, n]).unwrap();
    let c = Tensor::from_vec(vc.clone(), &[n, n]).unwrap();
    let run = || (&a * &b + &c).relu().unwrap().realize().unwrap();
    let (first, out) = time(run);
    let warm = median((0..WARM_RUNS).map(|_| time(run).0).collect());

    let (na, nb, nc) = (
        Array2::from_shape_vec((n, n), va).unwrap(),
        Array2::from_shape_vec((n, n), vb).unwrap(),
        Array2::from_shape_vec((n, n), vc).unwrap(),
    );
    let peer_run = || {
        let mut o = Array2::<f32>::zeros((n, n));
        Zip::from(&mut o)
            .and(&na)
            .and(&nb)
            .and(&nc)
            .for_each(|o, &a, &b, &c| {
                *o = (a * b + c).max(0.0);
            });
        o
    };
    let expected = peer_run();
    let got = out.to_vec::<f32>().unwrap();
    assert!(got
        .iter()
        .zip(expected.iter())
        .all(|(g, e)| (g - e).abs() <= 1e-6 * e.abs().max(1.0)));
    let peer = median((0..WARM_RUNS).map(|_| time(peer_run).0).collect());
    Row {
        workload: "W1 relu(a*b+c) 1024x1024",
        first,
        warm,
        peer,
    }
}

fn w4(n: usize) -> Row {
    let (va, vb) = (data(n * n, 4), data(n * n, 5));
    let a = Tensor::from_vec(va.clone(), &[n, n]).unwrap();
    let b = Tensor::from_vec(vb.clone(), &[n, n]).unwrap();
    let run = || a.dot(&b).unwrap().realize().unwrap();
    let (first, out) = time(run);
    let warm = median((0..WARM_RUNS).map(|_| time(run).0).collect());

    let na = Array2::from_shape_vec((n, n), va).unwrap();
    let nb = Array2::from_shape_vec((n, n), vb).unwrap();
    let expected = na.dot(&nb);
    let got = out.to_vec::<f32>().unwrap();
    assert!(got
        .iter()
        .zip(expected.iter())
        .all(|(g, e)| (g - e).abs() <= 1e-3 * e.abs().max(1.0)));
    let peer = median((0..WARM_RUNS).map(|_| time(|| na.dot(&nb)).0).collect());
    Row {
        workload: "W4 matmul 512^3",
        first,
        warm,
        peer,
    }
}

fn main() {
    let cache = std::env::temp_dir().join(format!("morok-bench-cache-{}", std::process::id()));
    std::env::set_var("MOROK_CACHE_DIR", &cache);
    let rows = [w1(1024), w4(512)];
    println!(
        "{:<28} {:>14} {:>12} {:>14} {:>16}",
        "workload", "first call ms", "warm ms", "ndarray ms", "warm / ndarray"
    );
    for r in &rows {
        println!(
            "{:<28} {:>14.2} {:>12.3} {:>14.3} {:>16.2}",
            r.workload,
            ms(r.first),
            ms(r.warm),
            ms(r.peer),
            r.warm.as_secs_f64() / r.peer.as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(cache);
}
