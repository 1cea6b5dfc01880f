//! Values: every op kind scheduled and interpreted, checked against values
//! computed directly here.

use crate::common::*;
use morok_core::{DType, Op};

/// Row-major offset in a tensor of shape `s`.
fn at(s: &[usize], idx: &[usize]) -> usize {
    idx.iter().zip(s).fold(0, |acc, (&i, &d)| acc * d + i)
}

fn f32r(v: f64) -> f64 {
    v as f32 as f64
}

#[test]
fn elementwise_chain_with_broadcast() {
    let mut io = Inputs::default();
    let (da, db) = (data(6, 1), data(3, 2));
    let a = io.f32(&[2, 3], da.clone());
    let b = io.f32(&[1, 3], db.clone());
    let two = full(2.0, DType::F32, &[2, 3]);
    let y = sub(&mul(&add(&a, &bcast(&b, &[2, 3])), &two), &a.un(Op::Exp));
    let (_, out) = io.run(&[y]);
    let want: Vec<f64> = (0..6)
        .map(|i| (da[i] + db[i % 3]) * 2.0 - da[i].exp())
        .collect();
    assert_close(&out[0], &want);
}

#[test]
fn reshape_permute_expand() {
    let mut io = Inputs::default();
    let d = data(24, 3);
    let x = io.f32(&[2, 3, 4], d.clone());
    let zero = |s: &[usize]| full(0.0, DType::F32, s);
    // permute [2, 0, 1] → shape [4, 2, 3]
    let p = add(&permute(&x, &[2, 0, 1]), &zero(&[4, 2, 3]));
    // reshape [2, 3, 4] → [6, 4] → [4, 6]
    let r = add(&reshape(&reshape(&x, &[6, 4]), &[4, 6]), &zero(&[4, 6]));
    // expand a [3, 1] column to [3, 5]
    let col = io.f32(&[3, 1], vec![1.0, 2.0, 3.0]);
    let e = add(&expand(&col, &[3, 5]), &zero(&[3, 5]));
    let (_, out) = io.run(&[p, r, e]);
    let mut want_p = Vec::new();
    for k in 0..4 {
        for i in 0..2 {
            for j in 0..3 {
                want_p.push(d[at(&[2, 3, 4], &[i, j, k])]);
            }
        }
    }
    assert_close(&out[0], &want_p);
    assert_close(&out[1], &d);
    let want_e: Vec<f64> = (0..15).map(|i| (i / 5 + 1) as f64).collect();
    assert_close(&out[2], &want_e);
}

#[test]
fn pad_reads_zero_outside_even_under_exp() {
    let mut io = Inputs::default();
    let d = data(6, 4);
    let x = io.f32(&[2, 3], d.clone());
    // pad exp(x): padded elements are 0, not exp(0).
    let y = pad(&x.un(Op::Exp), &[(1, 0), (0, 2)]);
    let (_, out) = io.run(&[y]);
    let mut want = vec![0.0; 3 * 5];
    for i in 0..2 {
        for j in 0..3 {
            want[at(&[3, 5], &[i + 1, j])] = f32r(d[i * 3 + j].exp());
        }
    }
    assert_close(&out[0], &want);
}

#[test]
fn shrink_and_flip() {
    let mut io = Inputs::default();
    let d = data(20, 5);
    let x = io.f32(&[4, 5], d.clone());
    let s = shrink(&x, &[(1, 3), (2, 5)]);
    let f1 = flip(&x, &[1]);
    let f01 = flip(&x, &[0, 1]);
    let (_, out) = io.run(&[s, f1, f01]);
    let want_s: Vec<f64> = (1..3)
        .flat_map(|i| (2..5).map(move |j| (i, j)))
        .map(|(i, j)| d[i * 5 + j])
        .collect();
    let want_f1: Vec<f64> = (0..20).map(|k| d[(k / 5) * 5 + 4 - k % 5]).collect();
    let want_f01: Vec<f64> = (0..20).map(|k| d[19 - k]).collect();
    assert_close(&out[0], &want_s);
    assert_close(&out[1], &want_f1);
    assert_close(&out[2], &want_f01);
}

