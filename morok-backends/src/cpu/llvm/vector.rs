//! Vector values of the IR builder: the nodes lowering's vectorizer
//! (`morok_core::vectorize`) produces, as LLVM vector types
//! (`<8 x float>`), with the same semantics the C codegen's vector
//! typedefs have.
//!
//! - Vector `LOAD`/`STORE` of global buffers move `w` consecutive
//!   elements with the element's alignment (no vector alignment is
//!   assumed: `vmovups`, never `vmovaps`); registers (`DEFINE_REG` of a
//!   vector) are allocas of the vector type, promoted to loop phis by the
//!   O3 pipeline.
//! - `VECTORIZE` is a chain of `insertelement`, `GEP` one `extractelement`.
//! - Lane-wise ops with a vector instruction that computes exactly the
//!   scalar op in every lane are that instruction: float `+ - * /`,
//!   negation, `MULACC` as `llvm.fma.v*`, `SQRT`/`RSQRT`/`RECIP`/`ABS`
//!   and rounding through their vector intrinsics, NaN-propagating
//!   `MAX`/`MIN` as compare + select, integer `+ - *` (wrapping),
//!   bitwise ops and `MAX`/`MIN`, `WHERE` (select, the condition a scalar
//!   or a vector), and `CAST`s between the vector element types (float →
//!   int saturating through `llvm.fpto[su]i.sat.v*`, as the scalar cast).
//! - Vector masks: comparisons give `<w x i1>`, logic on masks, integer
//!   negation/`NOT`/`ABS`, masked shifts, same-size `BITCAST`s and
//!   `CAST`s from and to `bool` are vector instructions too.
//! - Every other op is built lane by lane (`extractelement` of each
//!   vector operand, the scalar op, `insertelement`), exactly the scalar
//!   code per lane.

use super::ir::{be, err, Gen, R};
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{BasicValueEnum, IntValue, VectorValue};
use inkwell::{FloatPredicate, IntPredicate};
use morok_core::dtype::{DType, ScalarType};
use morok_core::uop::{Arg, ConstValue, Op, UOp};
use std::sync::Arc;

