//! Front-end semantics checked through the reference evaluator against
//! hand-computed values (these need no compiler backend).

use morok::{ConvOptions, DType, PoolOptions, Slice, Tensor};

mod common;

use common::{close, f32s, vals};

#[test]
fn hands_on_values() {
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]);
    let b = Tensor::from_slice(&[10.0f32, 20.0, 30.0, 40.0]);
    let scaled = &(&a + &b) * &Tensor::from_slice(&[0.1f32]);
    close(&vals(&scaled), &[1.1, 2.2, 3.3, 4.4]);

    let m = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .reshape(&[2, 3])
        .unwrap();
    let t = m.transpose(0, 1).unwrap();
    assert_eq!(t.shape(), &[3, 2]);
    let bias = Tensor::from_slice(&[100.0f32, 200.0])
        .reshape(&[1, 2])
        .unwrap();
    close(
        &vals(&(&t + &bias)),
        &[101.0, 204.0, 102.0, 205.0, 103.0, 206.0],
    );
}

#[test]
fn matmul_shape_rules() {
    let a = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = f32s(&[1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]);
    let ab = a.dot(&b).unwrap();
    assert_eq!(ab.shape(), &[2, 2]);
    close(&vals(&ab), &[4.0, 5.0, 10.0, 11.0]);
    let v = Tensor::from_slice(&[1.0f32, 1.0, 1.0]);
    close(&vals(&v.dot(&b).unwrap()), &[2.0, 2.0]);
    close(&vals(&a.dot(&v).unwrap()), &[6.0, 15.0]);
    let vv = v.dot(&v).unwrap();
    assert_eq!(vv.shape(), &[] as &[usize]);
    close(&vals(&vv), &[3.0]);
    let batch = Tensor::from_vec((0..12).map(|x| x as f32).collect(), &[2, 2, 3]).unwrap();
    let out = batch.matmul(&b).unwrap();
    assert_eq!(out.shape(), &[2, 2, 2]);
    close(&vals(&out), &[2.0, 3.0, 8.0, 9.0, 14.0, 15.0, 20.0, 21.0]);
    let lin = v
        .linear(&a, Some(&Tensor::from_slice(&[1.0f32, -1.0])))
        .unwrap();
    close(&vals(&lin), &[7.0, 14.0]);
}

#[test]
fn python_division_semantics() {
    let a = Tensor::from_slice(&[7i32, -7, 7, -7, 0]);
    let b = Tensor::from_slice(&[2i32, 2, -2, -2, 3]);
    close(
        &vals(&a.floor_div(&b).unwrap()),
        &[3.0, -4.0, -4.0, 3.0, 0.0],
    );
    close(
        &vals(&a.remainder(&b).unwrap()),
        &[1.0, 1.0, -1.0, -1.0, 0.0],
    );
    close(&vals(&(&a / &b)), &[3.5, -3.5, -3.5, 3.5, 0.0]);
    assert_eq!((&a / &b).dtype(), DType::F32);
    let x = Tensor::from_slice(&[5.5f32, -5.5]);
    close(&vals(&x.remainder(2.0).unwrap()), &[1.5, 0.5]);
    close(&vals(&x.floor_div(2.0).unwrap()), &[2.0, -3.0]);
}

#[test]
fn scalars_adopt_the_tensor_dtype() {
    let h = Tensor::from_slice(&[half::f16::from_f32(1.5)]);
    assert_eq!((&h * 2.0).dtype(), DType::F16);
    let i = Tensor::from_slice(&[3i8]);
    assert_eq!((&i + 1).dtype(), DType::I8);
    assert_eq!((&i * 0.5).dtype(), DType::F32);
    close(&vals(&(2.0 - &i)), &[-1.0]);
    let b = Tensor::from_slice(&[true, false]);
    assert_eq!((&b + 1).dtype(), DType::I32);
}

