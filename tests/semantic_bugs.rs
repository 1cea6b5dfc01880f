//! Regression tests for the seven semantic bugs a port of PyTorch's op
//! tests found (issue 29): each value is PyTorch's, checked on the
//! compiled result and on the reference evaluator.

mod common;

use common::{compiled, reference};
use morok::{
    AttentionOptions, DType, Error, InterpolateMode, IsCloseOptions, ScalarType, ScatterReduce,
    Tensor,
};

/// The compiled values of `t`, after checking the reference agrees.
fn both(t: &Tensor) -> Vec<f64> {
    let got = compiled(t).expect("compiles");
    let want = reference(t).expect("evaluates");
    let st = t.dtype().scalar_type();
    common::compare(st, &got, &want).expect("compiled matches the reference");
    got
}

/// Asserts `e` is an error of `op` at this file mentioning `words`.
fn refused(e: Error, op: &str, words: &[&str]) {
    let text = e.to_string();
    assert_eq!(e.op(), op, "{text}");
    assert!(e.location().file().ends_with("semantic_bugs.rs"), "{text}");
    for w in words {
        assert!(text.contains(w), "no `{w}` in: {text}");
    }
}

#[test]
fn isclose_needs_a_finite_difference() {
    let a = Tensor::from_slice(&[f32::INFINITY, 5.0, f32::INFINITY, f32::NEG_INFINITY, 1.0]);
    let b = Tensor::from_slice(&[
        f32::NEG_INFINITY,
        f32::INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0 + 1e-9,
    ]);
    let close = a.isclose(&b, IsCloseOptions::default()).unwrap();
    assert_eq!(both(&close), [0.0, 0.0, 1.0, 1.0, 1.0]);
}

#[test]
fn normalize_with_p_zero_counts_non_zeros() {
    let x = Tensor::from_slice(&[3.0f32, 4.0]);
    let n = x.normalize(0.0, 0, 1e-12).unwrap();
    common::close(&both(&n), &[1.5, 2.0]);
    let with_zero = Tensor::from_slice(&[3.0f32, 0.0, -4.0]);
    let n = with_zero.normalize(0.0, 0, 1e-12).unwrap();
    common::close(&both(&n), &[1.5, 0.0, -2.0]);
    let inf = Tensor::from_slice(&[3.0f32, -4.0])
        .normalize(f64::INFINITY, 0, 1e-12)
        .unwrap();
    common::close(&both(&inf), &[0.75, -1.0]);
}

#[test]
fn logcumsumexp_is_stable_per_prefix() {
    let x = Tensor::from_slice(&[0.0f32, 100.0]);
    common::close(&both(&x.logcumsumexp(0).unwrap()), &[0.0, 100.0]);
    let x = Tensor::from_slice(&[0.0f32, 200.0]);
    common::close(&both(&x.logcumsumexp(0).unwrap()), &[0.0, 200.0]);
    let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0]);
    let want: Vec<f64> = [1.0f64, 2.0, 3.0]
        .iter()
        .scan(0.0f64, |s, v| {
            *s += v.exp();
            Some(s.ln())
        })
        .collect();
    common::close(&both(&x.logcumsumexp(0).unwrap()), &want);
    // Down the rows of a matrix, with infinities.
    let m = Tensor::from_slice(&[0.0f32, f32::NEG_INFINITY, 100.0, 1.0])
        .reshape(&[2, 2])
        .unwrap();
    let got = both(&m.logcumsumexp(0).unwrap());
    common::close(&got, &[0.0, f64::NEG_INFINITY, 100.0, 1.0]);
}

#[test]
fn bilinear_interpolation_of_bytes_keeps_bytes_rounded() {
    let x = Tensor::from_vec(vec![0u8, 255, 10, 21], &[1, 1, 2, 2]).unwrap();
    let y = x
        .interpolate(&[2, 3], InterpolateMode::Bilinear, true)
        .unwrap();
    assert_eq!(y.dtype(), DType::U8);
    // align_corners: the middle column is the mean of each row, rounded
    // half up as PyTorch's u8 kernel (127.5 → 128, 15.5 → 16, 2.5 → 3).
    assert_eq!(both(&y), [0.0, 128.0, 255.0, 10.0, 16.0, 21.0]);
    let x = Tensor::from_vec(vec![0u8, 5, 2, 7], &[1, 1, 2, 2]).unwrap();
    let y = x
        .interpolate(&[2, 3], InterpolateMode::Bilinear, true)
        .unwrap();
    assert_eq!(both(&y), [0.0, 3.0, 5.0, 2.0, 5.0, 7.0]);
    let x = Tensor::from_vec(vec![0u8, 255, 10, 21], &[1, 1, 2, 2]).unwrap();
    let y = x
        .interpolate(&[3, 3], InterpolateMode::Bilinear, false)
        .unwrap();
    assert_eq!(
        both(&y),
        [0.0, 128.0, 255.0, 5.0, 72.0, 138.0, 10.0, 16.0, 21.0]
    );
}

#[test]
fn linspace_of_bools_is_an_error() {
    let e = Tensor::linspace_dtype(5.0, 10.0, 3, DType::BOOL).unwrap_err();
    refused(e, "linspace", &["bool"]);
}

#[test]
fn scatter_with_src_of_another_dtype_is_an_error() {
    let input = Tensor::zeros(&[4], DType::F16);
    let index = Tensor::from_vec(vec![0i64, 2], &[2]).unwrap();
    let src = Tensor::from_slice(&[1.0f32, 2.0]);
    let e = input.scatter(0, &index, &src).unwrap_err();
    refused(e, "scatter", &["f32", "f16"]);
    let e = input
        .scatter_reduce(0, &index, &src, ScatterReduce::Sum, true)
        .unwrap_err();
    refused(e, "scatter_reduce", &["f32", "f16"]);
    // The same dtype still scatters.
    let ok = Tensor::zeros(&[4], DType::F32)
        .scatter(0, &index, &src)
        .unwrap();
    assert_eq!(both(&ok), [1.0, 0.0, 2.0, 0.0]);
    assert_eq!(ok.dtype().scalar_type(), ScalarType::F32);
}

#[test]
fn causal_attention_with_a_mask_is_an_error() {
    let q = Tensor::rand_seeded(&[2, 3, 4], DType::F32, 1);
    let opts = AttentionOptions {
        is_causal: true,
        mask: Some(Tensor::ones(&[3, 3], DType::BOOL)),
        ..Default::default()
    };
    let e = q.scaled_dot_product_attention(&q, &q, &opts).unwrap_err();
    refused(e, "scaled_dot_product_attention", &["is_causal", "mask"]);
}
