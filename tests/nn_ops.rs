//! einsum, attention and the math / nn ops of issue 10 against
//! hand-computed PyTorch results (reference evaluator).

use morok::{AttentionOptions, DType, IsCloseOptions, Tensor};

mod common;

use common::{close, f32s, vals};

#[test]
fn einsum_equations() {
    let a = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = f32s(&[1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]);
    let mm = Tensor::einsum("ij,jk->ik", &[&a, &b]).unwrap();
    close(&vals(&mm), &vals(&a.matmul(&b).unwrap()));
    let implicit = Tensor::einsum("ij, jk", &[&a, &b]).unwrap();
    close(&vals(&implicit), &vals(&mm));
    let sq = f32s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    close(&vals(&Tensor::einsum("ii", &[&sq]).unwrap()), &[5.0]);
    close(
        &vals(&Tensor::einsum("ii->i", &[&sq]).unwrap()),
        &[1.0, 4.0],
    );
    close(
        &vals(&Tensor::einsum("ij->ji", &[&a]).unwrap()),
        &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0],
    );
    close(&vals(&Tensor::einsum("ij->", &[&a]).unwrap()), &[21.0]);
    let v = f32s(&[1.0, 2.0], &[2]);
    close(
        &vals(&Tensor::einsum("i,j->ij", &[&v, &v]).unwrap()),
        &[1.0, 2.0, 2.0, 4.0],
    );
    let batch = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[2, 2, 2]);
    let t = Tensor::einsum("...ij->...ji", &[&batch]).unwrap();
    assert_eq!(t.shape(), &[2, 2, 2]);
    close(&vals(&t), &[1.0, 3.0, 2.0, 4.0, 5.0, 7.0, 6.0, 8.0]);
    let bmm = Tensor::einsum("bij,bjk->bik", &[&batch, &batch]).unwrap();
    close(&vals(&bmm), &vals(&batch.matmul(&batch).unwrap()));
    close(
        &vals(&Tensor::einsum("...ii->...", &[&batch]).unwrap()),
        &[5.0, 13.0],
    );
    for bad in [
        "ij,jk->ik,",
        "ij->ii",
        "ij->k",
        "i2",
        "ij->i->j",
        "ijk",
        "ij,jk",
    ] {
        let e = Tensor::einsum(bad, &[&a, &a]).unwrap_err();
        assert_eq!(e.op(), "einsum", "{bad}");
        assert!(e.location().file().ends_with("nn_ops.rs"), "{bad}: {e}");
    }
}

#[test]
fn attention_values() {
    let q = f32s(&[1.0], &[1, 1]);
    let k = f32s(&[0.0, 1.0], &[2, 1]);
    let v = f32s(&[10.0, 20.0], &[2, 1]);
    let out = q
        .scaled_dot_product_attention(&k, &v, &AttentionOptions::default())
        .unwrap();
    let w = 1.0f64.exp() / (1.0 + 1.0f64.exp());
    close(&vals(&out), &[10.0 * (1.0 - w) + 20.0 * w]);
    let q2 = f32s(&[1.0, 1.0], &[2, 1]);
    let causal = AttentionOptions {
        is_causal: true,
        ..AttentionOptions::default()
    };
    let out = q2.scaled_dot_product_attention(&k, &v, &causal).unwrap();
    close(&vals(&out), &[10.0, 10.0 * (1.0 - w) + 20.0 * w]);
    // Grouped-query heads: 2 query heads share one key/value head.
    let qh = f32s(&[1.0, 1.0], &[2, 1, 1]);
    let kh = k.reshape(&[1, 2, 1]).unwrap();
    let vh = v.reshape(&[1, 2, 1]).unwrap();
    let gqa = AttentionOptions {
        enable_gqa: true,
        ..AttentionOptions::default()
    };
    let out = qh.scaled_dot_product_attention(&kh, &vh, &gqa).unwrap();
    close(&vals(&out), &[10.0 * (1.0 - w) + 20.0 * w; 2]);
    let line = line!() + 1;
    let e = qh.scaled_dot_product_attention(&kh, &vh, &AttentionOptions::default());
    let e = e.unwrap_err();
    assert_eq!(
        (e.op(), e.location().line()),
        ("scaled_dot_product_attention", line)
    );
    assert!(
        e.to_string()
            .contains("2 query heads for 1 key/value heads"),
        "{e}"
    );
}

