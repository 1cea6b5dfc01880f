//! Elementwise ops of the reference evaluator: ALU ops, CAST and BITCAST.

use super::{int_from_f64, wrap, Arr, EvalError, Vals};
use crate::dtype::ScalarType;
use crate::random::threefry2x32;
use crate::uop::op::round_to_float;
use crate::uop::{Op, UOp};

/// Evaluates a unary, binary or ternary ALU node whose result type is `out`.
pub(super) fn alu(node: &UOp, srcs: &[&Arr], out: ScalarType) -> Result<Arr, EvalError> {
    let arity = match node.op() {
        Op::Where | Op::MulAcc => 3,
        op if op.group() == crate::uop::OpGroup::Binary => 2,
        _ => 1,
    };
    if srcs.len() != arity {
        return Err(EvalError::new(
            node,
            format!("expects {arity} operands, has {}", srcs.len()),
        ));
    }
    if srcs.iter().any(|s| s.shape != srcs[0].shape) {
        let shapes: Vec<&Vec<usize>> = srcs.iter().map(|s| &s.shape).collect();
        return Err(EvalError::new(
            node,
            format!("operand shapes differ: {shapes:?}"),
        ));
    }
    let shape = srcs[0].shape.clone();
    let vals = match arity {
        1 => unary(node, srcs[0], out)?,
        2 => binary(node, srcs[0], srcs[1], out)?,
        _ => ternary(node, srcs, out)?,
    };
    Ok(Arr {
        shape,
        dtype: out,
        vals,
    })
}

fn unsupported(node: &UOp, t: ScalarType) -> EvalError {
    EvalError::new(node, format!("not defined for dtype {t}"))
}

fn unary(node: &UOp, x: &Arr, out: ScalarType) -> Result<Vals, EvalError> {
    let op = node.op();
    match &x.vals {
        Vals::F(v) => {
            if op == Op::IsNan {
                return Ok(Vals::I(v.iter().map(|a| a.is_nan() as i128).collect()));
            }
            let f: fn(f64) -> f64 = match op {
                Op::Neg => |a| -a,
                Op::Abs => f64::abs,
                Op::Sqrt => f64::sqrt,
                Op::Rsqrt => |a| 1.0 / a.sqrt(),
                Op::Recip => |a| 1.0 / a,
                Op::Exp => f64::exp,
                Op::Exp2 => f64::exp2,
                Op::Log => f64::ln,
                Op::Log2 => f64::log2,
                Op::Sin => f64::sin,
                Op::Cos => f64::cos,
                Op::Tan => f64::tan,
                Op::Tanh => f64::tanh,
                Op::Erf => erf,
                Op::Floor => f64::floor,
                Op::Ceil => f64::ceil,
                Op::Round => f64::round_ties_even,
                Op::Trunc => f64::trunc,
                _ => return Err(unsupported(node, x.dtype)),
            };
            Ok(Vals::F(
                v.iter().map(|&a| round_to_float(f(a), out)).collect(),
            ))
        }
        Vals::I(v) => {
            let f: fn(i128) -> i128 = match op {
                Op::Neg => |a| a.wrapping_neg(),
                Op::Abs => |a| a.wrapping_abs(),
                Op::Not if x.dtype.is_bool() => |a| (a == 0) as i128,
                Op::Not => |a| !a,
                Op::Floor | Op::Ceil | Op::Round | Op::Trunc => |a| a,
                Op::IsNan => |_| 0,
                _ => return Err(unsupported(node, x.dtype)),
            };
            Ok(Vals::I(v.iter().map(|&a| wrap(f(a), out)).collect()))
        }
    }
}