#[test]
fn transpose_then_reshape_and_movement_compositions() {
    let mut io = Inputs::default();
    let d = data(6, 6);
    let x = io.f32(&[2, 3], d.clone());
    // x.T → [3, 2] → reshape [6] → reshape [2, 3]
    let t = reshape(&reshape(&permute(&x, &[1, 0]), &[6]), &[2, 3]);
    let t = add(&t, &full(1.0, DType::F32, &[2, 3]));
    // pad, flip, shrink: a window that straddles the padding
    let c = shrink(&flip(&pad(&x, &[(0, 0), (2, 1)]), &[1]), &[(0, 2), (1, 5)]);
    let (_, out) = io.run(&[t, c]);
    let xt: Vec<f64> = (0..3)
        .flat_map(|j| (0..2).map(move |i| (i, j)))
        .map(|(i, j)| d[i * 3 + j])
        .collect();
    let want_t: Vec<f64> = xt.iter().map(|v| f32r(v + 1.0)).collect();
    assert_close(&out[0], &want_t);
    // padded row (len 6): [0, 0, x0, x1, x2, 0]; flipped: [0, x2, x1, x0, 0, 0]; cols 1..5.
    let mut want_c = Vec::new();
    for i in 0..2 {
        let row = [0.0, 0.0, d[i * 3], d[i * 3 + 1], d[i * 3 + 2], 0.0];
        for j in 1..5 {
            want_c.push(row[5 - j]);
        }
    }
    assert_close(&out[1], &want_c);
}

#[test]
fn sums_over_each_axis_all_axes_and_max() {
    let mut io = Inputs::default();
    let s = [2, 3, 4];
    let d: Vec<f64> = (0..24).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
    let x = io.f32(&s, d.clone());
    let roots = vec![
        sum(&x, &[0]),
        sum(&x, &[1]),
        sum(&x, &[2]),
        sum(&x, &[0, 1, 2]),
        sum(&x, &[0, 2]),
        max(&x, &[1]),
    ];
    let (_, out) = io.run(&roots);
    let red = |axes: &[usize], init: f64, f: fn(f64, f64) -> f64| {
        let os: Vec<usize> = (0..3)
            .map(|a| if axes.contains(&a) { 1 } else { s[a] })
            .collect();
        let mut o = vec![init; os.iter().product()];
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    let oi = [i, j, k]
                        .iter()
                        .enumerate()
                        .map(|(a, &v)| if axes.contains(&a) { 0 } else { v })
                        .collect::<Vec<_>>();
                    let p = at(&os, &oi);
                    o[p] = f(o[p], d[at(&s, &[i, j, k])]);
                }
            }
        }
        o
    };
    let add_f = |a: f64, b: f64| a + b;
    assert_close(&out[0], &red(&[0], 0.0, add_f));
    assert_close(&out[1], &red(&[1], 0.0, add_f));
    assert_close(&out[2], &red(&[2], 0.0, add_f));
    assert_close(&out[3], &red(&[0, 1, 2], 0.0, add_f));
    assert_close(&out[4], &red(&[0, 2], 0.0, add_f));
    assert_close(&out[5], &red(&[1], f64::NEG_INFINITY, f64::max));
}

fn matmul_ref(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    (0..m * n)
        .map(|o| (0..k).map(|q| a[(o / n) * k + q] * b[q * n + o % n]).sum())
        .collect()
}

#[test]
fn matmul_and_transposed_operand() {
    let mut io = Inputs::default();
    let (da, db) = (data(12, 7), data(20, 8));
    let a = io.f32(&[3, 4], da.clone());
    let b = io.f32(&[4, 5], db.clone());
    // a stored transposed: at is [4, 3], used as at.T.
    let at_data: Vec<f64> = (0..12).map(|i| da[(i % 3) * 4 + i / 3]).collect();
    let at = io.f32(&[4, 3], at_data);
    let c = matmul(&a, &b);
    let c2 = matmul(&permute(&at, &[1, 0]), &b);
    let (_, out) = io.run(&[c, c2]);
    let want = matmul_ref(&da, &db, 3, 4, 5);
    assert_close(&out[0], &want);
    assert_close(&out[1], &want);
}

#[test]
fn softmax_values() {
    let mut io = Inputs::default();
    let d = data(15, 9);
    let x = io.f32(&[3, 5], d.clone());
    let (_, out) = io.run(&[softmax(&x)]);
    assert_close(&out[0], &softmax_rows(&d, 5));
}