#[test]
fn math_values() {
    let x = f32s(&[-2.0, -0.5, 0.0, 0.25, 3.0], &[5]);
    let want = |f: fn(f64) -> f64| -> Vec<f64> {
        [-2.0f64, -0.5, 0.0, 0.25, 3.0]
            .iter()
            .map(|&v| f(v) as f32 as f64)
            .collect()
    };
    let near = |got: Vec<f64>, want: Vec<f64>| {
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 2e-6 * (1.0 + w.abs()) || (g.is_nan() && w.is_nan()),
                "{got:?} vs {want:?}"
            );
        }
    };
    near(vals(&x.sinh().unwrap()), want(f64::sinh));
    near(vals(&x.cosh().unwrap()), want(f64::cosh));
    near(vals(&x.asinh().unwrap()), want(f64::asinh));
    near(vals(&x.atan().unwrap()), want(f64::atan));
    near(
        vals(&x.mul(0.3).unwrap().asin().unwrap()),
        want(|v| (v * 0.3f32 as f64).asin()),
    );
    near(
        vals(&x.mul(0.3).unwrap().acos().unwrap()),
        want(|v| (v * 0.3f32 as f64).acos()),
    );
    near(
        vals(&x.mul(0.3).unwrap().atanh().unwrap()),
        want(|v| (v * 0.3f32 as f64).atanh()),
    );
    near(
        vals(&x.abs().unwrap().add(1.0).unwrap().acosh().unwrap()),
        want(|v| (v.abs() + 1.0).acosh()),
    );
    near(
        vals(&x.abs().unwrap().add(0.5).unwrap().log10().unwrap()),
        want(|v| (v.abs() + 0.5).log10()),
    );
    near(vals(&x.log1p().unwrap()), want(f64::ln_1p));
    near(vals(&x.expm1().unwrap()), want(f64::exp_m1));
    let ones = f32s(&[1.0, -1.0, 0.0, -3.0, 2.0], &[5]);
    assert_eq!(x.atan2(&ones).unwrap().dtype(), DType::F32);
    near(vals(&x.atan2(&ones).unwrap()), {
        let o = [1.0f64, -1.0, 0.0, -3.0, 2.0];
        [-2.0f64, -0.5, 0.0, 0.25, 3.0]
            .iter()
            .zip(o)
            .map(|(&y, x)| y.atan2(x) as f32 as f64)
            .collect()
    });
    close(
        &vals(&x.copysign(&ones).unwrap()),
        &[2.0, -0.5, 0.0, -0.25, 3.0],
    );
    close(&vals(&x.fmod(-1.5).unwrap()), &[-0.5, -0.5, 0.0, 0.25, 0.0]);
    let i = Tensor::from_slice(&[-7i32, 7, 5]);
    close(
        &vals(&i.fmod(Tensor::from_slice(&[2i32, -2, 0])).unwrap()),
        &[-1.0, 1.0, 0.0],
    );
    close(
        &vals(&i.div_mode(2, morok::RoundingMode::Trunc).unwrap()),
        &[-3.0, 3.0, 2.0],
    );
    close(
        &vals(&i.div_mode(2, morok::RoundingMode::Floor).unwrap()),
        &[-4.0, 3.0, 2.0],
    );
    close(&vals(&i.bitwise_and(6).unwrap()), &[0.0, 6.0, 4.0]);
    close(
        &vals(
            &i.bitwise_left_shift(Tensor::from_slice(&[1i32, 40, 2]))
                .unwrap(),
        ),
        &[-14.0, 0.0, 20.0],
    );
    close(&vals(&i.bitwise_right_shift(1).unwrap()), &[-4.0, 3.0, 2.0]);
    close(&vals(&i.bitwise_not().unwrap()), &[6.0, -8.0, -6.0]);
    close(&vals(&x.logaddexp(&x).unwrap()), &want(|v| v + 2f64.ln()));
    close(
        &vals(&x.lerp(&ones, 0.5).unwrap()),
        &[-0.5, -0.75, 0.0, -1.375, 2.5],
    );
    assert!(x
        .allclose(x.add(1e-9).unwrap(), IsCloseOptions::default())
        .unwrap());
    let inf = f32s(&[f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1.0], &[4]);
    close(&vals(&inf.isfinite().unwrap()), &[0.0, 0.0, 0.0, 1.0]);
    close(&vals(&inf.isposinf().unwrap()), &[1.0, 0.0, 0.0, 0.0]);
    close(&vals(&inf.isneginf().unwrap()), &[0.0, 1.0, 0.0, 0.0]);
    let b = Tensor::from_slice(&[200u8, 100]);
    let s = b.sum_dtype(None, false, morok::DType::U8).unwrap();
    close(&vals(&s), &[44.0]);
}

