//! Convenience constructors. All are `#[track_caller]`, so the node records
//! the location of the code that asked for it.

use super::{Arg, AxisType, ConstValue, Op, OpGroup, ReduceOp, Srcs, UOp};
use crate::dtype::{DType, ScalarType};
use smallvec::smallvec;
use std::sync::Arc;

impl UOp {
    /// A constant of `dtype` (vector dtypes give a CONST of that type).
    /// The value is converted to the dtype's canonical form.
    #[track_caller]
    pub fn const_(dtype: DType, value: ConstValue) -> Arc<UOp> {
        let v = ConstValue::from_f64_or_int(value, dtype.scalar_type());
        UOp::new(Op::Const, dtype, Srcs::new(), Arg::Const(v))
    }

    /// An integer constant of type `Index`.
    #[track_caller]
    pub fn index(v: i64) -> Arc<UOp> {
        UOp::new(
            Op::Const,
            DType::INDEX,
            Srcs::new(),
            Arg::Const(ConstValue::Int(v)),
        )
    }

    /// `DEFINE_VAR`: a scalar variable `name` of `dtype` in `[min, max]`.
    #[track_caller]
    pub fn define_var(name: &str, dtype: DType, min: i64, max: i64) -> Arc<UOp> {
        UOp::new(
            Op::DefineVar,
            dtype,
            Srcs::new(),
            Arg::Var {
                name: name.into(),
                min,
                max,
            },
        )
    }

    /// A constant from an f64, converted to `dtype`.
    #[track_caller]
    pub fn const_f64(dtype: DType, v: f64) -> Arc<UOp> {
        UOp::const_(dtype, ConstValue::Float(v))
    }

    /// Zero of `dtype`.
    #[track_caller]
    pub fn zero(dtype: DType) -> Arc<UOp> {
        UOp::const_(dtype, ConstValue::zero(dtype.scalar_type()))
    }

    /// One of `dtype`.
    #[track_caller]
    pub fn one(dtype: DType) -> Arc<UOp> {
        UOp::const_(dtype, ConstValue::one(dtype.scalar_type()))
    }

    /// A boolean constant.
    #[track_caller]
    pub fn bool_(v: bool) -> Arc<UOp> {
        UOp::new(
            Op::Const,
            DType::BOOL,
            Srcs::new(),
            Arg::Const(ConstValue::Bool(v)),
        )
    }

    /// An ALU op (unary, binary or ternary). The result dtype is bool for
    /// comparisons and IsNan, the second operand's for WHERE, and the first
    /// operand's otherwise.
    #[track_caller]
    pub fn alu(op: Op, src: impl Into<Srcs>) -> Arc<UOp> {
        let src: Srcs = src.into();
        debug_assert!(matches!(
            op.group(),
            OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary
        ));
        let dtype = match op {
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe | Op::IsNan => {
                DType::BOOL.vec(src[0].dtype().count())
            }
            Op::Where => src[1].dtype(),
            _ => src[0].dtype(),
        };
        UOp::new(op, dtype, src, Arg::None)
    }

    /// A unary ALU op on `self`.
    #[track_caller]
    pub fn un(self: &Arc<Self>, op: Op) -> Arc<UOp> {
        UOp::alu(op, smallvec![self.clone()])
    }

    /// A binary ALU op `self op rhs`.
    #[track_caller]
    pub fn bin(self: &Arc<Self>, op: Op, rhs: &Arc<UOp>) -> Arc<UOp> {
        UOp::alu(op, smallvec![self.clone(), rhs.clone()])
    }

    /// `cond ? a : b` with `self` as the condition.
    #[track_caller]
    pub fn where_(self: &Arc<Self>, a: &Arc<UOp>, b: &Arc<UOp>) -> Arc<UOp> {
        UOp::alu(Op::Where, smallvec![self.clone(), a.clone(), b.clone()])
    }

    /// `self + rhs`.
    #[track_caller]
    pub fn add(self: &Arc<Self>, rhs: &Arc<UOp>) -> Arc<UOp> {
        self.bin(Op::Add, rhs)
    }

    /// `self - rhs`.
    #[track_caller]
    pub fn sub(self: &Arc<Self>, rhs: &Arc<UOp>) -> Arc<UOp> {
        self.bin(Op::Sub, rhs)
    }

    /// `self * rhs`.
    #[track_caller]
    pub fn mul(self: &Arc<Self>, rhs: &Arc<UOp>) -> Arc<UOp> {
        self.bin(Op::Mul, rhs)
    }

    /// `self + c` with `c` a constant of `self`'s dtype.
    #[track_caller]
    pub fn add_const(self: &Arc<Self>, c: i64) -> Arc<UOp> {
        self.add(&UOp::const_(self.dtype(), ConstValue::Int(c)))
    }

    /// `self * c` with `c` a constant of `self`'s dtype.
    #[track_caller]
    pub fn mul_const(self: &Arc<Self>, c: i64) -> Arc<UOp> {
        self.mul(&UOp::const_(self.dtype(), ConstValue::Int(c)))
    }

