//! ALU ops, casts, bitcasts and vector construction of the C renderer
//! (semantics in the [`super::render`] module docs): each op is one C
//! expression, scalar or on whole GCC/Clang vectors, or built lane by
//! lane from the scalar form.

use super::render::{err, Ctx, Dialect};
use super::types::{
    int_range_exclusive, libm, literal, same_width_ints, storage_type, value_type, vec_of,
    wrap_type,
};
use morok_core::dtype::ScalarType;
use morok_core::render::RenderError;
use morok_core::uop::{Arg, ConstValue, Op, UOp};
use std::sync::Arc;

/// The C operator of a binary ALU op (`+ - * /`, comparisons, bitwise).
fn infix(op: Op) -> &'static str {
    match op {
        Op::Add => "+",
        Op::Sub => "-",
        Op::Mul => "*",
        Op::Fdiv => "/",
        Op::CmpLt => "<",
        Op::CmpLe => "<=",
        Op::CmpEq => "==",
        Op::CmpNe => "!=",
        Op::And => "&",
        Op::Or => "|",
        _ => "^",
    }
}

/// The libm base name of a rounding op (`rint` rounds half to even in
/// the default rounding mode, which kernels never change).
fn rounding(op: Op) -> &'static str {
    match op {
        Op::Floor => "floor",
        Op::Ceil => "ceil",
        Op::Trunc => "trunc",
        _ => "rint",
    }
}

/// Rounds a `float` expression to the half type `t` (identity otherwise).
fn round_half(expr: String, t: ScalarType) -> String {
    match t {
        ScalarType::F16 => format!("morok_round_f16({expr})"),
        ScalarType::BF16 => format!("morok_round_bf16({expr})"),
        _ => expr,
    }
}

/// The libm function computing the float op `op` and its operand count
/// (the name for `f64`; [`libm`] adds the `f` of `float`), or `None` for
/// ops rendered otherwise.
fn libm_function(op: Op) -> Option<(&'static str, usize)> {
    Some(match op {
        Op::Sqrt => ("sqrt", 1),
        Op::Exp => ("exp", 1),
        Op::Exp2 => ("exp2", 1),
        Op::Log => ("log", 1),
        Op::Log2 => ("log2", 1),
        Op::Sin => ("sin", 1),
        Op::Cos => ("cos", 1),
        Op::Tan => ("tan", 1),
        Op::Tanh => ("tanh", 1),
        Op::Erf => ("erf", 1),
        Op::Mod => ("fmod", 2),
        Op::Pow => ("pow", 2),
        _ => return None,
    })
}

/// `m ? a : b` per lane, for a mask `m` of lanes as wide as `t`'s (all
/// ones or 0) and vectors `a`, `b` of type `t`: a bit select (C has no
/// vector `?:`), which compilers turn into a blend.
fn select(m: &str, a: &str, b: &str, t: ScalarType, w: u16) -> String {
    let ty = vec_of(t, w);
    let i = vec_of(same_width_ints(t).0, w);
    format!("(({ty})((({i})({m}) & ({i})({a})) | (~({i})({m}) & ({i})({b}))))")
}

/// A mask (as produced by comparing vectors of `from`) as the mask of
/// lanes of type `to`'s width.
fn mask_as(m: String, from: ScalarType, to: ScalarType, w: u16) -> String {
    if from.itemsize() == to.itemsize() {
        m
    } else {
        format!(
            "__builtin_convertvector({m}, {})",
            vec_of(same_width_ints(to).0, w)
        )
    }
}

/// A vector of `w` copies of the C expression `x` of type `t`.
fn splat(x: &str, t: ScalarType, w: u16) -> String {
    format!("(({}){{{}}})", vec_of(t, w), vec![x; w as usize].join(", "))
}

