//! Vector rules: GEP (lane selection) of vector constructors, constants and
//! other GEPs, GEP pushed through lane-wise ops, and VECTORIZE of constants
//! or of the lanes of one vector.

use crate::dtype::DType;
use crate::patterns;
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

/// GEP of `x` selecting `idx` (one lane is a scalar, several a vector).
pub(crate) fn gep(x: &Arc<UOp>, idx: &[usize]) -> Arc<UOp> {
    UOp::new(
        Op::Gep,
        with_lanes(x.dtype(), idx.len()),
        Srcs::from_elem(x.clone(), 1),
        Arg::Axes(idx.iter().copied().collect()),
    )
}

/// A vector (or scalar, for one lane) of the given constants: a CONST when
/// all are equal, a VCONST otherwise.
fn const_vector(dtype: DType, vals: &[ConstValue]) -> Arc<UOp> {
    let dt = with_lanes(dtype, vals.len());
    if vals.iter().all(|v| *v == vals[0]) {
        UOp::const_(dt, vals[0])
    } else {
        UOp::new(
            Op::VConst,
            dt,
            Srcs::new(),
            Arg::Consts(vals.iter().copied().collect()),
        )
    }
}

/// gep(vectorize(s0, s1, ...), idx) → the selected scalars (one scalar, or
/// a VECTORIZE of them).
fn gep_of_vectorize(n: &Arc<UOp>, v: &Arc<UOp>) -> Option<Arc<UOp>> {
    let picked: Srcs = lanes(n)?
        .iter()
        .map(|&i| v.src().get(i).cloned())
        .collect::<Option<_>>()?;
    Some(if picked.len() == 1 {
        picked[0].clone()
    } else {
        UOp::new(
            Op::Vectorize,
            with_lanes(v.dtype(), picked.len()),
            picked,
            Arg::None,
        )
    })
}

/// gep(vconst(c0, c1, ...), idx) → the selected constants.
fn gep_of_vconst(n: &Arc<UOp>, v: &Arc<UOp>) -> Option<Arc<UOp>> {
    let Arg::Consts(cs) = v.arg() else {
        return None;
    };
    let picked: SmallVec<[ConstValue; 4]> = lanes(n)?
        .iter()
        .map(|&i| cs.get(i).copied())
        .collect::<Option<_>>()?;
    Some(const_vector(v.dtype(), &picked))
}

/// gep(gep(x, a), b) → gep(x, a[b]).
fn gep_of_gep(n: &Arc<UOp>, inner: &Arc<UOp>) -> Option<Arc<UOp>> {
    let a = lanes(inner)?;
    let idx: Vec<usize> = lanes(n)?
        .iter()
        .map(|&i| a.get(i).copied())
        .collect::<Option<_>>()?;
    Some(gep(inner.s(0), &idx))
}

/// True if a GEP selects every lane of its source in order.
fn selects_all(n: &Arc<UOp>, x: &Arc<UOp>) -> bool {
    lanes(n).is_some_and(|idx| {
        idx.len() == x.dtype().count() as usize && idx.iter().enumerate().all(|(i, &l)| i == l)
    })
}

/// gep(op(a, b, ...), idx) → op(gep(a, idx), gep(b, idx), ...) for
/// lane-wise ops (ALU and casts) whose operands all have the result's lane
/// count.
fn gep_through(n: &Arc<UOp>, x: &Arc<UOp>) -> Option<Arc<UOp>> {
    let idx = lanes(n)?;
    let lanewise = matches!(
        x.op().group(),
        OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary | OpGroup::Cast
    );
    let count = x.dtype().count();
    if !lanewise || x.src().iter().any(|s| s.dtype().count() != count) {
        return None;
    }
    let src: Srcs = x.src().iter().map(|s| gep(s, idx)).collect();
    Some(UOp::new(
        x.op(),
        with_lanes(x.dtype(), idx.len()),
        src,
        x.arg().clone(),
    ))
}

/// vectorize(gep(x, i0), gep(x, i1), ...) of one-lane GEPs of one x →
/// gep(x, [i0, i1, ...]) (which is x itself when the lanes are in order).
fn vectorize_of_geps(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let x = n.src().first()?.src().first()?;
    let idx: Vec<usize> = n
        .src()
        .iter()
        .map(|s| match lanes(s) {
            Some(&[l]) if Arc::ptr_eq(s.s(0), x) => Some(l),
            _ => None,
        })
        .collect::<Option<_>>()?;
    Some(gep(x, &idx))
}

/// Vector and GEP rules.
pub fn vector() -> PatternMatcher {
    patterns! {
        @name "vector";
        n @ Gep(v @ Vectorize(..)) => gep_of_vectorize(n, v),
        // gep(c, idx) → c with fewer lanes (a vector CONST is a broadcast).
        n @ Gep(@const(c)) ~> UOp::const_(n.dtype(), c),
        n @ Gep(v @ VConst()) => gep_of_vconst(n, v),
        n @ Gep(inner @ Gep(_)) => gep_of_gep(n, inner),
        // gep(x, [0, 1, ..., n-1]) of an n-lane x → x.
        n @ Gep(x) if selects_all(n, x) ~> x,
        n @ Gep(x) => gep_through(n, x),
        // vectorize(c0, c1, ...) of constants → CONST (all equal) or VCONST.
        n @ Vectorize(..) => {
            let vals: Vec<ConstValue> = n.src().iter().map(|s| s.const_value()).collect::<Option<_>>()?;
            Some(const_vector(n.dtype(), &vals))
        },
        n @ Vectorize(..) => vectorize_of_geps(n),
    }
}
