//! Seeded random tensors from a counter-based generator.
//!
//! Element `i` of a draw is `THREEFRY(base + i, key)`: 64 random bits that
//! depend only on the counter and the key, so every backend (and the
//! reference evaluator) produces the same numbers. The top mantissa bits
//! are put under the exponent of 1.0 and the result, a float in [1, 2),
//! is shifted down by 1 to give a uniform sample in [0, 1). Normal samples
//! use the Box-Muller transform of two uniform draws.

use super::creation::element_type;
use super::Tensor;
use crate::error::{Error, Result};
use morok_core::shape::numel;
use morok_core::uop::Op;
use morok_core::{ConstValue, DType, ScalarType};
use std::sync::Mutex;

/// The global generator state: the key and the next unused counter.
static STATE: Mutex<(u64, u64)> = Mutex::new((0, 0));

/// Takes `n` counters from the global generator: (key, first counter).
fn take_counters(n: usize) -> (u64, u64) {
    let mut state = STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let (key, base) = *state;
    state.1 = base.wrapping_add(n as u64);
    (key, base)
}

/// `[2, shape...]`: the shape of the two uniform draws behind a normal one.
fn doubled(shape: &[usize]) -> Vec<usize> {
    let mut d = vec![2];
    d.extend_from_slice(shape);
    d
}

impl Tensor {
    /// Seeds the global generator used by [`Tensor::rand`] and
    /// [`Tensor::randn`] and restarts its counter.
    pub fn manual_seed(seed: u64) {
        let mut state = STATE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *state = (seed, 0);
    }

    /// Uniform samples in `[0, 1)` of a float `dtype`, from the global
    /// generator (each call continues where the last one stopped).
    #[track_caller]
    pub fn rand(shape: &[usize], dtype: DType) -> Tensor {
        if let Err(e) = super::checked_numel("rand", shape) {
            return Tensor::failed(e);
        }
        let (key, base) = take_counters(numel(shape));
        Tensor::lift(Tensor::uniform(shape, dtype, key, base))
    }

    /// Standard normal samples of a float `dtype`, from the global generator.
    #[track_caller]
    pub fn randn(shape: &[usize], dtype: DType) -> Tensor {
        if let Err(e) = super::checked_numel("randn", &doubled(shape)) {
            return Tensor::failed(e);
        }
        let (key, base) = take_counters(2 * numel(shape));
        Tensor::lift(Tensor::normal(shape, dtype, key, base))
    }

    /// Uniform samples in `[0, 1)` determined by `seed` alone.
    #[track_caller]
    pub fn rand_seeded(shape: &[usize], dtype: DType, seed: u64) -> Tensor {
        Tensor::lift(Tensor::uniform(shape, dtype, seed, 0))
    }

    /// Standard normal samples determined by `seed` alone.
    #[track_caller]
    pub fn randn_seeded(shape: &[usize], dtype: DType, seed: u64) -> Tensor {
        Tensor::lift(Tensor::normal(shape, dtype, seed, 0))
    }

    /// Uniform samples in `[0, 1)` whose key is the value of `key`, a
    /// one-element `u64` tensor: element `i` is drawn from `THREEFRY(i,
    /// key)`. A training step that keeps its key in a buffer and
    /// increments it draws fresh samples every step without changing its
    /// graph (a key given as a number, as [`Tensor::rand_seeded`] takes it,
    /// is a constant of the graph).
    #[track_caller]
    pub fn rand_keyed(shape: &[usize], dtype: DType, key: &Tensor) -> Result<Tensor> {
        let g = key.graph()?;
        if g.dtype != ScalarType::U64 || numel(&g.shape) != 1 {
            return Err(Error::argument(
                "rand_keyed",
                format!(
                    "the key must be one u64 element, not {:?} {}",
                    g.shape.as_slice(),
                    g.dtype
                ),
            ));
        }
        super::checked_numel("rand_keyed", shape)?;
        let key = key.reshape_to(&vec![1; shape.len()])?.expand_to(shape)?;
        let bits = Tensor::keyed_bits(shape, &key, 0)?;
        Tensor::uniform_from_bits(&bits, shape, dtype)
    }

