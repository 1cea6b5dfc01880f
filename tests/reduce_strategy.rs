//! The optimizer's reduction strategies (`morok_core::reduce_strategy`)
//! end to end on the CPU: row, column and full reductions, softmax and
//! layernorm on random data of even, odd and prime sizes, compared with
//! the reference evaluator. Under the default heuristics the contiguous
//! reductions run with partial accumulators (float sums in a different
//! order, within the dtype's tolerance) and column sums with upcast
//! output lanes; `MOROK_NOOPT=1` runs the same checks on plain loops.

mod common;

use common::{check, input, Domain, Layout, Rng};
use morok::{ScalarType, Tensor};

/// Shapes (rows, cols): split-friendly, odd, prime and tall/wide ones.
const SHAPES: [(usize, usize); 7] = [
    (64, 4096),
    (257, 96),
    (1031, 64),
    (96, 1031),
    (3, 8191),
    (512, 512),
    (4096, 16),
];

fn matrix(rng: &mut Rng, dtype: ScalarType, rows: usize, cols: usize, domain: Domain) -> Tensor {
    input(rng, dtype, &[rows, cols], Layout::Contiguous, domain)
}

/// A float32 vector of `len` elements (a layernorm's weight or bias).
fn vector(rng: &mut Rng, len: usize) -> Tensor {
    input(
        rng,
        ScalarType::F32,
        &[len],
        Layout::Contiguous,
        Domain::Any,
    )
}

fn ok(what: &str, rows: usize, cols: usize, t: morok::Result<Tensor>) {
    let t = t.unwrap_or_else(|e| panic!("{what} {rows}x{cols}: {e}"));
    if let Err(e) = check(&t) {
        panic!("{what} {rows}x{cols} {}: {e}", t.dtype());
    }
}

#[test]
fn sums_of_rows_columns_and_everything_match_the_reference() {
    let mut rng = Rng::new(8);
    let cases = SHAPES
        .iter()
        .map(|&s| (ScalarType::F32, s))
        .chain([ScalarType::F64, ScalarType::I32].map(|d| (d, (257, 96))))
        .chain([ScalarType::F64, ScalarType::I32].map(|d| (d, (3, 8191))));
    for (dtype, (rows, cols)) in cases {
        let x = matrix(&mut rng, dtype, rows, cols, Domain::Positive);
        ok("row sum", rows, cols, x.sum(Some(&[1]), false));
        ok("column sum", rows, cols, x.sum(Some(&[0]), false));
        ok("full sum", rows, cols, x.sum(None, false));
        ok("row max", rows, cols, x.max(Some(&[1]), false));
        ok("column max", rows, cols, x.max(Some(&[0]), false));
    }
}

/// Softmax and layernorm (no weight, no bias) over the last axis of `x`
/// match the reference.
fn softmax_and_layernorm_ok(x: &Tensor, rows: usize, cols: usize) {
    ok("softmax", rows, cols, x.softmax(-1));
    ok(
        "layernorm",
        rows,
        cols,
        x.layernorm(&[-1], None, None, 1e-5),
    );
}

#[test]
fn softmax_and_layernorm_match_the_reference() {
    let mut rng = Rng::new(9);
    for (rows, cols) in SHAPES {
        let x = matrix(&mut rng, ScalarType::F32, rows, cols, Domain::Any);
        softmax_and_layernorm_ok(&x, rows, cols);
        ok("column softmax", rows, cols, x.softmax(0));
        let g = vector(&mut rng, cols);
        let b = vector(&mut rng, cols);
        ok(
            "layernorm with weight and bias",
            rows,
            cols,
            x.layernorm(&[-1], Some(&g), Some(&b), 1e-5),
        );
    }
}