impl Ctx<'_> {
    /// The expression of a node that computes a value from its operands:
    /// `CAST`, `VECTORIZE`, `GEP`, a vector `BITCAST` or an ALU op.
    pub(super) fn value(&self, n: &Arc<UOp>) -> Result<String, RenderError> {
        match n.op() {
            Op::Cast => {
                let whole = match self.dialect {
                    Dialect::C => self.vector_cast(n)?,
                    Dialect::Cuda => None,
                };
                if let Some(e) = whole {
                    Ok(e)
                } else if n.dtype().is_vector() {
                    let ty = value_type(n.dtype().scalar_type())
                        .ok_or_else(|| err(n, "no C type for this dtype"))?;
                    self.lanewise(n, |i| self.cast(n, &self.operands(n, Some(i))?[0], ty))
                } else {
                    self.cast(n, &self.name(n.s(0))?, &self.vtype(n)?)
                }
            }
            Op::Vectorize => {
                let mut lanes = self.operands(n, None)?;
                if n.dtype().is_bool() {
                    lanes = lanes.iter().map(|l| format!("-(int32_t){l}")).collect();
                }
                Ok(self.vector_literal(&self.vtype(n)?, &lanes.join(", ")))
            }
            Op::Gep => {
                let (Arg::Axes(lanes), true) = (n.arg(), n.src().len() == 1) else {
                    return Err(err(n, "GEP needs one vector and its lanes"));
                };
                // Several lanes: a vector literal of them, which GCC and
                // Clang both compile to one extract or shuffle (half of a
                // vector: `vextractf64x4`, `vextractf128`, ...).
                let v = self.name(n.s(0))?;
                let picked: Vec<String> = lanes.iter().map(|i| format!("{v}[{i}]")).collect();
                Ok(match picked.as_slice() {
                    [one] => one.clone(),
                    _ => self.vector_literal(&self.vtype(n)?, &picked.join(", ")),
                })
            }
            Op::Bitcast if n.dtype().is_vector() => {
                let (ty, x) = (self.vtype(n)?, self.name(n.s(0))?);
                Ok(match self.dialect {
                    Dialect::C => format!("(({ty})({x}))"),
                    Dialect::Cuda => format!("morok_bits<{ty}>({x})"),
                })
            }
            _ => self.alu(n),
        }
    }

    /// The scalar cast expression of `n` applied to the operand `a`, with
    /// `ty` the C type of the result (one lane's, for vectors).
    fn cast(&self, n: &Arc<UOp>, a: &str, ty: &str) -> Result<String, RenderError> {
        let (from, to) = (n.s(0).dtype().scalar_type(), n.dtype().scalar_type());
        Ok(match (from, to) {
            (_, ScalarType::Bool) => format!("({a} != 0)"),
            (f, t) if f == t => a.to_string(),
            (ScalarType::Bool, _) => format!("({ty}){a}"),
            // Via f64 and round-to-odd: one correct rounding to the half.
            (f, ScalarType::F16 | ScalarType::BF16) if f.is_int() || f == ScalarType::F64 => {
                round_half(format!("morok_f64_to_f32_odd((double){a})"), to)
            }
            (_, ScalarType::F16 | ScalarType::BF16) => round_half(a.to_string(), to),
            (f, t) if f.is_float() && t.is_int() => {
                let (lo, hi) = int_range_exclusive(t);
                format!(
                    "({a} != {a} ? ({ty})0 : {a} >= {hi:e} ? {max} : {a} <= {lo:e} ? {min} : ({ty}){a})",
                    max = literal(ConstValue::max_of(t), t),
                    min = literal(ConstValue::min_of(t), t),
                )
            }
            _ => format!("({ty}){a}"),
        })
    }

    /// Bit reinterpretation through `memcpy` of the storage forms.
    pub(super) fn bitcast(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        let a = self.name(n.s(0))?;
        let (from, to) = (n.s(0).dtype().scalar_type(), n.dtype().scalar_type());
        let (sf, stt) = match (storage_type(from), storage_type(to)) {
            (Some(f), Some(t)) if from.itemsize() == to.itemsize() => (f, t),
            _ => return Err(err(n, "bitcast between types of different sizes")),
        };
        let src_bits = match from {
            ScalarType::F16 => format!("morok_f32_to_f16({a})"),
            ScalarType::BF16 => format!("morok_f32_to_bf16({a})"),
            ScalarType::Bool => format!("(uint8_t){a}"),
            _ => a,
        };
        let bits = self.fresh("b");
        self.line(&format!(
            "{stt} {bits}; {{ const {sf} t = {src_bits}; memcpy(&{bits}, &t, sizeof t); }}"
        ));
        let value = match to {
            ScalarType::F16 => format!("morok_f16_to_f32({bits})"),
            ScalarType::BF16 => format!("morok_bf16_to_f32({bits})"),
            ScalarType::Bool => format!("({bits} != 0)"),
            _ => bits,
        };
        self.define(n, value)
    }

    /// The expression of ALU node `n`. Vectors: `+ - * /` and negation
    /// of floats are the vector operators (IEEE lane by lane, exactly the
    /// scalar operation), everything else is built lane by lane from the
    /// scalar expression, which the C compiler vectorizes where the ISA
    /// can.
    fn alu(&self, n: &Arc<UOp>) -> Result<String, RenderError> {
        let d = n.dtype();
        if !d.is_vector() {
            return self.scalar_alu(n, self.operands(n, None)?, &self.vtype(n)?);
        }
        // CUDA's vectors are structs of lanes: every op lane by lane.
        let c = self.dialect == Dialect::C;
        if c {
            if let Some(e) = self.vector_alu(n)? {
                return Ok(e);
            }
        }
        let native = c
            && matches!(d.scalar_type(), ScalarType::F32 | ScalarType::F64)
            && n.src().iter().all(|x| x.dtype() == d);
        let s = self.operands(n, None)?;
        match n.op() {
            Op::Add | Op::Sub | Op::Mul | Op::Fdiv if native => {
                let sym = infix(n.op());
                Ok(format!("({} {sym} {})", s[0], s[1]))
            }
            Op::Neg if native => Ok(format!("(-{})", s[0])),
            _ => {
                let ty = value_type(d.scalar_type())
                    .ok_or_else(|| err(n, "no C type for this dtype"))?;
                self.lanewise(n, |i| self.scalar_alu(n, self.operands(n, Some(i))?, ty))
            }
        }
    }

    /// The expression of a vector ALU node `n` on whole vectors (vector
    /// masks, see `Caps::vector_masks`), or `None` for the ops left to
    /// [`Ctx::alu`]'s other forms. Every form computes exactly the scalar
    /// expression of each lane: integer `+ - *` and left shifts wrap in
    /// the unsigned type, shift amounts are masked, `MAX`/`MIN`
    /// propagate NaN, roundings are the exact helpers of
    /// [`rounding_prelude`], comparisons give 32-bit masks, `MULACC` of
    /// floats is the vector FMA of [`fma_prelude`].
    fn vector_alu(&self, n: &Arc<UOp>) -> Result<Option<String>, RenderError> {
        let d = n.dtype();
        let w = d.count();
        let t = d.scalar_type();
        if !n
            .src()
            .iter()
            .all(|x| x.dtype().is_vector() && x.dtype().count() == w)
        {
            return Ok(None);
        }
        let s = self.operands(n, None)?;
        let ty = self.vtype(n)?;
        let ot = n.s(0).dtype().scalar_type();
        let float = t.is_float();
        let int = morok_core::caps::is_vector_element(t) && t.is_int();
        let (_, u) = same_width_ints(t);
        let ut = vec_of(u, w);
        let bits = t.bits();
        let e = match n.op() {
            Op::Add | Op::Sub | Op::Mul if int => {
                let sym = infix(n.op());
                format!("(({ty})(({ut}){} {sym} ({ut}){}))", s[0], s[1])
            }
            Op::Neg if int => format!("(({ty})(-({ut}){}))", s[0]),
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe if !ot.is_bool() => {
                let sym = infix(n.op());
                mask_as(format!("({} {sym} {})", s[0], s[1]), ot, ScalarType::I32, w)
            }
            Op::And | Op::Or | Op::Xor if int || t.is_bool() => {
                let sym = infix(n.op());
                format!("({} {sym} {})", s[0], s[1])
            }
            Op::Not if int || t.is_bool() => format!("(~{})", s[0]),
            Op::Shl if int => format!(
                "(({ty})(({ut}){} << (({ut}){} & {})))",
                s[0],
                s[1],
                bits - 1
            ),
            Op::Shr if int => format!("(({ty})({} >> ({} & {})))", s[0], s[1], bits - 1),
            Op::Max | Op::Min if float || int => {
                let (a, b) = (&s[0], &s[1]);
                let cmp = if n.op() == Op::Max { ">" } else { "<" };
                let m = if float {
                    format!("(({a} {cmp} {b}) | ({a} != {a}))")
                } else {
                    format!("({a} {cmp} {b})")
                };
                select(&m, a, b, t, w)
            }
            Op::Where if n.s(0).dtype().is_bool() && (float || int || t.is_bool()) => {
                let m = mask_as(s[0].clone(), ScalarType::I32, t, w);
                select(&m, &s[1], &s[2], t, w)
            }
            Op::Abs if float => {
                let (_, u) = same_width_ints(t);
                let mag = literal(ConstValue::max_of(same_width_ints(t).0), u);
                format!("(({ty})(({ut}){} & {mag}))", s[0])
            }
            Op::Floor | Op::Ceil | Op::Trunc | Op::Round if float => {
                let f = rounding(n.op());
                format!("{ty}_{f}({})", s[0])
            }
            Op::Recip if float => {
                let one = literal(ConstValue::Float(1.0), t);
                format!("({} / {})", splat(&one, t, w), s[0])
            }
            Op::MulAcc if float && n.src().iter().all(|x| x.dtype() == d) => {
                format!("{ty}_fma({}, {}, {})", s[0], s[1], s[2])
            }
            _ => return Ok(None),
        };
        Ok(Some(e))
    }

    /// A cast of vectors of vector-element types or masks as one vector
    /// conversion (`__builtin_convertvector`, the same conversion as the
    /// scalar cast per lane), or `None` for scalars. Float → integer
    /// saturates and maps NaN to 0 like [`Ctx::cast`]: lanes outside the
    /// target's range convert a 0 and are replaced by its bounds.
    fn vector_cast(&self, n: &Arc<UOp>) -> Result<Option<String>, RenderError> {
        let (d, sd) = (n.dtype(), n.s(0).dtype());
        let lane_type = |t: ScalarType| t.is_bool() || morok_core::caps::is_vector_element(t);
        if !d.is_vector()
            || !sd.is_vector()
            || !lane_type(d.scalar_type())
            || !lane_type(sd.scalar_type())
        {
            return Ok(None);
        }
        let (from, to, w) = (sd.scalar_type(), d.scalar_type(), d.count());
        let a = self.name(n.s(0))?;
        let ty = self.vtype(n)?;
        Ok(Some(match (from, to) {
            (ScalarType::Bool, _) => format!("__builtin_convertvector(({a} & 1), {ty})"),
            (_, ScalarType::Bool) => {
                let zero = literal(ConstValue::zero(from), from);
                mask_as(format!("({a} != {zero})"), from, ScalarType::I32, w)
            }
            (f, t) if f.is_float() && t.is_int() => {
                let (lo, hi) = int_range_exclusive(t);
                let (lo, hi) = (
                    literal(ConstValue::Float(lo), f),
                    literal(ConstValue::Float(hi), f),
                );
                let inside = format!("(({a} > {lo}) & ({a} < {hi}))");
                let zero = splat(&literal(ConstValue::zero(f), f), f, w);
                let conv = format!(
                    "__builtin_convertvector({}, {ty})",
                    select(&inside, &a, &zero, f, w)
                );
                let max = splat(&literal(ConstValue::max_of(t), t), t, w);
                let min = splat(&literal(ConstValue::min_of(t), t), t, w);
                let high = mask_as(format!("({a} >= {hi})"), f, t, w);
                let low = mask_as(format!("({a} <= {lo})"), f, t, w);
                select(&low, &min, &select(&high, &max, &conv, t, w), t, w)
            }
            _ => format!("__builtin_convertvector({a}, {ty})"),
        }))
    }

    /// The scalar expression of ALU node `n` on the operand expressions
    /// `s`, with `ty` the C type of the result (one lane's, for vectors).
    fn scalar_alu(&self, n: &Arc<UOp>, s: Vec<String>, ty: &str) -> Result<String, RenderError> {
        let arg = |i: usize| -> Result<&str, RenderError> {
            s.get(i)
                .map(String::as_str)
                .ok_or_else(|| err(n, "missing operand"))
        };
        let t = n.dtype().scalar_type();
        let operand_t = n
            .src()
            .first()
            .map(|x| x.dtype().scalar_type())
            .unwrap_or(t);
        let u = wrap_type(t);
        let plain = self.kernel.no_overflow.contains(&n.id());
        let float = t.is_float();
        let int = t.is_int();
        let bits = t.bits();
        if let (true, Some((f, arity))) = (float, libm_function(n.op())) {
            let args = (0..arity).map(arg).collect::<Result<Vec<_>, _>>()?;
            return Ok(round_half(
                format!("{}({})", libm(f, t), args.join(", ")),
                t,
            ));
        }
        let e = match n.op() {
            Op::Add | Op::Sub | Op::Mul => {
                let sym = infix(n.op());
                let (a, b) = (arg(0)?, arg(1)?);
                if int && !plain {
                    format!("({ty})(({u}){a} {sym} ({u}){b})")
                } else {
                    round_half(format!("({a} {sym} {b})"), t)
                }
            }
            Op::MulAcc => {
                let (a, b, c) = (arg(0)?, arg(1)?, arg(2)?);
                if float {
                    round_half(format!("{}({a}, {b}, {c})", libm("fma", t)), t)
                } else if int {
                    format!("({ty})(({u}){a} * ({u}){b} + ({u}){c})")
                } else {
                    return Err(err(n, "MULACC on bool"));
                }
            }
            Op::Neg => {
                let a = arg(0)?;
                if int && !plain {
                    format!("({ty})(({u})0 - ({u}){a})")
                } else {
                    format!("(-{a})")
                }
            }
            Op::Fdiv if float => round_half(format!("({} / {})", arg(0)?, arg(1)?), t),
            Op::Recip if float => {
                let one = literal(ConstValue::Float(1.0), t);
                round_half(format!("({one} / {})", arg(0)?), t)
            }
            Op::Idiv if int => {
                let (a, b) = (arg(0)?, arg(1)?);
                if plain {
                    format!("({a} / {b})")
                } else if t.is_signed_int() {
                    format!(
                        "({b} == 0 ? ({ty})0 : {b} == -1 ? ({ty})(({u})0 - ({u}){a}) : ({ty})({a} / {b}))"
                    )
                } else {
                    format!("({b} == 0 ? ({ty})0 : ({ty})({a} / {b}))")
                }
            }
            Op::Mod if int => {
                let (a, b) = (arg(0)?, arg(1)?);
                if plain {
                    format!("({a} % {b})")
                } else if t.is_signed_int() {
                    format!("(({b} == 0 || {b} == -1) ? ({ty})0 : ({ty})({a} % {b}))")
                } else {
                    format!("({b} == 0 ? ({ty})0 : ({ty})({a} % {b}))")
                }
            }
            Op::Max | Op::Min => {
                let (a, b) = (arg(0)?, arg(1)?);
                let cmp = if n.op() == Op::Max { ">" } else { "<" };
                if float {
                    // NaN-propagating; the NaN test outside the compare
                    // lets the C compiler turn the compare into a blend
                    // (`a > b || a != a` became data-dependent branches,
                    // mispredicted half the time on a relu of random data)
                    format!("({a} != {a} ? {a} : ({a} {cmp} {b} ? {a} : {b}))")
                } else {
                    format!("({a} {cmp} {b} ? {a} : {b})")
                }
            }
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe => {
                let sym = infix(n.op());
                format!("({} {sym} {})", arg(0)?, arg(1)?)
            }
            Op::And | Op::Or | Op::Xor => {
                let sym = infix(n.op());
                if float {
                    return Err(err(n, "bitwise op on floats"));
                }
                format!("({ty})({} {sym} {})", arg(0)?, arg(1)?)
            }
            Op::Shl if int => {
                let (a, b) = (arg(0)?, arg(1)?);
                format!("({ty})(({u}){a} << ({b} & {}))", bits - 1)
            }
            Op::Shr if int => format!("({ty})({} >> ({} & {}))", arg(0)?, arg(1)?, bits - 1),
            Op::Not => {
                if t.is_bool() {
                    format!("(!{})", arg(0)?)
                } else if int {
                    format!("({ty})(~{})", arg(0)?)
                } else {
                    return Err(err(n, "NOT on floats"));
                }
            }
            Op::Abs => {
                let a = arg(0)?;
                if float {
                    format!("{}({a})", libm("fabs", t))
                } else if t.is_signed_int() {
                    format!("({a} < 0 ? ({ty})(({u})0 - ({u}){a}) : {a})")
                } else {
                    a.to_string()
                }
            }
            Op::Floor | Op::Ceil | Op::Trunc | Op::Round => {
                let a = arg(0)?;
                if float {
                    let f = rounding(n.op());
                    format!("{}({a})", libm(f, t))
                } else {
                    a.to_string()
                }
            }
            Op::Rsqrt if float => {
                let one = literal(ConstValue::Float(1.0), t);
                round_half(format!("({one} / {}({}))", libm("sqrt", t), arg(0)?), t)
            }
            Op::Where => format!("({} ? {} : {})", arg(0)?, arg(1)?, arg(2)?),
            op => {
                return Err(err(
                    n,
                    format!("{} on {} operands is not renderable", op.name(), operand_t),
                ));
            }
        };
        Ok(e)
    }
}