#[test]
fn activations_and_losses() {
    let x = f32s(&[-2.0, 0.5, 3.0], &[3]);
    close(&vals(&x.relu6().unwrap()), &[0.0, 0.5, 3.0]);
    close(
        &vals(&x.hardsigmoid().unwrap()),
        &[1.0 / 6.0, 0.5 + 0.5 / 6.0, 1.0],
    );
    close(
        &vals(&x.softsign().unwrap()),
        &[-2.0 / 3.0, 0.5 / 1.5, 0.75],
    );
    let e = |v: f64| v.exp_m1();
    close(&vals(&x.elu(1.0).unwrap()), &[e(-2.0), 0.5, 3.0]);
    let sp = |v: f64| (1.0 + v.exp()).ln();
    close(
        &vals(&x.softplus(1.0, 20.0).unwrap()),
        &[sp(-2.0), sp(0.5), sp(3.0)],
    );
    close(
        &vals(&x.logsigmoid().unwrap()),
        &[-sp(2.0), -sp(-0.5), -sp(-3.0)],
    );
    close(
        &vals(&x.mish().unwrap()),
        &[
            -2.0 * sp(-2.0).tanh(),
            0.5 * sp(0.5).tanh(),
            3.0 * sp(3.0).tanh(),
        ],
    );
    let y = f32s(&[-1.0, 1.0, 1.0], &[3]);
    close(
        &vals(&x.mse_loss(&y, morok::Reduction::Mean).unwrap()),
        &[(1.0 + 0.25 + 4.0) / 3.0],
    );
    close(
        &vals(&x.l1_loss(&y, morok::Reduction::Sum).unwrap()),
        &[3.5],
    );
    close(
        &vals(&x.smooth_l1_loss(&y, morok::Reduction::None, 1.0).unwrap()),
        &[0.5, 0.125, 1.5],
    );
    // cross_entropy with weights and ignore_index, against a hand sum.
    let logits = f32s(&[1.0, 2.0, 3.0, 1.0, 1.0, 1.0], &[2, 3]);
    let t = Tensor::from_slice(&[2i64, 0]);
    let lse0 = (1f64.exp() + 2f64.exp() + 3f64.exp()).ln();
    let lse1 = 1.0 + 3f64.ln();
    let opts = morok::ClassLossOptions {
        weight: Some(f32s(&[1.0, 2.0, 3.0], &[3])),
        ..Default::default()
    };
    let ce = logits.cross_entropy_with(&t, &opts).unwrap();
    close(
        &vals(&ce),
        &[(3.0 * (lse0 - 3.0) + 1.0 * (lse1 - 1.0)) / 4.0],
    );
    let ignore = morok::ClassLossOptions {
        ignore_index: Some(0),
        ..Default::default()
    };
    close(
        &vals(&logits.cross_entropy_with(&t, &ignore).unwrap()),
        &[lse0 - 3.0],
    );
    let smooth = morok::ClassLossOptions {
        label_smoothing: 0.3,
        reduction: morok::Reduction::None,
        ..Default::default()
    };
    let mean_nll0 = (3.0 * lse0 - 6.0) / 3.0;
    close(
        &vals(&logits.cross_entropy_with(&t, &smooth).unwrap())[..1],
        &[0.7 * (lse0 - 3.0) + 0.3 * mean_nll0],
    );
    let probs = f32s(&[0.0, 0.0, 1.0, 1.0, 0.0, 0.0], &[2, 3]);
    close(
        &vals(
            &logits
                .cross_entropy_with(&probs, &Default::default())
                .unwrap(),
        ),
        &vals(
            &ce.mul(0.0)
                .unwrap()
                .add(((lse0 - 3.0) + (lse1 - 1.0)) / 2.0)
                .unwrap(),
        ),
    );
    let p = f32s(&[0.25, 0.5], &[2]);
    let q = f32s(&[1.0, 0.0], &[2]);
    close(
        &vals(
            &p.binary_cross_entropy(&q, None, morok::Reduction::Sum)
                .unwrap(),
        ),
        &[-(0.25f64.ln()) - 0.5f64.ln()],
    );
    let bce = p
        .binary_cross_entropy_with_logits(&q, None, None, morok::Reduction::None)
        .unwrap();
    close(&vals(&bce), &[sp(-0.25), sp(0.5)]);
}

