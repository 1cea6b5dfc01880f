//! Small kernel ASTs and a seeded interpreter run, shared by the tests of
//! the optimizer, lowering and the backends' beam search (feature
//! `testing`).

use crate::dtype::DType;
use crate::interp::run_kernel;
use crate::uop::{AxisType, ReduceOp, UOp};
use std::sync::Arc;

/// A range of `n` iterations with axis id `id` and type `t`.
pub fn range(n: i64, id: usize, t: AxisType) -> Arc<UOp> {
    UOp::range(&UOp::index(n), id, t)
}

/// An `f32` load of buffer `slot` at `idx`.
pub fn load(slot: i64, idx: &Arc<UOp>) -> Arc<UOp> {
    UOp::define_global(slot, DType::F32)
        .index_into(idx, None)
        .load()
}

/// A store of `v` into buffer `slot` at `idx`.
pub fn store(slot: i64, idx: &Arc<UOp>, v: &Arc<UOp>) -> Arc<UOp> {
    UOp::define_global(slot, v.dtype())
        .index_into(idx, None)
        .store(v)
}

/// C[i, j] = sum_k A[i*K + k] * B[k*N + j].
pub fn matmul(m: i64, k: i64, n: i64) -> Arc<UOp> {
    let i = range(m, 0, AxisType::Loop);
    let j = range(n, 1, AxisType::Loop);
    let r = range(k, 2, AxisType::Reduce);
    let a = load(1, &i.mul(&UOp::index(k)).add(&r));
    let b = load(2, &r.mul(&UOp::index(n)).add(&j));
    let v = a.mul(&b).reduce(ReduceOp::Add, std::slice::from_ref(&r));
    let st = store(0, &i.mul(&UOp::index(n)).add(&j), &v);
    UOp::sink(vec![st.end(&[i, j])])
}

/// Runs `ast` on the interpreter with input buffers of `sizes` (slot 0 is
/// the output, `sizes[0]` elements) filled from a fixed seed.
pub fn run_seeded(ast: &Arc<UOp>, sizes: &[usize]) -> Vec<f64> {
    let mut seed = 7u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 40) as f64 / (1u64 << 24) as f64
    };
    let mut bufs: Vec<Vec<f64>> = sizes
        .iter()
        .enumerate()
        .map(|(s, &n)| {
            (0..n)
                .map(|_| {
                    if s == 0 {
                        -1.0
                    } else {
                        (next() * 8.0 - 4.0) as f32 as f64
                    }
                })
                .collect()
        })
        .collect();
    run_kernel(ast, &mut bufs).expect("interpreter run");
    bufs.swap_remove(0)
}
