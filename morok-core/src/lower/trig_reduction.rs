//! Payne–Hanek argument reduction for `sin`/`cos` of large arguments.
//!
//! For `|x|` beyond the range where a split `π/2` (Cody–Waite) is exact,
//! `x·2/π` is computed in integer arithmetic. Write `|x| = M·2^E` with the
//! integer significand `M` and let `2/π = Σ b_i·2^-i` (bits from the table
//! below). A bit with `i ≤ E − 2` contributes `M·b_i·2^(E−i)`, a multiple of
//! 4, which no quadrant or remainder depends on: only a window of bits from
//! `i = E − 1` on matters. With `W` the `L`-bit integer of the window,
//! `x·2/π ≡ M·W·2^(2−L) (mod 4)` up to the bits cut off after the window,
//! which add less than `M·2^(2−L)`. So the low `L` bits of the product
//! `M·W` hold `x·2/π mod 4` in fixed point: the top two bits are the
//! quadrant, the rest the fraction.
//!
//! The product is formed from 32-bit limbs held in `u64` (each limb
//! product fits exactly; column sums of their 32-bit halves cannot
//! overflow), the window is picked from the table with `WHERE` chains on
//! the word index and a funnel shift. The fraction is rounded to the
//! nearest quadrant by its top bit; a fraction ≥ ½ is replaced by its
//! ones' complement (`1 − f` minus one unit in the last place, far below
//! the precision needed) so every word is non-negative and the float sum
//! of the words has no cancellation. The result is `r = ±frac·π/2` in f64
//! with `|r| ≤ π/4`, and the quadrant `q` as an `i64` (only `q mod 4` is
//! meaningful).
//!
//! Widths: `f32` takes `L = 96` (64 fraction bits kept, cut-off error
//! `< 2^-70`), `f64` takes `L = 192` (160 fraction bits, error `< 2^-135`),
//! comfortably more than the closest approach of a float to a multiple of
//! `π/2` needs (about `2^-29` for `f32` and `2^-61` for `f64`, relative to
//! `π/2`, plus the target precision).

use crate::dtype::DType;
use crate::uop::{ConstValue, Op, UOp};
use std::sync::Arc;

type U = Arc<UOp>;

/// The bits of `2/π` after the binary point, most significant first, in
/// 32-bit words: enough for the window of the largest finite `f64`
/// (exponent 1023: bit `971 + 191 + 32`). Generated with exact integer
/// arithmetic (Machin's formula for `π` to 1,500 bits, then
/// `⌊2^1216·2/π⌋`); the first words agree with the well-known
/// `0xA2F9836E 0x4E441529 …`.
const TWO_OVER_PI: [u64; 38] = [
    0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB, 0xDEBBC561,
    0xB7246E3A, 0x424DD2E0, 0x06492EEA, 0x09D1921C, 0xFE1DEB1C, 0xB129A73E, 0xE88235F5, 0x2EBB4484,
    0xE99C7026, 0xB45F7E41, 0x3991D639, 0x835339F4, 0x9C845F8B, 0xBDF9283B, 0x1FF897FF, 0xDE05980F,
    0xEF2F118B, 0x5A0A6D1F, 0x6D367ECF, 0x27CB09B7, 0x4F463F66, 0x9E5FEA2D, 0x7527BAC7, 0xEBE5F17B,
    0x3D0739F7, 0x8A5292EA, 0x6BFB5FB1, 0x1F8D5D08, 0x56033046, 0xFC7B6BAB,
];

/// The float layout and widths of one input type.
struct Layout {
    /// Explicit significand bits (23 or 52).
    mant_bits: i64,
    /// Exponent bias.
    bias: i64,
    /// Mask of the exponent field after shifting.
    exp_mask: u64,
    /// 32-bit limbs of the significand.
    mant_limbs: usize,
    /// 32-bit limbs of the window (`L / 32`).
    window_limbs: usize,
    /// Zero words before the table, so the window offset of every `|x|`
    /// the reduction is used for stays non-negative.
    pad_words: i64,
}

