//! Transcendental decompositions: polynomial approximations with range
//! reduction, for targets without native `exp`, `log`, `sin`, ...
//!
//! Each function is built from `+ - * /`, `FLOOR`, comparisons, `WHERE`,
//! casts and bit manipulation (`BITCAST`, shifts), which every target has.
//! `f32` and `f64` are computed in their own precision; `f16` and `bf16`
//! are computed in `f32` and rounded once at the end.
//! Where the target renders `MULACC` natively (a fused multiply-add), the
//! Horner steps of every polynomial and `exp`'s reduction use it.
//!
//! The methods, in short (`n` an integer, `r` the reduced argument):
//!
//! - `exp(x) = 2^n · e^r`, `n = x·log2(e)` rounded to the nearest integer
//!   by adding and subtracting `1.5·2^mant` (the sum's bits also give `n`
//!   as an integer: no `FLOOR`, no float → integer conversion),
//!   `r = x − n·ln2` with `ln2` split in two (Cody–Waite) so `n·ln2_hi` is
//!   exact; `e^r` by its Taylor series on `|r| ≤ ln2/2`. `2^n` is built
//!   from exponent bits in two halves (integer shifts and adds), so
//!   subnormal results round once.
//!   `exp2(x)` reduces `x − n` exactly and multiplies by `ln2`.
//! - `log(x)`: `x = m · 2^e` with `m ∈ [√½, √2)` from the exponent bits
//!   (subnormals pre-scaled by `2^64`), `ln m = 2·atanh(s)`,
//!   `s = (m−1)/(m+1)`, by its odd series; `ln x = e·ln2 + ln m`.
//! - `sin`/`cos`: `q = round(x·2/π)`, `r = x − q·π/2` with `π/2` split in
//!   three (Cody–Waite), Taylor series of `sin`/`cos` on `|r| ≤ π/4`,
//!   chosen and signed by `q mod 4`. The split is exact while `q·π/2`
//!   is, which holds for `|x| < 2^12` (`f32`) and `|x| < 2^20` (`f64`);
//!   larger arguments take a Payne–Hanek reduction in integer arithmetic
//!   (see `trig_reduction`), so every finite argument is reduced
//!   accurately. `tan = sin / cos`.
//! - `tanh(x) = sign(x)·(1 − 2/(e^{2|x|} + 1))`, and for `|x| < 0.625`
//!   `em1/(em1 + 2)` with `em1 = e^{2x} − 1` from its Taylor series (no
//!   cancellation near 0).
//! - `erf(x)`: its Maclaurin series for `|x| < 2`, beyond it
//!   `1 − erfc(|x|)` with `erfc` from `e^(−x²)` and Laplace's continued
//!   fraction (unrolled to a fixed depth), signed like `x`; computed in
//!   f64 for every type (the series cancels a few bits near `|x| = 2`).
//! - `sqrt(x) = x · rsqrt(x)`, `rsqrt` from the exponent-halving bit trick
//!   refined by Newton steps, the square root corrected once more
//!   (subnormals pre-scaled by `2^64`).
//! - `pow(x, y) = 2^(y·log2|x|)` with the sign of `x` for odd integer `y`,
//!   NaN for negative finite `x` and non-integer `y`, and IEEE's special
//!   cases (`pow(x, 0) = 1`, `pow(1, y) = 1`, `pow(-1, ±inf) = 1`, zero
//!   and infinite bases). An ulp of the exponent `y·log2 x` becomes a
//!   relative error of the result as large as the exponent, so `log2 x`
//!   and the product are carried as double words (`hi + lo`, see
//!   `double_word`) and `2^(hi + lo)` takes its integer part from `hi`;
//!   every type computes `pow` this way in f64.

use super::double_word as dw;
use super::trig_reduction;
use crate::caps::Caps;
use crate::dtype::{DType, ScalarType};
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, UOp};
use std::sync::Arc;

/// Builder for one float type: constants and the float layout.
#[derive(Clone, Copy)]
struct F {
    dt: DType,
    /// The target renders `MULACC` (a fused multiply-add) natively: Horner
    /// steps and the Cody–Waite reduction of `exp` use it (one rounding
    /// instead of two, and one instruction).
    fma: bool,
}

type U = Arc<UOp>;

