//! Vector rules: GEP (lane selection) of vector constructors, constants and
//! other GEPs, GEP pushed through lane-wise ops, and VECTORIZE of constants
//! or of the lanes of one vector.

use crate::dtype::DType;
use crate::rewrite::PatternMatcher;
use crate::uop::{Arg, ConstValue, Op, OpGroup, Srcs, UOp};
use smallvec::SmallVec;
use std::sync::Arc;

/// The lanes a GEP selects.
fn lanes(n: &Arc<UOp>) -> Option<&[usize]> {
    match n.arg() {
        Arg::Axes(a) if n.op() == Op::Gep => Some(a),
        _ => None,
    }
}

/// `dtype`'s element type with `count` lanes.
fn with_lanes(dtype: DType, count: usize) -> DType {
    dtype.base().vec(count as u16)
}

/// GEP of `x` selecting `idx`.
fn gep(x: &Arc<UOp>, idx: &[usize]) -> Arc<UOp> {
    UOp::new(
        Op::Gep,
        with_lanes(x.dtype(), idx.len()),
        Srcs::from_elem(x.clone(), 1),
        Arg::Axes(idx.iter().copied().collect()),
    )
}

/// A vector (or scalar, for one lane) of the given constants.
fn const_vector(dtype: DType, vals: &[ConstValue]) -> Arc<UOp> {
    if vals.iter().all(|v| *v == vals[0]) {
        UOp::const_(with_lanes(dtype, vals.len()), vals[0])
    } else {
        let dt = with_lanes(dtype, vals.len());
        UOp::new(Op::VConst, dt, Srcs::new(), Arg::Consts(vals.iter().copied().collect()))
    }
}

/// VECTORIZE of the given scalars (the scalar itself for one lane).
fn vectorize(dtype: DType, src: Srcs) -> Arc<UOp> {
    if src.len() == 1 {
        return src[0].clone();
    }
    UOp::new(Op::Vectorize, with_lanes(dtype, src.len()), src, Arg::None)
}

/// Vector and GEP rules.
pub fn vector() -> PatternMatcher {
    let mut pm = PatternMatcher::new("vector");

    // gep(vectorize(s0, s1, ...), idx) → the selected scalars.
    pm.rule(&[Op::Gep], |n, _| {
        let (v, idx) = (n.s(0), lanes(n)?);
        if v.op() != Op::Vectorize {
            return None;
        }
        let picked: Option<Srcs> = idx.iter().map(|&i| v.src().get(i).cloned()).collect();
        Some(vectorize(v.dtype(), picked?))
    });
    // gep(c, idx) → c with fewer lanes (a vector CONST is a broadcast).
    pm.rule(&[Op::Gep], |n, _| {
        let c = n.s(0).const_value()?;
        Some(UOp::const_(n.dtype(), c))
    });
    // gep(vconst(c0, c1, ...), idx) → the selected constants.
    pm.rule(&[Op::Gep], |n, _| {
        let (v, idx) = (n.s(0), lanes(n)?);
        let Arg::Consts(cs) = v.arg() else { return None };
        let picked: Option<SmallVec<[ConstValue; 4]>> =
            idx.iter().map(|&i| cs.get(i).copied()).collect();
        Some(const_vector(v.dtype(), &picked?))
    });
    // gep(gep(x, a), b) → gep(x, a[b]).
    pm.rule(&[Op::Gep], |n, _| {
        let (inner, b) = (n.s(0), lanes(n)?);
        let a = lanes(inner)?;
        let idx: Option<Vec<usize>> = b.iter().map(|&i| a.get(i).copied()).collect();
        Some(gep(inner.s(0), &idx?))
    });
    // gep(x, [0, 1, ..., n-1]) of an n-lane x → x.
    pm.rule(&[Op::Gep], |n, _| {
        let (x, idx) = (n.s(0), lanes(n)?);
        (idx.len() == x.dtype().count() as usize && idx.iter().enumerate().all(|(i, &l)| i == l))
            .then(|| x.clone())
    });
    // gep(op(a, b, ...), idx) → op(gep(a, idx), gep(b, idx), ...) for
    // lane-wise ops (ALU and casts) whose operands all have the result's
    // lane count.
    pm.rule(&[Op::Gep], |n, _| {
        let (x, idx) = (n.s(0), lanes(n)?);
        let lanewise = matches!(
            x.op().group(),
            OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary | OpGroup::Cast
        );
        let count = x.dtype().count();
        if !lanewise || x.src().iter().any(|s| s.dtype().count() != count) {
            return None;
        }
        let src: Srcs = x.src().iter().map(|s| gep(s, idx)).collect();
        Some(UOp::new(x.op(), with_lanes(x.dtype(), idx.len()), src, x.arg().clone()))
    });
    // vectorize(c0, c1, ...) of constants → CONST (all equal) or VCONST.
    pm.rule(&[Op::Vectorize], |n, _| {
        let vals: Option<Vec<ConstValue>> = n.src().iter().map(|s| s.const_value()).collect();
        Some(const_vector(n.dtype(), &vals?))
    });
    // vectorize(gep(x, i0), gep(x, i1), ...) of one-lane GEPs of one x →
    // gep(x, [i0, i1, ...]) (which is x itself when the lanes are in order).
    pm.rule(&[Op::Vectorize], |n, _| {
        let first = n.s(0);
        lanes(first)?;
        let x = first.s(0);
        let idx: Option<Vec<usize>> = n
            .src()
            .iter()
            .map(|s| match lanes(s) {
                Some(&[l]) if Arc::ptr_eq(s.s(0), x) => Some(l),
                _ => None,
            })
            .collect();
        Some(gep(x, &idx?))
    });

    pm
}
