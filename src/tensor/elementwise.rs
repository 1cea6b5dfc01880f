//! Elementwise ops: unary math, binary arithmetic with broadcasting and
//! dtype promotion, comparisons, logic, `where_`, `clamp`, casts.
//!
//! Operands are brought to one dtype (`ScalarType::promote`, or the scalar
//! rule of [`super::operand`]) with explicit CASTs and to one shape with
//! explicit RESHAPE + EXPAND before the ALU node is built.

use super::creation::element_type;
use super::operand::{scalar_result, Kind};
use super::{IntoOperand, Operand, Tensor};
use crate::error::{Error, Located, Result};
use morok_core::shape::broadcast_shapes;
use morok_core::uop::{Op, Srcs, UOp};
use morok_core::{ConstValue, DType, ScalarType};

/// How a binary op chooses the dtype its operands are converted to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Rule {
    /// The promoted dtype.
    Promote,
    /// The promoted dtype, made float.
    Float,
    /// `bool`.
    Bool,
}

/// The binary ops of the public API.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Remainder,
    Pow,
    Maximum,
    Minimum,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
}

impl Binary {
    fn name(self) -> &'static str {
        match self {
            Binary::Add => "add",
            Binary::Sub => "sub",
            Binary::Mul => "mul",
            Binary::Div => "div",
            Binary::FloorDiv => "floor_div",
            Binary::Remainder => "remainder",
            Binary::Pow => "pow",
            Binary::Maximum => "maximum",
            Binary::Minimum => "minimum",
            Binary::Eq => "eq",
            Binary::Ne => "ne",
            Binary::Lt => "lt",
            Binary::Le => "le",
            Binary::Gt => "gt",
            Binary::Ge => "ge",
            Binary::And => "logical_and",
            Binary::Or => "logical_or",
            Binary::Xor => "logical_xor",
        }
    }

    fn rule(self) -> Rule {
        match self {
            Binary::Div | Binary::Pow => Rule::Float,
            Binary::And | Binary::Or | Binary::Xor => Rule::Bool,
            _ => Rule::Promote,
        }
    }
}

impl Tensor {
    /// An ALU node over tensors of equal shape and dtype.
    #[track_caller]
    pub(super) fn alu(op: Op, srcs: &[&Tensor]) -> Result<Tensor> {
        let mut uops = Srcs::new();
        for t in srcs {
            uops.push(t.graph()?.uop.clone());
        }
        let shape = srcs[0].graph()?.shape.clone();
        let buffers = Tensor::merged_buffers(srcs)?;
        Ok(Tensor::from_parts(UOp::alu(op, uops), shape, buffers))
    }

    /// CAST to `dtype` (no node when it already has it).
    #[track_caller]
    pub(super) fn cast_to(&self, dtype: ScalarType) -> Result<Tensor> {
        let g = self.graph()?;
        if g.dtype == dtype {
            return Ok(self.clone());
        }
        self.derive(g.uop.cast(DType::scalar(dtype)), g.shape.clone())
    }

    /// Integers and bools become `f32`; floats stay.
    #[track_caller]
    pub(super) fn to_float(&self) -> Result<Tensor> {
        self.cast_to(self.graph()?.dtype.to_float())
    }

    /// A constant of `self`'s dtype and shape.
    #[track_caller]
    pub(super) fn filled(&self, value: f64) -> Result<Tensor> {
        let g = self.graph()?;
        Ok(Tensor::constant(
            ConstValue::Float(value),
            g.dtype,
            &g.shape,
        ))
    }