impl F {
    fn f64(self) -> bool {
        self.dt == DType::F64
    }
    /// The same-width integer type.
    fn int(self) -> DType {
        if self.f64() {
            DType::I64
        } else {
            DType::I32
        }
    }
    fn mant_bits(self) -> i64 {
        if self.f64() {
            52
        } else {
            23
        }
    }
    fn bias(self) -> i64 {
        if self.f64() {
            1023
        } else {
            127
        }
    }
    fn c(self, v: f64) -> U {
        UOp::const_f64(self.dt, v)
    }
    fn i(self, v: i64) -> U {
        UOp::const_(self.int(), ConstValue::Int(v))
    }
    /// `a·b + c`: one `MULACC` where the target has it, else a product
    /// and a sum.
    fn mul_add(self, a: &U, b: &U, c: &U) -> U {
        if self.fma {
            UOp::alu(Op::MulAcc, vec![a.clone(), b.clone(), c.clone()])
        } else {
            a.mul(b).add(c)
        }
    }
    /// Horner evaluation of `Σ coeffs[k]·x^k`.
    fn poly(self, x: &U, coeffs: &[f64]) -> U {
        let mut acc = self.c(*coeffs.last().unwrap_or(&0.0));
        for c in coeffs.iter().rev().skip(1) {
            acc = self.mul_add(&acc, x, &self.c(*c));
        }
        acc
    }
    fn round(self, x: &U) -> U {
        x.add(&self.c(0.5)).un(Op::Floor)
    }
    /// The rounding constant `M = 1.5·2^mant` and its bits: for a float
    /// `v` with `|v| < 2^(mant−1)`, `v + M` lies in `[2^mant, 2^(mant+1))`,
    /// where the float spacing is 1, so the sum is `v` rounded to the
    /// nearest integer `n` (ties to even) plus `M`, and its bits are
    /// `bits(M) + n`.
    fn magic(self) -> (f64, i64) {
        let magic = 1.5 * 2f64.powi(self.mant_bits() as i32);
        let bits = if self.f64() {
            magic.to_bits() as i64
        } else {
            i64::from((magic as f32).to_bits())
        };
        (magic, bits)
    }
    /// `(n, k)` for `v` within `|v| < 2^(mant−1)`: `n` is `v` rounded to
    /// the nearest integer as a float and `k` the same integer in the
    /// same-width integer type. No `FLOOR` and no float → integer
    /// conversion (which the targets render saturating, a chain of
    /// compares and selects per lane): one add, one subtract, and the bits
    /// of the sum (see [`F::magic`]). A NaN `v` gives a NaN `n` and some
    /// `k`; every caller derives its result from `n` too, so it stays NaN.
    fn round_to_int(self, v: &U) -> (U, U) {
        let (magic, magic_bits) = self.magic();
        let t = v.add(&self.c(magic));
        let n = t.sub(&self.c(magic));
        let k = t.bitcast(self.int()).sub(&self.i(magic_bits));
        (n, k)
    }
    /// `2^k` for an integer `k` (of [`F::int`]) inside the normal exponent
    /// range: the biased exponent `k + bias ∈ [1, 2·bias]` shifted into
    /// place.
    fn pow2(self, k: &U) -> U {
        k.add(&self.i(self.bias()))
            .bin(Op::Shl, &self.i(self.mant_bits()))
            .bitcast(self.dt)
    }
    /// `y · 2^k` for an integer `k` (of [`F::int`]) within ±2·(normal
    /// range): two exact scalings by `2^(k >> 1)` and `2^(k − (k >> 1))`
    /// (an arithmetic shift: floor of the half), so a subnormal result
    /// rounds once. Integer ops only, besides the two products.
    fn ldexp(self, y: &U, k: &U) -> U {
        let half = k.bin(Op::Shr, &self.i(1));
        y.mul(&self.pow2(&half)).mul(&self.pow2(&k.sub(&half)))
    }
    fn lt(self, a: &U, b: f64) -> U {
        a.bin(Op::CmpLt, &self.c(b))
    }
    fn eq(self, a: &U, b: f64) -> U {
        a.bin(Op::CmpEq, &self.c(b))
    }
    fn nan(self) -> U {
        self.c(f64::NAN)
    }
    fn clamp(self, x: &U, lo: f64, hi: f64) -> U {
        x.bin(Op::Max, &self.c(lo)).bin(Op::Min, &self.c(hi))
    }
    /// Taylor coefficients of `e^r` up to degree `n`.
    fn exp_coeffs(n: usize) -> Vec<f64> {
        let mut c = vec![1.0];
        for k in 1..=n {
            c.push(c[k - 1] / k as f64);
        }
        c
    }
    fn exp_degree(self) -> usize {
        if self.f64() {
            13
        } else {
            7
        }
    }
    /// `e^r` for `|r| ≤ ln2/2`.
    fn exp_poly(self, r: &U) -> U {
        self.poly(r, &F::exp_coeffs(self.exp_degree()))
    }
    /// The range `x` is clamped to before `exp` (beyond it the result is
    /// 0 or inf anyway); keeps `n` within [`F::ldexp`]'s range.
    fn exp_limits(self) -> (f64, f64) {
        if self.f64() {
            (-746.0, 710.0)
        } else {
            (-104.0, 89.0)
        }
    }
    /// `ln2 = hi + lo` with `hi` short enough that `n·hi` is exact for
    /// every `n` `exp` produces, and `lo` the next bits of `ln2` (fdlibm's
    /// split; `lo` must come from ln2 itself, not from `f64(ln2) − hi`).
    fn ln2_split(self) -> (f64, f64) {
        if self.f64() {
            (
                f64::from_bits(0x3FE6_2E42_FEE0_0000),
                f64::from_bits(0x3DEA_39EF_3579_3C76),
            )
        } else {
            (
                f32::from_bits(0x3F31_7200) as f64,
                f32::from_bits(0x35BF_BE8E) as f64,
            )
        }
    }

