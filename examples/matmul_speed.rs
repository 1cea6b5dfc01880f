//! A rough timing of a 512³ f32 matmul through the Tensor API (one warm-up
//! call, then the median of 5). Compare `MOROK_NOOPT=1` with the default
//! heuristics; on a shared machine the numbers are noisy. Run with
//! `cargo run --release --example matmul_speed`.

use morok::{DType, Tensor};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 512;
    let a = Tensor::rand_seeded(&[n, n], DType::F32, 1).realize()?;
    let b = Tensor::rand_seeded(&[n, n], DType::F32, 2).realize()?;
    let mut times = Vec::new();
    for _ in 0..6 {
        let t = Instant::now();
        let c = a.matmul(&b)?.realize()?;
        times.push(t.elapsed().as_secs_f64());
        std::hint::black_box(c);
    }
    times.remove(0);
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let gflops = 2.0 * (n * n * n) as f64 / median / 1e9;
    println!("{n}³ matmul: {:.2} ms, {gflops:.1} GFLOP/s", median * 1e3);
    Ok(())
}
