//! Named dims are kernel variables and each call site caches its plans:
//! `mlp` called with B = 7, 64, 1000 and 1 compiles each of its kernels
//! once (B = 1, whose schedule drops the batch loop, is matched through
//! `schedule::instantiate`), a warm call
//! only launches (no schedule, no compile), a matmul `kernel!` over three
//! names compiles once for three shapes, and every result equals the
//! same computation through the `Tensor` API.
//!
//! One test in this binary: the counters are process-wide.

mod common;

use morok::dsl::kernel;
use morok::stats::{dsl_warm_calls, kernel_compiles, kernel_launches, pipeline_runs};
use morok::{DType, Tensor};

#[path = "../examples/common/mlp.rs"]
mod shared_mlp;
use shared_mlp::mlp;

fn rand(shape: &[usize], seed: u64) -> morok::Result<Tensor> {
    Tensor::rand_seeded(shape, DType::F32, seed).realize()
}

fn tensor_mlp(x: &Tensor, w1: &Tensor, w2: &Tensor) -> morok::Result<Vec<f32>> {
    x.dot(w1)?.relu()?.dot(w2)?.softmax(-1)?.to_vec::<f32>()
}

fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs().max(1.0),
            "element {i}: {g} vs {w}"
        );
    }
}

#[test]
fn named_dims_compile_once_and_warm_calls_only_launch() -> morok::Result<()> {
    let (w1, w2) = (rand(&[64, 128], 2)?, rand(&[128, 10], 3)?);
    let batches = [7usize, 64, 1000, 1];
    let xs: Vec<Tensor> = batches
        .iter()
        .map(|&b| rand(&[b, 64], 10 + b as u64))
        .collect::<morok::Result<_>>()?;

    // Cold calls: every batch size is scheduled once; only the first one
    // compiles (its kernels take B as a variable).
    let mut outputs = Vec::new();
    let mut compiles = Vec::new();
    for x in &xs {
        let before = kernel_compiles();
        outputs.push(mlp(x, &w1, &w2)?);
        compiles.push(kernel_compiles() - before);
    }
    eprintln!("kernel compiles per cold call (B = 7, 64, 1000, 1): {compiles:?}");
    assert!(compiles[0] > 0, "the first call compiles");
    assert_eq!(
        &compiles[1..],
        &[0, 0, 0],
        "B = 64, 1000 and 1 reuse the kernels of B = 7"
    );

    // Warm calls: no schedule, no compile, one launch per kernel.
    for x in &xs {
        let (runs, compiled, warm, launches) = (
            pipeline_runs(),
            kernel_compiles(),
            dsl_warm_calls(),
            kernel_launches(),
        );
        let y = mlp(x, &w1, &w2)?;
        assert_eq!(pipeline_runs(), runs, "a warm call schedules nothing");
        assert_eq!(kernel_compiles(), compiled, "a warm call compiles nothing");
        assert_eq!(dsl_warm_calls(), warm + 1, "the warm path ran");
        assert!(kernel_launches() > launches);
        assert_eq!(y.to_vec::<f32>()?, outputs.remove(0).to_vec::<f32>()?);
    }

    // Results equal the Tensor API's and the reference evaluator's, for
    // every batch size (B = 1000 splits its B loops across threads at
    // launch: their bound is the variable).
    for (x, b) in xs.iter().zip(batches) {
        let y = mlp(x, &w1, &w2)?;
        assert_eq!(y.shape(), [b, 10]);
        let got = y.to_vec::<f32>()?;
        assert_close(&got, &tensor_mlp(x, &w1, &w2)?);
        let lazy = x.dot(&w1)?.relu()?.dot(&w2)?.softmax(-1)?;
        let want: Vec<f32> = common::reference(&lazy)?
            .into_iter()
            .map(|v| v as f32)
            .collect();
        assert_close(&got, &want);
    }

    // A lazy argument goes through the Tensor API, with the same result.
    let lazy = xs[0].mul(1.0)?;
    assert_close(
        &mlp(&lazy, &w1, &w2)?.to_vec::<f32>()?,
        &tensor_mlp(&xs[0], &w1, &w2)?,
    );

    // A 4-element `kernel!`: its second call is warm; N = 4 and N = 9
    // share kernels.
    let f = kernel!(|a: f32[N], b: f32[N]| (a * b + 1.0).relu());
    for n in [4usize, 9] {
        let (a, b) = (rand(&[n], 4)?, rand(&[n], 5)?);
        let before = kernel_compiles();
        let first = f(&a, &b)?;
        if n == 9 {
            assert_eq!(
                kernel_compiles(),
                before,
                "N = 9 reuses the kernel of N = 4"
            );
        }
        let warm = dsl_warm_calls();
        let again = f(&a, &b)?;
        assert_eq!(dsl_warm_calls(), warm + 1);
        let want = a.mul(&b)?.add(1.0)?.relu()?.to_vec::<f32>()?;
        assert_close(&first.to_vec::<f32>()?, &want);
        assert_close(&again.to_vec::<f32>()?, &want);
    }

    // Three names: a matmul's kernels take N, K and M as variables.
    let g = kernel!(|a: f32[N, K], b: f32[K, M]| (a.dot(b) * 2.0).relu());
    let mut compiles = Vec::new();
    for (i, (n, k, m)) in [(3, 5, 4), (6, 7, 2), (9, 2, 11)].into_iter().enumerate() {
        let (a, b) = (rand(&[n, k], 6 + i as u64)?, rand(&[k, m], 9 + i as u64)?);
        let before = kernel_compiles();
        let y = g(&a, &b)?;
        compiles.push(kernel_compiles() - before);
        let want = a.dot(&b)?.mul(2.0)?.relu()?.to_vec::<f32>()?;
        assert_eq!(y.shape(), [n, m]);
        assert_close(&y.to_vec::<f32>()?, &want);
    }
    assert_eq!(
        &compiles[1..],
        &[0, 0],
        "new N, K, M compile nothing: {compiles:?}"
    );
    Ok(())
}