    fn exp(self, x: &U) -> U {
        let (lo, hi) = self.exp_limits();
        let xc = self.clamp(x, lo, hi);
        let (n, k) = self.round_to_int(&xc.mul(&self.c(std::f64::consts::LOG2_E)));
        let (c1, c2) = self.ln2_split();
        // n·c1 is exact, so the first step rounds once either way.
        let r = if self.fma {
            let r = self.mul_add(&n, &self.c(-c1), &xc);
            self.mul_add(&n, &self.c(-c2), &r)
        } else {
            xc.bin(Op::Sub, &n.mul(&self.c(c1)))
                .bin(Op::Sub, &n.mul(&self.c(c2)))
        };
        self.ldexp(&self.exp_poly(&r), &k)
    }

    fn exp2(self, x: &U) -> U {
        self.exp2_sum(x, None)
    }

    /// `2^(x + low)` for a small correction `low` of `x` (the low word of
    /// a double word): the integer part comes from `x` alone, so `low`
    /// only shifts the reduced argument and keeps its bits.
    fn exp2_sum(self, x: &U, low: Option<&U>) -> U {
        let (lo, hi) = self.exp_limits();
        let xc = self.clamp(x, lo / std::f64::consts::LN_2, hi / std::f64::consts::LN_2);
        let (n, k) = self.round_to_int(&xc);
        let frac = xc.sub(&n);
        let frac = low.map_or(frac.clone(), |l| frac.add(l));
        let r = frac.mul(&self.c(std::f64::consts::LN_2));
        self.ldexp(&self.exp_poly(&r), &k)
    }

    /// `(e, m)` with `x = m·2^e`, `m ∈ [√½, √2)`, for finite `x > 0`.
    fn log_reduce(self, x: &U) -> (U, U) {
        let min_normal = if self.f64() {
            f64::MIN_POSITIVE
        } else {
            f32::MIN_POSITIVE as f64
        };
        let sub = self.lt(x, min_normal);
        let xs = sub.where_(&x.mul(&self.c(2f64.powi(64))), x);
        let bits = xs.bitcast(self.int());
        let mant_mask = (1i64 << self.mant_bits()) - 1;
        let e = bits
            .bin(Op::Shr, &self.i(self.mant_bits()))
            .bin(Op::And, &self.i(if self.f64() { 0x7ff } else { 0xff }))
            .bin(Op::Sub, &self.i(self.bias()))
            .cast(self.dt);
        let one_bits = self.bias() << self.mant_bits();
        let m = bits
            .bin(Op::And, &self.i(mant_mask))
            .bin(Op::Or, &self.i(one_bits))
            .bitcast(self.dt);
        let big = m
            .bin(Op::CmpLt, &self.c(std::f64::consts::SQRT_2))
            .un(Op::Not);
        let m = big.where_(&m.mul(&self.c(0.5)), &m);
        let e = big.where_(&e.add(&self.c(1.0)), &e);
        let e = sub.where_(&e.bin(Op::Sub, &self.c(64.0)), &e);
        (e, m)
    }

