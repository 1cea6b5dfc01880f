//! The padding convention (`docs/CONVENTIONS.md`): every pad and every
//! convolution or pool `padding` takes a signed `(before, after)` pair per
//! axis, in axis order, and a negative amount crops. Each option is checked
//! against the same computation spelled with an explicit `pad` on random
//! inputs (reference evaluator).

use morok::{
    Conv1dOptions, ConvOptions, ConvTransposeOptions, DType, PadMode, Pads, PoolOptions, Tensor,
};

mod common;

use common::{close, f32s, vals};

fn random(shape: &[usize], seed: u64) -> Tensor {
    Tensor::randn_seeded(shape, DType::F32, seed)
}

#[test]
fn conv_padding_is_a_pad_of_the_input() {
    let x = random(&[2, 3, 6, 5], 1);
    let w = random(&[4, 3, 3, 2], 2);
    for pads in [
        Pads([(1, 0), (0, 2)]),
        Pads([(-1, 2), (2, -1)]),
        Pads([(0, -2), (-1, 0)]),
    ] {
        let opts = ConvOptions {
            stride: (2, 1),
            padding: pads,
            ..ConvOptions::default()
        };
        let got = x.conv2d(&w, None, opts).unwrap();
        let mut all = vec![(0, 0), (0, 0)];
        all.extend(pads.0);
        let explicit = x
            .pad(&all, 0.0f32)
            .unwrap()
            .conv2d(
                &w,
                None,
                ConvOptions {
                    stride: (2, 1),
                    ..ConvOptions::default()
                },
            )
            .unwrap();
        assert_eq!(got.shape(), explicit.shape(), "{pads:?}");
        close(&vals(&got), &vals(&explicit));
    }
    let seq = random(&[1, 2, 7], 3);
    let k = random(&[3, 2, 3], 4);
    let got = seq
        .conv1d(
            &k,
            None,
            Conv1dOptions {
                padding: Pads([(2, -1)]),
                ..Conv1dOptions::default()
            },
        )
        .unwrap();
    let explicit = seq
        .pad(&[(0, 0), (0, 0), (2, -1)], 0.0f32)
        .unwrap()
        .conv1d(&k, None, Conv1dOptions::default())
        .unwrap();
    close(&vals(&got), &vals(&explicit));
}

#[test]
fn symmetric_padding_is_pytorchs() {
    let x = random(&[1, 2, 5, 5], 5);
    let w = random(&[2, 2, 3, 3], 6);
    let tuple = ConvOptions {
        padding: (1, 2).into(),
        ..ConvOptions::default()
    };
    let pairs = ConvOptions {
        padding: Pads([(1, 1), (2, 2)]),
        ..ConvOptions::default()
    };
    assert_eq!(tuple, pairs);
    assert_eq!(x.conv2d(&w, None, tuple).unwrap().shape(), &[1, 2, 5, 7]);
    assert_eq!(PoolOptions::new((2, 2)).padding(1).padding, Pads::same(1));
}

#[test]
fn pool_padding_is_a_pad_that_never_wins_or_counts() {
    let x = random(&[2, 2, 6, 7], 7);
    let pads = Pads([(1, 0), (-1, 2)]);
    let opts = PoolOptions::new((2, 3)).stride((2, 2)).padding(pads);
    let plain = PoolOptions::new((2, 3)).stride((2, 2));
    let mut all = vec![(0, 0), (0, 0)];
    all.extend(pads.0);
    let low = x.pad(&all, f32::NEG_INFINITY).unwrap();
    close(
        &vals(&x.max_pool2d(opts).unwrap()),
        &vals(&low.max_pool2d(plain).unwrap()),
    );
    let zeros = x.pad(&all, 0.0f32).unwrap();
    close(
        &vals(&x.avg_pool2d(opts).unwrap()),
        &vals(&zeros.avg_pool2d(plain).unwrap()),
    );
    // Without count_include_pad, the divisor counts the input's cells only.
    let ones = Tensor::full(x.shape(), 1.0f32).pad(&all, 0.0f32).unwrap();
    let sums = zeros.avg_pool2d(plain.divisor_override(1)).unwrap();
    let counts = ones.avg_pool2d(plain.divisor_override(1)).unwrap();
    close(
        &vals(&x.avg_pool2d(opts.count_include_pad(false)).unwrap()),
        &vals(&sums.div(&counts).unwrap()),
    );
}

