//! Reductions: one and two axes, every reduce op, several reduces in one
//! kernel, a matmul, and a reduce over a range the value ignores.

use super::common::*;
use morok_core::dtype::DType;
use morok_core::uop::{AxisType, Op, ReduceOp, UOp};

fn data(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7 % 11) as f32 - 5.0) * 0.5).collect()
}

/// out[i] = reduce_k in[i*K + k] over a [R, K] input.
fn row_reduce(op: ReduceOp, rows: i64, k: i64) -> std::sync::Arc<UOp> {
    let i = range(rows, 0, AxisType::Loop);
    let r = range(k, 1, AxisType::Reduce);
    let idx = i.mul(&UOp::index(k)).add(&r);
    let v = load(1, DType::F32, &idx).reduce(op, &[r]);
    store_kernel(0, &i, &v, std::slice::from_ref(&i))
}

#[test]
fn every_reduce_op_over_one_axis() {
    let (dev, _dir) = device(1);
    let (rows, k) = (3usize, 5usize);
    let x = data(rows * k);
    for op in [ReduceOp::Add, ReduceOp::Mul, ReduceOp::Max, ReduceOp::Min] {
        let ast = row_reduce(op, rows as i64, k as i64);
        let mut args = [Arg::zeros(DType::F32, rows), Arg::new(DType::F32, &x)];
        let kern = exec(&dev, &ast, &mut args);
        let want: Vec<f32> = x
            .chunks(k)
            .map(|c| match op {
                ReduceOp::Add => c.iter().fold(0.0, |a, b| a + b),
                ReduceOp::Mul => c.iter().fold(1.0, |a, b| a * b),
                ReduceOp::Max => c.iter().fold(f32::NEG_INFINITY, |a, b| a.max(*b)),
                ReduceOp::Min => c.iter().fold(f32::INFINITY, |a, b| a.min(*b)),
            })
            .collect();
        assert_eq!(args[0].get::<f32>(), want, "{op:?}\n{}", kern.source());
    }
}

#[test]
fn integer_max_starts_from_the_type_minimum() {
    let (dev, _dir) = device(1);
    let i = range(2, 0, AxisType::Loop);
    let r = range(3, 1, AxisType::Reduce);
    let v = load(1, DType::I32, &i.mul(&UOp::index(3)).add(&r)).reduce(ReduceOp::Max, &[r]);
    let ast = store_kernel(0, &i, &v, std::slice::from_ref(&i));
    let mut args = [
        Arg::zeros(DType::I32, 2),
        Arg::new(DType::I32, &[-7i32, -3, -9, i32::MIN, i32::MIN, i32::MIN]),
    ];
    exec(&dev, &ast, &mut args);
    assert_eq!(args[0].get::<i32>(), vec![-3, i32::MIN]);
}

#[test]
fn sum_over_two_axes() {
    // out[i] = sum_{j,k} x[i, j, k] over a [2, 3, 4] input.
    let (dev, _dir) = device(1);
    let i = range(2, 0, AxisType::Loop);
    let j = range(3, 1, AxisType::Reduce);
    let k = range(4, 2, AxisType::Reduce);
    let idx = i.mul(&UOp::index(12)).add(&j.mul(&UOp::index(4))).add(&k);
    let v = load(1, DType::F32, &idx).reduce(ReduceOp::Add, &[j, k]);
    let ast = store_kernel(0, &i, &v, std::slice::from_ref(&i));
    let x = data(24);
    let mut args = [Arg::zeros(DType::F32, 2), Arg::new(DType::F32, &x)];
    exec(&dev, &ast, &mut args);
    let want: Vec<f32> = x
        .chunks(12)
        .map(|c| c.iter().fold(0.0, |a, b| a + b))
        .collect();
    assert_eq!(args[0].get::<f32>(), want);
}