    /// `(e, ln m)` with `x = m·2^e`, `m ∈ [√½, √2)`, for finite `x > 0`.
    fn log_parts(self, x: &U) -> (U, U) {
        let (e, m) = self.log_reduce(x);
        let s = m
            .bin(Op::Sub, &self.c(1.0))
            .bin(Op::Fdiv, &m.add(&self.c(1.0)));
        let s2 = s.mul(&s);
        let terms = if self.f64() { 12 } else { 6 };
        let coeffs: Vec<f64> = (0..terms).map(|k| 2.0 / (2 * k + 1) as f64).collect();
        (e, s.mul(&self.poly(&s2, &coeffs)))
    }

    /// Special cases shared by the logarithms.
    fn log_specials(self, x: &U, finite: U) -> U {
        let nan = x.bin(Op::CmpNe, x);
        let neg = self.lt(x, 0.0).bin(Op::Or, &nan);
        let zero = self.eq(x, 0.0);
        let inf = self.eq(x, f64::INFINITY);
        let r = inf.where_(&self.c(f64::INFINITY), &finite);
        let r = zero.where_(&self.c(f64::NEG_INFINITY), &r);
        neg.where_(&self.nan(), &r)
    }

    fn log(self, x: &U) -> U {
        let (e, lnm) = self.log_parts(x);
        let (hi, lo) = self.ln2_split();
        let v = e.mul(&self.c(hi)).add(&lnm.add(&e.mul(&self.c(lo))));
        self.log_specials(x, v)
    }

    fn log2(self, x: &U) -> U {
        let (e, lnm) = self.log_parts(x);
        let v = e.add(&lnm.mul(&self.c(std::f64::consts::LOG2_E)));
        self.log_specials(x, v)
    }

    /// `sin(x)` (`shift = 0`) or `cos(x)` (`shift = 1` quadrant).
    fn sincos(self, x: &U, shift: i64) -> U {
        // π/2 as a sum of parts whose products with q are exact: fdlibm's
        // 33-bit parts (and a tail) for f64; for f32, 12-bit parts of the
        // f64 value and the f32-rounded rest (48 bits, twice f32's).
        let parts: Vec<f64> = if self.f64() {
            vec![
                f64::from_bits(0x3FF9_21FB_5440_0000),
                f64::from_bits(0x3DD0_B461_1A60_0000),
                f64::from_bits(0x3BA3_198A_2E00_0000),
                f64::from_bits(0x397B_839A_2520_49C1),
            ]
        } else {
            let pio2 = std::f64::consts::FRAC_PI_2;
            let p1 = split_high(pio2, 12);
            let p2 = split_high(pio2 - p1, 12);
            vec![p1, p2, pio2 - p1 - p2]
        };
        let q = self.round(&x.mul(&self.c(std::f64::consts::FRAC_2_PI)));
        let r_small = parts
            .iter()
            .fold(x.clone(), |r, p| r.bin(Op::Sub, &q.mul(&self.c(*p))));
        // Quadrant from the low bits of q (saturating cast: arguments this
        // large take the Payne–Hanek branch below).
        let q_small = q
            .bin(Op::Max, &self.c(-(2f64.powi(30))))
            .bin(Op::Min, &self.c(2f64.powi(30)))
            .cast(DType::I64);
        // Beyond the split's exact range, reduce |x| in integer arithmetic
        // and mirror the result for negative x. NaN and ±inf land here too
        // and are replaced by NaN at the end.
        let (q_abs, r_abs) = trig_reduction::reduce_abs(x);
        let r_abs = r_abs.cast(self.dt);
        let neg = self.lt(x, 0.0);
        let r_large = neg.where_(&r_abs.un(Op::Neg), &r_abs);
        let q_large = neg.where_(&q_abs.un(Op::Neg), &q_abs);
        let limit = if self.f64() {
            2f64.powi(20)
        } else {
            2f64.powi(12)
        };
        let small = self.lt(&x.un(Op::Abs), limit);
        let r = small.where_(&r_small, &r_large);
        let r2 = r.mul(&r);
        let n = if self.f64() { 9 } else { 5 };
        let mut sin_c = Vec::new();
        let mut cos_c = Vec::new();
        let mut fact = 1.0f64;
        for k in 0..2 * n {
            if k > 0 {
                fact *= k as f64;
            }
            let sign = if (k / 2) % 2 == 0 { 1.0 } else { -1.0 };
            if k % 2 == 0 {
                cos_c.push(sign / fact);
            } else {
                sin_c.push(sign / fact);
            }
        }
        let s = r.mul(&self.poly(&r2, &sin_c));
        let c = self.poly(&r2, &cos_c);
        let qi = small
            .where_(&q_small, &q_large)
            .add(&UOp::const_(DType::I64, ConstValue::Int(shift)))
            .bin(Op::And, &UOp::const_(DType::I64, ConstValue::Int(3)));
        let quad = |k: i64| qi.bin(Op::CmpEq, &UOp::const_(DType::I64, ConstValue::Int(k)));
        let v = quad(0).where_(
            &s,
            &quad(1).where_(&c, &quad(2).where_(&s.un(Op::Neg), &c.un(Op::Neg))),
        );
        let v = self
            .lt(&x.un(Op::Abs), f64::INFINITY)
            .where_(&v, &self.nan());
        // Keep -0 for sin(-0).
        if shift == 0 {
            self.eq(x, 0.0).where_(x, &v)
        } else {
            v
        }
    }