#[test]
fn cumulative_and_sorting() {
    let x = f32s(&[3.0, 1.0, f32::NAN, 3.0, 0.5, 2.0], &[2, 3]);
    let (v, i) = x.cummax(1).unwrap();
    close(&vals(&v), &[3.0, 3.0, f64::NAN, 3.0, 3.0, 3.0]);
    assert_eq!(vals(&i), [0.0, 0.0, 2.0, 0.0, 0.0, 0.0]);
    let (v, i) = x.cummin(0).unwrap();
    close(&vals(&v), &[3.0, 1.0, f64::NAN, 3.0, 0.5, f64::NAN]);
    assert_eq!(vals(&i), [0.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
    let y = f32s(&[1.0, 2.0, 3.0, 4.0], &[4]);
    close(&vals(&y.cumprod(0).unwrap()), &[1.0, 2.0, 6.0, 24.0]);
    let want: Vec<f64> = (1..=4)
        .map(|k| (1..=k).map(|v| (v as f64).exp()).sum::<f64>().ln())
        .collect();
    close(&vals(&y.logcumsumexp(0).unwrap()), &want);
    let s = f32s(&[2.0, f32::NAN, -1.0, 2.0, 0.0], &[5]);
    let (v, i) = s.sort(0, false).unwrap();
    close(&vals(&v), &[-1.0, 0.0, 2.0, 2.0, f64::NAN]);
    assert_eq!(vals(&i), [2.0, 4.0, 0.0, 3.0, 1.0]);
    let (v, i) = s.sort(0, true).unwrap();
    close(&vals(&v), &[f64::NAN, 2.0, 2.0, 0.0, -1.0]);
    assert_eq!(vals(&i), [1.0, 0.0, 3.0, 4.0, 2.0]);
    let m = f32s(&[5.0, 1.0, 4.0, 2.0, 8.0, 0.0], &[2, 3]);
    let (v, i) = m.topk(2, 1, true).unwrap();
    close(&vals(&v), &[5.0, 4.0, 8.0, 2.0]);
    assert_eq!(vals(&i), [0.0, 2.0, 1.0, 0.0]);
    assert_eq!(
        vals(&m.argsort(0, false).unwrap()),
        [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    );
    assert!(m.topk(4, 1, true).is_err());
}

#[test]
fn padding_creation_and_init() {
    use morok::{DType, PadMode};
    let x = f32s(&[1.0, 2.0, 3.0], &[1, 3]);
    close(
        &vals(&x.pad_mode(&[(0, 0), (2, 1)], PadMode::Reflect).unwrap()),
        &[3.0, 2.0, 1.0, 2.0, 3.0, 2.0],
    );
    close(
        &vals(&x.pad_mode(&[(0, 0), (2, 1)], PadMode::Replicate).unwrap()),
        &[1.0, 1.0, 1.0, 2.0, 3.0, 3.0],
    );
    close(
        &vals(&x.pad_mode(&[(0, 0), (2, 1)], PadMode::Circular).unwrap()),
        &[2.0, 3.0, 1.0, 2.0, 3.0, 1.0],
    );
    let c = x
        .pad_mode(&[(1, 0), (0, 1)], PadMode::Constant(7.0))
        .unwrap();
    assert_eq!(c.shape(), &[2, 4]);
    close(&vals(&c), &[7.0, 7.0, 7.0, 7.0, 1.0, 2.0, 3.0, 7.0]);
    assert!(x.pad_mode(&[(0, 0), (3, 0)], PadMode::Reflect).is_err());
    let n = f32s(&[3.0, 4.0], &[2]).normalize(2.0, 0, 1e-12).unwrap();
    close(&vals(&n), &[0.6, 0.8]);
    close(
        &vals(&Tensor::arange_dtype(0.0, 5.0, 2.0, DType::I16).unwrap()),
        &[0.0, 2.0, 4.0],
    );
    close(
        &vals(&Tensor::linspace_dtype(0.0, 1.0, 3, DType::F16).unwrap()),
        &[0.0, 0.5, 1.0],
    );
    close(
        &vals(&Tensor::eye_rect(2, 3, DType::I32).unwrap()),
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
    );
    assert_eq!(vals(&Tensor::empty(&[2], DType::F32)), [0.0, 0.0]);
    let w = Tensor::kaiming_uniform(&[16, 8, 3], DType::F32, 0.0, 7).unwrap();
    let bound = (2.0f64).sqrt() * (3.0 / 24.0f64).sqrt();
    let v = vals(&w);
    assert!(v.iter().all(|x| x.abs() <= bound));
    assert!(v.iter().any(|x| x.abs() > 0.9 * bound));
    let w = Tensor::xavier_normal(&[60, 50], DType::F32, 1.0, 3).unwrap();
    let v: Vec<f64> = w
        .to_vec::<f32>()
        .unwrap()
        .into_iter()
        .map(f64::from)
        .collect();
    let var = v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64;
    assert!((var / (2.0 / 110.0) - 1.0).abs() < 0.1, "{var}");
    assert!(Tensor::xavier_uniform(&[3], DType::F32, 1.0, 1).is_err());
    assert!(Tensor::kaiming_normal(&[4, 0], DType::F32, 0.0, 1).is_err());
}

#[test]
fn interpolate_modes() {
    use morok::InterpolateMode as M;
    let x = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 4]);
    let up = |size: usize, m, ac| vals(&x.interpolate(&[size], m, ac).unwrap());
    close(
        &up(8, M::Nearest, false),
        &[1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0],
    );
    close(&up(3, M::Nearest, false), &[1.0, 2.0, 3.0]);
    close(&up(3, M::NearestExact, false), &[1.0, 3.0, 4.0]);
    close(
        &up(8, M::Linear, false),
        &[1.0, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4.0],
    );
    close(
        &up(7, M::Linear, true),
        &[1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0],
    );
    let img = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2]);
    let b = img.interpolate(&[3, 3], M::Bilinear, true).unwrap();
    close(&vals(&b), &[1.0, 1.5, 2.0, 2.0, 2.5, 3.0, 3.0, 3.5, 4.0]);
    assert!(x.interpolate(&[3], M::Bilinear, false).is_err());
    assert!(x.interpolate(&[3], M::Nearest, true).is_err());
    assert!(x.interpolate(&[3, 3], M::Nearest, false).is_err());
}