    /// Converts two operands to one dtype (by `rule`) and one shape.
    #[track_caller]
    pub(super) fn coerce(
        lhs: Operand,
        rhs: Operand,
        op: &str,
        rule: Rule,
    ) -> Result<(Tensor, Tensor)> {
        let dtype_of = |o: &Operand| match &o.kind {
            Kind::Tensor(t) => t.graph().map(|g| (g.dtype, true)),
            Kind::Scalar { dtype, .. } => Ok((*dtype, false)),
        };
        let (la, lt) = dtype_of(&lhs)?;
        let (ra, rt) = dtype_of(&rhs)?;
        let promoted = match (lt, rt) {
            (true, false) => scalar_result(la, ra),
            (false, true) => scalar_result(ra, la),
            _ => la.promote(ra),
        };
        let dtype = match rule {
            Rule::Promote => promoted,
            Rule::Float => promoted.to_float(),
            Rule::Bool => ScalarType::Bool,
        };
        let shape_of = |o: &Operand| match &o.kind {
            Kind::Tensor(t) => t.shape().to_vec(),
            Kind::Scalar { .. } => Vec::new(),
        };
        let shape = broadcast_shapes(op, &shape_of(&lhs), &shape_of(&rhs)).located()?;
        super::checked_numel(op, &shape)?;
        let a = lhs.materialize(dtype, &shape)?;
        let b = rhs.materialize(dtype, &shape)?;
        Ok((a, b))
    }

    /// `lhs op rhs` for the binary ops of the public API.
    #[track_caller]
    pub(super) fn binary(lhs: Operand, rhs: Operand, op: Binary) -> Result<Tensor> {
        Tensor::binary_as(op.name(), lhs, rhs, op)
    }

    /// [`Tensor::binary`] as a step of the public op `name`, which its own
    /// errors name (errors the operands carry keep theirs).
    #[track_caller]
    pub(super) fn binary_as(name: &str, lhs: Operand, rhs: Operand, op: Binary) -> Result<Tensor> {
        let (a, b) = Tensor::coerce(lhs, rhs, name, op.rule())?;
        let dtype = a.graph()?.dtype;
        if dtype.is_bool() && matches!(op, Binary::Sub | Binary::FloorDiv | Binary::Remainder) {
            return Err(Error::dtype(name, "not defined for bool tensors"));
        }
        match op {
            Binary::Add | Binary::Or if dtype.is_bool() => Tensor::alu(Op::Or, &[&a, &b]),
            Binary::Mul | Binary::And if dtype.is_bool() => Tensor::alu(Op::And, &[&a, &b]),
            Binary::Add => Tensor::alu(Op::Add, &[&a, &b]),
            Binary::Sub => Tensor::alu(Op::Sub, &[&a, &b]),
            Binary::Mul => Tensor::alu(Op::Mul, &[&a, &b]),
            Binary::Div => Tensor::alu(Op::Fdiv, &[&a, &b]),
            Binary::Pow => Tensor::alu(Op::Pow, &[&a, &b]),
            Binary::Maximum => Tensor::alu(Op::Max, &[&a, &b]),
            Binary::Minimum => Tensor::alu(Op::Min, &[&a, &b]),
            Binary::Eq => Tensor::alu(Op::CmpEq, &[&a, &b]),
            Binary::Ne => Tensor::alu(Op::CmpNe, &[&a, &b]),
            Binary::Lt => Tensor::alu(Op::CmpLt, &[&a, &b]),
            Binary::Le => Tensor::alu(Op::CmpLe, &[&a, &b]),
            Binary::Gt => Tensor::alu(Op::CmpLt, &[&b, &a]),
            Binary::Ge => Tensor::alu(Op::CmpLe, &[&b, &a]),
            Binary::And => Tensor::alu(Op::And, &[&a, &b]),
            Binary::Or => Tensor::alu(Op::Or, &[&a, &b]),
            Binary::Xor => Tensor::alu(Op::Xor, &[&a, &b]),
            Binary::FloorDiv => a.floor_div_of(&b),
            Binary::Remainder => a.remainder_of(&b),
        }
    }