    fn tanh(self, x: &U) -> U {
        let ax = x.un(Op::Abs);
        let big = self.c(1.0).bin(
            Op::Sub,
            &self
                .c(2.0)
                .bin(Op::Fdiv, &self.exp(&ax.mul(&self.c(2.0))).add(&self.c(1.0))),
        );
        let big = self.lt(x, 0.0).where_(&big.un(Op::Neg), &big);
        let y = x.mul(&self.c(2.0));
        let n = if self.f64() { 22 } else { 12 };
        let mut coeffs = F::exp_coeffs(n);
        coeffs.remove(0);
        let em1 = y.mul(&self.poly(&y, &coeffs));
        let small = em1.bin(Op::Fdiv, &em1.add(&self.c(2.0)));
        let small = self.eq(x, 0.0).where_(x, &small);
        self.lt(&ax, 0.625).where_(&small, &big)
    }

    fn erf(self, x: &U) -> U {
        // |x| < 2: the Maclaurin series 2/√π · Σ (−1)^n x^(2n+1) / (n!(2n+1)).
        // Its terms peak near 1.2 for |x| = 2, so cancellation costs little.
        let terms = 34;
        let mut coeffs = Vec::with_capacity(terms);
        let mut fact = 1.0f64;
        for n in 0..terms {
            if n > 0 {
                fact *= n as f64;
            }
            let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
            coeffs.push(sign * std::f64::consts::FRAC_2_SQRT_PI / (fact * (2 * n + 1) as f64));
        }
        let x2 = x.mul(x);
        let small = x.mul(&self.poly(&x2, &coeffs));
        // |x| ≥ 2: 1 − erfc(|x|), erfc(a) = e^(−a²) / (√π · K(a)) with
        // Laplace's continued fraction K(a) = a + (1/2)/(a + 1/(a + (3/2)/(a + …))),
        // evaluated from a fixed depth upward. erfc < 0.005 here, so its
        // relative error shrinks by that factor in erf.
        let ax = x.un(Op::Abs);
        let depth = 70;
        let mut k = ax.clone();
        for n in (1..=depth).rev() {
            k = ax.add(&self.c(n as f64 / 2.0).bin(Op::Fdiv, &k));
        }
        let erfc = self
            .exp(&ax.mul(&ax).un(Op::Neg))
            .bin(Op::Fdiv, &k.mul(&self.c(std::f64::consts::PI.sqrt())));
        let big = self.c(1.0).bin(Op::Sub, &erfc);
        let big = self.lt(x, 0.0).where_(&big.un(Op::Neg), &big);
        self.lt(&ax, 2.0).where_(&small, &big)
    }

    fn rsqrt_core(self, x: &U) -> U {
        let magic = if self.f64() {
            0x5fe6_eb50_c7b5_37a9
        } else {
            0x5f37_59df
        };
        let mut y = self
            .i(magic)
            .bin(Op::Sub, &x.bitcast(self.int()).bin(Op::Shr, &self.i(1)))
            .bitcast(self.dt);
        let steps = if self.f64() { 5 } else { 4 };
        let half_x = x.mul(&self.c(0.5));
        for _ in 0..steps {
            // y ← y·(1.5 − x/2·y²)
            y = y.mul(&self.c(1.5).bin(Op::Sub, &half_x.mul(&y).mul(&y)));
        }
        y
    }