fn binary(node: &UOp, a: &Arr, b: &Arr, out: ScalarType) -> Result<Vals, EvalError> {
    let op = node.op();
    match (&a.vals, &b.vals) {
        (Vals::F(x), Vals::F(y)) => {
            let cmp: Option<fn(f64, f64) -> bool> = match op {
                Op::CmpLt => Some(|p, q| p < q),
                Op::CmpLe => Some(|p, q| p <= q),
                Op::CmpEq => Some(|p, q| p == q),
                Op::CmpNe => Some(|p, q| p != q),
                _ => None,
            };
            if let Some(cmp) = cmp {
                return Ok(Vals::I(
                    x.iter().zip(y).map(|(&p, &q)| cmp(p, q) as i128).collect(),
                ));
            }
            let f: fn(f64, f64) -> f64 = match op {
                Op::Add => |p, q| p + q,
                Op::Sub => |p, q| p - q,
                Op::Mul => |p, q| p * q,
                Op::Fdiv => |p, q| p / q,
                Op::Mod => |p, q| p % q,
                Op::Idiv => |p, q| (p / q).trunc(),
                Op::Pow => f64::powf,
                Op::Max => |p, q| {
                    if p.is_nan() || q.is_nan() {
                        f64::NAN
                    } else {
                        p.max(q)
                    }
                },
                Op::Min => |p, q| {
                    if p.is_nan() || q.is_nan() {
                        f64::NAN
                    } else {
                        p.min(q)
                    }
                },
                _ => return Err(unsupported(node, a.dtype)),
            };
            Ok(Vals::F(
                x.iter()
                    .zip(y)
                    .map(|(&p, &q)| round_to_float(f(p, q), out))
                    .collect(),
            ))
        }
        (Vals::I(x), Vals::I(y)) => {
            let f: fn(i128, i128) -> i128 = match op {
                Op::Add => i128::wrapping_add,
                Op::Sub => i128::wrapping_sub,
                Op::Mul => i128::wrapping_mul,
                Op::Idiv => |p, q| if q == 0 { 0 } else { p.wrapping_div(q) },
                Op::Mod => |p, q| if q == 0 { 0 } else { p.wrapping_rem(q) },
                Op::Max => |p, q| p.max(q),
                Op::Min => |p, q| p.min(q),
                Op::CmpLt => |p, q| (p < q) as i128,
                Op::CmpLe => |p, q| (p <= q) as i128,
                Op::CmpEq => |p, q| (p == q) as i128,
                Op::CmpNe => |p, q| (p != q) as i128,
                Op::And => |p, q| p & q,
                Op::Or => |p, q| p | q,
                Op::Xor => |p, q| p ^ q,
                Op::Shl => |p, q| if (0..128).contains(&q) { p << q } else { 0 },
                Op::Shr => |p, q| p >> q.clamp(0, 127),
                Op::Threefry => |p, q| threefry2x32(p as u64, q as u64) as i128,
                _ => return Err(unsupported(node, a.dtype)),
            };
            Ok(Vals::I(
                x.iter().zip(y).map(|(&p, &q)| wrap(f(p, q), out)).collect(),
            ))
        }
        _ => Err(EvalError::new(
            node,
            format!(
                "operands of dtypes {} and {} mix floats and integers",
                a.dtype, b.dtype
            ),
        )),
    }
}

fn ternary(node: &UOp, srcs: &[&Arr], out: ScalarType) -> Result<Vals, EvalError> {
    let (a, b, c) = (srcs[0], srcs[1], srcs[2]);
    match node.op() {
        Op::Where => {
            let cond: Vec<bool> = match &a.vals {
                Vals::I(v) => v.iter().map(|&x| x != 0).collect(),
                Vals::F(v) => v.iter().map(|&x| x != 0.0).collect(),
            };
            match (&b.vals, &c.vals) {
                (Vals::F(x), Vals::F(y)) => Ok(Vals::F(
                    cond.iter()
                        .zip(x.iter().zip(y))
                        .map(|(&k, (&p, &q))| if k { p } else { q })
                        .collect(),
                )),
                (Vals::I(x), Vals::I(y)) => Ok(Vals::I(
                    cond.iter()
                        .zip(x.iter().zip(y))
                        .map(|(&k, (&p, &q))| if k { p } else { q })
                        .collect(),
                )),
                _ => Err(EvalError::new(
                    node,
                    "the two branches have different dtypes",
                )),
            }
        }
        Op::MulAcc => match (&a.vals, &b.vals, &c.vals) {
            (Vals::F(x), Vals::F(y), Vals::F(z)) => Ok(Vals::F(
                x.iter()
                    .zip(y)
                    .zip(z)
                    .map(|((&p, &q), &r)| round_to_float(p.mul_add(q, r), out))
                    .collect(),
            )),
            (Vals::I(x), Vals::I(y), Vals::I(z)) => Ok(Vals::I(
                x.iter()
                    .zip(y)
                    .zip(z)
                    .map(|((&p, &q), &r)| wrap(p.wrapping_mul(q).wrapping_add(r), out))
                    .collect(),
            )),
            _ => Err(EvalError::new(node, "operands mix floats and integers")),
        },
        _ => Err(unsupported(node, a.dtype)),
    }
}

