//! The compile-time error of a mistake in a DSL body (the `.stderr` of its
//! ui-test) and the run-time error of the same mistake through the tensor
//! API say the same words: both come from `morok_core::shape`.

use morok::{
    Conv1dOptions, ConvOptions, ConvTransposeOptions, DType, InterpolateMode, PoolOptions, Result,
    Slice, Tensor,
};

/// The message of a run-time error without its source location.
fn words(r: Result<Tensor>) -> String {
    let text = r.expect_err("the mistake fails").to_string();
    // The location is last: `... at src/file.rs:1:2`.
    text.rsplit_once(" at ")
        .map_or(text.clone(), |(w, _)| w.to_string())
}

fn z(shape: &[usize]) -> Tensor {
    Tensor::zeros(shape, DType::F32)
}

fn t(shape: &[usize], dtype: DType) -> Tensor {
    Tensor::zeros(shape, dtype)
}

#[test]
fn compile_time_and_run_time_errors_match() {
    let cases: Vec<(&str, Result<Tensor>)> = vec![
        ("broadcast_mismatch", z(&[4, 128]).add(z(&[64]))),
        ("matmul_inner", z(&[4, 64]).dot(&z(&[128, 10]))),
        ("reshape_size", z(&[4, 4]).reshape(&[3, 5])),
        ("softmax_bad_axis", z(&[4, 4]).softmax(2)),
        ("transpose_bad_axis", z(&[2, 3]).transpose(0, 2)),
        ("permute_not_a_permutation", z(&[2, 3]).permute(&[0, 0])),
        ("sum_repeated_axis", z(&[2, 3]).sum(Some(&[1, 1]), false)),
        ("expand_mismatch", z(&[2, 4]).expand(&[3, 4])),
        ("neg_of_bool", t(&[3], DType::BOOL).neg()),
        ("bitwise_of_float", z(&[3]).bitwise_and(z(&[3]))),
        ("squeeze_not_size_one", z(&[2, 3]).squeeze(0)),
        ("unsqueeze_bad_axis", z(&[2, 3]).unsqueeze(4)),
        ("flatten_start_after_end", z(&[2, 3]).flatten(1, 0)),
        ("flip_repeated_axis", z(&[2, 3]).flip(&[0, -2])),
        ("repeat_too_few", z(&[2, 3]).repeat(&[2])),
        ("expand_negative_dim", z(&[1, 3]).expand(&[-2, 3])),
        ("reshape_negative_dim", z(&[2, 3]).reshape(&[-2, 3])),
        ("tril_needs_matrix", z(&[3]).tril(0)),
        ("argmin_bad_axis", z(&[3, 4]).argmin(Some(2))),
        ("cumsum_bad_axis", z(&[3, 4]).cumsum(-3)),
        ("gather_float_index", z(&[2, 3]).gather(1, &z(&[2, 2]))),
        (
            "topk_more_than_the_axis",
            z(&[3, 3]).topk(5, 1, true).map(|(v, _)| v),
        ),
        (
            "gather_index_too_long",
            z(&[2, 3]).gather(1, &t(&[4, 2], DType::I64)),
        ),
        (
            "index_select_2d_index",
            z(&[2, 3]).index_select(1, &t(&[2, 2], DType::I64)),
        ),
        (
            "masked_fill_mask_not_bool",
            z(&[2, 3]).masked_fill(&t(&[3], DType::I32), 0.0),
        ),
        (
            "masked_fill_mask_too_big",
            z(&[3]).masked_fill(&t(&[2, 3], DType::BOOL), 0.0),
        ),
        ("pad_pair_count", z(&[2, 3]).pad(&[(1, 0)], 0.0)),
        (
            "pad_crops_past_the_axis",
            z(&[2, 3]).pad(&[(0, 0), (-2, -2)], 0.0),
        ),
        ("shrink_out_of_bounds", z(&[2, 3]).shrink(&[(0, 2), (2, 4)])),
        ("roll_shift_count", z(&[2, 3]).roll(&[1, 2], &[0])),
        ("diagonal_same_axis", z(&[2, 3]).diagonal(0, 1, -1)),
        ("unfold_window_too_big", z(&[2, 3]).unfold(1, 4, 1)),
        (
            "scatter_src_too_small",
            z(&[2, 3]).scatter(1, &t(&[2, 2], DType::I64), &z(&[2, 1])),
        ),
        (
            "scatter_add_of_bool",
            t(&[2, 3], DType::BOOL).scatter_add(
                1,
                &t(&[2, 2], DType::I64),
                &t(&[2, 2], DType::BOOL),
            ),
        ),
        (
            "cross_entropy_float_labels",
            z(&[4, 10]).cross_entropy(&z(&[4])),
        ),
        (
            "conv2d_channels",
            z(&[1, 3, 8, 8]).conv2d(&z(&[4, 2, 3, 3]), None, ConvOptions::default()),
        ),
        (
            "conv2d_bias_shape",
            z(&[1, 3, 8, 8]).conv2d(&z(&[4, 3, 3, 3]), Some(&z(&[3])), ConvOptions::default()),
        ),
        (
            "pool_window_too_big",
            z(&[1, 3, 4, 4]).max_pool2d(PoolOptions::new((5, 5))),
        ),
        (
            "avg_pool_divisor_zero",
            z(&[1, 3, 4, 4]).avg_pool2d(PoolOptions::new((2, 2)).divisor_override(0)),
        ),
        (
            "slice_too_many",
            z(&[2, 3]).slice(&[Slice::all(), Slice::all(), Slice::range(0, 1)]),
        ),
        (
            "interpolate_sizes",
            z(&[1, 2, 5, 5]).interpolate(&[8], InterpolateMode::Bilinear, false),
        ),
        (
            "linear_in_features",
            z(&[3, 64]).linear(&z(&[10, 32]), None),
        ),
        ("diag_rank", z(&[2, 3, 4]).diag(0)),
        (
            "shift_of_bool",
            t(&[3], DType::BOOL).bitwise_left_shift(true),
        ),
        (
            "smooth_l1_negative_beta",
            z(&[2, 3]).smooth_l1_loss(&z(&[2, 3]), morok::Reduction::Mean, -1.0),
        ),
        ("broadcast_to_mismatch", z(&[2, 3]).broadcast_to(&[3, 3])),
        (
            "conv1d_groups",
            z(&[1, 3, 8]).conv1d(
                &z(&[4, 2, 3]),
                None,
                Conv1dOptions {
                    groups: 2,
                    ..Default::default()
                },
            ),
        ),
        (
            "conv_transpose_crops_all",
            z(&[1, 2, 3, 3]).conv_transpose2d(
                &z(&[2, 3, 2, 2]),
                None,
                ConvTransposeOptions {
                    padding: (2, 2).into(),
                    ..Default::default()
                },
            ),
        ),
        (
            "attention_heads",
            z(&[1, 4, 8, 16]).scaled_dot_product_attention(
                &z(&[1, 3, 8, 16]),
                &z(&[1, 3, 8, 16]),
                &morok::AttentionOptions {
                    enable_gqa: true,
                    ..Default::default()
                },
            ),
        ),
        (
            "scatter_reduce_bool_sum",
            t(&[2, 3], DType::BOOL).scatter_reduce(
                1,
                &t(&[2, 2], DType::I64),
                &t(&[2, 2], DType::BOOL),
                morok::ScatterReduce::Sum,
                true,
            ),
        ),
        (
            "pad_mode_reflect_too_far",
            z(&[2, 3]).pad_mode(&[(0, 0), (3, 3)], morok::PadMode::Reflect),
        ),
        (
            "bce_weight_shape",
            z(&[4, 3]).binary_cross_entropy(&z(&[4, 3]), Some(&z(&[4])), morok::Reduction::Mean),
        ),
        ("lerp_weight_shape", z(&[2, 3]).lerp(&z(&[2, 3]), z(&[2]))),
        (
            "scatter_value_index_shape",
            z(&[2, 3]).scatter_value(1, &t(&[3, 2], DType::I64), 1.0f64),
        ),
        (
            "cross_entropy_label_shape",
            z(&[4, 10]).cross_entropy(&t(&[10], DType::I64)),
        ),
    ];
    // These kernels' first dim is the signature's `N`, which the tensor
    // API reports as its value (3).
    let symbolic = [
        "linear_in_features",
        "bitwise_of_float",
        "tril_needs_matrix",
        "argmin_bad_axis",
        "cumsum_bad_axis",
        "topk_more_than_the_axis",
    ];
    for (case, result) in cases {
        let path = format!(
            "{}/ui-tests/dsl/fail/{case}.stderr",
            env!("CARGO_MANIFEST_DIR")
        );
        let stderr = std::fs::read_to_string(&path).expect("the ui-test's .stderr exists");
        let first = stderr.lines().next().unwrap_or_default();
        let mut want = words(result);
        if symbolic.contains(&case) {
            want = want.replacen("[3", "[N", 1);
        }
        assert_eq!(first, format!("error: {want}"), "{case}");
    }
}
