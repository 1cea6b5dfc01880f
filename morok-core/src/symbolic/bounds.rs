//! Value bounds: the smallest and largest value (`vmin`, `vmax`, both
//! inclusive) a node can take in any execution where it is defined.
//!
//! Bounds are computed by interval arithmetic over the graph and cached in
//! each node's `cache().bounds`, so asking again is free and asking for a
//! large graph costs one pass. The computation is iterative (no recursion),
//! so deep index chains cannot overflow the stack.
//!
//! Integer results are computed exactly (in `i128`); when the exact
//! interval leaves the dtype's range the operation may wrap, and the bounds
//! widen to the whole type. Operations that are undefined for some inputs
//! (division by zero, ...) are bounded over the inputs where they are
//! defined. Float bounds are only tracked through constants and casts from
//! integers; they bound every non-NaN value and say nothing about NaN.

use super::eval::cast_const;
use super::interval::{self, corners, union};
use crate::dtype::ScalarType;
use crate::uop::{Arg, ConstValue, Op, OpGroup, UOp};
use std::sync::Arc;

/// Inclusive bounds `(vmin, vmax)` of `node`'s value, in the canonical
/// representation of its dtype (`Bool`, `Int`, `UInt` or `Float`).
/// For vectors the bounds cover every lane.
pub fn bounds(node: &Arc<UOp>) -> (ConstValue, ConstValue) {
    if let Some(b) = node.cache().bounds.get() {
        return *b;
    }
    // Usually the operands' bounds are known already: compute directly.
    if !uses_operand_bounds(node.op())
        || node.src().iter().all(|s| s.cache().bounds.get().is_some())
    {
        return *node.cache().bounds.get_or_init(|| compute(node));
    }
    // Post-order over the nodes whose bounds are not cached yet.
    let mut stack: Vec<(Arc<UOp>, bool)> = vec![(node.clone(), false)];
    while let Some((n, operands_done)) = stack.pop() {
        if n.cache().bounds.get().is_some() {
            continue;
        }
        if operands_done {
            let b = compute(&n);
            let _ = n.cache().bounds.set(b);
            continue;
        }
        stack.push((n.clone(), true));
        if uses_operand_bounds(n.op()) {
            for s in n.src() {
                if s.cache().bounds.get().is_none() {
                    stack.push((s.clone(), false));
                }
            }
        }
    }
    *node
        .cache()
        .bounds
        .get()
        .expect("bounds were just computed")
}

/// The largest value `node` can take.
#[cfg(test)]
pub fn vmax(node: &Arc<UOp>) -> ConstValue {
    bounds(node).1
}

/// Bounds of an integer or bool node as `i128`s (`None` for other dtypes).
pub fn int_bounds(node: &Arc<UOp>) -> Option<(i128, i128)> {
    let t = node.dtype();
    if t.is_ptr() || !(t.is_int() || t.is_bool()) {
        return None;
    }
    let (lo, hi) = bounds(node);
    Some((lo.as_i128()?, hi.as_i128()?))
}

/// True if the bounds of `op` depend on its operands' bounds.
fn uses_operand_bounds(op: Op) -> bool {
    matches!(
        op.group(),
        OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary
    ) || matches!(
        op,
        Op::Cast | Op::Range | Op::Special | Op::Bind | Op::Vectorize | Op::Gep
    )
}

/// The full range of a scalar type.
fn type_range(t: ScalarType) -> (ConstValue, ConstValue) {
    (ConstValue::min_of(t), ConstValue::max_of(t))
}

fn compute(n: &Arc<UOp>) -> (ConstValue, ConstValue) {
    let dt = n.dtype();
    let t = dt.scalar_type();
    if dt.is_ptr() {
        return type_range(ScalarType::Index);
    }
    if t.is_int() || t.is_bool() {
        let (lo, hi) = int_interval(n, t).unwrap_or((t.min_int(), t.max_int()));
        return (ConstValue::from_i128(lo, t), ConstValue::from_i128(hi, t));
    }
    if t.is_float() {
        return float_interval(n).unwrap_or_else(|| type_range(t));
    }
    type_range(t)
}

/// Cached integer bounds of an operand that is known to be int or bool.
fn ib(n: &Arc<UOp>) -> Option<(i128, i128)> {
    int_bounds(n)
}

