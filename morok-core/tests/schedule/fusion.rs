//! Kernel counts: what fuses and what splits.

use crate::common::*;
use morok_core::BufferKind;
use morok_core::{DType, Op};

#[test]
fn elementwise_chain_is_one_kernel() {
    let mut io = Inputs::default();
    let a = io.f32(&[4, 4], data(16, 1));
    let b = io.f32(&[1, 4], data(4, 2));
    let y = add(&mul(&a, &bcast(&b, &[4, 4])), &a)
        .un(Op::Exp)
        .un(Op::Sqrt);
    let (s, _) = io.run(&[y]);
    assert_eq!(s.items.len(), 1);
    assert_eq!(s.items[0].buffers.len(), 3, "output, a, b");
}

#[test]
fn reduce_then_elementwise_is_one_kernel() {
    let mut io = Inputs::default();
    let d = data(8, 3);
    let e = data(8, 4);
    let x = io.f32(&[8], d.clone());
    let y = io.f32(&[8], e.clone());
    let r1 = mul(&sum(&x, &[0]), &full(2.0, DType::F32, &[1]));
    let r2 = add(&sum(&mul(&x, &y), &[0]), &full(1.0, DType::F32, &[1]));
    let (s1, out1) = io.run(&[r1]);
    let (s2, out2) = io.run(&[r2]);
    assert_eq!(s1.items.len(), 1);
    assert_eq!(s2.items.len(), 1);
    assert_close(&out1[0], &[d.iter().sum::<f64>() * 2.0]);
    assert_close(
        &out2[0],
        &[d.iter().zip(&e).map(|(a, b)| a * b).sum::<f64>() + 1.0],
    );
}

#[test]
fn softmax_of_short_rows_is_one_kernel() {
    let mut io = Inputs::default();
    let (r, c) = (4, 8);
    let d = data(r * c, 5);
    let x = io.f32(&[r, c], d.clone());
    let (s, out) = io.run(&[softmax(&x)]);
    assert_eq!(s.items.len(), 1, "max, sum of exp and normalize fuse");
    assert_eq!(count_ops(&s, Op::Reduce), 2, "one max and one sum");
    assert!(s.buffers.iter().all(|b| b.kind != BufferKind::Intermediate));
    assert_close(&out[0], &softmax_rows(&d, c));
}

#[test]
fn softmax_of_long_rows_is_three_kernels() {
    let mut io = Inputs::default();
    let c = morok_core::MAX_FUSED_ROW + 1;
    let x = io.f32(&[2, c], data(2 * c, 5));
    let (s, _) = io.run(&[softmax(&x)]);
    assert_eq!(s.items.len(), 3, "max, sum of exp, normalize");
    assert_eq!(
        s.groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
        vec![1, 1, 1]
    );
    // The two reductions are stored with one element per row (dead axis removed).
    let sizes: Vec<usize> = s
        .buffers
        .iter()
        .filter(|b| b.kind == BufferKind::Intermediate)
        .map(|b| b.size)
        .collect();
    assert_eq!(sizes, vec![2, 2]);
}

#[test]
fn a_reduction_broadcast_over_an_outer_axis_is_not_fused() {
    // `x - max(x, axis 0)`: the consumer's outer loop runs over rows, the
    // reduction varies with the inner (column) loop; fused it would run
    // once per element.
    let mut io = Inputs::default();
    let (r, c) = (5, 3);
    let d = data(r * c, 11);
    let x = io.f32(&[r, c], d.clone());
    let y = sub(&x, &bcast(&max(&x, &[0]), &[r, c]));
    let (s, out) = io.run(&[y]);
    assert_eq!(s.items.len(), 2);
    let want: Vec<f64> = (0..r * c)
        .map(|k| {
            let col = (0..r)
                .map(|i| d[i * c + k % c])
                .fold(f64::NEG_INFINITY, f64::max);
            d[k] - col
        })
        .collect();
    assert_close(&out[0], &want);
}

#[test]
fn a_row_reduction_read_by_two_kernels_is_stored_once() {
    let mut io = Inputs::default();
    let (r, c) = (3, 4);
    let x = io.f32(&[r, c], data(r * c, 12));
    let m = bcast(&max(&x, &[1]), &[r, c]);
    let (s, _) = io.run(&[sub(&x, &m), add(&x, &m)]);
    assert_eq!(s.items.len(), 3, "the max, then each output");
    assert_eq!(count_ops(&s, Op::Reduce), 1);
}