#[test]
fn transposed_convolutions() {
    use morok::ConvTransposeOptions as O;
    let x = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2]);
    let ones = Tensor::full(&[1, 1, 2, 2], 1.0f32);
    let y = x.conv_transpose2d(&ones, None, O::default()).unwrap();
    close(&vals(&y), &[1.0, 3.0, 2.0, 4.0, 10.0, 6.0, 3.0, 7.0, 4.0]);
    let s2 = O {
        stride: (2, 2),
        ..O::default()
    };
    let y = x.conv_transpose2d(&ones, None, s2).unwrap();
    assert_eq!(y.shape(), &[1, 1, 4, 4]);
    close(&vals(&y)[..8], &[1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0]);
    let cropped = O {
        stride: (2, 2),
        padding: (1, 1).into(),
        ..O::default()
    };
    close(
        &vals(&x.conv_transpose2d(&ones, None, cropped).unwrap()),
        &[1.0, 2.0, 3.0, 4.0],
    );
    let w = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2]);
    let row = f32s(&[1.0, 10.0], &[1, 1, 1, 2]);
    close(
        &vals(&row.conv_transpose2d(&w, None, O::default()).unwrap()),
        &[1.0, 12.0, 20.0, 3.0, 34.0, 40.0],
    );
    let two = f32s(&[5.0, 7.0], &[1, 2, 1, 1]);
    let gw = f32s(&[2.0, 3.0], &[2, 1, 1, 1]);
    let grouped = O {
        groups: 2,
        ..O::default()
    };
    close(
        &vals(&two.conv_transpose2d(&gw, None, grouped).unwrap()),
        &[10.0, 21.0],
    );
    let seq = f32s(&[1.0, 10.0], &[1, 1, 2]);
    let k = f32s(&[1.0, 2.0], &[1, 1, 2]);
    let y = seq.conv_transpose1d(&k, None, O::default()).unwrap();
    close(&vals(&y), &[1.0, 12.0, 20.0]);
    assert!(x
        .conv_transpose2d(
            &w,
            None,
            O {
                output_padding: (1, 1),
                ..O::default()
            }
        )
        .is_err());
}

#[test]
fn pooling_options() {
    use morok::PoolOptions;
    let x = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2]);
    let o = PoolOptions::new((2, 2)).stride((1, 1)).padding((1, 1));
    let inc = vals(&x.avg_pool2d(o).unwrap());
    assert_eq!(inc.len(), 9);
    close(&inc[..2], &[0.25, 0.75]);
    let exc = vals(&x.avg_pool2d(o.count_include_pad(false)).unwrap());
    close(&exc[..2], &[1.0, 1.5]);
    let row = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1, 1, 5]);
    let c = PoolOptions::new((1, 2)).ceil_mode(true);
    close(&vals(&row.max_pool1d(c).unwrap()), &[2.0, 4.0, 5.0]);
    close(&vals(&row.avg_pool1d(c).unwrap()), &[1.5, 3.5, 5.0]);
    close(
        &vals(&row.avg_pool1d(PoolOptions::new((1, 2))).unwrap()),
        &[1.5, 3.5],
    );
    let dil = PoolOptions::new((1, 2)).stride((1, 1)).dilation((1, 2));
    close(&vals(&row.max_pool1d(dil).unwrap()), &[3.0, 4.0, 5.0]);
    // ceil_mode drops a window that would start in the right padding.
    let p = PoolOptions::new((1, 2))
        .stride((1, 2))
        .padding((0, 1))
        .ceil_mode(true);
    let r4 = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 4]);
    close(&vals(&r4.max_pool1d(p).unwrap()), &[1.0, 3.0, 4.0]);
}