#[test]
fn arange_collapses_to_closed_form() {
    let io = Inputs::default();
    for n in [1usize, 2, 10, 33] {
        let (s, out) = io.run(&[arange(n, DType::F32)]);
        let want: Vec<f64> = (0..n).map(|i| i as f64).collect();
        assert_close(&out[0], &want);
        assert_eq!(
            count_ops(&s, Op::Reduce),
            0,
            "arange({n}) kept a loop:\n{}",
            s.items[0].ast.tree()
        );
        assert_eq!(s.items.len(), 1);
    }
}

#[test]
fn eye_from_arange_compare() {
    // eye(n)[i, j] = arange(n)[i] == arange(n)[j], built by broadcasting.
    let io = Inputs::default();
    let n = 5;
    let r = arange(n, DType::F32);
    let rows = expand(&reshape(&r, &[n, 1]), &[n, n]);
    let cols = expand(&reshape(&r, &[1, n]), &[n, n]);
    let eye = bin(Op::CmpEq, &rows, &cols).cast(DType::F32);
    let (s, out) = io.run(&[eye]);
    let want: Vec<f64> = (0..n * n).map(|k| (k / n == k % n) as u8 as f64).collect();
    assert_close(&out[0], &want);
    assert_eq!(count_ops(&s, Op::Reduce), 0);
    assert_eq!(s.items.len(), 1, "the collapsed counters are inlined");
}

#[test]
fn huge_reduction_is_split_in_two_kernels() {
    let mut io = Inputs::default();
    let n = 1 << 16;
    let d: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
    let x = io.f32(&[n], d.clone());
    let (s, out) = io.run(&[sum(&x, &[0])]);
    assert_eq!(s.items.len(), 2, "split into two stages");
    assert_eq!(s.groups.len(), 2);
    assert_close(&out[0], &[d.iter().sum::<f64>()]);
}

#[test]
fn bool_outputs_casts_and_integer_ops() {
    let mut io = Inputs::default();
    let (da, db) = (data(6, 10), data(6, 11));
    let a = io.f32(&[6], da.clone());
    let b = io.f32(&[6], db.clone());
    let lt = bin(Op::CmpLt, &a, &b);
    let di: Vec<f64> = vec![-7.0, -3.0, 0.0, 3.0, 7.0, 100.0];
    let i = io.typed(DType::I32, &[6], di.clone());
    let three = full(3.0, DType::I32, &[6]);
    let q = bin(Op::Idiv, &i, &three);
    let r = bin(Op::Mod, &i, &three);
    let c = a.un(Op::Neg).cast(DType::I8);
    let (s, out) = io.run(&[lt, q, r, c]);
    assert!(s.buffers.iter().any(|b| b.dtype == DType::BOOL));
    let want_lt: Vec<f64> = (0..6).map(|k| (da[k] < db[k]) as u8 as f64).collect();
    assert_close(&out[0], &want_lt);
    assert_close(&out[1], &[-2.0, -1.0, 0.0, 1.0, 2.0, 33.0]);
    assert_close(&out[2], &[-1.0, 0.0, 0.0, 0.0, 1.0, 1.0]);
    let want_c: Vec<f64> = da.iter().map(|v| (-v).trunc()).collect();
    assert_close(&out[3], &want_c);
}

#[test]
fn reduce_of_padded_and_shrunk_input() {
    let mut io = Inputs::default();
    let d = data(12, 12);
    let x = io.f32(&[3, 4], d.clone());
    let y = sum(
        &pad(&shrink(&x, &[(1, 3), (0, 4)]), &[(1, 1), (0, 0)]).un(Op::Exp),
        &[0],
    );
    let (_, out) = io.run(&[y]);
    // Rows: pad, x[1], x[2], pad; the pad is applied before exp, so padded rows give exp(0) = 1.
    let want: Vec<f64> = (0..4)
        .map(|j| 2.0 + d[4 + j].exp() + d[8 + j].exp())
        .collect();
    assert_close(&out[0], &want);
}

#[test]
fn roots_that_view_inputs_need_no_kernel() {
    let mut io = Inputs::default();
    let d = data(6, 13);
    let x = io.f32(&[2, 3], d.clone());
    let v = reshape(&x, &[3, 2]);
    let (s, out) = io.run(std::slice::from_ref(&v));
    assert!(s.items.is_empty());
    assert_close(&out[0], &d);
    assert!(std::sync::Arc::ptr_eq(&s.outputs[0], &v));
}