#[test]
fn unary_math() {
    let x = Tensor::from_slice(&[-2.5f32, -0.5, 0.5, 1.5, 2.5]);
    close(&vals(&x.round().unwrap()), &[-2.0, -0.0, 0.0, 2.0, 2.0]);
    close(&vals(&x.sign().unwrap()), &[-1.0, -1.0, 1.0, 1.0, 1.0]);
    close(&vals(&x.relu().unwrap()), &[0.0, 0.0, 0.5, 1.5, 2.5]);
    close(
        &vals(&x.leaky_relu(0.1).unwrap()),
        &[-0.25, -0.05, 0.5, 1.5, 2.5],
    );
    let g: Vec<f64> = [-2.5f64, -0.5, 0.5, 1.5, 2.5]
        .iter()
        .map(|v| 0.5 * v * (1.0 + erf(v / 2f64.sqrt())))
        .collect();
    close(&vals(&x.gelu().unwrap()), &g);
    let s: Vec<f64> = [-2.5f64, -0.5, 0.5, 1.5, 2.5]
        .iter()
        .map(|v| 1.0 / (1.0 + (-v).exp()))
        .collect();
    close(&vals(&x.sigmoid().unwrap()), &s);
    let special = Tensor::from_slice(&[f32::NAN, f32::INFINITY, -1.0]);
    close(&vals(&special.isnan().unwrap()), &[1.0, 0.0, 0.0]);
    close(&vals(&special.isinf().unwrap()), &[0.0, 1.0, 0.0]);
    let ints = Tensor::from_slice(&[-3i32, 0, 4]);
    close(&vals(&ints.sign().unwrap()), &[-1.0, 0.0, 1.0]);
    close(&vals(&ints.abs().unwrap()), &[3.0, 0.0, 4.0]);
    close(&vals(&ints.sqrt().unwrap()), &[f64::NAN, 0.0, 2.0]);
    close(&vals(&ints.clamp(-1, 2).unwrap()), &[-1.0, 0.0, 2.0]);
}