/// `(0, 2^k - 1)` for the smallest k with `2^k - 1 >= m` (`m >= 0`).
fn all_ones_above(m: i128) -> i128 {
    let bits = 128 - m.leading_zeros();
    if bits >= 127 {
        i128::MAX
    } else {
        (1i128 << bits) - 1
    }
}

/// Exact integer interval of `n`, or `None` for "the whole type".
fn int_interval(n: &Arc<UOp>, t: ScalarType) -> Option<(i128, i128)> {
    let (tmin, tmax) = (t.min_int(), t.max_int());
    let src = n.src();
    let r = match n.op() {
        Op::Const => {
            let v = n.const_int()?;
            (v, v)
        }
        Op::VConst => match n.arg() {
            Arg::Consts(cs) => {
                let vs: Vec<i128> = cs.iter().map(|c| c.as_i128()).collect::<Option<_>>()?;
                (*vs.iter().min()?, *vs.iter().max()?)
            }
            _ => return None,
        },
        Op::DefineVar => match n.arg() {
            Arg::Var { min, max, .. } => ((*min as i128).max(tmin), (*max as i128).min(tmax)),
            _ => return None,
        },
        // A loop counter runs over [0, end); an empty loop never runs, so any
        // interval is sound for it.
        Op::Range | Op::Special if !src.is_empty() => {
            let (_, end_max) = ib(&src[0])?;
            (0, (end_max - 1).max(0))
        }
        Op::Special => (0, tmax),
        Op::Bind | Op::Gep => ib(&src[0])?,
        Op::Vectorize => src
            .iter()
            .map(ib)
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .reduce(union)?,
        Op::Cast => {
            let (lo, hi) = ib(&src[0])?;
            if lo < tmin || hi > tmax {
                return None;
            }
            if t.is_bool() {
                // Zero maps to false, anything else to true.
                match (lo, hi) {
                    (0, 0) => (0, 0),
                    _ if lo > 0 || hi < 0 => (1, 1),
                    _ => (0, 1),
                }
            } else {
                (lo, hi)
            }
        }
        Op::Where => {
            let c = ib(&src[0])?;
            let (a, b) = (ib(&src[1])?, ib(&src[2])?);
            match c {
                (1, 1) => a,
                (0, 0) => b,
                _ => union(a, b),
            }
        }
        Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe => {
            let (a, b) = (ib(&src[0])?, ib(&src[1])?);
            let decided = match n.op() {
                Op::CmpLt if a.1 < b.0 => Some(true),
                Op::CmpLt if a.0 >= b.1 => Some(false),
                Op::CmpLe if a.1 <= b.0 => Some(true),
                Op::CmpLe if a.0 > b.1 => Some(false),
                Op::CmpEq | Op::CmpNe if a.0 == a.1 && b.0 == b.1 && a.0 == b.0 => {
                    Some(n.op() == Op::CmpEq)
                }
                Op::CmpEq | Op::CmpNe if a.1 < b.0 || b.1 < a.0 => Some(n.op() == Op::CmpNe),
                _ => None,
            };
            match decided {
                Some(v) => (v as i128, v as i128),
                None => (0, 1),
            }
        }
        Op::IsNan => {
            let _ = ib(&src[0])?; // integers are never NaN
            (0, 0)
        }
        _ if t.is_bool() => bool_interval(n)?,
        Op::Add => corners(ib(&src[0])?, ib(&src[1])?, |x, y| x.checked_add(y))?,
        Op::Sub => corners(ib(&src[0])?, ib(&src[1])?, |x, y| x.checked_sub(y))?,
        Op::Mul => corners(ib(&src[0])?, ib(&src[1])?, |x, y| x.checked_mul(y))?,
        Op::MulAcc => {
            let p = corners(ib(&src[0])?, ib(&src[1])?, |x, y| x.checked_mul(y))?;
            corners(p, ib(&src[2])?, |x, y| x.checked_add(y))?
        }
        Op::Neg => {
            let (lo, hi) = ib(&src[0])?;
            (-hi, -lo)
        }
        Op::Not => {
            // Bitwise not: -x - 1 for signed; max - x for unsigned.
            let (lo, hi) = ib(&src[0])?;
            if t.is_unsigned() {
                (tmax - hi, tmax - lo)
            } else {
                (-hi - 1, -lo - 1)
            }
        }
        Op::Abs => {
            let (lo, hi) = ib(&src[0])?;
            if lo >= 0 {
                (lo, hi)
            } else if hi <= 0 {
                (-hi, -lo)
            } else {
                (0, hi.max(-lo))
            }
        }
        Op::Max => {
            let (a, b) = (ib(&src[0])?, ib(&src[1])?);
            (a.0.max(b.0), a.1.max(b.1))
        }
        Op::Min => {
            let (a, b) = (ib(&src[0])?, ib(&src[1])?);
            (a.0.min(b.0), a.1.min(b.1))
        }
        Op::Idiv => interval::idiv(ib(&src[0])?, ib(&src[1])?)?,
        Op::Mod => interval::rem(ib(&src[0])?, ib(&src[1])?)?,
        Op::Shl | Op::Shr => {
            let (a, b) = (ib(&src[0])?, ib(&src[1])?);
            // Shifts by a negative amount or by the width are undefined.
            let b = (b.0.max(0), b.1.min(t.bits() as i128 - 1));
            if b.0 > b.1 {
                return None;
            }
            if n.op() == Op::Shl {
                corners(a, b, |x, s| x.checked_mul(1i128 << s))?
            } else {
                corners(a, b, |x, s| Some(x >> s))?
            }
        }
        Op::And => {
            let (a, b) = (ib(&src[0])?, ib(&src[1])?);
            // A non-negative operand bounds the result to [0, that operand].
            match (a.0 >= 0, b.0 >= 0) {
                (true, true) => (0, a.1.min(b.1)),
                (true, false) => (0, a.1),
                (false, true) => (0, b.1),
                (false, false) => return None,
            }
        }
        Op::Or | Op::Xor => {
            let (a, b) = (ib(&src[0])?, ib(&src[1])?);
            if a.0 < 0 || b.0 < 0 {
                return None;
            }
            let lo = if n.op() == Op::Or { a.0.max(b.0) } else { 0 };
            (lo, all_ones_above(a.1.max(b.1)))
        }
        _ => return None,
    };
    // An exact interval outside the type means the operation can wrap.
    (r.0 >= tmin && r.1 <= tmax && r.0 <= r.1).then_some(r)
}