    fn sqrt(self, x: &U) -> U {
        let min_normal = if self.f64() {
            f64::MIN_POSITIVE
        } else {
            f32::MIN_POSITIVE as f64
        };
        let sub = self.lt(x, min_normal);
        let xs = sub.where_(&x.mul(&self.c(2f64.powi(64))), x);
        let y = self.rsqrt_core(&xs);
        let s = xs.mul(&y);
        // One correction of the root: s + (x − s²)·y/2.
        let s = s.add(&xs.bin(Op::Sub, &s.mul(&s)).mul(&y).mul(&self.c(0.5)));
        let s = sub.where_(&s.mul(&self.c(2f64.powi(-32))), &s);
        let r = self.eq(x, f64::INFINITY).where_(x, &s);
        let r = self.eq(x, 0.0).where_(x, &r);
        self.lt(x, 0.0).where_(&self.nan(), &r)
    }

    fn rsqrt(self, x: &U) -> U {
        self.c(1.0).bin(Op::Fdiv, &self.sqrt(x))
    }

    /// `log2 x` as a double word, to about `2^-64` relative, for finite
    /// `x > 0` (`f64` only). With `s = (m − 1)/(m + 1)` as a double word,
    /// `ln m = 2s + (2/3)s³ + s⁵·Σ_{k≥2} 2/(2k+1)·s^(2k−4)`: the first two
    /// terms in double words, the rest (below `2^-12` of the total for
    /// `|s| ≤ 0.172`) in plain `f64`.
    fn log2_dw(self, x: &U) -> dw::Dw {
        let (e, m) = self.log_reduce(x);
        let f = m.sub(&self.c(1.0)); // exact: m ∈ [√½, √2)
        let (d_hi, d_lo) = dw::two_sum(&m, &self.c(1.0));
        let s_hi = f.bin(Op::Fdiv, &d_hi);
        let (p, p_err) = dw::two_prod(&s_hi, &d_hi);
        let s_lo = f
            .sub(&p)
            .sub(&p_err)
            .sub(&s_hi.mul(&d_lo))
            .bin(Op::Fdiv, &d_hi);
        let s = (s_hi.clone(), s_lo.clone());
        let s2 = dw::mul(&s, &s);
        let s3 = dw::mul(&s, &s2);
        let t3 = dw::mul(&s3, &dw::constant(2.0 / 3.0, 3.700_743_415_417_188e-17));
        let coeffs: Vec<f64> = (2..=12).map(|k| 2.0 / (2 * k + 1) as f64).collect();
        let rest = s3.0.mul(&s2.0).mul(&self.poly(&s2.0, &coeffs));
        let two = self.c(2.0);
        let (h, h_err) = dw::two_sum(&s_hi.mul(&two), &t3.0);
        let lnm = dw::fast_two_sum(&h, &h_err.add(&s_lo.mul(&two).add(&t3.1).add(&rest)));
        let log2_e = dw::constant(std::f64::consts::LOG2_E, 2.035_527_374_093_103_3e-17);
        let g = dw::mul(&lnm, &log2_e);
        let (t, t_err) = dw::two_sum(&e, &g.0);
        dw::fast_two_sum(&t, &t_err.add(&g.1))
    }