#[test]
fn attention_dropout() {
    let q = f32s(&[1.0, 0.5, -1.0, 2.0], &[2, 2]);
    let kv = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[3, 2]);
    let plain = q
        .scaled_dot_product_attention(&kv, &kv, &AttentionOptions::default())
        .unwrap();
    // p = 0 is exact: no dropout is built, whatever the seed.
    let zero = AttentionOptions {
        dropout_p: 0.0,
        dropout_seed: 3,
        ..AttentionOptions::default()
    };
    let same = q.scaled_dot_product_attention(&kv, &kv, &zero).unwrap();
    assert_eq!(vals(&same), vals(&plain));
    // p = 1 drops every weight.
    let all = AttentionOptions {
        dropout_p: 1.0,
        ..AttentionOptions::default()
    };
    close(
        &vals(&q.scaled_dot_product_attention(&kv, &kv, &all).unwrap()),
        &[0.0; 4],
    );
    // A seed fixes the mask; kept weights are scaled by 1 / (1 - p), so
    // with value rows of ones every output is (kept weight sum) · 2.
    let ones = Tensor::full(&[3, 2], 1.0f32);
    let half = AttentionOptions {
        dropout_p: 0.5,
        dropout_seed: 11,
        ..AttentionOptions::default()
    };
    let a = vals(&q.scaled_dot_product_attention(&kv, &ones, &half).unwrap());
    let b = vals(&q.scaled_dot_product_attention(&kv, &ones, &half).unwrap());
    assert_eq!(a, b);
    assert!(
        a.iter().all(|&v| (-1e-6..=2.0 + 1e-5).contains(&v)),
        "{a:?}"
    );
    let line = line!() + 1;
    let e = q.scaled_dot_product_attention(
        &kv,
        &kv,
        &AttentionOptions {
            dropout_p: 1.5,
            ..half
        },
    );
    let e = e.unwrap_err();
    assert_eq!(
        (e.op(), e.location().line()),
        ("scaled_dot_product_attention", line)
    );
    assert!(e.to_string().contains("dropout_p 1.5"), "{e}");
}

#[test]
fn pooling_indices_unpool_and_divisor() {
    use morok::PoolOptions;
    let x = Tensor::from_vec((0..16).map(|v| v as f32).collect(), &[1, 1, 4, 4]).unwrap();
    let o = PoolOptions::new((2, 2));
    let (v, i) = x.max_pool2d_with_indices(o).unwrap();
    close(&vals(&v), &[5.0, 7.0, 13.0, 15.0]);
    close(&vals(&i), &[5.0, 7.0, 13.0, 15.0]);
    let back = v.max_unpool2d(&i, o, None).unwrap();
    assert_eq!(back.shape(), &[1, 1, 4, 4]);
    let mut want = [0.0; 16];
    for p in [5, 7, 13, 15] {
        want[p] = p as f64;
    }
    close(&vals(&back), &want);
    // Ties pick the first maximum of the window; padding never wins.
    let flat = Tensor::full(&[1, 1, 3, 3], -7.0f32);
    let padded = PoolOptions::new((2, 2)).padding((1, 1));
    let (v, i) = flat.max_pool2d_with_indices(padded).unwrap();
    close(&vals(&v), &[-7.0; 4]);
    close(&vals(&i), &[0.0, 1.0, 3.0, 4.0]);
    // A NaN is the maximum; PyTorch keeps the last one of the window.
    let nan = f32s(&[1.0, f32::NAN, 3.0, f32::NAN, 2.0, 0.0], &[1, 1, 1, 6]);
    let (nv, ni) = nan
        .max_pool2d_with_indices(PoolOptions::new((1, 3)))
        .unwrap();
    assert!(vals(&nv).iter().all(|x| x.is_nan()), "{:?}", vals(&nv));
    close(&vals(&ni), &[1.0, 3.0]);
    // output_size larger than the default.
    let big = v.max_unpool2d(&i, padded, Some((3, 4))).unwrap();
    assert_eq!(big.shape(), &[1, 1, 3, 4]);
    close(
        &vals(&big),
        &[
            -7.0, -7.0, 0.0, -7.0, -7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        ],
    );
    let line = line!() + 1;
    let e = v.max_unpool2d(&v, padded, None).unwrap_err();
    assert_eq!((e.op(), e.location().line()), ("max_unpool2d", line));
    // divisor_override replaces the window counts.
    let ones = Tensor::full(&[1, 1, 4, 4], 1.0f32);
    let d = PoolOptions::new((2, 2)).padding((1, 1)).divisor_override(3);
    close(
        &vals(&ones.avg_pool2d(d).unwrap()),
        &[
            1.0 / 3.0,
            2.0 / 3.0,
            1.0 / 3.0,
            2.0 / 3.0,
            4.0 / 3.0,
            2.0 / 3.0,
            1.0 / 3.0,
            2.0 / 3.0,
            1.0 / 3.0,
        ],
    );
    assert!(ones.avg_pool2d(o.divisor_override(0)).is_err());
}