    /// `floor(a / b)` on operands of one dtype. Floats divide and floor;
    /// signed integers correct the truncating IDIV by one where the
    /// remainder is non-zero and its sign differs from the divisor's.
    #[track_caller]
    fn floor_div_of(&self, b: &Tensor) -> Result<Tensor> {
        let dtype = self.graph()?.dtype;
        if dtype.is_float() {
            let q = Tensor::alu(Op::Fdiv, &[self, b])?;
            return Tensor::alu(Op::Floor, &[&q]);
        }
        let q = Tensor::alu(Op::Idiv, &[self, b])?;
        if dtype.is_unsigned() {
            return Ok(q);
        }
        let fix = self.sign_mismatch(b)?.cast_to(dtype)?;
        Tensor::alu(Op::Sub, &[&q, &fix])
    }

    /// Python's `a % b`: the remainder has the divisor's sign. Built from
    /// the IR's MOD (sign of the dividend) by adding `b` where the signs
    /// of a non-zero remainder and the divisor differ.
    #[track_caller]
    fn remainder_of(&self, b: &Tensor) -> Result<Tensor> {
        let dtype = self.graph()?.dtype;
        let r = Tensor::alu(Op::Mod, &[self, b])?;
        if dtype.is_unsigned() {
            return Ok(r);
        }
        let fix = self.sign_mismatch(b)?;
        let shifted = Tensor::alu(Op::Add, &[&r, b])?;
        Tensor::alu(Op::Where, &[&fix, &shifted, &r])
    }

    /// `a % b != 0 && (a % b < 0) != (b < 0)` (with the IR's MOD).
    #[track_caller]
    fn sign_mismatch(&self, b: &Tensor) -> Result<Tensor> {
        let r = Tensor::alu(Op::Mod, &[self, b])?;
        let zero = self.filled(0.0)?;
        let nonzero = Tensor::alu(Op::CmpNe, &[&r, &zero])?;
        let r_neg = Tensor::alu(Op::CmpLt, &[&r, &zero])?;
        let b_neg = Tensor::alu(Op::CmpLt, &[b, &zero])?;
        let differ = Tensor::alu(Op::Xor, &[&r_neg, &b_neg])?;
        Tensor::alu(Op::And, &[&nonzero, &differ])
    }

    /// A float ALU op: integer and bool inputs are cast to `f32` first.
    #[track_caller]
    fn float_unary(&self, op: Op) -> Result<Tensor> {
        let x = self.to_float()?;
        Tensor::alu(op, &[&x])
    }

    /// A rounding op: the identity on integers and bools.
    #[track_caller]
    fn rounding(&self, op: Op) -> Result<Tensor> {
        if self.graph()?.dtype.is_float() {
            Tensor::alu(op, &[self])
        } else {
            Ok(self.clone())
        }
    }
}

impl Operand {
    /// This operand as a tensor of `dtype` broadcast to `shape`.
    #[track_caller]
    fn materialize(self, dtype: ScalarType, shape: &[usize]) -> Result<Tensor> {
        match self.kind {
            Kind::Tensor(t) => t.cast_to(dtype)?.expand_to(shape),
            Kind::Scalar { value, .. } => Ok(Tensor::constant(value, dtype, shape)),
        }
    }
}