#[test]
fn full_reduce_to_a_scalar_and_counting_a_constant() {
    let (dev, _dir) = device(1);
    // out[0] = sum_k x[k]; a bare STORE with no output range.
    let k = range(10, 0, AxisType::Reduce);
    let v = load(1, DType::F32, &k).reduce(ReduceOp::Add, &[k]);
    let st = UOp::define_global(0, DType::F32)
        .index_into(&UOp::index(0), None)
        .store(&v);
    let x = data(10);
    let mut args = [Arg::zeros(DType::F32, 1), Arg::new(DType::F32, &x)];
    exec(&dev, &UOp::sink(vec![st]), &mut args);
    assert_eq!(args[0].get::<f32>(), vec![x.iter().fold(0.0, |a, b| a + b)]);

    // out[i] = sum_{j<4, k<5} 1 = 20: the value depends on no range.
    let i = range(3, 0, AxisType::Loop);
    let j = range(4, 1, AxisType::Reduce);
    let k = range(5, 2, AxisType::Reduce);
    let v = UOp::one(DType::I32).reduce(ReduceOp::Add, &[j, k]);
    let ast = store_kernel(0, &i, &v, std::slice::from_ref(&i));
    let mut args = [Arg::zeros(DType::I32, 3)];
    exec(&dev, &ast, &mut args);
    assert_eq!(args[0].get::<i32>(), vec![20, 20, 20]);
}

#[test]
fn softmax_fused_max_then_exp_sum() {
    // out[i, j] = exp(x[i,j] - max_k x[i,k]) / sum_k exp(x[i,k] - max_m x[i,m])
    let (dev, _dir) = device(1);
    let (rows, cols) = (3i64, 5i64);
    let i = range(rows, 0, AxisType::Loop);
    let j = range(cols, 1, AxisType::Loop);
    let k = range(cols, 2, AxisType::Reduce);
    let m = range(cols, 3, AxisType::Reduce);
    let row = |r: &std::sync::Arc<UOp>| load(1, DType::F32, &i.mul(&UOp::index(cols)).add(r));
    let mx = row(&m).reduce(ReduceOp::Max, &[m]);
    let e = |r: &std::sync::Arc<UOp>| row(r).bin(Op::Sub, &mx).un(Op::Exp);
    let sum = e(&k).reduce(ReduceOp::Add, &[k]);
    let v = e(&j).bin(Op::Fdiv, &sum);
    let out_idx = i.mul(&UOp::index(cols)).add(&j);
    let ast = store_kernel(0, &out_idx, &v, &[i.clone(), j.clone()]);
    let x = data((rows * cols) as usize);
    let mut args = [Arg::zeros(DType::F32, x.len()), Arg::new(DType::F32, &x)];
    let kern = exec(&dev, &ast, &mut args);
    let mut want = Vec::new();
    for r in x.chunks(cols as usize) {
        let mx = r.iter().fold(f32::NEG_INFINITY, |a, b| a.max(*b));
        let s = r.iter().fold(0.0f32, |a, b| a + (b - mx).exp());
        want.extend(r.iter().map(|v| (v - mx).exp() / s));
    }
    let got: Vec<f32> = args[0].get();
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g - w).abs() <= 2.0 * f32::EPSILON * w.abs(),
            "{got:?} vs {want:?}\n{}",
            kern.source()
        );
    }
}

#[test]
fn reduce_nested_in_an_expression_and_used_twice() {
    // out[i] = x[i] * 2 - mean-free sum: x[i] + sum_k x[k] * x[i]
    let (dev, _dir) = device(1);
    let n = 6i64;
    let i = range(n, 0, AxisType::Loop);
    let k = range(n, 1, AxisType::Reduce);
    let s = load(1, DType::F32, &k).reduce(ReduceOp::Add, &[k]);
    let xi = load(1, DType::F32, &i);
    let v = xi.add(&s.mul(&xi));
    let ast = store_kernel(0, &i, &v, std::slice::from_ref(&i));
    let x = data(n as usize);
    let mut args = [Arg::zeros(DType::F32, x.len()), Arg::new(DType::F32, &x)];
    exec(&dev, &ast, &mut args);
    let s: f32 = x.iter().fold(0.0, |a, b| a + b);
    let want: Vec<f32> = x.iter().map(|v| v + s * v).collect();
    assert_eq!(args[0].get::<f32>(), want);
}

/// C[i, j] = sum_k A[i*K + k] * B[k*N + j], in `f32`.
pub fn matmul_ast(m: i64, k: i64, n: i64) -> std::sync::Arc<UOp> {
    matmul_ast_of(DType::F32, m, k, n)
}