#[test]
fn volumes_match_their_planar_forms() {
    use morok::{
        Conv3dOptions, ConvOptions, ConvTranspose3dOptions, ConvTransposeOptions, DType,
        Pool3dOptions, PoolOptions,
    };
    // A depth-1 volume with depth-1 kernels is the 2-D op.
    let img = Tensor::randn_seeded(&[2, 4, 5, 6], DType::F32, 1);
    let vol = img.unsqueeze(2).unwrap();
    let w = Tensor::randn_seeded(&[6, 2, 2, 3], DType::F32, 2);
    let w3 = w.unsqueeze(2).unwrap();
    let o2 = ConvOptions {
        stride: (2, 1),
        padding: (1, 2).into(),
        dilation: (1, 2),
        groups: 2,
    };
    let o3 = Conv3dOptions {
        stride: (1, 2, 1),
        padding: (0, 1, 2).into(),
        dilation: (1, 1, 2),
        groups: 2,
    };
    let a = vals(&img.conv2d(&w, None, o2).unwrap());
    let b = vals(&vol.conv3d(&w3, None, o3).unwrap());
    close(&b, &a);
    let wt = Tensor::randn_seeded(&[4, 3, 2, 2], DType::F32, 3);
    let t2 = ConvTransposeOptions {
        stride: (2, 3),
        padding: (1, 0).into(),
        output_padding: (1, 2),
        dilation: (1, 1),
        groups: 2,
    };
    let t3 = ConvTranspose3dOptions {
        stride: (1, 2, 3),
        padding: (0, 1, 0).into(),
        output_padding: (0, 1, 2),
        dilation: (1, 1, 1),
        groups: 2,
    };
    let a = vals(&img.conv_transpose2d(&wt, None, t2).unwrap());
    let b = vals(
        &vol.conv_transpose3d(&wt.unsqueeze(2).unwrap(), None, t3)
            .unwrap(),
    );
    close(&b, &a);
    let p2 = PoolOptions::new((3, 2))
        .stride((2, 2))
        .padding((1, 1))
        .ceil_mode(true);
    let p3 = Pool3dOptions::new((1, 3, 2))
        .stride((1, 2, 2))
        .padding((0, 1, 1))
        .ceil_mode(true);
    close(
        &vals(&vol.max_pool3d(p3).unwrap()),
        &vals(&img.max_pool2d(p2).unwrap()),
    );
    close(
        &vals(&vol.avg_pool3d(p3.count_include_pad(false)).unwrap()),
        &vals(&img.avg_pool2d(p2.count_include_pad(false)).unwrap()),
    );
    let line = line!() + 1;
    let e = img.conv3d(&w3, None, o3).unwrap_err();
    assert_eq!((e.op(), e.location().line()), ("conv3d", line));
    assert!(e.to_string().contains("[2, 4, 5, 6]"), "{e}");
}

#[test]
fn interpolate_scale_factor() {
    use morok::InterpolateMode as M;
    // scale 1.7 on 2 samples: 3 outputs, sources (o + 0.5) / 1.7 - 0.5.
    let x = f32s(&[0.0, 1.0], &[1, 1, 2]);
    let y = x.interpolate_scale(&[1.7], M::Linear, false).unwrap();
    let src = |o: f64| ((o + 0.5) / 1.7 - 0.5).clamp(0.0, 1.0);
    close(&vals(&y), &[src(0.0), src(1.0), src(2.0)]);
    // With `size` the ratio is in / out instead.
    let z = x.interpolate(&[3], M::Linear, false).unwrap();
    close(&vals(&z), &[0.0, 0.5, 1.0]);
    // Nearest: floor(o / scale).
    let r = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0], &[1, 1, 5]);
    let n = r.interpolate_scale(&[0.6], M::Nearest, false).unwrap();
    close(&vals(&n), &[0.0, 1.0, 3.0]);
    assert_eq!(
        r.interpolate_scale(&[2.0], M::Nearest, false)
            .unwrap()
            .shape(),
        &[1, 1, 10]
    );
    let line = line!() + 1;
    let e = r.interpolate_scale(&[0.0], M::Nearest, false).unwrap_err();
    assert_eq!((e.op(), e.location().line()), ("interpolate", line));
}

