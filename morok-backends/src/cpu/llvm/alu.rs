//! ALU ops, casts and bitcasts of the IR builder (semantics in the
//! [`super::ir`] module docs).

use super::ir::{be, err, Gen, R};
use super::vector::{float_predicate, int_predicate};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, FloatValue, IntMathValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use morok_core::dtype::ScalarType;
use morok_core::uop::{Op, UOp};
use std::sync::Arc;

impl<'ctx> Gen<'ctx, '_> {
    /// `CAST`, like the C codegen's: to `bool` is `!= 0`; ints and `f64`
    /// to a half go through `f64` rounded to odd; floats to ints saturate.
    fn cast(&self, n: &Arc<UOp>, a: BasicValueEnum<'ctx>) -> R<BasicValueEnum<'ctx>> {
        let (from, to) = (self.scalar(n.s(0))?, self.scalar(n)?);
        let ty = self.value_type(n, to)?;
        let b = &self.b;
        Ok(match (from, to) {
            (_, ScalarType::Bool) if from.is_float() => {
                let a = a.into_float_value();
                let zero = a.get_type().const_zero();
                b.build_float_compare(FloatPredicate::UNE, a, zero, "")
                    .map_err(be)?
                    .into()
            }
            (_, ScalarType::Bool) => {
                let a = a.into_int_value();
                let zero = a.get_type().const_zero();
                b.build_int_compare(IntPredicate::NE, a, zero, "")
                    .map_err(be)?
                    .into()
            }
            (f, t) if f == t => a,
            (ScalarType::Bool, _) => match ty {
                BasicTypeEnum::FloatType(ft) => b
                    .build_unsigned_int_to_float(a.into_int_value(), ft, "")
                    .map_err(be)?
                    .into(),
                _ => b
                    .build_int_z_extend(a.into_int_value(), ty.into_int_type(), "")
                    .map_err(be)?
                    .into(),
            },
            (f, ScalarType::F16 | ScalarType::BF16) if f.is_int() || f == ScalarType::F64 => {
                let d = if f.is_int() {
                    self.int_to_float(a.into_int_value(), f, self.cx.f64_type().into())?
                } else {
                    a.into_float_value()
                };
                let odd = self.f64_to_f32_odd(d)?;
                self.round_half(odd, to)?.into()
            }
            (_, ScalarType::F16 | ScalarType::BF16) => {
                self.round_half(a.into_float_value(), to)?.into()
            }
            (f, t) if f.is_float() && t.is_int() => {
                let name = if t.is_unsigned() {
                    "llvm.fptoui.sat"
                } else {
                    "llvm.fptosi.sat"
                };
                let a = a.into_float_value();
                self.intrinsic(name, &[ty, a.get_type().into()], &[a.into()])?
            }
            (f, t) if f.is_int() && t.is_int() => b
                .build_int_cast_sign_flag(
                    a.into_int_value(),
                    ty.into_int_type(),
                    f.is_signed_int(),
                    "",
                )
                .map_err(be)?
                .into(),
            (f, _) if f.is_int() => self.int_to_float(a.into_int_value(), f, ty)?.into(),
            (_, _) => {
                let (a, ft) = (a.into_float_value(), ty.into_float_type());
                if from == ScalarType::F64 {
                    b.build_float_trunc(a, ft, "").map_err(be)?.into()
                } else if to == ScalarType::F64 {
                    b.build_float_ext(a, ft, "").map_err(be)?.into()
                } else {
                    // Between f32 and the halves' f32 registers.
                    a.into()
                }
            }
        })
    }

    fn int_to_float(
        &self,
        a: IntValue<'ctx>,
        from: ScalarType,
        ty: BasicTypeEnum<'ctx>,
    ) -> R<FloatValue<'ctx>> {
        let ft = ty.into_float_type();
        if from.is_signed_int() {
            self.b.build_signed_int_to_float(a, ft, "").map_err(be)
        } else {
            self.b.build_unsigned_int_to_float(a, ft, "").map_err(be)
        }
    }

    /// `BITCAST` through the storage forms (halves as their bits, `bool` as
    /// a byte).
    fn bitcast(&self, n: &Arc<UOp>, a: BasicValueEnum<'ctx>) -> R<BasicValueEnum<'ctx>> {
        let (from, to) = (self.scalar(n.s(0))?, self.scalar(n)?);
        if from.itemsize() != to.itemsize() {
            return Err(err(n, "bitcast between types of different sizes"));
        }
        let b = &self.b;
        let bits: BasicValueEnum<'ctx> = match from {
            ScalarType::F16 => self.f32_to_f16(a.into_float_value())?.into(),
            ScalarType::BF16 => self.f32_to_bf16(a.into_float_value())?.into(),
            ScalarType::Bool => b
                .build_int_z_extend(a.into_int_value(), self.cx.i8_type(), "")
                .map_err(be)?
                .into(),
            _ => a,
        };
        let target = self.storage_type(n, to)?;
        let cast = if bits.get_type() == target {
            bits
        } else {
            b.build_bit_cast(bits, target, "").map_err(be)?
        };
        Ok(match to {
            ScalarType::F16 => self.f16_to_f32(cast.into_int_value())?.into(),
            ScalarType::BF16 => self.bf16_to_f32(cast.into_int_value())?.into(),
            ScalarType::Bool => {
                let c = cast.into_int_value();
                b.build_int_compare(IntPredicate::NE, c, c.get_type().const_zero(), "")
                    .map_err(be)?
                    .into()
            }
            _ => cast,
        })
    }

    /// Replaces a divisor that would trap (`0`, and `-1` for signed
    /// division, whose `MIN / -1` overflows) by 1.
    fn safe_divisor(&self, d: IntValue<'ctx>, signed: bool) -> R<IntValue<'ctx>> {
        let b = &self.b;
        let t = d.get_type();
        let mut bad = b
            .build_int_compare(IntPredicate::EQ, d, t.const_zero(), "")
            .map_err(be)?;
        if signed {
            let m1 = b
                .build_int_compare(IntPredicate::EQ, d, t.const_all_ones(), "")
                .map_err(be)?;
            bad = b.build_or(bad, m1, "").map_err(be)?;
        }
        Ok(b.build_select(bad, t.const_int(1, false), d, "")
            .map_err(be)?
            .into_int_value())
    }

    /// Integer `IDIV`/`MOD`: truncating; by zero gives 0; `a / -1` is
    /// `0 - a` (wrapping) and `a % -1` is 0. A constant divisor other than
    /// 0 and -1 needs no checks.
    fn int_div(
        &self,
        n: &Arc<UOp>,
        a: IntValue<'ctx>,
        d: IntValue<'ctx>,
        signed: bool,
    ) -> R<IntValue<'ctx>> {
        let b = &self.b;
        let t = a.get_type();
        let div = n.op() == Op::Idiv;
        let safe_const = n
            .s(1)
            .const_value()
            .and_then(|c| c.as_i128())
            .is_some_and(|c| c != 0 && !(signed && c == -1));
        let dd = if safe_const {
            d
        } else {
            self.safe_divisor(d, signed)?
        };
        let q = match (div, signed) {
            (true, true) => b.build_int_signed_div(a, dd, ""),
            (true, false) => b.build_int_unsigned_div(a, dd, ""),
            (false, true) => b.build_int_signed_rem(a, dd, ""),
            (false, false) => b.build_int_unsigned_rem(a, dd, ""),
        }
        .map_err(be)?;
        if safe_const {
            return Ok(q);
        }
        let zero = t.const_zero();
        let is_zero = b
            .build_int_compare(IntPredicate::EQ, d, zero, "")
            .map_err(be)?;
        let mut r = q;
        if signed {
            let is_m1 = b
                .build_int_compare(IntPredicate::EQ, d, t.const_all_ones(), "")
                .map_err(be)?;
            let by_m1 = if div {
                b.build_int_sub(zero, a, "").map_err(be)?
            } else {
                zero
            };
            r = b
                .build_select(is_m1, by_m1, r, "")
                .map_err(be)?
                .into_int_value();
        }
        Ok(b.build_select(is_zero, zero, r, "")
            .map_err(be)?
            .into_int_value())
    }

    /// `x << amount` or `x >> amount` (`op`; arithmetic when `signed`) of
    /// integers or integer vectors, the amount masked to the width first
    /// (`mask` is the width minus one).
    pub(super) fn masked_shift<T: IntMathValue<'ctx>>(
        &self,
        op: Op,
        x: T,
        amount: T,
        mask: T,
        signed: bool,
    ) -> R<T> {
        let b = &self.b;
        let amount = b.build_and(amount, mask, "").map_err(be)?;
        if op == Op::Shl {
            b.build_left_shift(x, amount, "").map_err(be)
        } else {
            b.build_right_shift(x, amount, signed, "").map_err(be)
        }
    }

    /// `|x|` of signed integers or integer vectors, wrapping at the
    /// minimum: `x < 0 ? 0 - x : x` (`zero` of `x`'s type).
    pub(super) fn int_abs<T: IntMathValue<'ctx> + Copy>(
        &self,
        x: T,
        zero: T,
    ) -> R<BasicValueEnum<'ctx>> {
        let b = &self.b;
        let neg = b
            .build_int_compare(IntPredicate::SLT, x, zero, "")
            .map_err(be)?;
        let minus = b.build_int_sub(zero, x, "").map_err(be)?;
        b.build_select(neg, minus, x, "").map_err(be)
    }

    /// The scalar ALU op, `CAST` or `BITCAST` `n` on the scalar operand
    /// values `v` (one lane's, for vector nodes built lane by lane).
    pub(super) fn scalar_op(
        &self,
        n: &Arc<UOp>,
        v: &[BasicValueEnum<'ctx>],
    ) -> R<BasicValueEnum<'ctx>> {
        let first = || v.first().copied().ok_or_else(|| err(n, "missing operand"));
        match n.op() {
            Op::Cast => self.cast(n, first()?),
            Op::Bitcast => self.bitcast(n, first()?),
            _ => self.alu(n, v),
        }
    }

    fn alu(&self, n: &Arc<UOp>, v: &[BasicValueEnum<'ctx>]) -> R<BasicValueEnum<'ctx>> {
        let t = self.scalar(n)?;
        let operand_t = match n.src().first() {
            Some(x) => self.scalar(x)?,
            None => t,
        };
        let arg = |i: usize| v.get(i).copied().ok_or_else(|| err(n, "missing operand"));
        let int = |i: usize| match arg(i)? {
            BasicValueEnum::IntValue(x) => Ok(x),
            _ => Err(err(n, "expected an integer operand")),
        };
        let flt = |i: usize| match arg(i)? {
            BasicValueEnum::FloatValue(x) => Ok(x),
            _ => Err(err(n, "expected a float operand")),
        };
        let b = &self.b;
        let plain = self.kernel_no_overflow(n) && t.is_signed_int();
        let float = t.is_float();
        let rounded =
            |x: FloatValue<'ctx>| -> R<BasicValueEnum<'ctx>> { Ok(self.round_half(x, t)?.into()) };
        let e: BasicValueEnum<'ctx> = match n.op() {
            Op::Add | Op::Sub | Op::Mul if float => {
                let (x, y) = (flt(0)?, flt(1)?);
                let r = match n.op() {
                    Op::Add => b.build_float_add(x, y, ""),
                    Op::Sub => b.build_float_sub(x, y, ""),
                    _ => b.build_float_mul(x, y, ""),
                }
                .map_err(be)?;
                rounded(r)?
            }
            Op::Add | Op::Sub | Op::Mul => {
                let (x, y) = (int(0)?, int(1)?);
                match (n.op(), plain) {
                    (Op::Add, true) => b.build_int_nsw_add(x, y, ""),
                    (Op::Add, false) => b.build_int_add(x, y, ""),
                    (Op::Sub, true) => b.build_int_nsw_sub(x, y, ""),
                    (Op::Sub, false) => b.build_int_sub(x, y, ""),
                    (_, true) => b.build_int_nsw_mul(x, y, ""),
                    (_, false) => b.build_int_mul(x, y, ""),
                }
                .map_err(be)?
                .into()
            }
            Op::MulAcc if float => {
                let ty = flt(0)?.get_type().into();
                let r = self.intrinsic("llvm.fma", &[ty], &[arg(0)?, arg(1)?, arg(2)?])?;
                rounded(r.into_float_value())?
            }
            Op::MulAcc if t.is_int() => {
                let p = b.build_int_mul(int(0)?, int(1)?, "").map_err(be)?;
                b.build_int_add(p, int(2)?, "").map_err(be)?.into()
            }
            Op::Neg if float => b.build_float_neg(flt(0)?, "").map_err(be)?.into(),
            Op::Neg => {
                let x = int(0)?;
                let zero = x.get_type().const_zero();
                if plain {
                    b.build_int_nsw_sub(zero, x, "").map_err(be)?.into()
                } else {
                    b.build_int_sub(zero, x, "").map_err(be)?.into()
                }
            }
            Op::Fdiv if float => rounded(b.build_float_div(flt(0)?, flt(1)?, "").map_err(be)?)?,
            Op::Recip if float => {
                let x = flt(0)?;
                let one = x.get_type().const_float(1.0);
                rounded(b.build_float_div(one, x, "").map_err(be)?)?
            }
            Op::Idiv | Op::Mod if t.is_int() => {
                self.int_div(n, int(0)?, int(1)?, t.is_signed_int())?.into()
            }
            Op::Mod if float => rounded(b.build_float_rem(flt(0)?, flt(1)?, "").map_err(be)?)?,
            Op::Max | Op::Min if float => {
                let (x, y) = (flt(0)?, flt(1)?);
                let p = if n.op() == Op::Max {
                    FloatPredicate::OGT
                } else {
                    FloatPredicate::OLT
                };
                let better = b.build_float_compare(p, x, y, "").map_err(be)?;
                let nan = b
                    .build_float_compare(FloatPredicate::UNO, x, x, "")
                    .map_err(be)?;
                let pick = b.build_or(better, nan, "").map_err(be)?;
                b.build_select(pick, x, y, "").map_err(be)?
            }
            Op::Max | Op::Min => {
                let (x, y) = (int(0)?, int(1)?);
                let p = match (n.op() == Op::Max, t.is_signed_int()) {
                    (true, true) => IntPredicate::SGT,
                    (true, false) => IntPredicate::UGT,
                    (false, true) => IntPredicate::SLT,
                    (false, false) => IntPredicate::ULT,
                };
                let c = b.build_int_compare(p, x, y, "").map_err(be)?;
                b.build_select(c, x, y, "").map_err(be)?
            }
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe if operand_t.is_float() => b
                .build_float_compare(float_predicate(n.op()), flt(0)?, flt(1)?, "")
                .map_err(be)?
                .into(),
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe => {
                let p = int_predicate(n.op(), operand_t.is_signed_int());
                b.build_int_compare(p, int(0)?, int(1)?, "")
                    .map_err(be)?
                    .into()
            }
            Op::And | Op::Or | Op::Xor if !float => {
                let (x, y) = (int(0)?, int(1)?);
                match n.op() {
                    Op::And => b.build_and(x, y, ""),
                    Op::Or => b.build_or(x, y, ""),
                    _ => b.build_xor(x, y, ""),
                }
                .map_err(be)?
                .into()
            }
            Op::Shl | Op::Shr if t.is_int() => {
                let x = int(0)?;
                let ty = x.get_type();
                let amount = b
                    .build_int_cast_sign_flag(int(1)?, ty, false, "")
                    .map_err(be)?;
                let mask = ty.const_int(u64::from(t.bits() - 1), false);
                self.masked_shift(n.op(), x, amount, mask, t.is_signed_int())?
                    .into()
            }
            Op::Not if !float => b.build_not(int(0)?, "").map_err(be)?.into(),
            Op::Abs if float => self.unary_intrinsic("llvm.fabs", flt(0)?)?.into(),
            Op::Abs if t.is_signed_int() => {
                let x = int(0)?;
                self.int_abs(x, x.get_type().const_zero())?
            }
            Op::Abs if t.is_unsigned() => arg(0)?,
            Op::Floor | Op::Ceil | Op::Trunc | Op::Round if float => {
                let name = match n.op() {
                    Op::Floor => "llvm.floor",
                    Op::Ceil => "llvm.ceil",
                    Op::Trunc => "llvm.trunc",
                    _ => "llvm.roundeven",
                };
                self.unary_intrinsic(name, flt(0)?)?.into()
            }
            Op::Floor | Op::Ceil | Op::Trunc | Op::Round if t.is_int() => arg(0)?,
            Op::Sqrt if float => rounded(self.unary_intrinsic("llvm.sqrt", flt(0)?)?)?,
            Op::Rsqrt if float => {
                let x = flt(0)?;
                let s = self.unary_intrinsic("llvm.sqrt", x)?;
                let one = x.get_type().const_float(1.0);
                rounded(b.build_float_div(one, s, "").map_err(be)?)?
            }
            Op::Where => b.build_select(int(0)?, arg(1)?, arg(2)?, "").map_err(be)?,
            op => {
                return Err(err(
                    n,
                    format!("{} on {} operands is not renderable", op.name(), operand_t),
                ))
            }
        };
        Ok(e)
    }
}
