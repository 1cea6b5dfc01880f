//! Accuracy of the transcendental decompositions, compiled with the C
//! backend with every decomposition forced on, against Rust's f64 libm
//! functions, over samples of the whole float range (subnormals, ±0,
//! ±inf and NaN included).

use super::common::*;
use morok_backends::CpuDevice;
use morok_core::device::Device;
use morok_core::dtype::DType;
use morok_core::lower::{lower, LowerOptions};
use morok_core::render::Caps;
use morok_core::uop::{AxisType, Op, UOp};

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
    let n = xs.len();
    let i = UOp::range(&UOp::index(n as i64), 0, AxisType::Loop);
    let x = load(1, dt, &i);
    let v = match y {
        Some(y) => x.bin(op, &UOp::const_f64(dt, y)),
        None => x.un(op),
    };
    let ast = store_kernel(0, &i, &v, std::slice::from_ref(&i));
    let lowered = lower(&ast, &LowerOptions::new(Caps::none_native())).expect("lower");
    assert!(
        lowered.ops.iter().all(|u| u.op() != op),
        "{op:?} was not decomposed"
    );
    let k = dev.compile(&lowered).expect("compile");
    let mut args = [Arg::zeros(dt, n), Arg::new(dt, xs)];
    run(dev, &k, &mut args);
    args[0].get()
}

/// Worst ulp error of decomposed `op` on f32 samples inside `domain`,
/// against the f64 reference rounded to f32, and the input reaching it.
fn worst32(
    dev: &CpuDevice,
    op: Op,
    y: Option<f64>,
    reference: impl Fn(f64) -> f64,
    domain: impl Fn(f32) -> bool,
) -> (u64, f32) {
    let xs: Vec<f32> = samples32().into_iter().filter(|x| domain(*x)).collect();
    let got = run_decomposed(dev, DType::F32, op, y, &xs);
    xs.iter()
        .zip(&got)
        .map(|(x, g)| (ulps32(*g, reference(*x as f64) as f32), *x))
        .max_by_key(|p| p.0)
        .unwrap_or((0, 0.0))
}

/// Worst ulp error of decomposed `op` on f64 samples inside `domain`.
fn worst64(
    dev: &CpuDevice,
    op: Op,
    y: Option<f64>,
    reference: impl Fn(f64) -> f64,
    domain: impl Fn(f64) -> bool,
) -> (u64, f64) {
    let xs: Vec<f64> = samples64().into_iter().filter(|x| domain(*x)).collect();
    let got = run_decomposed(dev, DType::F64, op, y, &xs);
    xs.iter()
        .zip(&got)
        .map(|(x, g)| (ulps64(*g, reference(*x)), *x))
        .max_by_key(|p| p.0)
        .unwrap_or((0, 0.0))
}

/// One decomposable op: its constant second operand (pow), its f64
/// reference, and the |x| below which f32 / f64 results must be accurate
/// (sin/cos/tan: the range where the Cody-Waite reduction is exact).
struct Case {
    op: Op,
    y: Option<f64>,
    reference: fn(f64) -> f64,
    f32_limit: f64,
    f64_limit: f64,
}

fn cases() -> Vec<Case> {
    let all = f64::INFINITY;
    let trig32 = 4096.0 * std::f64::consts::FRAC_PI_2;
    let trig64 = 1_048_576.0 * std::f64::consts::FRAC_PI_2;
    let case = |op, y, reference, f32_limit, f64_limit| Case {
        op,
        y,
        reference,
        f32_limit,
        f64_limit,
    };
    vec![
        case(Op::Exp, None, f64::exp, all, all),
        case(Op::Exp2, None, f64::exp2, all, all),
        case(Op::Log, None, f64::ln, all, all),
        case(Op::Log2, None, f64::log2, all, all),
        case(Op::Sqrt, None, f64::sqrt, all, all),
        case(Op::Rsqrt, None, |x| 1.0 / x.sqrt(), all, all),
        case(Op::Tanh, None, f64::tanh, all, all),
        case(Op::Sin, None, f64::sin, trig32, trig64),
        case(Op::Cos, None, f64::cos, trig32, trig64),
        case(Op::Tan, None, f64::tan, trig32, trig64),
        case(Op::Pow, Some(3.0), |x| x.powi(3), all, all),
        case(Op::Pow, Some(-0.5), |x| x.powf(-0.5), all, all),
    ]
}

#[test]
fn f32_decompositions_are_within_a_few_ulp() {
    let (dev, _dir) = device(2);
    let mut report = Vec::new();
    for c in cases() {
        let limit = c.f32_limit;
        let inside = |x: f32| x.is_nan() || (x.abs() as f64) < limit;
        let (ulp, at) = worst32(&dev, c.op, c.y, c.reference, inside);
        report.push(format!("{:?}({:?}): {ulp} ulp at {at:e}", c.op, c.y));
        assert!(ulp <= 4, "{}", report.join("\n"));
    }
    println!("{}", report.join("\n"));
}

#[test]
fn f64_decompositions_are_within_a_few_ulp() {
    let (dev, _dir) = device(2);
    let mut report = Vec::new();
    for c in cases() {
        let (op, limit) = (c.op, c.f64_limit);
        // f64 pow rounds y·log2(x) before exponentiating: its error grows
        // with |y·log2 x| (documented), so it is checked where that is small.
        let pow_ok = |x: f64| op != Op::Pow || x.abs().log2().abs() <= 1.0;
        let inside = |x: f64| x.is_nan() || (x.abs() < limit && pow_ok(x));
        let (ulp, at) = worst64(&dev, op, c.y, c.reference, inside);
        report.push(format!("{op:?}({:?}): {ulp} ulp at {at:e}", c.y));
        assert!(ulp <= 4, "{}", report.join("\n"));
    }
    println!("{}", report.join("\n"));
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
    let k = dev.compile(&lowered).expect("compile");
    let mut args = [Arg::zeros(DType::F64, n), Arg::new(DType::F64, xs)];
    run(dev, &k, &mut args);
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