#[test]
fn kaiming_modes_and_gains() {
    use morok::{DType, FanMode, KaimingOptions, Nonlinearity};
    assert_eq!(Nonlinearity::Tanh.gain(), 5.0 / 3.0);
    assert_eq!(Nonlinearity::Relu.gain(), 2f64.sqrt());
    assert_eq!(Nonlinearity::LeakyRelu(1.0).gain(), 1.0);
    // [40, 10]: fan_in 10, fan_out 40.
    let out_relu = KaimingOptions {
        mode: FanMode::FanOut,
        nonlinearity: Nonlinearity::Relu,
    };
    let u = vals(&Tensor::kaiming_uniform_with(&[40, 10], DType::F32, out_relu, 4).unwrap());
    let bound = 2f64.sqrt() * (3.0f64 / 40.0).sqrt();
    let top = u.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(top <= bound && top > 0.9 * bound, "{top} vs {bound}");
    let lin = KaimingOptions {
        nonlinearity: Nonlinearity::Linear,
        ..KaimingOptions::default()
    };
    let n = vals(&Tensor::kaiming_normal_with(&[40, 10], DType::F32, lin, 4).unwrap());
    let var = n.iter().map(|v| v * v).sum::<f64>() / n.len() as f64;
    assert!((var - 0.1).abs() < 0.03, "{var}");
    // The default is PyTorch's: fan_in, leaky_relu with a = 0.
    assert_eq!(
        vals(&Tensor::kaiming_uniform(&[4, 3], DType::F32, 0.0, 1).unwrap()),
        vals(
            &Tensor::kaiming_uniform_with(&[4, 3], DType::F32, KaimingOptions::default(), 1)
                .unwrap()
        )
    );
}

/// Seeded normal `f32` samples of `shape`, realized into their own
/// buffer (a kernel reading them loads them instead of computing them).
fn realized_randn(shape: &[usize], seed: u64) -> Tensor {
    Tensor::randn_seeded(shape, morok::DType::F32, seed)
        .realize()
        .unwrap()
}

#[test]
fn padded_conv2d_reads_a_padded_copy_and_matches_the_reference() {
    // A 3x3 convolution with padding 1 on a row width the vector register
    // tile divides (8): the padded input is realized by its own kernel,
    // so the convolution's loads carry no border test (no `?:` around a
    // load in its code) and its register tile is vectors, and the result
    // equals the reference evaluator.
    use morok::ConvOptions;
    let (img, w, b) = (
        realized_randn(&[2, 4, 8, 8], 21),
        realized_randn(&[16, 4, 3, 3], 22),
        realized_randn(&[16], 23),
    );
    let opts = ConvOptions {
        padding: (1, 1).into(),
        ..ConvOptions::default()
    };
    let y = img.conv2d(&w, Some(&b), opts).unwrap();
    common::check(&y).unwrap();
    let kernels = y.realize().unwrap().kernels();
    assert_eq!(kernels.len(), 2, "a padding copy and the convolution");
    let conv = &kernels[1];
    if conv.backend == "CPU" {
        assert!(!conv.code.contains("? data"), "{}", conv.code);
        assert!(conv.code.contains("morok_f32x"), "vectors:\n{}", conv.code);
    }
    // no padding: no copy
    let plain = img.conv2d(&w, None, ConvOptions::default()).unwrap();
    common::check(&plain).unwrap();
    assert_eq!(plain.realize().unwrap().kernels().len(), 1);
}

#[test]
fn padded_conv2d_of_rows_the_vector_does_not_divide_matches_the_reference() {
    // 40-wide rows (W6's 56 in small): on AVX-512 16 does not divide
    // them, so the register tile takes whole rows (two vectors of 16 and
    // one of 8) and keeps each loaded row vector in a register for the
    // FMAs of its output channels; the result equals the reference.
    use morok::ConvOptions;
    let (img, w) = (
        realized_randn(&[1, 3, 6, 40], 41),
        realized_randn(&[16, 3, 3, 3], 42),
    );
    let opts = ConvOptions {
        padding: (1, 1).into(),
        ..ConvOptions::default()
    };
    let y = img.conv2d(&w, None, opts).unwrap();
    common::check(&y).unwrap();
    let kernels = y.realize().unwrap().kernels();
    let conv = &kernels[kernels.len() - 1];
    if conv.backend == "CPU" && morok_backends::host::host_vector_bytes() == 64 {
        for part in ["morok_f32x16_load", "morok_f32x8_load"] {
            assert!(conv.code.contains(part), "{part}:\n{}", conv.code);
        }
        if morok_backends::host::host_has_fma() {
            assert!(conv.code.contains("MOROK_IN_REGISTER(v"), "{}", conv.code);
        }
    }
}

#[test]
fn unpadded_conv2d_of_a_larger_image_matches_the_reference() {
    // The random image (4096 normal samples) counts its elements; a count
    // that long combines two short running sums (`Tensor::counting`), so
    // the reference evaluator, which keeps movement ops as views and
    // reduces over the view in place, checks it in linear time (one
    // running sum over all elements took seconds).
    use morok::{ConvOptions, DType};
    let img = Tensor::randn_seeded(&[2, 8, 16, 16], DType::F32, 31);
    let w = Tensor::randn_seeded(&[8, 8, 3, 3], DType::F32, 32);
    let y = img.conv2d(&w, None, ConvOptions::default()).unwrap();
    common::check(&y).unwrap();
}