impl<'ctx> Gen<'ctx, '_> {
    /// The register type of a value of dtype `d`: the scalar type, or a
    /// vector of `d.count()` of them.
    pub(super) fn dtype_type(&self, n: &UOp, d: DType) -> R<BasicTypeEnum<'ctx>> {
        let elem = self.value_type(n, d.scalar_type())?;
        if !d.is_vector() {
            return Ok(elem);
        }
        Ok(vec_of(n, elem, u32::from(d.count()))?.into())
    }

    fn lane(&self, i: usize) -> IntValue<'ctx> {
        self.cx.i32_type().const_int(i as u64, false)
    }

    /// A vector constant of `n` (every lane `c`).
    pub(super) fn vector_constant(&self, n: &UOp, c: ConstValue) -> R<BasicValueEnum<'ctx>> {
        let t = n.dtype().scalar_type();
        let lane = self.constant(n, c, t)?;
        let lanes = vec![lane; usize::from(n.dtype().count())];
        Ok(VectorType::const_vector(&lanes).into())
    }

    /// The loaded or stored form of a vector access: the vector type, the
    /// alignment of one element.
    pub(super) fn vector_access(&self, n: &UOp, d: DType) -> R<(BasicTypeEnum<'ctx>, u32)> {
        if !morok_core::caps::is_vector_element(d.scalar_type()) {
            return Err(err(n, "vector of a type that has no vector registers"));
        }
        Ok((self.dtype_type(n, d)?, d.scalar_type().itemsize() as u32))
    }

    /// `VECTORIZE`: the operands as the lanes of one vector. A broadcast
    /// (every operand the same node) is LLVM's splat idiom, one
    /// `insertelement` and a `shufflevector` with a zero mask: the form
    /// the optimizer canonicalizes a chain of per-lane inserts to, so its
    /// passes start from the short form instead of rewriting the chain
    /// (a 16-lane broadcast is 2 instructions instead of 16).
    pub(super) fn vectorize(&self, n: &Arc<UOp>) -> R<BasicValueEnum<'ctx>> {
        let ty = self.dtype_type(n, n.dtype())?.into_vector_type();
        if let [first, rest @ ..] = n.src() {
            if !rest.is_empty() && rest.iter().all(|x| Arc::ptr_eq(x, first)) {
                let one = self
                    .b
                    .build_insert_element(ty.get_poison(), self.value(first)?, self.lane(0), "")
                    .map_err(be)?;
                let zeros = self.cx.i32_type().vec_type(ty.get_size()).const_zero();
                let splat = self
                    .b
                    .build_shuffle_vector(one, ty.get_poison(), zeros, "")
                    .map_err(be)?;
                return Ok(splat.into());
            }
        }
        let mut v = ty.get_undef();
        for (i, x) in n.src().iter().enumerate() {
            let lane = self.value(x)?;
            v = self
                .b
                .build_insert_element(v, lane, self.lane(i), "")
                .map_err(be)?;
        }
        Ok(v.into())
    }

    /// `GEP(v, lanes)`: one lane of `v` (`extractelement`), or several as
    /// a narrower vector (`shufflevector`).
    pub(super) fn gep(&self, n: &Arc<UOp>) -> R<BasicValueEnum<'ctx>> {
        let (Arg::Axes(lanes), true) = (n.arg(), n.src().len() == 1) else {
            return Err(err(n, "GEP needs one vector and its lanes"));
        };
        let BasicValueEnum::VectorValue(v) = self.value(n.s(0))? else {
            return Err(err(n, "GEP of a scalar"));
        };
        match lanes.as_slice() {
            [i] => self
                .b
                .build_extract_element(v, self.lane(*i), "")
                .map_err(be),
            _ => {
                let mask: Vec<IntValue<'ctx>> = lanes.iter().map(|&i| self.lane(i)).collect();
                let poison = v.get_type().get_poison();
                self.b
                    .build_shuffle_vector(v, poison, VectorType::const_vector(&mask), "")
                    .map(Into::into)
                    .map_err(be)
            }
        }
    }

    /// The vector ALU op or `CAST` `n` on the operand values `v`: one
    /// vector instruction where it computes the scalar op per lane,
    /// otherwise lane by lane with `scalar_op`.
    pub(super) fn vector_op(
        &self,
        n: &Arc<UOp>,
        v: &[BasicValueEnum<'ctx>],
        scalar_op: impl Fn(&[BasicValueEnum<'ctx>]) -> R<BasicValueEnum<'ctx>>,
    ) -> R<BasicValueEnum<'ctx>> {
        if let Some(e) = self.native_vector_op(n, v)? {
            return Ok(e);
        }
        let ty = self.dtype_type(n, n.dtype())?.into_vector_type();
        let mut out = ty.get_undef();
        for i in 0..ty.get_size() as usize {
            let lanes: Vec<BasicValueEnum<'ctx>> = v
                .iter()
                .map(|x| match x {
                    BasicValueEnum::VectorValue(x) => self
                        .b
                        .build_extract_element(*x, self.lane(i), "")
                        .map_err(be),
                    x => Ok(*x),
                })
                .collect::<R<_>>()?;
            let e = scalar_op(&lanes)?;
            out = self
                .b
                .build_insert_element(out, e, self.lane(i), "")
                .map_err(be)?;
        }
        Ok(out.into())
    }

    /// The one-instruction form of vector op `n` (see the module docs), or
    /// `None` when it is built lane by lane.
    fn native_vector_op(
        &self,
        n: &Arc<UOp>,
        v: &[BasicValueEnum<'ctx>],
    ) -> R<Option<BasicValueEnum<'ctx>>> {
        let t = n.dtype().scalar_type();
        let float = matches!(t, ScalarType::F32 | ScalarType::F64);
        let int = matches!(
            t,
            ScalarType::I32 | ScalarType::I64 | ScalarType::U32 | ScalarType::U64
        );
        let b = &self.b;
        // WHERE: a scalar or vector condition, vector operands.
        if n.op() == Op::Where {
            let (BasicValueEnum::VectorValue(x), BasicValueEnum::VectorValue(y)) = (v[1], v[2])
            else {
                return Ok(None);
            };
            let sel = match v[0] {
                BasicValueEnum::IntValue(c) => b.build_select(c, x, y, ""),
                BasicValueEnum::VectorValue(c) => b.build_select(c, x, y, ""),
                _ => return Err(err(n, "WHERE with a non-boolean condition")),
            };
            return sel.map(Some).map_err(be);
        }
        let vs: Vec<VectorValue<'ctx>> = v
            .iter()
            .filter_map(|x| match x {
                BasicValueEnum::VectorValue(x) => Some(*x),
                _ => None,
            })
            .collect();
        if vs.len() != v.len() || vs.is_empty() {
            return Ok(None);
        }
        if let Some(e) = self.mask_vector_op(n, &vs)? {
            return Ok(Some(e));
        }
        if !(float || int) {
            return Ok(None);
        }
        let x = vs[0];
        let y = vs.get(1).copied().unwrap_or(x);
        let plain = self.kernel_no_overflow(n) && matches!(t, ScalarType::I32 | ScalarType::I64);
        let signed = t.is_signed_int();
        let e: BasicValueEnum<'ctx> = match n.op() {
            Op::Cast => return self.vector_cast(n, x),
            Op::Add if float => b.build_float_add(x, y, "").map_err(be)?.into(),
            Op::Sub if float => b.build_float_sub(x, y, "").map_err(be)?.into(),
            Op::Mul if float => b.build_float_mul(x, y, "").map_err(be)?.into(),
            Op::Fdiv if float => b.build_float_div(x, y, "").map_err(be)?.into(),
            Op::Neg if float => b.build_float_neg(x, "").map_err(be)?.into(),
            Op::Recip if float => b
                .build_float_div(self.splat_one(x)?, x, "")
                .map_err(be)?
                .into(),
            Op::MulAcc if float => self.intrinsic("llvm.fma", &[x.get_type().into()], v)?,
            Op::Sqrt if float => self.intrinsic("llvm.sqrt", &[x.get_type().into()], v)?,
            Op::Rsqrt if float => {
                let s = self.intrinsic("llvm.sqrt", &[x.get_type().into()], v)?;
                b.build_float_div(self.splat_one(x)?, s.into_vector_value(), "")
                    .map_err(be)?
                    .into()
            }
            Op::Abs if float => self.intrinsic("llvm.fabs", &[x.get_type().into()], v)?,
            Op::Floor | Op::Ceil | Op::Trunc | Op::Round if float => {
                let name = match n.op() {
                    Op::Floor => "llvm.floor",
                    Op::Ceil => "llvm.ceil",
                    Op::Trunc => "llvm.trunc",
                    _ => "llvm.roundeven",
                };
                self.intrinsic(name, &[x.get_type().into()], v)?
            }
            Op::Max | Op::Min if float => {
                // x when x beats y or x is NaN (NaN propagates), else y.
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
            Op::Add if plain => b.build_int_nsw_add(x, y, "").map_err(be)?.into(),
            Op::Sub if plain => b.build_int_nsw_sub(x, y, "").map_err(be)?.into(),
            Op::Mul if plain => b.build_int_nsw_mul(x, y, "").map_err(be)?.into(),
            Op::Add if int => b.build_int_add(x, y, "").map_err(be)?.into(),
            Op::Sub if int => b.build_int_sub(x, y, "").map_err(be)?.into(),
            Op::Mul if int => b.build_int_mul(x, y, "").map_err(be)?.into(),
            Op::And if int => b.build_and(x, y, "").map_err(be)?.into(),
            Op::Or if int => b.build_or(x, y, "").map_err(be)?.into(),
            Op::Xor if int => b.build_xor(x, y, "").map_err(be)?.into(),
            Op::Max | Op::Min if int => {
                let p = match (n.op() == Op::Max, signed) {
                    (true, true) => IntPredicate::SGT,
                    (true, false) => IntPredicate::UGT,
                    (false, true) => IntPredicate::SLT,
                    (false, false) => IntPredicate::ULT,
                };
                let c = b.build_int_compare(p, x, y, "").map_err(be)?;
                b.build_select(c, x, y, "").map_err(be)?
            }
            _ => return Ok(None),
        };
        Ok(Some(e))
    }

    /// The vector-mask forms of vector op `n` on the vector operands `vs`
    /// (lowering emits them for renderers with vector masks, see
    /// `Caps::vector_masks`), or `None`: comparisons of number vectors
    /// give `<w x i1>` with the scalar predicates, logic on masks and
    /// integers, wrapping integer negation, shifts with the amount masked
    /// to the width, integer `ABS` (wrapping at the minimum), `BITCAST`
    /// between vector element types, and `CAST`s from and to `bool`.
    /// Each computes exactly the scalar op of every lane.
    fn mask_vector_op(
        &self,
        n: &Arc<UOp>,
        vs: &[VectorValue<'ctx>],
    ) -> R<Option<BasicValueEnum<'ctx>>> {
        let (t, ot) = (n.dtype().scalar_type(), n.s(0).dtype().scalar_type());
        let number = |t: ScalarType| morok_core::caps::is_vector_element(t);
        let int = number(t) && t.is_int();
        let b = &self.b;
        let x = vs[0];
        let y = vs.get(1).copied().unwrap_or(x);
        let e: BasicValueEnum<'ctx> = match n.op() {
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe if number(ot) && ot.is_float() => b
                .build_float_compare(float_predicate(n.op()), x, y, "")
                .map_err(be)?
                .into(),
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe if number(ot) => {
                let p = int_predicate(n.op(), ot.is_signed_int());
                b.build_int_compare(p, x, y, "").map_err(be)?.into()
            }
            Op::And | Op::Or | Op::Xor if t.is_bool() => match n.op() {
                Op::And => b.build_and(x, y, ""),
                Op::Or => b.build_or(x, y, ""),
                _ => b.build_xor(x, y, ""),
            }
            .map_err(be)?
            .into(),
            Op::Not if int || t.is_bool() => b.build_not(x, "").map_err(be)?.into(),
            Op::Neg if int => {
                let zero = x.get_type().const_zero();
                b.build_int_sub(zero, x, "").map_err(be)?.into()
            }
            Op::Shl | Op::Shr if int && vs.len() == 2 => {
                let ty = x.get_type();
                let amount = b.build_int_cast_sign_flag(y, ty, false, "").map_err(be)?;
                let elem = ty.get_element_type().into_int_type();
                let bits = elem.const_int(u64::from(t.bits() - 1), false);
                let mask = VectorType::const_vector(&vec![bits; ty.get_size() as usize]);
                self.masked_shift(n.op(), x, amount, mask, t.is_signed_int())?
                    .into()
            }
            Op::Abs if int && t.is_signed_int() => self.int_abs(x, x.get_type().const_zero())?,
            Op::Bitcast if number(t) && number(ot) && t.itemsize() == ot.itemsize() => {
                let ty = self.dtype_type(n, n.dtype())?;
                b.build_bit_cast(x, ty, "").map_err(be)?
            }
            Op::Cast if t.is_bool() && number(ot) => {
                let zero = x.get_type().const_zero();
                if ot.is_float() {
                    b.build_float_compare(FloatPredicate::UNE, x, zero, "")
                        .map_err(be)?
                        .into()
                } else {
                    b.build_int_compare(IntPredicate::NE, x, zero, "")
                        .map_err(be)?
                        .into()
                }
            }
            Op::Cast if ot.is_bool() && number(t) => {
                let ty = self.dtype_type(n, n.dtype())?.into_vector_type();
                if t.is_float() {
                    b.build_unsigned_int_to_float(x, ty, "").map_err(be)?.into()
                } else {
                    b.build_int_z_extend(x, ty, "").map_err(be)?.into()
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(e))
    }

    /// A vector of ones of `x`'s float vector type.
    fn splat_one(&self, x: VectorValue<'ctx>) -> R<VectorValue<'ctx>> {
        let elem = x.get_type().get_element_type().into_float_type();
        let ones = vec![elem.const_float(1.0); x.get_type().get_size() as usize];
        Ok(VectorType::const_vector(&ones))
    }

    /// `CAST` of the vector `x` between vector element types as one
    /// instruction, with the scalar casts' rules lane by lane.
    fn vector_cast(&self, n: &Arc<UOp>, x: VectorValue<'ctx>) -> R<Option<BasicValueEnum<'ctx>>> {
        let (from, to) = (n.s(0).dtype().scalar_type(), n.dtype().scalar_type());
        let ty = self.dtype_type(n, n.dtype())?.into_vector_type();
        let b = &self.b;
        let e: BasicValueEnum<'ctx> = if from == to {
            x.into()
        } else if from.is_float() && to.is_float() {
            if from.itemsize() > to.itemsize() {
                b.build_float_trunc(x, ty, "").map_err(be)?.into()
            } else {
                b.build_float_ext(x, ty, "").map_err(be)?.into()
            }
        } else if from.is_int() && to.is_int() {
            b.build_int_cast_sign_flag(x, ty, from.is_signed_int(), "")
                .map_err(be)?
                .into()
        } else if from.is_int() && to.is_float() {
            if from.is_signed_int() {
                b.build_signed_int_to_float(x, ty, "").map_err(be)?.into()
            } else {
                b.build_unsigned_int_to_float(x, ty, "").map_err(be)?.into()
            }
        } else {
            let name = if to.is_unsigned() {
                "llvm.fptoui.sat"
            } else {
                "llvm.fptosi.sat"
            };
            self.intrinsic(name, &[ty.into(), x.get_type().into()], &[x.into()])?
        };
        Ok(Some(e))
    }
}

/// The float predicate of comparison `op` (ordered but for `!=`, which
/// is true on NaN like C's `!=`).
pub(super) fn float_predicate(op: Op) -> FloatPredicate {
    match op {
        Op::CmpLt => FloatPredicate::OLT,
        Op::CmpLe => FloatPredicate::OLE,
        Op::CmpEq => FloatPredicate::OEQ,
        _ => FloatPredicate::UNE,
    }
}

/// The integer predicate of comparison `op` on signed or unsigned
/// operands.
pub(super) fn int_predicate(op: Op, signed: bool) -> IntPredicate {
    match (op, signed) {
        (Op::CmpLt, true) => IntPredicate::SLT,
        (Op::CmpLt, false) => IntPredicate::ULT,
        (Op::CmpLe, true) => IntPredicate::SLE,
        (Op::CmpLe, false) => IntPredicate::ULE,
        (Op::CmpEq, _) => IntPredicate::EQ,
        _ => IntPredicate::NE,
    }
}

/// The vector of `count` elements of `elem` (of node `n`, for errors).
fn vec_of<'ctx>(n: &UOp, elem: BasicTypeEnum<'ctx>, count: u32) -> R<VectorType<'ctx>> {
    match elem {
        BasicTypeEnum::IntType(t) => Ok(t.vec_type(count)),
        BasicTypeEnum::FloatType(t) => Ok(t.vec_type(count)),
        _ => Err(err(n, "vector of a type that is not a number")),
    }
}