    /// `pow` in double-word `f64` (every type computes it in `f64`): the
    /// exponent `y·log2|x|` is formed to about `2^-64` relative, so the
    /// result's error stays within a few ulp even where `|y·log2 x|` is
    /// near 1075 and an ulp of the exponent is `2^-43`.
    fn pow(self, x: &U, y: &U) -> U {
        let ax = x.un(Op::Abs);
        let (t_hi, t_lo) = self.log2_dw(&ax);
        let t_hi = self.log_specials(&ax, t_hi);
        let (z_hi, z_err) = dw::two_prod(y, &t_hi);
        // Beyond 2^11 the result over- or underflows anyway, and the split
        // in two_prod may overflow (or see an infinite t): drop the low word.
        let in_range = self.lt(&z_hi.un(Op::Abs), 2048.0);
        let z_lo = in_range.where_(&z_err.add(&y.mul(&t_lo)), &self.c(0.0));
        let mag = self.exp2_sum(&z_hi, Some(&z_lo));
        let y_int = y.un(Op::Floor).bin(Op::CmpEq, y);
        let half_y = y.mul(&self.c(0.5));
        let y_odd = y_int.bin(
            Op::And,
            &half_y.un(Op::Floor).bin(Op::CmpEq, &half_y).un(Op::Not),
        );
        let neg = self.lt(x, 0.0);
        let signed = neg.bin(Op::And, &y_odd).where_(&mag.un(Op::Neg), &mag);
        // A negative finite base with a non-integer exponent has no real
        // power; -inf has (±0 or ±inf, signed like odd powers).
        let finite = self.lt(&ax, f64::INFINITY);
        let r = neg
            .bin(Op::And, &y_int.un(Op::Not))
            .bin(Op::And, &finite)
            .where_(&self.nan(), &signed);
        // pow(±0, y): 0 for y > 0 (−0 for odd y and x = −0), inf for y < 0
        // (NaN for NaN y).
        let zero = self.eq(x, 0.0).bin(Op::And, &y.bin(Op::CmpEq, y));
        let zero_val = self.lt(y, 0.0).where_(
            &y_odd.where_(&self.c(1.0).bin(Op::Fdiv, x), &self.c(f64::INFINITY)),
            &y_odd.where_(x, &self.c(0.0)),
        );
        let r = zero.where_(&zero_val, &r);
        // pow(1, y) = pow(x, 0) = 1, even for NaN; pow(-1, ±inf) = 1.
        let minus_one_inf = self
            .eq(x, -1.0)
            .bin(Op::And, &self.eq(&y.un(Op::Abs), f64::INFINITY));
        let one = self
            .eq(x, 1.0)
            .bin(Op::Or, &self.eq(y, 0.0))
            .bin(Op::Or, &minus_one_inf);
        one.where_(&self.c(1.0), &r)
    }
}

/// `v` rounded to `bits` significant bits (toward zero), so products with
/// integers below `2^(p − bits)` are exact in a `p`-bit significand.
fn split_high(v: f64, bits: u32) -> f64 {
    let e = v.abs().log2().floor() as i32;
    let scale = 2f64.powi(bits as i32 - 1 - e);
    (v * scale).trunc() / scale
}

/// The decomposition of a float op, or `None` if `n` is not one; `fma`:
/// the target renders `MULACC` natively (then the polynomials use it).
pub(crate) fn decompose(n: &Arc<UOp>, fma: bool) -> Option<Arc<UOp>> {
    let t = n.dtype().scalar_type();
    if !n.dtype().is_float() {
        return None;
    }
    // pow's double-word logarithm is written for f64, and erf's series
    // cancels a few bits near |x| = 2: computing narrower types in f64
    // keeps their results within an ulp over the whole range.
    let work = if t == ScalarType::F64 || matches!(n.op(), Op::Pow | Op::Erf) {
        DType::F64
    } else {
        DType::F32
    };
    let f = F { dt: work, fma };
    let a = n.s(0).cast(work);
    let r = match n.op() {
        Op::Exp => f.exp(&a),
        Op::Exp2 => f.exp2(&a),
        Op::Log => f.log(&a),
        Op::Log2 => f.log2(&a),
        Op::Sin => f.sincos(&a, 0),
        Op::Cos => f.sincos(&a, 1),
        Op::Tan => f.sincos(&a, 0).bin(Op::Fdiv, &f.sincos(&a, 1)),
        Op::Tanh => f.tanh(&a),
        Op::Erf => f.erf(&a),
        Op::Sqrt => f.sqrt(&a),
        Op::Rsqrt => f.rsqrt(&a),
        Op::Pow => f.pow(&a, &n.s(1).cast(work)),
        _ => return None,
    };
    Some(r.cast(n.dtype()))
}

/// Rules decomposing every op of [`Caps::DECOMPOSABLE`] that `caps` does
/// not list as native (on float operands; integer `POW` is a mandatory
/// decomposition).
pub fn rules(caps: &Caps) -> PatternMatcher {
    let mut pm = PatternMatcher::new("transcendental");
    let missing: Vec<Op> = Caps::DECOMPOSABLE
        .into_iter()
        .filter(|op| !caps.native.contains(*op))
        .collect();
    let fma = caps.native.contains(Op::MulAcc);
    if !missing.is_empty() {
        pm.rule(&missing, move |n, _| decompose(n, fma));
    }
    pm
}
