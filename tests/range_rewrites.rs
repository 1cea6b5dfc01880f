//! The kernel-level loop rewrites (`morok_core::rangeify`:
//! range splitting, cost-checked range merging, split store): each one
//! fires on a small graph (seen in the generated C) and the results equal
//! the reference evaluator's on random data.

mod common;

use common::{input, Domain, Layout, Rng};
use morok::core::ScalarType;
use morok::{DType, Tensor};

fn rand_f32(rng: &mut Rng, shape: &[usize]) -> Tensor {
    input(rng, ScalarType::F32, shape, Layout::Contiguous, Domain::Any)
}

/// The C code of the single kernel `t` realizes (None off the C backend).
fn single_kernel_code(t: &Tensor) -> Option<String> {
    let kernels = t.realize().unwrap().kernels();
    assert_eq!(kernels.len(), 1, "one kernel");
    (kernels[0].backend == "CPU").then(|| kernels[0].code.clone())
}

#[test]
fn range_splitting_removes_the_divmod_of_a_transposed_flatten() {
    // y[r] = x[r % 6][r / 6]: the output loop splits into r / 6 and r % 6.
    let mut rng = Rng::new(1);
    let x = rand_f32(&mut rng, &[6, 40]);
    let y = x.permute(&[1, 0]).unwrap().reshape(&[240]).unwrap();
    let y = &y * 2.0f32;
    common::check(&y).unwrap();
    if let Some(code) = single_kernel_code(&y) {
        assert!(!code.contains(" / ") && !code.contains(" % "), "{code}");
    }
}

#[test]
fn range_merging_makes_one_loop_of_a_contiguous_elementwise_op() {
    let mut rng = Rng::new(2);
    let a = rand_f32(&mut rng, &[3, 5, 7]);
    let b = rand_f32(&mut rng, &[3, 5, 7]);
    let y = &a + &b;
    common::check(&y).unwrap();
    if let Some(code) = single_kernel_code(&y) {
        assert_eq!(code.matches("for (").count(), 1, "{code}");
    }
    // A transposed operand would need divisions: the loops stay apart.
    let t = &a.permute(&[0, 2, 1]).unwrap() + &rand_f32(&mut rng, &[3, 7, 5]);
    common::check(&t).unwrap();
    if let Some(code) = single_kernel_code(&t) {
        assert!(!code.contains(" / ") && !code.contains(" % "), "{code}");
    }
}

#[test]
fn split_store_cuts_padding_and_cat_loops() {
    let mut rng = Rng::new(3);
    let x = rand_f32(&mut rng, &[4, 8, 8]);
    let p = x.pad(&[(0, 0), (1, 1), (2, 1)], 0.0f32).unwrap();
    let p = &p + 1.0f32;
    common::check(&p).unwrap();
    if let Some(code) = single_kernel_code(&p) {
        assert!(!code.contains(" ? "), "no select per element:\n{code}");
    }
    let a = rand_f32(&mut rng, &[4, 10]);
    let b = rand_f32(&mut rng, &[4, 6]);
    let c = Tensor::cat(&[&a, &b], 1).unwrap();
    common::check(&c).unwrap();
    if let Some(code) = single_kernel_code(&c) {
        assert!(!code.contains(" ? "), "no select per element:\n{code}");
    }
}

/// Lengths for a sequence of `n`: every boundary (negative, 0, 1, n − 1,
/// n, above n, the type's extremes) and random values in `[-2, n + 2]`,
/// as a `[rows, 1]` column of `dtype`.
fn lengths(rng: &mut Rng, dtype: ScalarType, n: i64, rows: usize) -> Tensor {
    let (min, max) = (dtype.min_f64().max(-1e30), dtype.max_f64().min(1e30));
    let mut v: Vec<f64> = vec![
        -5.0,
        -1.0,
        0.0,
        1.0,
        (n - 1) as f64,
        n as f64,
        (n + 1) as f64,
    ];
    v.extend([1000.0, min, max]);
    if dtype.is_float() {
        v.extend([
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.5,
            0.5,
            n as f64 - 0.5,
        ]);
    }
    while v.len() < rows {
        let x = rng.uniform(-2.0, n as f64 + 2.0);
        v.push(if dtype.is_float() { x } else { x.floor() });
    }
    let v: Vec<f64> = v.into_iter().map(|x| x.clamp(min, max)).collect();
    common::tensor(dtype, &[rows, 1], &v)
}

/// `[0, n)` as a `[1, n]` row of `dtype`.
fn arange_row(n: usize, dtype: ScalarType) -> Tensor {
    let a = Tensor::arange_dtype(0.0, n as f64, 1.0, DType::from(dtype)).unwrap();
    a.reshape(&[1, n as isize]).unwrap()
}

/// The C code of every kernel `t` realizes (empty off the C backend).
fn kernel_codes(t: &Tensor) -> Vec<String> {
    let kernels = t.realize().unwrap().kernels();
    kernels
        .into_iter()
        .filter(|k| k.backend == "CPU")
        .map(|k| k.code)
        .collect()
}