/// Row sums, softmax and layernorm over widths that give the partial
/// accumulators two vectors of the host's lanes (64, 1024), one vector
/// of 8 (72), of 4 (68) or 2 lanes (66), and no partials (67, prime),
/// in f32 and f64: combined after the loop by vector adds and a halving
/// of the lanes (`lower/partial_vectors.rs`), they match the reference.
#[test]
fn combined_partials_of_every_width_match_the_reference() {
    let mut rng = Rng::new(14);
    for dtype in [ScalarType::F32, ScalarType::F64] {
        for cols in [64, 1024, 72, 68, 66, 67] {
            let rows = 5;
            let x = matrix(&mut rng, dtype, rows, cols, Domain::Any);
            ok("row sum", rows, cols, x.sum(Some(&[1]), false));
            ok("row max", rows, cols, x.max(Some(&[1]), false));
            softmax_and_layernorm_ok(&x, rows, cols);
        }
    }
}

/// Layernorm with weight and bias (bench workload W7's shape, fewer
/// rows): its mean and variance read only `x`'s row, so the heuristics
/// give the kernel no row tile and both reductions vector partials
/// (`opt/heuristic.rs`, `reduction_reads_along`): where the C code has
/// vector types, every accumulator is a vector (a row tile left the
/// variance with one scalar accumulator per row). The result matches the
/// reference.
#[test]
fn layernorm_with_weight_and_bias_reduces_in_vectors() {
    let mut rng = Rng::new(11);
    let (rows, cols) = (64, 1024);
    let x = matrix(&mut rng, ScalarType::F32, rows, cols, Domain::Any);
    let g = vector(&mut rng, cols);
    let b = vector(&mut rng, cols);
    let t = x
        .layernorm(&[-1], Some(&g), Some(&b), 1e-5)
        .expect("layernorm");
    ok("layernorm with weight and bias", rows, cols, Ok(t.clone()));
    let kernels = t.realize().expect("realize").kernels();
    assert_eq!(kernels.len(), 1);
    let code = &kernels[0].code;
    if code.contains("vector_size") {
        let scalar: Vec<&str> = code
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("float acc"))
            .collect();
        assert!(scalar.is_empty(), "scalar accumulators {scalar:?}");
    }
}

/// Matmuls with a narrow output (`[B, 128] @ [128, 10]`, the second layer
/// of a small MLP): the heuristics upcast the 10 outputs into independent
/// accumulators (`upcast_narrow_output`), next to a tile of 4 rows from
/// 64 rows on (on a vector host a vector of 8 outputs and 2 scalars per
/// row); the results match the reference.
#[test]
fn narrow_matmuls_match_the_reference() {
    let mut rng = Rng::new(10);
    for rows in [1, 5, 7, 64, 260] {
        let x = matrix(&mut rng, ScalarType::F32, rows, 128, Domain::Any);
        let w = matrix(&mut rng, ScalarType::F32, 128, 10, Domain::Any);
        ok("narrow matmul", rows, 10, x.dot(&w));
        ok(
            "narrow matmul softmax",
            rows,
            10,
            x.dot(&w).and_then(|y| y.softmax(-1)),
        );
    }
}

/// The kernels one realization of `t` runs.
fn kernel_count(t: &Tensor) -> usize {
    t.realize()
        .unwrap_or_else(|e| panic!("realize: {e}"))
        .kernels()
        .len()
}

/// Huge reductions (input/output ratio ≥ `SPLIT_THRESHOLD`, 2^15) split
/// once, into the fewest chunks for which neither stage is huge: a full
/// sum of 2^23 elements (2048 × 4096) is 512 chunk sums of 16384 and one
/// kernel over them (256 chunks, as before, left a first stage of ratio
/// 2^15 that was split again: three kernels); so is a full max and a sum
/// over the last axis of a 2 × 2^22 tensor. All match the reference.
#[test]
fn huge_reductions_split_once_into_two_kernels() {
    let mut rng = Rng::new(12);
    let x = positive_f32(&mut rng, &[2048, 4096]);
    runs_as("full sum of 2048x4096", x.sum(None, false), 2);
    runs_as("full max of 2048x4096", x.max(None, false), 2);
    let wide = positive_f32(&mut rng, &[2, 1 << 22]);
    runs_as("row sum of 2x2^22", wide.sum(Some(&[1]), false), 2);
}