/// Bounds of bool-valued logic (as 0/1).
fn bool_interval(n: &Arc<UOp>) -> Option<(i128, i128)> {
    let src = n.src();
    Some(match n.op() {
        Op::Not | Op::Neg => {
            let (lo, hi) = ib(&src[0])?;
            (1 - hi, 1 - lo)
        }
        Op::And | Op::Mul | Op::Min => {
            let (a, b) = (ib(&src[0])?, ib(&src[1])?);
            (a.0 & b.0, a.1 & b.1)
        }
        Op::Or | Op::Add | Op::Max => {
            let (a, b) = (ib(&src[0])?, ib(&src[1])?);
            (a.0 | b.0, a.1 | b.1)
        }
        Op::Xor | Op::Sub => {
            let (a, b) = (ib(&src[0])?, ib(&src[1])?);
            if a.0 == a.1 && b.0 == b.1 {
                (a.0 ^ b.0, a.0 ^ b.0)
            } else {
                (0, 1)
            }
        }
        _ => return None,
    })
}

/// Float bounds from constants and from casts of bounded integers.
fn float_interval(n: &Arc<UOp>) -> Option<(ConstValue, ConstValue)> {
    match n.op() {
        Op::Const => {
            let c = n.const_value()?;
            (!c.as_f64().is_nan()).then_some((c, c))
        }
        Op::Cast => {
            let (lo, hi) = int_bounds(n.s(0))?;
            // Integer-to-float conversion is monotone.
            let from = n.s(0).dtype().scalar_type();
            let lo = cast_const(ConstValue::from_i128(lo, from), n.dtype())?;
            let hi = cast_const(ConstValue::from_i128(hi, from), n.dtype())?;
            Some((lo, hi))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::uop::{AxisType, Srcs};

    fn var(name: &str, dtype: DType, min: i64, max: i64) -> Arc<UOp> {
        let arg = Arg::Var {
            name: name.into(),
            min,
            max,
        };
        UOp::new(Op::DefineVar, dtype, Srcs::new(), arg)
    }

    fn ib(n: &Arc<UOp>) -> (i128, i128) {
        int_bounds(n).unwrap()
    }

    #[test]
    fn leaves_ranges_and_arithmetic() {
        let x = var("bx", DType::INDEX, -3, 5);
        let r = UOp::range(&UOp::index(10), 0, AxisType::Loop);
        assert_eq!(ib(&r), (0, 9));
        assert_eq!(ib(&x.add(&r)), (-3, 14));
        assert_eq!(ib(&x.bin(Op::Sub, &r)), (-12, 5));
        assert_eq!(ib(&x.mul(&x)), (-15, 25));
        assert_eq!(ib(&x.mul_const(-2)), (-10, 6));
        assert_eq!(ib(&x.un(Op::Neg)), (-5, 3));
        assert_eq!(ib(&x.bin(Op::Max, &r)), (0, 9));
        assert_eq!(ib(&x.bin(Op::Min, &UOp::index(2))), (-3, 2));
        assert_eq!(ib(&x.un(Op::Abs)), (0, 5));
        // The range of a loop with a variable end uses the end's maximum.
        let n = var("bn", DType::INDEX, 1, 4);
        assert_eq!(ib(&UOp::range(&n, 1, AxisType::Loop)), (0, 3));
    }

    #[test]
    fn division_modulo_and_shifts() {
        let x = var("dx", DType::INDEX, -7, 9);
        let i = |v| UOp::index(v);
        assert_eq!(ib(&x.bin(Op::Idiv, &i(2))), (-3, 4));
        assert_eq!(ib(&x.bin(Op::Idiv, &i(-2))), (-4, 3));
        assert_eq!(ib(&x.bin(Op::Mod, &i(4))), (-3, 3));
        assert_eq!(ib(&x.bin(Op::Mod, &i(-20))), (-7, 9));
        let y = var("dy", DType::INDEX, 5, 6);
        assert_eq!(ib(&y.bin(Op::Mod, &i(4))), (1, 2));
        assert_eq!(ib(&y.bin(Op::Shl, &i(2))), (20, 24));
        assert_eq!(ib(&y.bin(Op::Shr, &i(1))), (2, 3));
        assert_eq!(ib(&x.bin(Op::And, &i(6))), (0, 6));
        // Division by a divisor that may be zero: bounded by the dividend.
        assert_eq!(ib(&y.bin(Op::Idiv, &x)), (-6, 6));
    }

    #[test]
    fn comparisons_selects_and_casts() {
        let x = var("cx", DType::INDEX, 0, 5);
        let i = |v| UOp::index(v);
        assert_eq!(ib(&x.bin(Op::CmpLt, &i(6))), (1, 1));
        assert_eq!(ib(&x.bin(Op::CmpLt, &i(0))), (0, 0));
        assert_eq!(ib(&x.bin(Op::CmpLt, &i(3))), (0, 1));
        assert_eq!(ib(&x.bin(Op::CmpNe, &i(-1))), (1, 1));
        let c = x.bin(Op::CmpLt, &i(3));
        assert_eq!(ib(&c.where_(&i(10), &x)), (0, 10));
        assert_eq!(ib(&x.cast(DType::I8)), (0, 5));
        assert_eq!(ib(&x.cast(DType::BOOL)), (0, 1));
        assert_eq!(vmax(&x.cast(DType::F32)), ConstValue::Float(5.0));
    }

    #[test]
    fn possible_wrap_widens_to_the_type() {
        let x = var("wx", DType::I8, 100, 120);
        assert_eq!(ib(&x.add_const(10)), (-128, 127));
        assert_eq!(ib(&x.add_const(7)), (107, 127));
        let u = var("wu", DType::U8, 0, 3);
        assert_eq!(ib(&u.add_const(-1)), (0, 255));
        let m = var("wm", DType::I32, i32::MIN as i64, -1);
        assert_eq!(
            ib(&m.bin(Op::Idiv, &UOp::const_(DType::I32, ConstValue::Int(-1)))),
            (i32::MIN as i128, i32::MAX as i128)
        );
    }

    #[test]
    fn deep_chains_do_not_overflow_the_stack() {
        let mut e = var("deep", DType::INDEX, 0, 1);
        for _ in 0..200_000 {
            e = e.add_const(1);
        }
        assert_eq!(ib(&e), (200_000, 200_001));
    }
}