/// Checks `t` against the reference and that its kernels keep `accs`
/// accumulators at most (a collapsed reduction needs none).
fn check_collapsed(name: &str, t: &Tensor, accs: usize) {
    common::check(t).unwrap_or_else(|e| panic!("{name}: {e}"));
    for code in kernel_codes(t) {
        let body = &code[code.rfind("\nvoid ").unwrap_or(0)..];
        let kept = (0..=accs)
            .filter(|i| body.contains(&format!("acc{i}")))
            .count();
        assert!(kept <= accs, "{name}: a reduction loop is left:\n{body}");
    }
}

/// The four comparisons of a position with a length, each summed over
/// the positions (counts of `k < len`, `k <= len`, `k > len`, `k >= len`).
fn position_counts(pos: &Tensor, len: &Tensor) -> Vec<(&'static str, Tensor)> {
    let sum = |m: Tensor| m.sum(Some(&[1]), false).unwrap();
    vec![
        ("lt", sum(pos.lt(len).unwrap())),
        ("le", sum(pos.le(len).unwrap())),
        ("gt", sum(pos.gt(len).unwrap())),
        ("ge", sum(pos.ge(len).unwrap())),
    ]
}

/// For each `(length type, position types)`: random lengths of that type
/// (`rows` of them, boundary values included) counted against positions
/// `0..n` of each position type ([`position_counts`]); every count must
/// equal the reference and keep no reduction loop.
fn check_counts_collapse(
    rng: &mut Rng,
    n: usize,
    rows: usize,
    cases: &[(ScalarType, &[ScalarType])],
) {
    for &(lt, positions) in cases {
        let len = lengths(rng, lt, n as i64, rows);
        for &at in positions {
            for (name, t) in position_counts(&arange_row(n, at), &len) {
                check_collapsed(&format!("{at:?} {name} {lt:?}"), &t, 0);
            }
        }
    }
}

#[test]
fn load_collapse_counts_positions_against_loaded_lengths() {
    // sum(k < len[i] for k in 0..n) → clamp(len[i], 0, n): no loop.
    let mut rng = Rng::new(4);
    let n = 64;
    let positions = [ScalarType::I32, ScalarType::I64, ScalarType::I16];
    let cases = [ScalarType::I32, ScalarType::U8, ScalarType::I16].map(|lt| (lt, &positions[..]));
    check_counts_collapse(&mut rng, n, 24, &cases);
    // A 64-bit length may sit at the type's extremes, where the closed
    // form's arithmetic could overflow: the loop may stay, results hold.
    let len = lengths(&mut rng, ScalarType::I64, n as i64, 24);
    for (name, t) in position_counts(&arange_row(n, ScalarType::I64), &len) {
        common::check(&t).unwrap_or_else(|e| panic!("i64 {name}: {e}"));
    }
}

#[test]
fn load_collapse_counts_positions_against_loaded_float_lengths() {
    // Integer positions against float lengths (NaN, ±inf, fractions,
    // huge values): x < y ⟺ x < ⌈y⌉, clamped, NaN counting nothing.
    let mut rng = Rng::new(5);
    let floats = [ScalarType::F32, ScalarType::F64, ScalarType::F16];
    let positions = floats.map(|ft| [ScalarType::I32, ft]);
    let cases: Vec<_> = floats
        .iter()
        .zip(&positions)
        .map(|(&ft, p)| (ft, &p[..]))
        .collect();
    check_counts_collapse(&mut rng, 48, 32, &cases);
}

#[test]
fn load_collapse_removes_the_count_of_a_sequence_mask() {
    // A masked mean over valid positions: the mask's count collapses,
    // the masked sum keeps its one loop.
    let mut rng = Rng::new(6);
    let (rows, n) = (24, 40);
    let len = lengths(&mut rng, ScalarType::I32, n as i64, rows);
    let x = rand_f32(&mut rng, &[rows, n]);
    let mask = arange_row(n, ScalarType::I32).lt(&len).unwrap();
    let mf = mask.cast(DType::F32).unwrap();
    let total = x.mul(&mf).unwrap().sum(Some(&[1]), false).unwrap();
    let count = mf.sum(Some(&[1]), false).unwrap().maximum(1.0f32).unwrap();
    check_collapsed("masked mean", &total.div(&count).unwrap(), 1);
    // A cumulative count compared with a loaded value.
    let ones = Tensor::ones(&[n], DType::I32).cumsum(0).unwrap();
    let cum = ones.reshape(&[1, n as isize]).unwrap();
    for (name, t) in position_counts(&cum, &len) {
        check_collapsed(&format!("cumulative {name}"), &t, 0);
    }
}

#[test]
fn reduce_collapse_reads_integer_casts_of_a_bounded_index() {
    // A narrow integer arange is `(T)((int32)(k + 1) − 1)`: the casts of a
    // bounded index cannot wrap, so the count of `a[k] < b[i]` is linear
    // in `k` and collapses (here: a lower-triangle count per row).
    let n = 40;
    for (at, bt) in [
        (ScalarType::I16, ScalarType::I32),
        (ScalarType::U8, ScalarType::I64),
        (ScalarType::I8, ScalarType::I16),
    ] {
        let col = arange_row(n, bt).reshape(&[n as isize, 1]).unwrap();
        let flipped = arange_row(n, at).flip(&[1]).unwrap();
        for (name, t) in position_counts(&arange_row(n, at), &col)
            .into_iter()
            .chain(position_counts(&flipped, &col))
        {
            check_collapsed(&format!("{at:?} {name} {bt:?}"), &t, 0);
        }
    }
}