fn erf(x: f64) -> f64 {
    // Abramowitz-Stegun 7.1.26 is too coarse; integrate numerically instead.
    let n = 20_000;
    let h = x / n as f64;
    let f = |t: f64| (-t * t).exp();
    let mut s = f(0.0) + f(x);
    for i in 1..n {
        s += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    s * h / 3.0 * 2.0 / std::f64::consts::PI.sqrt()
}

#[test]
fn comparisons_and_logic() {
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    close(&vals(&a.gt(2.0).unwrap()), &[0.0, 0.0, 1.0]);
    close(&vals(&a.ge(2.0).unwrap()), &[0.0, 1.0, 1.0]);
    close(&vals(&a.le(2.0).unwrap()), &[1.0, 1.0, 0.0]);
    close(&vals(&a.ne(2.0).unwrap()), &[1.0, 0.0, 1.0]);
    let m = a.lt(2.5).unwrap();
    close(
        &vals(&m.logical_xor(a.eq(1.0).unwrap()).unwrap()),
        &[0.0, 1.0, 0.0],
    );
    close(&vals(&m.logical_not().unwrap()), &[0.0, 0.0, 1.0]);
    close(&vals(&m.where_(&a, -1.0).unwrap()), &[1.0, 2.0, -1.0]);
    close(&vals(&a.pow(2.0).unwrap()), &[1.0, 4.0, 9.0]);
    close(&vals(&a.maximum(2.0).unwrap()), &[2.0, 2.0, 3.0]);
}

#[test]
fn casts() {
    let x = Tensor::from_slice(&[-1.7f32, 2.9, 300.0, f32::NAN, f32::NEG_INFINITY]);
    let min = i32::MIN as f64;
    close(
        &vals(&x.cast(DType::I32).unwrap()),
        &[-1.0, 2.0, 300.0, 0.0, min],
    );
    // Floats saturate at the integer range; integers wrap.
    close(
        &vals(&x.cast(DType::U8).unwrap()),
        &[0.0, 2.0, 255.0, 0.0, 0.0],
    );
    let i = Tensor::from_slice(&[-1i32, 300]);
    close(&vals(&i.cast(DType::U8).unwrap()), &[255.0, 44.0]);
    let one = Tensor::from_slice(&[1.0f32]);
    close(&vals(&one.bitcast(DType::U32).unwrap()), &[1_065_353_216.0]);
    assert!(one.bitcast(DType::F64).is_err());
}

#[test]
fn creation() {
    close(
        &vals(&Tensor::arange(0i32, 5, 1).unwrap()),
        &[0.0, 1.0, 2.0, 3.0, 4.0],
    );
    close(
        &vals(&Tensor::arange(5.0f32, 0.0, -1.5).unwrap()),
        &[5.0, 3.5, 2.0, 0.5],
    );
    assert_eq!(Tensor::arange(3i32, 0, 1).unwrap().shape(), &[0]);
    assert!(Tensor::arange(0i32, 5, 0).is_err());
    close(
        &vals(&Tensor::linspace(0.0f32, 1.0, 5).unwrap()),
        &[0.0, 0.25, 0.5, 0.75, 1.0],
    );
    close(
        &vals(&Tensor::eye(3, DType::F32)),
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
    );
    close(&vals(&Tensor::full(&[2], 7u8)), &[7.0, 7.0]);
    close(&vals(&Tensor::zeros(&[2, 1], DType::I64)), &[0.0, 0.0]);
    close(&vals(&Tensor::ones(&[], DType::BF16)), &[1.0]);
}

#[test]
fn random_numbers() {
    let u = Tensor::rand_seeded(&[400], DType::F32, 42);
    let v = vals(&u);
    assert!(v.iter().all(|&x| (0.0..1.0).contains(&x)));
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    assert!((mean - 0.5).abs() < 0.06, "{mean}");
    assert_eq!(v, vals(&Tensor::rand_seeded(&[400], DType::F32, 42)));
    assert_ne!(v, vals(&Tensor::rand_seeded(&[400], DType::F32, 43)));
    // The first element is the top 23 bits of threefry(0, key).
    let bits = morok::core::threefry2x32(0, 42);
    let expect = f32::from_bits(((bits >> 41) as u32) | 0x3f80_0000) - 1.0;
    assert_eq!(v[0], expect as f64);
    let n = vals(&Tensor::randn_seeded(&[500], DType::F64, 1));
    let mean = n.iter().sum::<f64>() / n.len() as f64;
    let var = n.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n.len() as f64;
    assert!(mean.abs() < 0.15 && (var - 1.0).abs() < 0.2, "{mean} {var}");
    Tensor::manual_seed(5);
    let a = vals(&Tensor::rand(&[3], DType::F16));
    let b = vals(&Tensor::rand(&[3], DType::F16));
    assert_ne!(a, b);
    assert!(Tensor::rand(&[2], DType::I32).error().is_some());
}

#[test]
fn movement() {
    let x = Tensor::from_vec((0..6).map(|v| v as f32).collect(), &[2, 3]).unwrap();
    close(
        &vals(&x.flip(&[-1]).unwrap()),
        &[2.0, 1.0, 0.0, 5.0, 4.0, 3.0],
    );
    close(
        &vals(&x.permute(&[1, 0]).unwrap()),
        &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0],
    );
    let p = x.pad(&[(0, 0), (1, -1)], 9.0f32).unwrap();
    close(&vals(&p), &[9.0, 0.0, 1.0, 9.0, 3.0, 4.0]);
    let s = x.slice(&[Slice::all(), Slice::all().step(-2)]).unwrap();
    close(&vals(&s), &[2.0, 0.0, 5.0, 3.0]);
    let r = Tensor::from_vec((0..10).map(|v| v as f32).collect(), &[10]).unwrap();
    close(
        &vals(&r.slice(&[Slice::range(1, -1).step(3)]).unwrap()),
        &[1.0, 4.0, 7.0],
    );
    close(
        &vals(&r.slice(&[Slice::from(-3)]).unwrap()),
        &[7.0, 8.0, 9.0],
    );
    close(
        &vals(&r.slice(&[Slice::range(8, 2).step(-3)]).unwrap()),
        &[8.0, 5.0],
    );
    assert_eq!(r.slice(&[Slice::range(5, 2)]).unwrap().shape(), &[0]);
    let c = Tensor::cat(&[&x, &x.slice(&[Slice::to(1)]).unwrap()], 0).unwrap();
    close(&vals(&c), &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 1.0, 2.0]);
    let st = Tensor::stack(&[&r, &r], 1).unwrap();
    assert_eq!(st.shape(), &[10, 2]);
    let rep = Tensor::from_slice(&[1i32, 2]).repeat(&[2, 2]).unwrap();
    assert_eq!(rep.shape(), &[2, 4]);
    close(&vals(&rep), &[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
    let parts = r.chunk(3, 0).unwrap();
    let sizes: Vec<usize> = parts.iter().map(|p| p.shape()[0]).collect();
    assert_eq!(sizes, [4, 4, 2]);
    close(&vals(&parts[2]), &[8.0, 9.0]);
    assert_eq!(x.flatten(0, -1).unwrap().shape(), &[6]);
    assert_eq!(x.unsqueeze(-1).unwrap().shape(), &[2, 3, 1]);
    assert_eq!(x.expand(&[4, -1, -1]).unwrap().shape(), &[4, 2, 3]);
}

#[test]
fn reductions() {
    let x = f32s(&[1.0, 5.0, 2.0, -3.0, 5.0, 0.5], &[2, 3]);
    close(&vals(&x.sum(Some(&[1]), false).unwrap()), &[8.0, 2.5]);
    close(&vals(&x.sum(None, false).unwrap()), &[10.5]);
    assert_eq!(x.sum(Some(&[0]), true).unwrap().shape(), &[1, 3]);
    close(
        &vals(&x.prod(Some(&[0]), false).unwrap()),
        &[-3.0, 25.0, 1.0],
    );
    close(&vals(&x.max(Some(&[-1]), false).unwrap()), &[5.0, 5.0]);
    close(&vals(&x.min(None, false).unwrap()), &[-3.0]);
    close(
        &vals(&x.mean(Some(&[1]), false).unwrap()),
        &[8.0 / 3.0, 2.5 / 3.0],
    );
    close(
        &vals(&x.var(Some(&[0]), 1, false).unwrap()),
        &[8.0, 0.0, 1.125],
    );
    close(
        &vals(&x.std(Some(&[0]), 0, false).unwrap()),
        &[2.0, 0.0, 0.75],
    );
    close(&vals(&x.argmax(Some(1)).unwrap()), &[1.0, 1.0]);
    close(&vals(&x.argmin(None).unwrap()), &[3.0]);
    assert_eq!(x.argmax(Some(-1)).unwrap().dtype(), DType::I64);
    let ints = Tensor::from_slice(&[i8::MIN, 3, i8::MIN]);
    close(&vals(&ints.argmin(Some(0)).unwrap()), &[0.0]);
    let flags = Tensor::from_slice(&[0u8, 2, 0]);
    close(&vals(&flags.any(None, false).unwrap()), &[1.0]);
    close(&vals(&flags.all(None, false).unwrap()), &[0.0]);
    let lse = x.logsumexp(Some(&[1]), false).unwrap();
    let want = |r: [f64; 3]| r.iter().map(|v| v.exp()).sum::<f64>().ln();
    close(
        &vals(&lse),
        &[want([1.0, 5.0, 2.0]), want([-3.0, 5.0, 0.5])],
    );
    let inf = Tensor::from_slice(&[f32::NEG_INFINITY, f32::NEG_INFINITY]);
    close(
        &vals(&inf.logsumexp(None, false).unwrap()),
        &[f64::NEG_INFINITY],
    );
    close(
        &vals(&x.cumsum(1).unwrap()),
        &[1.0, 6.0, 8.0, -3.0, 2.0, 2.5],
    );
    close(
        &vals(&x.cumsum(0).unwrap()),
        &[1.0, 5.0, 2.0, -2.0, 10.0, 2.5],
    );
    let bytes = Tensor::from_slice(&[200u8, 100]);
    close(&vals(&bytes.sum(None, false).unwrap()), &[300.0]);
}

#[test]
fn neural_network_ops() {
    let x = f32s(&[1.0, 2.0, 3.0, 1.0, 1.0, 1.0], &[2, 3]);
    let sm = vals(&x.softmax(-1).unwrap());
    let z: f64 = [1f64, 2.0, 3.0].iter().map(|v| v.exp()).sum();
    close(
        &sm,
        &[
            1f64.exp() / z,
            2f64.exp() / z,
            3f64.exp() / z,
            1.0 / 3.0,
            1.0 / 3.0,
            1.0 / 3.0,
        ],
    );
    let lsm = vals(&x.log_softmax(-1).unwrap());
    close(&lsm[..3], &[1.0 - z.ln(), 2.0 - z.ln(), 3.0 - z.ln()]);
    let ln = vals(&x.layernorm(&[-1], None, None, 1e-5).unwrap());
    let s = (2.0f64 / 3.0 + 1e-5).sqrt();
    close(&ln, &[-1.0 / s, 0.0, 1.0 / s, 0.0, 0.0, 0.0]);
    let labels = Tensor::from_slice(&[2i64, 0]);
    let ce = vals(&x.cross_entropy(&labels).unwrap());
    close(&ce, &[-((3.0 - z.ln()) + (1.0 / 3.0f64).ln()) / 2.0]);
}

#[test]
fn convolution_and_pooling() {
    // 1x1x3x3 input 0..9, 2x2 kernel of ones: window sums.
    let x = Tensor::from_vec((0..9).map(|v| v as f32).collect(), &[1, 1, 3, 3]).unwrap();
    let w = Tensor::full(&[1, 1, 2, 2], 1.0f32);
    let y = x.conv2d(&w, None, ConvOptions::default()).unwrap();
    assert_eq!(y.shape(), &[1, 1, 2, 2]);
    close(&vals(&y), &[8.0, 12.0, 20.0, 24.0]);
    let opts = ConvOptions {
        padding: (1, 1).into(),
        stride: (2, 2),
        ..ConvOptions::default()
    };
    let y = x
        .conv2d(&w, Some(&Tensor::from_slice(&[0.5f32])), opts)
        .unwrap();
    close(&vals(&y), &[0.5, 3.5, 9.5, 24.5]);
    let dil = ConvOptions {
        dilation: (2, 2),
        ..ConvOptions::default()
    };
    close(&vals(&x.conv2d(&w, None, dil).unwrap()), &[16.0]);
    // Two groups: each output channel sees one input channel.
    let x2 = Tensor::cat(&[&x, &x.mul(10.0).unwrap()], 1).unwrap();
    let w2 = Tensor::full(&[2, 1, 1, 1], 2.0f32);
    let grouped = ConvOptions {
        groups: 2,
        ..ConvOptions::default()
    };
    let y = x2.conv2d(&w2, None, grouped).unwrap();
    assert_eq!(y.shape(), &[1, 2, 3, 3]);
    assert_eq!(vals(&y)[10], 20.0);
    let mp = x
        .max_pool2d(PoolOptions::new((2, 2)).stride((1, 1)))
        .unwrap();
    close(&vals(&mp), &[4.0, 5.0, 7.0, 8.0]);
    let neg = x
        .neg()
        .unwrap()
        .max_pool2d(PoolOptions::new((2, 2)).padding((1, 1)))
        .unwrap();
    close(&vals(&neg), &[0.0, -1.0, -3.0, -4.0]);
    let ap = x
        .avg_pool2d(PoolOptions::new((2, 2)).padding((1, 1)))
        .unwrap();
    close(&vals(&ap), &[0.0, 0.75, 2.25, 6.0]);
    assert!(x.max_pool2d(PoolOptions::new((4, 4))).is_err());
}

#[test]
fn non_contiguous_views_in_arithmetic() {
    let x = Tensor::from_vec((0..6).map(|v| v as f32).collect(), &[2, 3]).unwrap();
    let t = x.transpose(0, 1).unwrap();
    let f = t.flip(&[0]).unwrap();
    close(&vals(&(&t + &f)), &[2.0, 8.0, 2.0, 8.0, 2.0, 8.0]);
    let e = Tensor::from_slice(&[1.0f32, 2.0]).reshape(&[2, 1]).unwrap();
    close(&vals(&(&x * &e)), &[0.0, 1.0, 2.0, 6.0, 8.0, 10.0]);
}

/// A 0-d tensor has one axis for PyTorch: `0` and `-1` both name it
/// (`-1` used to be "out of range for a tensor of rank 0").
#[test]
fn scalar_tensors_accept_axis_minus_one() {
    let s = Tensor::from_vec(vec![1.5f32], &[]).unwrap();
    for axis in [0, -1] {
        close(&vals(&s.sum(Some(&[axis]), false).unwrap()), &[1.5]);
        close(&vals(&s.prod(Some(&[axis]), true).unwrap()), &[1.5]);
        close(&vals(&s.softmax(axis).unwrap()), &[1.0]);
        close(&vals(&s.log_softmax(axis).unwrap()), &[0.0]);
        close(&vals(&s.logsumexp(Some(&[axis]), false).unwrap()), &[1.5]);
        assert_eq!(s.squeeze(axis).unwrap().shape(), &[] as &[usize]);
    }
    assert!(s.sum(Some(&[1]), false).is_err());
    assert!(s.sum(Some(&[-2]), false).is_err());
}

#[test]
fn long_counts_are_exact_and_compile_without_loops() {
    // Counts longer than 1024 combine two short running sums, so neither
    // the reference evaluator nor the scheduler sees an n² view.
    for n in [1024usize, 1025, 1089, 4099, 100_003] {
        let t = Tensor::arange(0i64, n as i64, 1).unwrap();
        let want: Vec<f64> = (0..n).map(|i| i as f64).collect();
        assert_eq!(vals(&t), want, "arange({n})");
        assert_eq!(
            t.reference().unwrap().iter().copied().collect::<Vec<f64>>(),
            want
        );
    }
    let t = Tensor::arange(3.0f32, 3.0 + 0.5 * 5000.0, 0.5).unwrap();
    common::check(&t).unwrap();
    let kernels = t.realize().unwrap().kernels();
    assert_eq!(kernels.len(), 1);
    if kernels[0].backend == "CPU" {
        let code = &kernels[0].code;
        assert_eq!(
            code.matches("for (").count(),
            1,
            "no running-sum loop:\n{code}"
        );
    }
    // Random numbers count their elements: the reference stays linear.
    let r = Tensor::rand_seeded(&[3, 70_000], DType::F32, 9);
    common::check(&r).unwrap();
}

#[test]
fn einsum_label_repeated_three_times() {
    let cube = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], &[2, 2, 2]);
    close(
        &vals(&Tensor::einsum("iii->i", &[&cube]).unwrap()),
        &[0.0, 7.0],
    );
    close(&vals(&Tensor::einsum("iii", &[&cube]).unwrap()), &[7.0]);
    let m = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let e = Tensor::einsum("iij", &[&m.reshape(&[1, 2, 3]).unwrap()]).unwrap_err();
    assert!(
        e.to_string()
            .contains("label 'i' has sizes 1 and 2 in one operand"),
        "{e}"
    );
}
