//! NaN, ±inf and -0.0 through every reduction, and integer division and
//! remainder by zero held in tensors: compiled results against the
//! reference evaluator (NaN matches NaN), on every float dtype, over each
//! axis and over all of them. CI also runs this binary under the
//! sanitizer (`MOROK_SANITIZE=1`, docs/RELIABILITY.md), where undefined
//! arithmetic in a generated kernel aborts.

mod common;

use common::{compare, compiled, reference, tensor, Rng};
use morok::{DType, Result, RoundingMode, ScalarType, Tensor};

/// The values mixed into the inputs.
const SPECIAL: [f64; 6] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -0.0,
    0.0,
    1.0e30,
];

/// A `[4, 6]` input of `dtype` whose elements are random, special, or
/// (row 3) special only: rows with one NaN, with both infinities, with
/// only finite values, with only specials.
fn input(dtype: ScalarType, rng: &mut Rng) -> Tensor {
    let mut data = Vec::with_capacity(24);
    for row in 0..4 {
        for col in 0..6 {
            let v = match (row, col) {
                (0, 2) => f64::NAN,
                (1, 1) => f64::INFINITY,
                (1, 4) => f64::NEG_INFINITY,
                (3, c) => SPECIAL[c],
                _ => rng.uniform(-3.0, 3.0),
            };
            data.push(v);
        }
    }
    tensor(dtype, &[4, 6], &data)
}

/// Every reduction of `x` over `axes` (`None`: all), by name.
fn reductions(x: &Tensor, axis: Option<isize>) -> Vec<(&'static str, Result<Tensor>)> {
    let axes_owned = axis.map(|a| vec![a]);
    let axes = axes_owned.as_deref();
    let along = axis.unwrap_or(-1);
    vec![
        ("sum", x.sum(axes, false)),
        ("prod", x.prod(axes, false)),
        ("mean", x.mean(axes, false)),
        ("max", x.max(axes, false)),
        ("min", x.min(axes, false)),
        ("var", x.var(axes, 1, false)),
        ("std", x.std(axes, 0, true)),
        ("logsumexp", x.logsumexp(axes, false)),
        ("argmax", x.argmax(axis)),
        ("argmin", x.argmin(axis)),
        ("any", x.any(axes, false)),
        ("all", x.all(axes, false)),
        ("softmax", x.softmax(along)),
        ("log_softmax", x.log_softmax(along)),
        ("cumsum", x.cumsum(along)),
        ("cumprod", x.cumprod(along)),
        ("cummax", x.cummax(along).map(|(v, _)| v)),
        ("cummax indices", x.cummax(along).map(|(_, i)| i)),
        ("cummin", x.cummin(along).map(|(v, _)| v)),
        ("logcumsumexp", x.logcumsumexp(along)),
    ]
}