/// A full sum written as two reductions, `x.sum(1).sum()` over 2048 ×
/// 4096, reads 2^23 elements although its outer reduction sees 2048: it
/// splits like a full sum (two kernels, the first with many outputs for
/// the threads) instead of fusing into one single-output kernel. So does
/// a max of row sums. Both match the reference.
#[test]
fn chained_reductions_split_by_the_elements_they_read() {
    let mut rng = Rng::new(13);
    let x = positive_f32(&mut rng, &[2048, 4096]);
    let rows = x.sum(Some(&[1]), false).expect("row sums");
    runs_as("x.sum(1).sum()", rows.sum(None, false), 2);
    runs_as("x.sum(1).max()", rows.max(None, false), 2);
}

/// A contiguous `f32` input of `shape` with positive values.
fn positive_f32(rng: &mut Rng, shape: &[usize]) -> Tensor {
    input(
        rng,
        ScalarType::F32,
        shape,
        Layout::Contiguous,
        Domain::Positive,
    )
}

/// Checks `t` (described by `what`) against the reference and that one
/// realization of it runs `kernels` kernels.
fn runs_as(what: &str, t: morok::Result<Tensor>, kernels: usize) {
    let t = t.unwrap_or_else(|e| panic!("{what}: {e}"));
    check(&t).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(kernel_count(&t), kernels, "{what}");
}

/// Column reductions of at least `COLUMN_SPLIT_MIN` (2^21) input elements
/// run as two kernels (16-row tiles, then the tile sums) when the rows
/// split into tiles: f32 and i32, a keepdim sum, a max, a sum over the
/// middle axis of a 3-D tensor, and an axis only 4 divides; a prime row
/// count and a small input stay one kernel. All match the reference.
#[test]
fn large_column_reductions_split_into_row_tiles() {
    let mut rng = Rng::new(10);
    let f32 = ScalarType::F32;
    let cases: [(ScalarType, &[usize], usize, usize); 6] = [
        (f32, &[2048, 1024], 0, 2),
        (ScalarType::I32, &[4100, 520], 0, 2), // 4100 = 4 · 1025: tiles of 4
        (f32, &[8, 1040, 256], 1, 2),
        (f32, &[2053, 1024], 0, 1), // a prime row count: no tile divides
        (f32, &[512, 512], 0, 1),   // small: one kernel
        (f32, &[64, 32768], 0, 2),
    ];
    for (dtype, shape, axis, kernels) in cases {
        let x = input(&mut rng, dtype, shape, Layout::Contiguous, Domain::Positive);
        let what = format!("sum over axis {axis} of {shape:?} {dtype}");
        let sum = x.sum(Some(&[axis as isize]), false).expect("sum");
        check(&sum).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(kernel_count(&sum), kernels, "{what}");
        let kept = x.sum(Some(&[axis as isize]), true).expect("keepdim sum");
        check(&kept).unwrap_or_else(|e| panic!("{what}, keepdim: {e}"));
    }
    let x = input(
        &mut rng,
        f32,
        &[2048, 1024],
        Layout::Contiguous,
        Domain::Any,
    );
    let max = x.max(Some(&[0]), false).expect("max");
    check(&max).unwrap_or_else(|e| panic!("column max: {e}"));
    assert_eq!(kernel_count(&max), 2);
    // A matmul is a reduction of broadcast operands (2^21 products here):
    // arithmetic-bound, left to the optimizer's tiles, never split.
    let a = input(&mut rng, f32, &[128, 128], Layout::Contiguous, Domain::Any);
    let b = input(&mut rng, f32, &[128, 128], Layout::Contiguous, Domain::Any);
    let c = a.matmul(&b).expect("matmul");
    assert_eq!(kernel_count(&c), 1, "a 128³ matmul");
}