#[test]
fn reduce_of_a_broadcast_is_a_multiply_and_constant_roots_get_a_kernel() {
    let mut io = Inputs::default();
    let col = io.f32(&[3, 1], vec![1.0, 2.0, 3.0]);
    // sum over an axis the value does not vary along: x * 100, no loop.
    let s = sum(&expand(&col, &[3, 100]), &[1]);
    // max over it: the value itself.
    let m = max(&expand(&col, &[3, 100]), &[1]);
    let c = full(4.0, DType::F32, &[2, 2]);
    let (sched, out) = io.run(&[s, m, c]);
    assert_eq!(count_ops(&sched, Op::Reduce), 0);
    assert_close(&out[0], &[100.0, 200.0, 300.0]);
    assert_close(&out[1], &[1.0, 2.0, 3.0]);
    assert_close(&out[2], &[4.0; 4]);
}

#[test]
fn padded_consumers_gate_the_loads_of_inlined_and_stored_buffers() {
    let mut io = Inputs::default();
    let n = 4;
    // eye(n): its counters are removable buffers inlined under the pad gate.
    let r = arange(n, DType::F32);
    let rows = expand(&reshape(&r, &[n, 1]), &[n, n]);
    let cols = expand(&reshape(&r, &[1, n]), &[n, n]);
    let eye = bin(Op::CmpEq, &rows, &cols).cast(DType::F32);
    let padded_eye = pad(&eye, &[(1, 0), (0, 1)]);
    // softmax: its stored reductions are read under the pad gate.
    let d = data(6, 3);
    let x = io.f32(&[2, 3], d.clone());
    let padded_softmax = pad(&softmax(&x), &[(1, 1), (1, 0)]);
    let (_, out) = io.run(&[padded_eye, padded_softmax]);
    let want_eye: Vec<f64> = (0..(n + 1) * (n + 1))
        .map(|k| {
            let (i, j) = (k / (n + 1), k % (n + 1));
            (i >= 1 && j < n && i - 1 == j) as u8 as f64
        })
        .collect();
    assert_close(&out[0], &want_eye);
    let mut want = vec![0.0; 4 * 4];
    for r in 0..2 {
        let row = &d[r * 3..r * 3 + 3];
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = row.iter().map(|v| (v - m).exp()).sum();
        for j in 0..3 {
            want[(r + 1) * 4 + j + 1] = (row[j] - m).exp() / z;
        }
    }
    assert_close(&out[1], &want);
}

/// `x[idx[i]]` through a one-hot sum (`select_along` in the tensor
/// crate): `Σ_r where(idx_i == arange(n)_r, x_r, 0)`. The NE-gated gather
/// collapse (`rangeify/gather_collapse.rs`) turns the sum into one gated
/// load per output; indices outside `[0, n)` give 0 as the sum did.
#[test]
fn one_hot_gather_collapses_to_a_gated_load() {
    let mut io = Inputs::default();
    let n = 7;
    let d = data(n, 21);
    let x = io.f32(&[n], d.clone());
    let picks = [3.0, 0.0, 6.0, -1.0, 7.0, 5.0, 3.0, 100.0];
    let m = picks.len();
    let idx = io.typed(DType::I64, &[m], picks.to_vec());
    let pos = arange(n, DType::I64);
    let hit = bin(
        Op::CmpEq,
        &expand(&reshape(&idx, &[m, 1]), &[m, n]),
        &expand(&reshape(&pos, &[1, n]), &[m, n]),
    );
    let picked = hit.where_(
        &expand(&reshape(&x, &[1, n]), &[m, n]),
        &full(0.0, DType::F32, &[m, n]),
    );
    let (s, out) = io.run(&[sum(&picked, &[1])]);
    let want: Vec<f64> = picks
        .iter()
        .map(|&p| {
            if (0.0..n as f64).contains(&p) {
                d[p as usize]
            } else {
                0.0
            }
        })
        .collect();
    assert_close(&out[0], &want);
    assert_eq!(
        count_ops(&s, Op::Reduce),
        0,
        "the gather kept its loop:\n{}",
        s.items[0].ast.tree()
    );
}
