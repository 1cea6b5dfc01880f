//! Test data and the oracle comparison shared by the fuzzer and the
//! integration tests: a seeded generator, random input tensors (contiguous
//! and as non-contiguous views), and the comparison of compiled results
//! with the reference evaluator.

use morok::{DType, ScalarType, Slice, Tensor};

/// SplitMix64: a tiny deterministic generator for test data.
pub struct Rng(u64);

impl Rng {
    /// A generator with a fixed seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform integer in `[lo, hi]`.
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }
}

/// What values an input should hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Domain {
    /// Anything the dtype holds comfortably (floats in [-3, 3]).
    Any,
    /// Strictly positive.
    Positive,
    /// Non-zero (divisors).
    NonZero,
}

/// `n` random values for `dtype` in `domain`, as f64.
pub fn values(rng: &mut Rng, dtype: ScalarType, n: usize, domain: Domain) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let v = if dtype.is_bool() {
                rng.int(0, 1) as f64
            } else if dtype.is_float() {
                match domain {
                    Domain::Any => rng.uniform(-3.0, 3.0),
                    Domain::Positive => rng.uniform(0.1, 4.0),
                    Domain::NonZero => {
                        rng.uniform(0.5, 3.0) * if rng.int(0, 1) == 0 { -1.0 } else { 1.0 }
                    }
                }
            } else {
                let (lo, hi) = if dtype.is_unsigned() {
                    (0, 20)
                } else {
                    (-10, 10)
                };
                match domain {
                    Domain::Any => rng.int(lo, hi) as f64,
                    Domain::Positive => rng.int(1, hi) as f64,
                    Domain::NonZero => {
                        let v = rng.int(lo.max(1), hi);
                        if lo < 0 && rng.int(0, 1) == 0 {
                            -v as f64
                        } else {
                            v as f64
                        }
                    }
                }
            };
            morok::core::uop::op::round_to_float(v, dtype)
        })
        .collect()
}

/// Evaluates `$body` with `$T` naming the Rust element type of the scalar
/// type `$dtype` (`f64` for any type without one).
#[macro_export]
macro_rules! with_element {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            ::morok::ScalarType::Bool => {
                type $T = bool;
                $body
            }
            ::morok::ScalarType::I8 => {
                type $T = i8;
                $body
            }
            ::morok::ScalarType::I16 => {
                type $T = i16;
                $body
            }
            ::morok::ScalarType::I32 => {
                type $T = i32;
                $body
            }
            ::morok::ScalarType::I64 => {
                type $T = i64;
                $body
            }
            ::morok::ScalarType::U8 => {
                type $T = u8;
                $body
            }
            ::morok::ScalarType::U16 => {
                type $T = u16;
                $body
            }
            ::morok::ScalarType::U32 => {
                type $T = u32;
                $body
            }
            ::morok::ScalarType::U64 => {
                type $T = u64;
                $body
            }
            ::morok::ScalarType::F16 => {
                type $T = ::half::f16;
                $body
            }
            ::morok::ScalarType::BF16 => {
                type $T = ::half::bf16;
                $body
            }
            ::morok::ScalarType::F32 => {
                type $T = f32;
                $body
            }
            _ => {
                type $T = f64;
                $body
            }
        }
    };
}

/// A tensor of `dtype` and `shape` holding `data` (f64 values converted).
pub fn tensor(dtype: ScalarType, shape: &[usize], data: &[f64]) -> Tensor {
    fn make<T: morok::Element>(data: &[f64], shape: &[usize]) -> Tensor {
        let v: Vec<T> = data.iter().map(|&x| T::from_f64(x)).collect();
        Tensor::from_vec(v, shape).expect("test data fits its shape")
    }
    crate::with_element!(dtype, T => make::<T>(data, shape))
}

/// How an input tensor is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A plain buffer.
    Contiguous,
    /// A permutation of a buffer with the axes reversed.
    Permuted,
    /// The interior of a larger buffer.
    Sliced,
    /// Every other element of a buffer twice as long on the last axis.
    Strided,
    /// A buffer with all axes flipped.
    Flipped,
    /// A buffer of size 1 on the first axis, broadcast.
    Expanded,
}