/// [`matmul_ast`] of elements of `dtype`.
pub fn matmul_ast_of(dtype: DType, m: i64, k: i64, n: i64) -> std::sync::Arc<UOp> {
    let i = range(m, 0, AxisType::Loop);
    let j = range(n, 1, AxisType::Loop);
    let r = range(k, 2, AxisType::Reduce);
    let a = load(1, dtype, &i.mul(&UOp::index(k)).add(&r));
    let b = load(2, dtype, &r.mul(&UOp::index(n)).add(&j));
    let v = a.mul(&b).reduce(ReduceOp::Add, &[r]);
    store_kernel(
        0,
        &i.mul(&UOp::index(n)).add(&j),
        &v,
        &[i.clone(), j.clone()],
    )
}

/// The matmul computed in Rust in the same order (k ascending).
pub fn matmul_ref(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).fold(0.0, |acc, r| acc + a[i * k + r] * b[r * n + j]);
        }
    }
    c
}

/// The matmul as the optimizer's kernel computes it where the target has
/// fused multiply-adds: k ascending, each step one `MULACC`.
fn matmul_ref_fused(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).fold(0.0, |acc, r| a[i * k + r].mul_add(b[r * n + j], acc));
        }
    }
    c
}

/// The matmul as the optimizer's kernels compute it on this host: k
/// ascending, each step one fused multiply-add ([`matmul_ref_fused`])
/// where the host has FMA, else a multiply rounded before the add
/// ([`matmul_ref`]): lowering forms `MULACC` only for a target that
/// renders it natively (`morok_backends::host::host_has_fma`).
pub fn optimized_matmul_ref(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    if morok_backends::host::host_has_fma() {
        matmul_ref_fused(a, b, m, k, n)
    } else {
        matmul_ref(a, b, m, k, n)
    }
}

#[test]
fn matmul() {
    let (dev, _dir) = device(1);
    let (m, k, n) = (4usize, 5usize, 3usize);
    let a = data(m * k);
    let b: Vec<f32> = data(k * n).iter().map(|v| v * 0.25 + 1.0).collect();
    let mut args = [
        Arg::zeros(DType::F32, m * n),
        Arg::new(DType::F32, &a),
        Arg::new(DType::F32, &b),
    ];
    exec(&dev, &matmul_ast(m as i64, k as i64, n as i64), &mut args);
    assert_eq!(args[0].get::<f32>(), matmul_ref(&a, &b, m, k, n));
}

#[test]
fn log_sum_exp_with_one_range_shared_by_both_reduces() {
    // out[i] = max_k x[i,k] + log(sum_k exp(x[i,k] - max_k x[i,k])), one k.
    let (dev, _dir) = device(1);
    let (rows, cols) = (2i64, 6i64);
    let i = range(rows, 0, AxisType::Loop);
    let k = range(cols, 1, AxisType::Reduce);
    let x = load(1, DType::F32, &i.mul(&UOp::index(cols)).add(&k));
    let mx = x.reduce(ReduceOp::Max, std::slice::from_ref(&k));
    let s = x
        .bin(Op::Sub, &mx)
        .un(Op::Exp)
        .reduce(ReduceOp::Add, std::slice::from_ref(&k));
    let v = mx.add(&s.un(Op::Log));
    let ast = store_kernel(0, &i, &v, std::slice::from_ref(&i));
    let xs = data((rows * cols) as usize);
    let mut args = [
        Arg::zeros(DType::F32, rows as usize),
        Arg::new(DType::F32, &xs),
    ];
    exec(&dev, &ast, &mut args);
    let want: Vec<f32> = xs
        .chunks(cols as usize)
        .map(|r| {
            let m = r.iter().fold(f32::NEG_INFINITY, |a, b| a.max(*b));
            m + r.iter().fold(0.0f32, |a, b| a + (b - m).exp()).ln()
        })
        .collect();
    let got: Vec<f32> = args[0].get();
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g - w).abs() <= 4.0 * f32::EPSILON * w.abs().max(1.0),
            "{got:?} vs {want:?}"
        );
    }
}