#[test]
fn matmul_is_one_kernel_and_chained_matmuls_split() {
    let mut io = Inputs::default();
    let a = io.f32(&[3, 4], data(12, 6));
    let b = io.f32(&[4, 5], data(20, 7));
    let c = io.f32(&[5, 2], data(10, 8));
    let (s, _) = io.run(&[matmul(&a, &b)]);
    assert_eq!(s.items.len(), 1);
    assert_eq!(count_ops(&s, Op::Reduce), 1);
    let (s, _) = io.run(&[matmul(&matmul(&a, &b), &c)]);
    assert_eq!(
        s.items.len(),
        2,
        "the inner product is broadcast, so it is stored"
    );
}

#[test]
fn layernorm_like_chain_is_one_kernel() {
    let mut io = Inputs::default();
    let (r, c) = (3, 6);
    let d = data(r * c, 9);
    let x = io.f32(&[r, c], d.clone());
    let inv_n = full(1.0 / c as f64, DType::F32, &[r, 1]);
    let mean = bcast(&mul(&sum(&x, &[1]), &inv_n), &[r, c]);
    let xc = sub(&x, &mean);
    let var = mul(&sum(&mul(&xc, &xc), &[1]), &inv_n);
    let eps = full(1e-5, DType::F32, &[r, 1]);
    let y = mul(&xc, &bcast(&add(&var, &eps).un(Op::Rsqrt), &[r, c]));
    let (s, out) = io.run(&[y]);
    assert_eq!(s.items.len(), 1, "mean, variance and normalize fuse");
    assert_eq!(count_ops(&s, Op::Reduce), 2);
    let mut want = Vec::new();
    for i in 0..r {
        let row = &d[i * c..(i + 1) * c];
        let m = row.iter().sum::<f64>() / c as f64;
        let v = row.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / c as f64;
        want.extend(row.iter().map(|x| (x - m) / (v + 1e-5).sqrt()));
    }
    let got: Vec<f64> = out[0].clone();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-4, "got {got:?}\nwant {want:?}");
    }
}

#[test]
fn contiguous_forces_a_buffer_and_shared_reductions_are_computed_once() {
    let mut io = Inputs::default();
    let x = io.f32(&[8], data(8, 10));
    let (s, _) = io.run(&[add(&contiguous(&x.un(Op::Exp)), &x)]);
    assert_eq!(s.items.len(), 2);
    let total = sum(&x, &[0]);
    let one = full(1.0, DType::F32, &[1]);
    let (s, out) = io.run(&[add(&total, &one), mul(&total, &one)]);
    assert_eq!(s.items.len(), 3);
    assert_eq!(
        count_ops(&s, Op::Reduce),
        1,
        "the sum is stored once, read twice"
    );
    assert_eq!(s.groups.len(), 2);
    assert_eq!(s.groups[1].len(), 2, "both consumers run in parallel");
    assert_close(&out[0], &[out[1][0] + 1.0]);
}

#[test]
fn contiguous_broadcast_stores_only_live_axes() {
    let mut io = Inputs::default();
    let col = io.f32(&[3, 1], vec![1.0, 2.0, 3.0]);
    let wide = contiguous(&expand(&col.un(Op::Exp), &[3, 100]));
    let y = add(&wide, &full(1.0, DType::F32, &[3, 100]));
    let (s, out) = io.run(&[y]);
    let inter: Vec<usize> = s
        .buffers
        .iter()
        .filter(|b| b.kind == BufferKind::Intermediate)
        .map(|b| b.size)
        .collect();
    assert_eq!(inter, vec![3]);
    assert_close(&out[0][..1], &[(1.0f64.exp() as f32 as f64) + 1.0]);
    assert_close(&out[0][299..], &[(3.0f64.exp() as f32 as f64) + 1.0]);
}

#[test]
fn equal_kernels_are_equal_asts() {
    let mut io = Inputs::default();
    let a = io.f32(&[4], data(4, 11));
    let b = io.f32(&[4], data(4, 12));
    let (s1, _) = io.run(&[a.un(Op::Exp)]);
    let (s2, _) = io.run(&[b.un(Op::Exp)]);
    assert!(std::sync::Arc::ptr_eq(&s1.items[0].ast, &s2.items[0].ast));
}