impl Layout {
    fn of(dt: DType) -> Layout {
        if dt == DType::F64 {
            Layout {
                mant_bits: 52,
                bias: 1023,
                exp_mask: 0x7ff,
                mant_limbs: 2,
                window_limbs: 6,
                pad_words: 2,
            }
        } else {
            Layout {
                mant_bits: 23,
                bias: 127,
                exp_mask: 0xff,
                mant_limbs: 1,
                window_limbs: 3,
                pad_words: 1,
            }
        }
    }
}

fn u64c(v: u64) -> U {
    UOp::const_(DType::U64, ConstValue::UInt(v))
}

const MASK32: u64 = 0xFFFF_FFFF;

/// Word `i` of the zero-padded table (0 past either end).
fn table_word(layout: &Layout, i: i64) -> u64 {
    let k = i - layout.pad_words;
    usize::try_from(k)
        .ok()
        .and_then(|k| TWO_OVER_PI.get(k))
        .copied()
        .unwrap_or(0)
}

/// `table[j + k]` for a runtime word index `j` in `0..words`, as a chain
/// of selections (the conditions `j == i` are shared between `k`s).
fn select_word(layout: &Layout, j: &U, k: i64, words: i64) -> U {
    (0..words).rev().fold(u64c(0), |acc, i| {
        let w = table_word(layout, i + k);
        j.bin(Op::CmpEq, &u64c(i as u64)).where_(&u64c(w), &acc)
    })
}

/// The window limbs, least significant first: the 32-bit words of the
/// padded table starting at bit offset `p` (`j = p / 32`, `sh = p % 32`).
fn window(layout: &Layout, p: &U) -> Vec<U> {
    let j = p.bin(Op::Shr, &u64c(5));
    let sh = p.bin(Op::And, &u64c(31));
    let right = u64c(32).bin(Op::Sub, &sh);
    let n = layout.window_limbs as i64;
    let words = TWO_OVER_PI.len() as i64 + layout.pad_words;
    let t: Vec<U> = (0..=n).map(|k| select_word(layout, &j, k, words)).collect();
    (0..n as usize)
        .rev()
        .map(|k| {
            let pair = t[k].bin(Op::Shl, &u64c(32)).bin(Op::Or, &t[k + 1]);
            pair.bin(Op::Shr, &right).bin(Op::And, &u64c(MASK32))
        })
        .collect()
}

/// `(a·b) mod 2^(32·n)` of little-endian 32-bit limb vectors, as `n` limbs.
fn mul_limbs(a: &[U], b: &[U], n: usize) -> Vec<U> {
    let mut lo: Vec<Vec<U>> = vec![Vec::new(); n + 1];
    let mut hi: Vec<Vec<U>> = vec![Vec::new(); n + 1];
    for (ia, x) in a.iter().enumerate() {
        for (ib, y) in b.iter().enumerate() {
            let c = ia + ib;
            if c >= n {
                continue;
            }
            let prod = x.mul(y);
            lo[c].push(prod.bin(Op::And, &u64c(MASK32)));
            hi[c + 1].push(prod.bin(Op::Shr, &u64c(32)));
        }
    }
    let mut carry = u64c(0);
    (0..n)
        .map(|c| {
            let sum = lo[c]
                .iter()
                .chain(&hi[c])
                .fold(carry.clone(), |s, t| s.add(t));
            carry = sum.bin(Op::Shr, &u64c(32));
            sum.bin(Op::And, &u64c(MASK32))
        })
        .collect()
}

