//! The compile-time error of a mistake in a DSL body (the `.stderr` of its
//! ui-test) and the run-time error of the same mistake through the tensor
//! API say the same words: both come from `morok_core::shape`.

use morok::{DType, Result, Tensor};

/// The message of a run-time error without its source location.
fn words(r: Result<Tensor>) -> String {
    let text = r.expect_err("the mistake fails").to_string();
    text.split(" at ").next().unwrap_or_default().to_string()
}

fn z(shape: &[usize]) -> Tensor {
    Tensor::zeros(shape, DType::F32)
}

#[test]
fn compile_time_and_run_time_errors_match() {
    let cases: Vec<(&str, Result<Tensor>)> = vec![
        ("broadcast_mismatch", z(&[4, 128]).add(z(&[64]))),
        ("matmul_inner", z(&[4, 64]).dot(&z(&[128, 10]))),
        ("reshape_size", z(&[4, 4]).try_reshape(&[3, 5])),
        ("softmax_bad_axis", z(&[4, 4]).softmax(2)),
        ("transpose_bad_axis", z(&[2, 3]).try_transpose(0, 2)),
        ("permute_not_a_permutation", z(&[2, 3]).try_permute(&[0, 0])),
        ("sum_repeated_axis", z(&[2, 3]).sum(Some(&[1, 1]), false)),
        ("expand_mismatch", z(&[2, 4]).try_expand(&[3, 4])),
    ];
    for (case, result) in cases {
        let path = format!(
            "{}/ui-tests/dsl/fail/{case}.stderr",
            env!("CARGO_MANIFEST_DIR")
        );
        let stderr = std::fs::read_to_string(&path).expect("the ui-test's .stderr exists");
        let first = stderr.lines().next().unwrap_or_default();
        assert_eq!(first, format!("error: {}", words(result)), "{case}");
    }
}