/// Every layout.
pub const LAYOUTS: [Layout; 6] = [
    Layout::Contiguous,
    Layout::Permuted,
    Layout::Sliced,
    Layout::Strided,
    Layout::Flipped,
    Layout::Expanded,
];

/// A random input of `shape` viewed through `layout`.
pub fn input(
    rng: &mut Rng,
    dtype: ScalarType,
    shape: &[usize],
    layout: Layout,
    domain: Domain,
) -> Tensor {
    let r = shape.len();
    let mut base: Vec<usize> = shape.to_vec();
    match layout {
        Layout::Permuted => base.reverse(),
        Layout::Sliced => base.iter_mut().for_each(|d| *d += 2),
        Layout::Strided if r > 0 => base[r - 1] *= 2,
        Layout::Expanded if r > 0 => base[0] = 1,
        _ => {}
    }
    let data = values(rng, dtype, base.iter().product(), domain);
    let t = tensor(dtype, &base, &data);
    let view = match layout {
        Layout::Contiguous => Ok(t),
        Layout::Permuted => {
            let perm: Vec<isize> = (0..r as isize).rev().collect();
            t.permute(&perm)
        }
        Layout::Sliced => {
            let b: Vec<(usize, usize)> = shape.iter().map(|&d| (1, d + 1)).collect();
            t.shrink(&b)
        }
        Layout::Strided if r > 0 => {
            let mut s = vec![Slice::all(); r];
            s[r - 1] = Slice::all().step(2);
            t.slice(&s)
        }
        Layout::Flipped => {
            let axes: Vec<isize> = (0..r as isize).collect();
            t.flip(&axes)
        }
        Layout::Expanded => t.broadcast_to(shape),
        Layout::Strided => Ok(t),
    };
    let view = view.expect("input views are well formed");
    assert_eq!(view.shape(), shape, "{layout:?}");
    view
}

/// Absolute and relative tolerance for comparing results of `dtype`.
pub fn tolerance(dtype: ScalarType) -> (f64, f64) {
    match dtype {
        ScalarType::F16 => (2e-3, 1e-2),
        ScalarType::BF16 => (2e-2, 2e-2),
        ScalarType::F32 => (1e-5, 1e-4),
        ScalarType::F64 => (1e-12, 1e-10),
        _ => (0.0, 0.0),
    }
}

/// The realized values of `t` as f64.
pub fn compiled(t: &Tensor) -> Result<Vec<f64>, morok::Error> {
    fn get<T: morok::Element>(t: &Tensor) -> Result<Vec<f64>, morok::Error> {
        Ok(t.to_vec::<T>()?.into_iter().map(|v| v.to_f64()).collect())
    }
    let r = t.realize()?;
    crate::with_element!(t.dtype().scalar_type(), T => get::<T>(&r))
}

/// The reference values of `t`.
pub fn reference(t: &Tensor) -> Result<Vec<f64>, morok::Error> {
    Ok(t.reference()?.iter().copied().collect())
}

/// Compares compiled and reference values of `t` within the tolerance of
/// its dtype; NaNs must match NaNs.
pub fn check(t: &Tensor) -> Result<(), String> {
    let want = reference(t).map_err(|e| format!("reference: {e}"))?;
    let got = compiled(t).map_err(|e| format!("compiled: {e}"))?;
    compare(t.dtype().scalar_type(), &got, &want)
}

/// Compares values of `dtype` computed by the compiler (`got`) with the
/// reference's (`want`) within the tolerance of the dtype; NaNs must
/// match NaNs.
pub fn compare(dtype: ScalarType, got: &[f64], want: &[f64]) -> Result<(), String> {
    compare_within(dtype, 1.0, got, want)
}

/// [`compare`] within `looseness` times the dtype's tolerance.
pub fn compare_within(
    dtype: ScalarType,
    looseness: f64,
    got: &[f64],
    want: &[f64],
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} values, expected {}", got.len(), want.len()));
    }
    let (atol, rtol) = tolerance(dtype);
    let (atol, rtol) = (atol * looseness, rtol * looseness);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let same = g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= atol + rtol * w.abs();
        if !same {
            return Err(format!("element {i}: got {g}, expected {w}"));
        }
    }
    Ok(())
}

/// Every element dtype.
pub const DTYPES: [DType; 13] = [
    DType::BOOL,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
];