/// `(q, r)` with `|x| ≡ q·π/2 + r`, `|r| ≤ π/4` (approximately, see the
/// module docs), for a finite `|x|` of at least `2^12` (`f32`) or `2^20`
/// (`f64`); `x` is `f32` or `f64`, `r` is `f64`, `q` is `i64`. Smaller,
/// infinite or NaN inputs give some finite value without undefined
/// behavior (the caller selects another result for them). The sign of
/// `x` is ignored.
pub(super) fn reduce_abs(x: &U) -> (U, U) {
    let dt = x.dtype();
    let layout = Layout::of(dt);
    let bits = if dt == DType::F64 {
        x.bitcast(DType::U64)
    } else {
        x.bitcast(DType::U32).cast(DType::U64)
    };
    let mant = bits
        .bin(Op::And, &u64c((1u64 << layout.mant_bits) - 1))
        .bin(Op::Or, &u64c(1u64 << layout.mant_bits));
    let mant_limbs: Vec<U> = (0..layout.mant_limbs)
        .map(|k| {
            mant.bin(Op::Shr, &u64c(32 * k as u64))
                .bin(Op::And, &u64c(MASK32))
        })
        .collect();
    // p = E − 2 + 32·pad with E = exponent − bias − mant_bits, computed as
    // exponent + (32·pad − 2 − bias − mant_bits) and clamped into the table
    // (the constant is negative, so clamp from below before it can wrap).
    let exponent = bits
        .bin(Op::Shr, &u64c(layout.mant_bits as u64))
        .bin(Op::And, &u64c(layout.exp_mask));
    let offset = 32 * layout.pad_words - 2 - layout.bias - layout.mant_bits;
    let max_p =
        32 * (TWO_OVER_PI.len() as i64 + layout.pad_words) - 32 * (layout.window_limbs as i64 + 1);
    let p = exponent
        .bin(Op::Max, &u64c((-offset) as u64))
        .add(&u64c(offset as u64))
        .bin(Op::Min, &u64c(max_p as u64));
    let w = window(&layout, &p);
    let n = layout.window_limbs;
    let r = mul_limbs(&mant_limbs, &w, n);
    let quadrant = r[n - 1].bin(Op::Shr, &u64c(30));
    // Fraction words after the quadrant bits, most significant first.
    let frac: Vec<U> = (0..n)
        .map(|k| {
            let high = r[n - 1 - k].bin(Op::Shl, &u64c(2));
            let word = if k + 1 < n {
                high.bin(Op::Or, &r[n - 2 - k].bin(Op::Shr, &u64c(30)))
            } else {
                high
            };
            word.bin(Op::And, &u64c(MASK32))
        })
        .collect();
    let upper = frac[0].bin(Op::Shr, &u64c(31)).bin(Op::CmpEq, &u64c(1));
    let magnitude =
        frac.iter()
            .enumerate()
            .rev()
            .fold(UOp::const_f64(DType::F64, 0.0), |acc, (k, word)| {
                let word = upper.where_(&word.bin(Op::Xor, &u64c(MASK32)), word);
                let scale = 2f64.powi(-32 * (k as i32 + 1));
                acc.add(
                    &word
                        .cast(DType::F64)
                        .mul(&UOp::const_f64(DType::F64, scale)),
                )
            });
    let fraction = upper.where_(&magnitude.un(Op::Neg), &magnitude);
    let pio2_hi = std::f64::consts::FRAC_PI_2;
    let pio2_lo = 6.123_233_995_736_766e-17;
    let r = fraction
        .mul(&UOp::const_f64(DType::F64, pio2_hi))
        .add(&fraction.mul(&UOp::const_f64(DType::F64, pio2_lo)));
    let q = quadrant.add(&upper.cast(DType::U64)).cast(DType::I64);
    (q, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table is 2/π: the first word scaled back matches the f64 value,
    /// and the words are what exact integer arithmetic gives for the next
    /// 53 bits too.
    #[test]
    fn table_starts_with_two_over_pi() {
        let head = (TWO_OVER_PI[0] << 21 | TWO_OVER_PI[1] >> 11) as f64 * 2f64.powi(-53);
        assert!((head - std::f64::consts::FRAC_2_PI).abs() <= 2f64.powi(-53));
    }
}
