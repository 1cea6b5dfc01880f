//! The kernel-level loop rewrites (`morok_core::schedule::rangeify`:
//! range splitting, cost-checked range merging, split store): each one
//! fires on a small graph (seen in the generated C) and the results equal
//! the reference evaluator's on random data.

mod common;

use common::{input, Domain, Layout, Rng};
use morok::core::ScalarType;
use morok::Tensor;

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
    let y = x.try_permute(&[1, 0]).unwrap().try_reshape(&[240]).unwrap();
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
    let t = &a.try_permute(&[0, 2, 1]).unwrap() + &rand_f32(&mut rng, &[3, 7, 5]);
    common::check(&t).unwrap();
    if let Some(code) = single_kernel_code(&t) {
        assert!(!code.contains(" / ") && !code.contains(" % "), "{code}");
    }
}

#[test]
fn split_store_cuts_padding_and_cat_loops() {
    let mut rng = Rng::new(3);
    let x = rand_f32(&mut rng, &[4, 8, 8]);
    let p = x.try_pad(&[(0, 0), (1, 1), (2, 1)], 0.0f32).unwrap();
    let p = &p + 1.0f32;
    common::check(&p).unwrap();
    if let Some(code) = single_kernel_code(&p) {
        assert!(!code.contains(" ? "), "no select per element:\n{code}");
    }
    let a = rand_f32(&mut rng, &[4, 10]);
    let b = rand_f32(&mut rng, &[4, 6]);
    let c = Tensor::try_cat(&[&a, &b], 1).unwrap();
    common::check(&c).unwrap();
    if let Some(code) = single_kernel_code(&c) {
        assert!(!code.contains(" ? "), "no select per element:\n{code}");
    }
}