/// Value conversion to `t`: integers wrap to a narrower type (C); floats
/// to integers truncate and saturate, NaN to 0 (Rust `as`).
pub(super) fn cast(x: &Arr, t: ScalarType) -> Arr {
    let vals = match &x.vals {
        Vals::F(v) if t.is_float() => Vals::F(v.iter().map(|&a| round_to_float(a, t)).collect()),
        Vals::F(v) => Vals::I(v.iter().map(|&a| int_from_f64(a, t)).collect()),
        Vals::I(v) if t.is_float() => {
            Vals::F(v.iter().map(|&a| round_to_float(a as f64, t)).collect())
        }
        Vals::I(v) => Vals::I(v.iter().map(|&a| wrap(a, t)).collect()),
    };
    Arr {
        shape: x.shape.clone(),
        dtype: t,
        vals,
    }
}

/// Bit reinterpretation between types of equal size.
pub(super) fn bitcast(node: &UOp, x: &Arr, t: ScalarType) -> Result<Arr, EvalError> {
    if x.dtype.itemsize() != t.itemsize() || x.dtype.is_bool() != t.is_bool() {
        return Err(EvalError::new(
            node,
            format!("cannot reinterpret {} as {t}", x.dtype),
        ));
    }
    let bits: Vec<u64> = match &x.vals {
        Vals::F(v) => v.iter().map(|&a| float_bits(a, x.dtype)).collect(),
        Vals::I(v) => v.iter().map(|&a| a as u64).collect(),
    };
    let mask = if t.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << t.bits()) - 1
    };
    let vals = if t.is_float() {
        Vals::F(bits.iter().map(|&b| float_from_bits(b & mask, t)).collect())
    } else {
        Vals::I(bits.iter().map(|&b| wrap((b & mask) as i128, t)).collect())
    };
    Ok(Arr {
        shape: x.shape.clone(),
        dtype: t,
        vals,
    })
}

fn float_bits(v: f64, t: ScalarType) -> u64 {
    match t {
        ScalarType::F16 => half::f16::from_f64(v).to_bits() as u64,
        ScalarType::BF16 => half::bf16::from_f64(v).to_bits() as u64,
        ScalarType::F32 => (v as f32).to_bits() as u64,
        _ => v.to_bits(),
    }
}

fn float_from_bits(b: u64, t: ScalarType) -> f64 {
    match t {
        ScalarType::F16 => half::f16::from_bits(b as u16).to_f64(),
        ScalarType::BF16 => half::bf16::from_bits(b as u16).to_f64(),
        ScalarType::F32 => f32::from_bits(b as u32) as f64,
        _ => f64::from_bits(b),
    }
}

/// The error function, to f64 accuracy: Maclaurin series near zero, the
/// continued fraction of `erfc` further out. (The standard library has no
/// `erf`; this avoids a dependency for one function.)
pub(crate) fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let r = if a < 2.5 {
        let x2 = a * a;
        let (mut sum, mut power) = (a, a);
        for n in 1..200 {
            power *= -x2 / n as f64;
            let term = power / (2 * n + 1) as f64;
            sum += term;
            if term.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    } else if a < 6.0 {
        // erfc(a) = exp(-a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))
        let mut f = a;
        for k in (1..=120).rev() {
            f = a + (k as f64 / 2.0) / f;
        }
        1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / f
    } else {
        1.0
    };
    r.copysign(x)
}