    /// `THREEFRY(base + i, key)` for every element of `shape` (u64).
    #[track_caller]
    fn random_bits(shape: &[usize], key: u64, base: u64) -> Result<Tensor> {
        let key = Tensor::constant(ConstValue::UInt(key), ScalarType::U64, shape);
        Tensor::keyed_bits(shape, &key, base)
    }

    /// `THREEFRY(base + i, key[i])` for a `u64` key tensor of `shape`.
    #[track_caller]
    fn keyed_bits(shape: &[usize], key: &Tensor, base: u64) -> Result<Tensor> {
        let n = super::checked_numel("rand", shape)?;
        let index = Tensor::counting("rand", n, ScalarType::U64)?;
        let offset = Tensor::constant(ConstValue::UInt(base), ScalarType::U64, &[n]);
        let counter = Tensor::alu(Op::Add, &[&index, &offset])?.reshape_to(shape)?;
        Tensor::alu(Op::Threefry, &[&counter, key])
    }

    #[track_caller]
    fn uniform(shape: &[usize], dtype: DType, key: u64, base: u64) -> Result<Tensor> {
        element_type("rand", dtype)?;
        let bits = Tensor::random_bits(shape, key, base)?;
        Tensor::uniform_from_bits(&bits, shape, dtype)
    }

    /// Random `u64` bits to uniform floats in `[0, 1)` of `dtype`.
    #[track_caller]
    fn uniform_from_bits(bits: &Tensor, shape: &[usize], dtype: DType) -> Result<Tensor> {
        let t = element_type("rand", dtype)?;
        let (mantissa, bits_type, one_bits) = match t {
            ScalarType::F16 => (10, ScalarType::U16, 0x3c00),
            ScalarType::BF16 => (7, ScalarType::U16, 0x3f80),
            ScalarType::F32 => (23, ScalarType::U32, 0x3f80_0000),
            ScalarType::F64 => (52, ScalarType::U64, 0x3ff0_0000_0000_0000),
            _ => return Err(Error::dtype("rand", format!("{t} is not a float type"))),
        };
        let shift = Tensor::constant(ConstValue::UInt(64 - mantissa), ScalarType::U64, shape);
        let top = Tensor::alu(Op::Shr, &[bits, &shift])?.cast_to(bits_type)?;
        let exponent = Tensor::constant(ConstValue::UInt(one_bits), bits_type, shape);
        let in_one_two = Tensor::alu(Op::Or, &[&top, &exponent])?.bitcast(DType::scalar(t))?;
        let one = Tensor::constant(ConstValue::one(t), t, shape);
        Tensor::alu(Op::Sub, &[&in_one_two, &one])
    }

    /// Box-Muller: `sqrt(-2 ln(1 - u1)) · cos(2π u2)`, computed in at
    /// least `f32`.
    #[track_caller]
    fn normal(shape: &[usize], dtype: DType, key: u64, base: u64) -> Result<Tensor> {
        let t = element_type("randn", dtype)?;
        if !t.is_float() {
            return Err(Error::dtype("randn", format!("{t} is not a float type")));
        }
        let work = if t == ScalarType::F64 {
            ScalarType::F64
        } else {
            ScalarType::F32
        };
        let doubled = doubled(shape);
        super::checked_numel("randn", &doubled)?;
        let u = Tensor::uniform(&doubled, DType::scalar(work), key, base)?;
        let halves = u.split(&[1, 1], 0)?;
        let (u1, u2) = (halves[0].squeeze(0)?, halves[1].squeeze(0)?);
        let radius = u1.mul(-1.0)?.add(1.0)?.log()?.mul(-2.0)?.sqrt()?;
        let angle = u2.mul(2.0 * std::f64::consts::PI)?.cos()?;
        radius.mul(&angle)?.cast_to(t)
    }
}
