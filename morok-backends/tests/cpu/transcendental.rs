//! Accuracy of the transcendental decompositions, compiled with the C
//! backend with every decomposition forced on, against Rust's f64 libm
//! functions, over samples of the whole float range (subnormals, ±0,
//! ±inf and NaN included).

use super::common::*;
use morok_backends::CpuDevice;
use morok_core::dtype::DType;
use morok_core::render::Caps;
use morok_core::uop::{AxisType, Op, UOp};
use morok_core::{lower, LowerOptions};

/// Distance in units in the last place between two f32 (0 if both NaN).
fn ulps32(a: f32, b: f32) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let key = |x: f32| {
        let b = x.to_bits() as i64;
        if b < 0x8000_0000 {
            b
        } else {
            -(b & 0x7fff_ffff)
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Distance in units in the last place between two f64.
fn ulps64(a: f64, b: f64) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let key = |x: f64| {
        let b = x.to_bits() as i128;
        if b < 1 << 63 {
            b
        } else {
            -(b & 0x7fff_ffff_ffff_ffff)
        }
    };
    (key(a) - key(b)).unsigned_abs() as u64
}

fn samples32() -> Vec<f32> {
    let mut v: Vec<f32> = (0..40_000u64)
        .map(|i| f32::from_bits((i * 107_377) as u32))
        .collect();
    v.extend([
        0.0,
        -0.0,
        1.0,
        -1.0,
        1.000_000_1,
        0.999_999_9,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        1e-45,
        -1e-45,
        f32::MAX,
        f32::MIN,
        0.5,
        88.7,
        -103.9,
        1e-3,
    ]);
    v
}

fn samples64() -> Vec<f64> {
    let mut v: Vec<f64> = (0..40_000u64)
        .map(|i| f64::from_bits(i.wrapping_mul(461_168_601_842_739)))
        .collect();
    v.extend([
        0.0,
        -0.0,
        1.0,
        -1.0,
        1.000_000_1,
        0.999_999_9,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        5e-324,
        f64::MAX,
        709.7,
        -745.0,
    ]);
    v
}

/// Runs `x op y` (or `op x`) on `xs` with every decomposition forced on,
/// checking that `op` no longer appears in the program.
fn run_decomposed<T: Copy + Default>(
    dev: &CpuDevice,
    dt: DType,
    op: Op,
    y: Option<f64>,
    xs: &[T],
) -> Vec<T> {
    run_decomposed_with(dev, Caps::none_native(), dt, op, y, xs)
}

/// The target capabilities the accuracy bounds are checked under: none
/// native, and none but `MULACC` (the decompositions then use fused
/// multiply-adds, as on a CPU with FMA).
fn decomposing_caps() -> [Caps; 2] {
    let mut fma = Caps::none_native();
    fma.native = fma.native.with(Op::MulAcc);
    [Caps::none_native(), fma]
}

/// [`run_decomposed`] for a target with capabilities `caps`.
fn run_decomposed_with<T: Copy + Default>(
    dev: &CpuDevice,
    caps: Caps,
    dt: DType,
    op: Op,
    y: Option<f64>,
    xs: &[T],
) -> Vec<T> {
    let n = xs.len();
    let i = UOp::range(&UOp::index(n as i64), 0, AxisType::Loop);
    let x = load(1, dt, &i);
    let v = match y {
        Some(y) => x.bin(op, &UOp::const_f64(dt, y)),
        None => x.un(op),
    };
    let ast = store_kernel(0, &i, &v, std::slice::from_ref(&i));
    let lowered = lower(&ast, &LowerOptions::new(caps)).expect("lower");
    assert!(
        lowered.ops.iter().all(|u| u.op() != op),
        "{op:?} was not decomposed"
    );
    let k = compile_lowered(dev, &ast, lowered);
    let mut args = [Arg::zeros(dt, n), Arg::new(dt, xs)];
    run(dev, &k, &mut args);
    args[0].get()
}

/// Worst ulp error of decomposed `op` on f32 samples inside `domain`,
/// against the f64 reference rounded to f32, and the input reaching it.
fn worst32(
    dev: &CpuDevice,
    caps: &Caps,
    op: Op,
    y: Option<f64>,
    reference: impl Fn(f64) -> f64,
    domain: impl Fn(f32) -> bool,
) -> (u64, f32) {
    let xs: Vec<f32> = samples32().into_iter().filter(|x| domain(*x)).collect();
    let got = run_decomposed_with(dev, *caps, DType::F32, op, y, &xs);
    xs.iter()
        .zip(&got)
        .map(|(x, g)| (ulps32(*g, reference(*x as f64) as f32), *x))
        .max_by_key(|p| p.0)
        .unwrap_or((0, 0.0))
}

/// Worst ulp error of decomposed `op` on f64 samples inside `domain`.
fn worst64(
    dev: &CpuDevice,
    caps: &Caps,
    op: Op,
    y: Option<f64>,
    reference: impl Fn(f64) -> f64,
    domain: impl Fn(f64) -> bool,
) -> (u64, f64) {
    let xs: Vec<f64> = samples64().into_iter().filter(|x| domain(*x)).collect();
    let got = run_decomposed_with(dev, *caps, DType::F64, op, y, &xs);
    xs.iter()
        .zip(&got)
        .map(|(x, g)| (ulps64(*g, reference(*x)), *x))
        .max_by_key(|p| p.0)
        .unwrap_or((0, 0.0))
}

/// One decomposable op: its constant second operand (pow) and its f64
/// reference.
struct Case {
    op: Op,
    y: Option<f64>,
    reference: fn(f64) -> f64,
}

fn cases() -> Vec<Case> {
    let case = |op, y, reference| Case { op, y, reference };
    vec![
        case(Op::Exp, None, f64::exp),
        case(Op::Exp2, None, f64::exp2),
        case(Op::Log, None, f64::ln),
        case(Op::Log2, None, f64::log2),
        case(Op::Sqrt, None, f64::sqrt),
        case(Op::Rsqrt, None, |x| 1.0 / x.sqrt()),
        case(Op::Tanh, None, f64::tanh),
        case(Op::Sin, None, f64::sin),
        case(Op::Cos, None, f64::cos),
        case(Op::Tan, None, f64::tan),
        case(Op::Pow, Some(3.0), |x| x.powi(3)),
        case(Op::Pow, Some(-0.5), |x| x.powf(-0.5)),
        // Exponents exact in f32, so the f64 reference sees the same `y`.
        case(Op::Pow, Some(-7.25), |x| x.powf(-7.25)),
        case(Op::Pow, Some(1234.5625), |x| x.powf(1234.5625)),
        case(Op::Pow, Some(f64::INFINITY), |x| x.powf(f64::INFINITY)),
        case(Op::Pow, Some(f64::NEG_INFINITY), |x| {
            x.powf(f64::NEG_INFINITY)
        }),
        case(Op::Pow, Some(f64::NAN), |x| x.powf(f64::NAN)),
    ]
}

/// Asserts that every case of [`cases`] is within 4 ulp under each of
/// [`decomposing_caps`]; `worst` gives a case's worst error and its input.
fn assert_within_a_few_ulp(worst: impl Fn(&Caps, &Case) -> (u64, String)) {
    let mut report = Vec::new();
    for caps in decomposing_caps() {
        let fma = caps.native.contains(Op::MulAcc);
        for c in cases() {
            let (ulp, at) = worst(&caps, &c);
            report.push(format!(
                "{:?}({:?}), fma {fma}: {ulp} ulp at {at}",
                c.op, c.y
            ));
            assert!(ulp <= 4, "{}", report.join("\n"));
        }
    }
    println!("{}", report.join("\n"));
}

#[test]
fn f32_decompositions_are_within_a_few_ulp() {
    let (dev, _dir) = device(2);
    assert_within_a_few_ulp(|caps, c| {
        let (ulp, at) = worst32(&dev, caps, c.op, c.y, c.reference, |_| true);
        (ulp, format!("{at:e}"))
    });
}

#[test]
fn f64_decompositions_are_within_a_few_ulp() {
    let (dev, _dir) = device(2);
    assert_within_a_few_ulp(|caps, c| {
        let (ulp, at) = worst64(&dev, caps, c.op, c.y, c.reference, |_| true);
        (ulp, format!("{at:e}"))
    });
}

/// The floats closest to a multiple of `π/2` relative to their size
/// (`16367173·2^72` for f32, `6381956970095103·2^797` for f64, where
/// `x mod π/2` is about `2^-30` and `2^-62` of `π/2`) need the most bits
/// of `2/π` in the reduction. Expected values from 3,000-bit arithmetic
/// (mpmath), rounded once: glibc's own `cos` is 8 ulp off at the f64 one.
#[test]
fn hardest_argument_reductions_match_exact_values() {
    let (dev, _dir) = device(1);
    let x32 = 16_367_173.0 * 2f32.powi(72);
    let x64 = 6_381_956_970_095_103.0 * 2f64.powi(797);
    let cos32 = -1.614_769_8e-9_f32;
    let cos64 = -4.687_165_924_254_628e-19_f64;
    let sin32 = run_decomposed(&dev, DType::F32, Op::Sin, None, &[x32, -x32]);
    let got32 = run_decomposed(&dev, DType::F32, Op::Cos, None, &[x32, -x32]);
    assert_eq!(sin32, [1.0, -1.0]);
    for g in got32 {
        assert!(
            ulps32(g, cos32) <= 1,
            "cos({x32:e}) = {g:e}, want {cos32:e}"
        );
    }
    let sin64 = run_decomposed(&dev, DType::F64, Op::Sin, None, &[x64, -x64]);
    let got64 = run_decomposed(&dev, DType::F64, Op::Cos, None, &[x64, -x64]);
    assert_eq!(sin64, [1.0, -1.0]);
    for g in got64 {
        assert!(
            ulps64(g, cos64) <= 1,
            "cos({x64:e}) = {g:e}, want {cos64:e}"
        );
    }
}

#[test]
fn halves_decompose_through_f32() {
    let (dev, _dir) = device(1);
    let xs: Vec<half::f16> = [0.5f32, -2.0, 3.75, 0.0, 10.0, -0.001]
        .iter()
        .map(|x| half::f16::from_f32(*x))
        .collect();
    let got = run_decomposed(&dev, DType::F16, Op::Exp, None, &xs);
    for (x, g) in xs.iter().zip(&got) {
        let want = half::f16::from_f64(x.to_f64().exp());
        let d = (g.to_bits() as i32 - want.to_bits() as i32).abs();
        assert!(d <= 1, "exp({x}) = {g}, want {want}");
    }
}

/// Native (libm) f64 erf of `xs`, through the C backend without
/// decompositions: Rust's std has no erf to compare with.
fn libm_erf(dev: &CpuDevice, xs: &[f64]) -> Vec<f64> {
    let n = xs.len();
    let i = UOp::range(&UOp::index(n as i64), 0, AxisType::Loop);
    let ast = store_kernel(
        0,
        &i,
        &load(1, DType::F64, &i).un(Op::Erf),
        std::slice::from_ref(&i),
    );
    let lowered = lower(&ast, &LowerOptions::new(Caps::all_native())).expect("lower");
    let c = c_device_in(&dev.config().cache_dir, 1);
    let k = compile_lowered(&c, &ast, lowered);
    let mut args = [Arg::zeros(DType::F64, n), Arg::new(DType::F64, xs)];
    run(&c, &k, &mut args);
    args[0].get()
}

#[test]
fn erf_is_within_a_few_ulp_of_libm() {
    let (dev, _dir) = device(2);
    let xs32 = samples32();
    let wide: Vec<f64> = xs32.iter().map(|x| *x as f64).collect();
    let want32: Vec<f32> = libm_erf(&dev, &wide).iter().map(|v| *v as f32).collect();
    let got32 = run_decomposed(&dev, DType::F32, Op::Erf, None, &xs32);
    let worst32 = xs32
        .iter()
        .zip(got32.iter().zip(&want32))
        .map(|(x, (g, w))| (ulps32(*g, *w), *x))
        .max_by_key(|p| p.0)
        .unwrap_or((0, 0.0));
    let xs64 = samples64();
    let want64 = libm_erf(&dev, &xs64);
    let got64 = run_decomposed(&dev, DType::F64, Op::Erf, None, &xs64);
    let worst64 = xs64
        .iter()
        .zip(got64.iter().zip(&want64))
        .map(|(x, (g, w))| (ulps64(*g, *w), *x))
        .max_by_key(|p| p.0)
        .unwrap_or((0, 0.0));
    println!("erf f32: {worst32:?}, f64: {worst64:?}");
    assert!(worst32.0 <= 4, "f32 erf: {worst32:?}");
    assert!(worst64.0 <= 4, "f64 erf: {worst64:?}");
}
