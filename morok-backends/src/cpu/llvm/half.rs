//! Bit-level conversions the IR builder emits inline: `f16`/`bf16` to and
//! from `float`, and the round-to-odd `f64 → f32` step. They mirror the C
//! codegen's prelude (`c/render.rs`), written as branch-free `select`
//! chains so any LLVM target lowers them without library calls (LLVM's
//! own `half`/`bfloat` conversions need `compiler-rt` helpers on hosts
//! without F16C and do not round `f64 → half` once).

use super::ir::{be, Gen, R};
use inkwell::values::{FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

impl<'ctx> Gen<'ctx, '_> {
    fn u32c(&self, v: u32) -> IntValue<'ctx> {
        self.cx.i32_type().const_int(v as u64, false)
    }

    fn f32_bits(&self, f: FloatValue<'ctx>) -> R<IntValue<'ctx>> {
        let i32t = self.cx.i32_type();
        Ok(self
            .b
            .build_bit_cast(f, i32t, "bits")
            .map_err(be)?
            .into_int_value())
    }

    fn f32_from_bits(&self, x: IntValue<'ctx>) -> R<FloatValue<'ctx>> {
        let f32t = self.cx.f32_type();
        Ok(self
            .b
            .build_bit_cast(x, f32t, "f")
            .map_err(be)?
            .into_float_value())
    }

    fn sel_i(&self, c: IntValue<'ctx>, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self
            .b
            .build_select(c, a, b, "sel")
            .map_err(be)?
            .into_int_value())
    }

    /// `float` → IEEE half bits (`i16`), round to nearest even; NaN stays
    /// NaN (quiet, payload kept), overflow becomes infinity.
    pub(super) fn f32_to_f16(&self, f: FloatValue<'ctx>) -> R<IntValue<'ctx>> {
        let b = &self.b;
        let x = self.f32_bits(f)?;
        let sign = b
            .build_and(
                b.build_right_shift(x, self.u32c(16), false, "")
                    .map_err(be)?,
                self.u32c(0x8000),
                "sign",
            )
            .map_err(be)?;
        let ax = b.build_and(x, self.u32c(0x7fff_ffff), "ax").map_err(be)?;
        // NaN: quiet bit plus the top payload bits.
        let payload = b
            .build_and(
                b.build_right_shift(ax, self.u32c(13), false, "")
                    .map_err(be)?,
                self.u32c(0x3ff),
                "",
            )
            .map_err(be)?;
        let nan = b.build_or(self.u32c(0x7e00), payload, "nan").map_err(be)?;
        // Subnormal results: the magnitude scaled to units of 2^-24, rounded.
        let a = self.f32_from_bits(ax)?;
        let scaled = b
            .build_float_mul(a, self.cx.f32_type().const_float(16_777_216.0), "")
            .map_err(be)?;
        let rounded = self.unary_intrinsic("llvm.roundeven", scaled)?;
        let sub = b
            .build_float_to_unsigned_int(rounded, self.cx.i32_type(), "sub")
            .map_err(be)?;
        // Normal results: rebias the exponent, round the mantissa to even.
        let rebased = b
            .build_int_sub(ax, self.u32c(0x3800_0000), "")
            .map_err(be)?;
        let odd = b
            .build_and(
                b.build_right_shift(rebased, self.u32c(13), false, "")
                    .map_err(be)?,
                self.u32c(1),
                "",
            )
            .map_err(be)?;
        let bumped = b
            .build_int_add(
                b.build_int_add(rebased, self.u32c(0xfff), "").map_err(be)?,
                odd,
                "",
            )
            .map_err(be)?;
        let normal = b
            .build_right_shift(bumped, self.u32c(13), false, "")
            .map_err(be)?;
        let is_nan = b
            .build_int_compare(IntPredicate::UGT, ax, self.u32c(0x7f80_0000), "")
            .map_err(be)?;
        let is_inf = b
            .build_int_compare(IntPredicate::UGE, ax, self.u32c(0x477f_f000), "")
            .map_err(be)?;
        let is_sub = b
            .build_int_compare(IntPredicate::ULT, ax, self.u32c(0x3880_0000), "")
            .map_err(be)?;
        let mag = self.sel_i(is_sub, sub, normal)?;
        let mag = self.sel_i(is_inf, self.u32c(0x7c00), mag)?;
        let mag = self.sel_i(is_nan, nan, mag)?;
        let h = b.build_or(sign, mag, "").map_err(be)?;
        b.build_int_truncate(h, self.cx.i16_type(), "h").map_err(be)
    }

    /// IEEE half bits (`i16`) → `float` (exact).
    pub(super) fn f16_to_f32(&self, h: IntValue<'ctx>) -> R<FloatValue<'ctx>> {
        let b = &self.b;
        let h = b
            .build_int_z_extend(h, self.cx.i32_type(), "")
            .map_err(be)?;
        let sign = b
            .build_left_shift(
                b.build_and(h, self.u32c(0x8000), "").map_err(be)?,
                self.u32c(16),
                "sign",
            )
            .map_err(be)?;
        let e = b
            .build_and(
                b.build_right_shift(h, self.u32c(10), false, "")
                    .map_err(be)?,
                self.u32c(0x1f),
                "e",
            )
            .map_err(be)?;
        let m = b.build_and(h, self.u32c(0x3ff), "m").map_err(be)?;
        let m13 = b.build_left_shift(m, self.u32c(13), "").map_err(be)?;
        let inf_nan = b.build_or(self.u32c(0x7f80_0000), m13, "").map_err(be)?;
        let exp = b
            .build_left_shift(
                b.build_int_add(e, self.u32c(112), "").map_err(be)?,
                self.u32c(23),
                "",
            )
            .map_err(be)?;
        let normal = b.build_or(exp, m13, "").map_err(be)?;
        // Subnormal halves: m · 2^-24 is exact in float.
        let mf = b
            .build_unsigned_int_to_float(m, self.cx.f32_type(), "")
            .map_err(be)?;
        let sub = b
            .build_float_mul(mf, self.cx.f32_type().const_float(1.0 / 16_777_216.0), "")
            .map_err(be)?;
        let sub = self.f32_bits(sub)?;
        let is_special = b
            .build_int_compare(IntPredicate::EQ, e, self.u32c(0x1f), "")
            .map_err(be)?;
        let is_zero_e = b
            .build_int_compare(IntPredicate::EQ, e, self.u32c(0), "")
            .map_err(be)?;
        let mag = self.sel_i(is_zero_e, sub, normal)?;
        let mag = self.sel_i(is_special, inf_nan, mag)?;
        self.f32_from_bits(b.build_or(sign, mag, "").map_err(be)?)
    }

    /// `float` → bfloat16 bits (`i16`), round to nearest even; NaN stays a
    /// quiet NaN.
    pub(super) fn f32_to_bf16(&self, f: FloatValue<'ctx>) -> R<IntValue<'ctx>> {
        let b = &self.b;
        let x = self.f32_bits(f)?;
        let hi = b
            .build_right_shift(x, self.u32c(16), false, "")
            .map_err(be)?;
        let nan = b.build_or(hi, self.u32c(0x40), "").map_err(be)?;
        let odd = b.build_and(hi, self.u32c(1), "").map_err(be)?;
        let bumped = b
            .build_int_add(
                b.build_int_add(x, self.u32c(0x7fff), "").map_err(be)?,
                odd,
                "",
            )
            .map_err(be)?;
        let rounded = b
            .build_right_shift(bumped, self.u32c(16), false, "")
            .map_err(be)?;
        let ax = b.build_and(x, self.u32c(0x7fff_ffff), "").map_err(be)?;
        let is_nan = b
            .build_int_compare(IntPredicate::UGT, ax, self.u32c(0x7f80_0000), "")
            .map_err(be)?;
        let r = self.sel_i(is_nan, nan, rounded)?;
        b.build_int_truncate(r, self.cx.i16_type(), "bf")
            .map_err(be)
    }

    /// bfloat16 bits (`i16`) → `float` (exact).
    pub(super) fn bf16_to_f32(&self, h: IntValue<'ctx>) -> R<FloatValue<'ctx>> {
        let b = &self.b;
        let x = b
            .build_int_z_extend(h, self.cx.i32_type(), "")
            .map_err(be)?;
        self.f32_from_bits(b.build_left_shift(x, self.u32c(16), "").map_err(be)?)
    }

    /// `double` → `float` rounded to odd: an inexact result gets its last
    /// mantissa bit set (truncated toward zero first), so a later rounding
    /// to a half type with fewer bits is a single correct rounding.
    pub(super) fn f64_to_f32_odd(&self, d: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let b = &self.b;
        let f = b.build_float_trunc(d, self.cx.f32_type(), "").map_err(be)?;
        let back = b.build_float_ext(f, self.cx.f64_type(), "").map_err(be)?;
        let inexact = b
            .build_float_compare(FloatPredicate::ONE, back, d, "")
            .map_err(be)?;
        let bits = self.f32_bits(f)?;
        let abs_back = self.unary_intrinsic("llvm.fabs", back)?;
        let abs_d = self.unary_intrinsic("llvm.fabs", d)?;
        let away = b
            .build_float_compare(FloatPredicate::OGT, abs_back, abs_d, "")
            .map_err(be)?;
        let down = b.build_int_sub(bits, self.u32c(1), "").map_err(be)?;
        let toward_zero = self.sel_i(away, down, bits)?;
        let odd = b.build_or(toward_zero, self.u32c(1), "").map_err(be)?;
        let odd = self.f32_from_bits(odd)?;
        Ok(b.build_select(inexact, odd, f, "odd")
            .map_err(be)?
            .into_float_value())
    }
}