#[test]
fn transposed_convolution_padding_crops_each_side() {
    let x = random(&[1, 2, 3, 4], 8);
    let w = random(&[2, 3, 3, 2], 9);
    let full = x
        .conv_transpose2d(&w, None, ConvTransposeOptions::default())
        .unwrap();
    assert_eq!(full.shape(), &[1, 3, 5, 5]);
    let cropped = x
        .conv_transpose2d(
            &w,
            None,
            ConvTransposeOptions {
                padding: Pads([(1, 0), (0, 2)]),
                ..ConvTransposeOptions::default()
            },
        )
        .unwrap();
    let explicit = full
        .pad(&[(0, 0), (0, 0), (-1, 0), (0, -2)], 0.0f32)
        .unwrap();
    assert_eq!(cropped.shape(), explicit.shape());
    close(&vals(&cropped), &vals(&explicit));
    // A negative amount adds zeros at that border.
    let grown = x
        .conv_transpose2d(
            &w,
            None,
            ConvTransposeOptions {
                padding: Pads([(0, -1), (0, 0)]),
                ..ConvTransposeOptions::default()
            },
        )
        .unwrap();
    let explicit = full.pad(&[(0, 0), (0, 0), (0, 1), (0, 0)], 0.0f32).unwrap();
    close(&vals(&grown), &vals(&explicit));
}

#[test]
fn pad_modes_take_pairs_in_axis_order() {
    // PyTorch: F.pad(x, (2, 1, 1, 0), "reflect") pads the last axis by
    // (2, 1) and the one before by (1, 0).
    let x = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let y = x.pad_mode(&[(1, 0), (2, 1)], PadMode::Reflect).unwrap();
    assert_eq!(y.shape(), &[3, 6]);
    close(
        &vals(&y),
        &[
            6.0, 5.0, 4.0, 5.0, 6.0, 5.0, 3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 6.0, 5.0, 4.0, 5.0, 6.0,
            5.0,
        ],
    );
    // Negative amounts crop first; the mode then fills from what is left.
    let c = x.pad_mode(&[(0, 0), (-1, 1)], PadMode::Replicate).unwrap();
    close(&vals(&c), &[2.0, 3.0, 3.0, 5.0, 6.0, 6.0]);
    let k = x
        .pad_mode(&[(0, -1), (1, 0)], PadMode::Constant(9.0))
        .unwrap();
    close(
        &vals(&k),
        &vals(&x.pad(&[(0, -1), (1, 0)], 9.0f32).unwrap()),
    );
}

#[test]
fn padding_errors_name_the_op_and_shapes() {
    let x = random(&[1, 1, 4, 4], 10);
    let w = random(&[1, 1, 3, 3], 11);
    let crop = ConvOptions {
        padding: Pads([(-3, -2), (0, 0)]),
        ..ConvOptions::default()
    };
    let e = x.conv2d(&w, None, crop).unwrap_err().to_string();
    assert!(e.contains("conv2d") && e.contains("[1, 1, 4, 4]"), "{e}");
    let e = x
        .max_pool2d(PoolOptions::new((2, 2)).padding(Pads([(0, 0), (-5, 0)])))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("max_pool2d") && e.contains("removes more"),
        "{e}"
    );
    let e = x
        .pad_mode(&[(1, 1), (0, 0)], PadMode::Reflect)
        .unwrap_err()
        .to_string();
    assert!(e.contains("pad") && e.contains("4 axes"), "{e}");
}
