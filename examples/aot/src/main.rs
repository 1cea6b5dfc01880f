//! Runs kernels that the build script compiled ahead of time: no C
//! compiler is needed on the machine (try `env PATH=/nonexistent`).
//! Prints the results' largest error against plain Rust and what the
//! runtime did.

mod kernels;

morok::aot::include_kernels!();

/// Deterministic inputs in [-1, 1).
fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// `a [n, k] · b [k, m]` in f64.
fn matmul(a: &[f64], b: &[f64], n: usize, k: usize, m: usize) -> Vec<f64> {
    let mut c = vec![0.0; n * m];
    for i in 0..n {
        for j in 0..m {
            c[i * m + j] = (0..k).map(|t| a[i * k + t] * b[t * m + j]).sum();
        }
    }
    c
}

fn max_error(got: &[f32], want: &[f64]) -> f64 {
    got.iter()
        .zip(want)
        .map(|(g, w)| (*g as f64 - w).abs())
        .fold(0.0, f64::max)
}

fn main() -> morok::Result<()> {
    morok::aot::install(MOROK_AOT_KERNELS);
    println!(
        "kernels linked into the program: {}",
        MOROK_AOT_KERNELS.len()
    );

    let (a, b) = (data(32, 1), data(32, 2));
    let y = kernels::scale_add(
        &morok::Tensor::from_vec(a.clone(), &[4, 8])?,
        &morok::Tensor::from_vec(b.clone(), &[4, 8])?,
    )?;
    let want: Vec<f64> = a
        .iter()
        .zip(&b)
        .map(|(a, b)| (2.0 * *a as f64 + *b as f64).max(0.0))
        .collect();
    println!(
        "scale_add max error: {:.1e}",
        max_error(&y.to_vec::<f32>()?, &want)
    );

    let (x, w1, w2) = (data(32 * 64, 3), data(64 * 128, 4), data(128 * 10, 5));
    let tx = morok::Tensor::from_vec(x.clone(), &[32, 64])?;
    let tw1 = morok::Tensor::from_vec(w1.clone(), &[64, 128])?;
    let tw2 = morok::Tensor::from_vec(w2.clone(), &[128, 10])?;
    let mut p = kernels::mlp(&tx, &tw1, &tw2)?;
    for _ in 0..3 {
        p = kernels::mlp(&tx, &tw1, &tw2)?; // warm calls: launches only
    }
    let f = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    let h: Vec<f64> = matmul(&f(&x), &f(&w1), 32, 64, 128)
        .into_iter()
        .map(|v| v.max(0.0))
        .collect();
    let logits = matmul(&h, &f(&w2), 32, 128, 10);
    let mut want = Vec::with_capacity(logits.len());
    for row in logits.chunks(10) {
        let m = row.iter().cloned().fold(f64::MIN, f64::max);
        let e: Vec<f64> = row.iter().map(|v| (v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        want.extend(e.iter().map(|v| v / s));
    }
    println!(
        "mlp max error: {:.1e}",
        max_error(&p.to_vec::<f32>()?, &want)
    );

    // The batch is fixed: another size is an error, not a compile.
    let small = morok::Tensor::from_vec(data(7 * 64, 6), &[7, 64])?;
    if let Err(e) = kernels::mlp(&small, &tw1, &tw2) {
        println!("batch 7: {e}");
    }

    println!("aot kernels used: {}", morok::stats::aot_kernel_hits());
    println!("jit kernel builds: {}", morok::stats::jit_kernel_builds());
    println!("warm calls: {}", morok::stats::dsl_warm_calls());
    Ok(())
}