    /// Value conversion to `dtype` (no node if the dtype already matches).
    #[track_caller]
    pub fn cast(self: &Arc<Self>, dtype: DType) -> Arc<UOp> {
        if self.dtype() == dtype {
            return self.clone();
        }
        UOp::new(Op::Cast, dtype, smallvec![self.clone()], Arg::None)
    }

    /// Bit reinterpretation as `dtype`.
    #[track_caller]
    pub fn bitcast(self: &Arc<Self>, dtype: DType) -> Arc<UOp> {
        UOp::new(Op::Bitcast, dtype, smallvec![self.clone()], Arg::None)
    }

    /// A loop over `[0, end)`.
    #[track_caller]
    pub fn range(end: &Arc<UOp>, axis_id: usize, axis_type: AxisType) -> Arc<UOp> {
        UOp::new(
            Op::Range,
            DType::INDEX,
            smallvec![end.clone()],
            Arg::Range { axis_id, axis_type },
        )
    }

    /// A loop-level reduction of `self` over `ranges`.
    #[track_caller]
    pub fn reduce(self: &Arc<Self>, op: ReduceOp, ranges: &[Arc<UOp>]) -> Arc<UOp> {
        let mut src: Srcs = smallvec![self.clone()];
        src.extend(ranges.iter().cloned());
        UOp::new(Op::Reduce, self.dtype(), src, Arg::Reduce(op))
    }

    /// A kernel argument buffer of element type `dtype` in slot `slot`.
    #[track_caller]
    pub fn define_global(slot: i64, dtype: DType) -> Arc<UOp> {
        UOp::new(
            Op::DefineGlobal,
            dtype.ptr(crate::dtype::AddrSpace::Global),
            Srcs::new(),
            Arg::Int(slot),
        )
    }

    /// `INDEX(buf, idx)` or, with a gate, `INDEX(buf, idx, gate)`.
    #[track_caller]
    pub fn index_into(self: &Arc<Self>, idx: &Arc<UOp>, gate: Option<&Arc<UOp>>) -> Arc<UOp> {
        let mut src: Srcs = smallvec![self.clone(), idx.clone()];
        if let Some(g) = gate {
            src.push(g.clone());
        }
        UOp::new(Op::Index, self.dtype(), src, Arg::None)
    }

    /// `LOAD(index)`: reads the element an INDEX points at.
    #[track_caller]
    pub fn load(self: &Arc<Self>) -> Arc<UOp> {
        UOp::new(
            Op::Load,
            self.dtype().pointee(),
            smallvec![self.clone()],
            Arg::None,
        )
    }

    /// `STORE(index, value)`.
    #[track_caller]
    pub fn store(self: &Arc<Self>, value: &Arc<UOp>) -> Arc<UOp> {
        UOp::new(
            Op::Store,
            DType::VOID,
            smallvec![self.clone(), value.clone()],
            Arg::None,
        )
    }

    /// `END(self, ranges...)`: closes `ranges` after computing `self`.
    #[track_caller]
    pub fn end(self: &Arc<Self>, ranges: &[Arc<UOp>]) -> Arc<UOp> {
        if ranges.is_empty() {
            return self.clone();
        }
        let mut src: Srcs = smallvec![self.clone()];
        src.extend(ranges.iter().cloned());
        UOp::new(Op::End, DType::VOID, src, Arg::None)
    }

    /// `SINK(srcs...)`.
    #[track_caller]
    pub fn sink(src: impl Into<Srcs>) -> Arc<UOp> {
        UOp::new(Op::Sink, DType::VOID, src, Arg::None)
    }

    /// True if this node is a CONST equal to zero.
    pub fn is_zero_const(&self) -> bool {
        self.const_value().is_some_and(|c| c.is_zero())
    }

    /// True if this node is a CONST equal to one.
    pub fn is_one_const(&self) -> bool {
        self.const_value().is_some_and(|c| c.is_one())
    }

    /// The constant trip count of a RANGE (`None` for a symbolic end or a
    /// non-RANGE).
    pub fn range_size(&self) -> Option<i64> {
        if self.op() != Op::Range {
            return None;
        }
        self.s(0).const_value().and_then(|c| c.as_i64())
    }

    /// The range's scheduling type, if this is a RANGE.
    pub fn axis_type(&self) -> Option<AxisType> {
        match self.arg() {
            Arg::Range { axis_type, .. } => Some(*axis_type),
            _ => None,
        }
    }
}

impl ConstValue {
    /// Converts any constant to the canonical representation for `t`
    /// (integers wrap, floats round to the type's precision).
    pub fn from_f64_or_int(v: ConstValue, t: ScalarType) -> ConstValue {
        match v.as_i128() {
            Some(i) => ConstValue::from_i128(i, t),
            None => ConstValue::from_f64(v.as_f64(), t),
        }
    }
}