#[test]
fn nan_and_infinities_through_every_reduction() {
    let mut rng = Rng::new(0x5ec1a1);
    let mut checked = 0;
    let mut failures = Vec::new();
    for dtype in [DType::F16, DType::BF16, DType::F32, DType::F64] {
        let st = dtype.scalar_type();
        let x = input(st, &mut rng);
        for axis in [None, Some(0), Some(1), Some(-1)] {
            for (name, t) in reductions(&x, axis) {
                let case = format!("{name} over {axis:?} of {st}");
                let t = match t {
                    Ok(t) => t,
                    Err(e) => {
                        failures.push(format!("{case}: {e}"));
                        continue;
                    }
                };
                let out = t.dtype().scalar_type();
                let result = compiled(&t)
                    .and_then(|got| reference(&t).map(|want| (got, want)))
                    .map_err(|e| e.to_string())
                    .and_then(|(got, want)| compare(out, &got, &want));
                if let Err(e) = result {
                    failures.push(format!("{case}: {e}"));
                }
                checked += 1;
            }
        }
    }
    common::report(&format!(
        "special values: {checked} reductions compared, {} failed",
        failures.len()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn integer_division_and_remainder_by_zero_are_defined() {
    let mut checked = 0;
    for dtype in [DType::I8, DType::I32, DType::I64, DType::U8, DType::U32] {
        let st = dtype.scalar_type();
        let signed = !st.is_unsigned();
        let a: Vec<f64> = (0..12)
            .map(|i| if signed { i as f64 - 6.0 } else { i as f64 })
            .collect();
        let b: Vec<f64> = (0..12).map(|i| [0.0, 3.0, 0.0, 1.0][i % 4]).collect();
        let (a, b) = (tensor(st, &[12], &a), tensor(st, &[12], &b));
        let cases = [
            ("trunc div", a.div_mode(&b, RoundingMode::Trunc)),
            ("floor div", a.div_mode(&b, RoundingMode::Floor)),
            ("remainder", a.remainder(&b)),
            ("fmod", a.fmod(&b)),
        ];
        for (name, t) in cases {
            let t = t.unwrap_or_else(|e| panic!("{name} of {st}: {e}"));
            let got = compiled(&t).unwrap_or_else(|e| panic!("{name} of {st}: {e}"));
            let want = reference(&t).unwrap_or_else(|e| panic!("{name} of {st}: {e}"));
            assert_eq!(got, want, "{name} of {st}");
            checked += 1;
        }
    }
    common::report(&format!(
        "special values: {checked} integer divisions by zero compared"
    ));
}

/// `v` converted as Rust's `as` converts an f64 to `to` (saturating, NaN
/// to 0), as f64.
fn rust_as(v: f64, to: ScalarType) -> f64 {
    match to {
        ScalarType::I8 => v as i8 as f64,
        ScalarType::I16 => v as i16 as f64,
        ScalarType::I32 => v as i32 as f64,
        ScalarType::I64 => v as i64 as f64,
        ScalarType::U8 => v as u8 as f64,
        ScalarType::U16 => v as u16 as f64,
        ScalarType::U32 => v as u32 as f64,
        ScalarType::U64 => v as u64 as f64,
        t => panic!("not an integer type: {t}"),
    }
}

/// Float to integer casts saturate as Rust's `as` does: NaN gives 0, a
/// value past either end of the integer type that end, anything else its
/// truncation (the generated code would otherwise be undefined, or poison
/// on LLVM, for the out-of-range values). Every float type to every
/// integer type, at and around the ends of each.
#[test]
fn integer_casts_of_floats_saturate_like_rust_as() {
    let mut values = vec![
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        3.7,
        -3.7,
        -0.9,
        -1.0,
        1.0e30,
        -1.0e30,
        65504.0,
        -65504.0,
    ];
    for bits in [7, 8, 15, 16, 31, 32, 63, 64] {
        let end = 2f64.powi(bits);
        values.extend([end, -end, end - 1.0, end + 1.0, -end - 1.0, end * 0.999]);
    }
    let mut checked = 0;
    for from in [
        ScalarType::F16,
        ScalarType::BF16,
        ScalarType::F32,
        ScalarType::F64,
    ] {
        let data: Vec<f64> = values
            .iter()
            .map(|&v| morok::core::uop::op::round_to_float(v, from))
            .collect();
        let x = tensor(from, &[data.len()], &data);
        for to in [DType::I8, DType::I16, DType::I32, DType::I64]
            .into_iter()
            .chain([DType::U8, DType::U16, DType::U32, DType::U64])
        {
            let st = to.scalar_type();
            let t = x.cast(to).unwrap();
            let got = compiled(&t).unwrap_or_else(|e| panic!("{from} to {st}: {e}"));
            let want: Vec<f64> = data.iter().map(|&v| rust_as(v, st)).collect();
            for ((g, w), v) in got.iter().zip(&want).zip(&data) {
                assert_eq!(g, w, "{v} ({from}) as {st}");
            }
            assert_eq!(reference(&t).unwrap(), want, "reference: {from} to {st}");
            checked += 1;
        }
    }
    common::report(&format!(
        "special values: {checked} float to integer cast pairs compared"
    ));
}