macro_rules! float_unary {
    ($($(#[$doc:meta])* $name:ident => $op:ident),* $(,)?) => {
        impl Tensor {$(
            $(#[$doc])*
            #[track_caller]
            pub fn $name(&self) -> Result<Tensor> {
                self.float_unary(Op::$op)
            }
        )*}
    };
}

float_unary! {
    /// `e^x`.
    exp => Exp,
    /// `2^x`.
    exp2 => Exp2,
    /// Natural logarithm.
    log => Log,
    /// Base-2 logarithm.
    log2 => Log2,
    /// Square root.
    sqrt => Sqrt,
    /// `1 / sqrt(x)`.
    rsqrt => Rsqrt,
    /// `1 / x`.
    reciprocal => Recip,
    /// Sine.
    sin => Sin,
    /// Cosine.
    cos => Cos,
    /// Tangent.
    tan => Tan,
    /// Hyperbolic tangent.
    tanh => Tanh,
    /// The error function.
    erf => Erf,
}

macro_rules! rounding {
    ($($(#[$doc:meta])* $name:ident => $op:ident),* $(,)?) => {
        impl Tensor {$(
            $(#[$doc])*
            #[track_caller]
            pub fn $name(&self) -> Result<Tensor> {
                self.rounding(Op::$op)
            }
        )*}
    };
}

rounding! {
    /// Rounds toward negative infinity (integers are unchanged).
    floor => Floor,
    /// Rounds toward positive infinity (integers are unchanged).
    ceil => Ceil,
    /// Rounds to the nearest integer, halves to even (integers are unchanged).
    round => Round,
    /// Rounds toward zero (integers are unchanged).
    trunc => Trunc,
}

macro_rules! binary_methods {
    ($($(#[$doc:meta])* $name:ident => $kind:ident),* $(,)?) => {
        impl Tensor {$(
            $(#[$doc])*
            #[track_caller]
            pub fn $name(&self, other: impl IntoOperand) -> Result<Tensor> {
                Tensor::binary(self.into_operand(), other.into_operand(), Binary::$kind)
            }
        )*}
    };
}

binary_methods! {
    /// `self + other` with broadcasting and promotion (OR for bools).
    add => Add,
    /// `self - other` (not defined for bools).
    sub => Sub,
    /// `self * other` (AND for bools).
    mul => Mul,
    /// True division: integer operands are divided as `f32`.
    div => Div,
    /// `floor(self / other)`, like Python's `//` and `torch.floor_divide`.
    floor_div => FloorDiv,
    /// Python's `%` (`torch.remainder`): the result has the divisor's sign.
    remainder => Remainder,
    /// `self ^ other` in floats (integer operands become `f32`).
    pow => Pow,
    /// Elementwise maximum (NaN wins).
    maximum => Maximum,
    /// Elementwise minimum (NaN wins).
    minimum => Minimum,
    /// `self == other` (bool).
    eq => Eq,
    /// `self != other` (bool).
    ne => Ne,
    /// `self < other` (bool).
    lt => Lt,
    /// `self <= other` (bool).
    le => Le,
    /// `self > other` (bool).
    gt => Gt,
    /// `self >= other` (bool).
    ge => Ge,
    /// Logical AND of the operands' truth values.
    logical_and => And,
    /// Logical OR of the operands' truth values.
    logical_or => Or,
    /// Logical XOR of the operands' truth values.
    logical_xor => Xor,
}

impl Tensor {
    /// `-x` (not defined for bools; unsigned integers wrap).
    #[track_caller]
    pub fn neg(&self) -> Result<Tensor> {
        if self.graph()?.dtype.is_bool() {
            return Err(Error::dtype("neg", "not defined for bool tensors"));
        }
        Tensor::alu(Op::Neg, &[self])
    }

    /// `|x|` (the identity on bools and unsigned integers).
    #[track_caller]
    pub fn abs(&self) -> Result<Tensor> {
        let dtype = self.graph()?.dtype;
        if dtype.is_bool() || dtype.is_unsigned() {
            return Ok(self.clone());
        }
        Tensor::alu(Op::Abs, &[self])
    }

    /// -1, 0 or 1 by the sign of each element (NaN stays NaN).
    #[track_caller]
    pub fn sign(&self) -> Result<Tensor> {
        let g = self.graph()?;
        if g.dtype.is_bool() {
            return Ok(self.clone());
        }
        let zero = self.filled(0.0)?;
        let positive = self.gt(&zero)?.cast_to(g.dtype)?;
        if g.dtype.is_unsigned() {
            return Ok(positive);
        }
        let negative = self.lt(&zero)?.cast_to(g.dtype)?;
        let s = Tensor::alu(Op::Sub, &[&positive, &negative])?;
        if !g.dtype.is_float() {
            return Ok(s);
        }
        let nan = Tensor::alu(Op::IsNan, &[self])?;
        Tensor::alu(Op::Where, &[&nan, self, &s])
    }

    /// True where the element is NaN (never for integers).
    #[track_caller]
    pub fn isnan(&self) -> Result<Tensor> {
        let g = self.graph()?;
        if g.dtype.is_float() {
            Tensor::alu(Op::IsNan, &[self])
        } else {
            Ok(Tensor::constant(
                ConstValue::Bool(false),
                ScalarType::Bool,
                &g.shape,
            ))
        }
    }

    /// True where the element is +inf or -inf (never for integers).
    #[track_caller]
    pub fn isinf(&self) -> Result<Tensor> {
        let g = self.graph()?;
        if !g.dtype.is_float() {
            return Ok(Tensor::constant(
                ConstValue::Bool(false),
                ScalarType::Bool,
                &g.shape,
            ));
        }
        let inf = self.filled(f64::INFINITY)?;
        let magnitude = Tensor::alu(Op::Abs, &[self])?;
        Tensor::alu(Op::CmpEq, &[&magnitude, &inf])
    }

    /// Logical NOT of the elements' truth values.
    #[track_caller]
    pub fn logical_not(&self) -> Result<Tensor> {
        let b = self.cast_to(ScalarType::Bool)?;
        Tensor::alu(Op::Not, &[&b])
    }

    /// `cond ? a : b` elementwise, with `self` as the condition (its truth
    /// value); `a` and `b` are promoted and all three broadcast.
    #[track_caller]
    pub fn where_(&self, a: impl IntoOperand, b: impl IntoOperand) -> Result<Tensor> {
        let (a, b) = Tensor::coerce(a.into_operand(), b.into_operand(), "where", Rule::Promote)?;
        let cond = self.cast_to(ScalarType::Bool)?;
        let shape = broadcast_shapes("where", cond.shape(), a.shape()).located()?;
        super::checked_numel("where", &shape)?;
        let cond = cond.expand_to(&shape)?;
        Tensor::alu(
            Op::Where,
            &[&cond, &a.expand_to(&shape)?, &b.expand_to(&shape)?],
        )
    }

    /// Limits every element to `[min, max]`.
    #[track_caller]
    pub fn clamp(&self, min: impl IntoOperand, max: impl IntoOperand) -> Result<Tensor> {
        let low = Tensor::binary_as(
            "clamp",
            self.into_operand(),
            min.into_operand(),
            Binary::Maximum,
        )?;
        Tensor::binary_as(
            "clamp",
            low.into_operand(),
            max.into_operand(),
            Binary::Minimum,
        )
    }

    /// Converts the elements to `dtype`. Integers wrap to a narrower type
    /// (C semantics); floats to integers truncate toward zero and saturate
    /// at the type's range, NaN giving 0 (Rust's `as`).
    #[track_caller]
    pub fn cast(&self, dtype: DType) -> Result<Tensor> {
        let t = element_type("cast", dtype)?;
        self.cast_to(t)
    }

    /// Reinterprets the bits of each element as `dtype`, which must have
    /// the same size (bools cannot be reinterpreted).
    #[track_caller]
    pub fn bitcast(&self, dtype: DType) -> Result<Tensor> {
        let t = element_type("bitcast", dtype)?;
        let g = self.graph()?;
        if t.itemsize() != g.dtype.itemsize() || t.is_bool() || g.dtype.is_bool() {
            return Err(Error::dtype(
                "bitcast",
                format!("cannot reinterpret {} as {t}", g.dtype),
            ));
        }
        if t == g.dtype {
            return Ok(self.clone());
        }
        self.derive(g.uop.bitcast(DType::scalar(t)), g.shape.clone())
    }
}
