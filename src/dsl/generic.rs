//! Named dims as kernel variables: kernel ASTs in which the index
//! constants that depend on a call site's named dims (`B`) are
//! expressions of `DEFINE_VAR`s, so one compiled kernel serves every
//! value of the dims.
//!
//! The scheduler works on concrete shapes, so the generic kernels are
//! found by comparison rather than by scheduling symbolically. The call
//! site's graph is scheduled once per corner of a box of *probe* values
//! (two per named dim, all of them distinct primes, so no probe size
//! coincides with another); where the corners' kernel ASTs have the same
//! structure and differ only in index constants, each such constant is
//! fitted exactly by an integer multilinear polynomial in the dims
//! ([`fit`]) and replaced by that polynomial over the variables
//! ([`generalize`]).
//!
//! The fit is a guess until it is checked: a kernel AST `A` scheduled for
//! actual dim values is run with the generic kernel `G` only when [`matches`]
//! shows that `G` with those values substituted *is* `A`, node for node
//! (every fitted constant evaluates to `A`'s constant, everything else is
//! identical). So the generic kernel computes exactly what the concrete
//! one would, for every value it is used with; values that change the
//! kernel's structure (a dim of 1, whose loop the scheduler drops) get
//! concrete kernels of their own.

use morok_core::instantiate;
use morok_core::uop::{Arg, Op, Srcs, UOp};
use morok_core::DType;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The probe values of each named dim (at most [`MAX_NAMES`]): distinct
/// primes, small enough that no reduction over them is split.
pub(crate) const PROBES: [(usize, usize); 3] = [(13, 17), (19, 23), (29, 31)];

/// Call sites with more named dims get no generic kernels (the probe box
/// has `2^names` corners).
pub(crate) const MAX_NAMES: usize = 3;

/// The range of values a variable is declared for: the kernels are
/// proven memory-safe for it, and larger dims get concrete kernels.
pub(crate) const VAR_MAX: i64 = 1 << 16;

/// An integer multilinear polynomial: `(mask, coefficient)` terms, bit
/// `i` of `mask` standing for dim `i`.
pub(crate) type Poly = Vec<(u32, i64)>;

/// The dims of corner `corner` of the probe box over `names` dims: dim
/// `i` takes its second probe value when bit `i` is set.
pub(crate) fn corner_dims(corner: usize, names: usize) -> Vec<usize> {
    (0..names)
        .map(|i| {
            let (p, q) = PROBES[i];
            if (corner >> i) & 1 == 1 {
                q
            } else {
                p
            }
        })
        .collect()
}

/// The polynomial through `values` (one per corner of the probe box over
/// `names` dims, in corner order), if its coefficients are integers.
///
/// With `t_i = (x_i - p_i) / d_i` (0 or 1 at the corners, `d_i = q_i -
/// p_i`), the polynomial is `Σ_S b_S Π_{i∈S} t_i` with the Möbius
/// differences `b_S = Σ_{T⊆S} (-1)^{|S∖T|} v_T`; expanding the products
/// gives the coefficient of `Π_{i∈U} x_i` as
/// `Σ_{S⊇U} b_S / Π_{i∈S} d_i · Π_{i∈S∖U} (-p_i)`.
pub(crate) fn fit(values: &[i128], names: usize) -> Option<Poly> {
    let corners = 1usize << names;
    if values.len() != corners {
        return None;
    }
    let mut b = vec![0i128; corners];
    for (s, bs) in b.iter_mut().enumerate() {
        for (t, v) in values.iter().enumerate() {
            if t & !s == 0 {
                let sign = if (s & !t).count_ones() % 2 == 0 {
                    1
                } else {
                    -1
                };
                *bs = bs.checked_add(sign * v)?;
            }
        }
    }
    let diff = |i: usize| (PROBES[i].1 - PROBES[i].0) as i128;
    let scale: i128 = (0..names).map(diff).product();
    let mut poly = Poly::new();
    for u in 0..corners {
        let mut scaled: i128 = 0;
        for (s, bs) in b.iter().enumerate() {
            if s & u != u {
                continue;
            }
            let divisor: i128 = (0..names).filter(|i| (s >> i) & 1 == 1).map(diff).product();
            let mut term = bs.checked_mul(scale / divisor)?;
            for i in (0..names).filter(|i| ((s & !u) >> i) & 1 == 1) {
                term = term.checked_mul(-(PROBES[i].0 as i128))?;
            }
            scaled = scaled.checked_add(term)?;
        }
        if scaled % scale != 0 {
            return None;
        }
        let coeff = i64::try_from(scaled / scale).ok()?;
        if coeff != 0 {
            poly.push((u as u32, coeff));
        }
    }
    Some(poly)
}

/// The value of `poly` at `dims`.
pub(crate) fn evaluate(poly: &Poly, dims: &[i64]) -> Option<i128> {
    let mut sum: i128 = 0;
    for &(mask, c) in poly {
        let mut term = c as i128;
        for (i, &d) in dims.iter().enumerate() {
            if (mask >> i) & 1 == 1 {
                term = term.checked_mul(d as i128)?;
            }
        }
        sum = sum.checked_add(term)?;
    }
    Some(sum)
}

/// The variable (`DEFINE_VAR` of dtype index) standing for dim `name`.
pub(crate) fn variable(name: &str) -> Arc<UOp> {
    UOp::new(
        Op::DefineVar,
        DType::INDEX,
        Srcs::new(),
        Arg::Var {
            name: name.to_string(),
            min: 1,
            max: VAR_MAX,
        },
    )
}

/// `poly` over `vars` as an index expression.
fn poly_node(poly: &Poly, vars: &[Arc<UOp>]) -> Arc<UOp> {
    let mut sum: Option<Arc<UOp>> = None;
    for &(mask, c) in poly {
        let mut mono: Option<Arc<UOp>> = None;
        for (i, v) in vars.iter().enumerate() {
            if (mask >> i) & 1 == 1 {
                mono = Some(match mono {
                    Some(m) => m.mul(v),
                    None => v.clone(),
                });
            }
        }
        let term = match mono {
            None => UOp::index(c),
            Some(m) if c == 1 => m,
            Some(m) => m.mul_const(c),
        };
        sum = Some(match sum {
            Some(s) => s.add(&term),
            None => term,
        });
    }
    sum.unwrap_or_else(|| UOp::index(0))
}

/// A kernel AST whose dim-dependent constants are expressions of the
/// call site's variables.
pub(crate) struct GenericAst {
    /// The AST (`SINK` with `DEFINE_VAR`s).
    pub ast: Arc<UOp>,
    /// The fitted constants: node id in `ast` → polynomial.
    consts: HashMap<u64, Poly>,
}

/// Whether two nodes agree in everything but their operands.
fn same_head(a: &UOp, b: &UOp) -> bool {
    a.op() == b.op()
        && a.dtype() == b.dtype()
        && a.arg() == b.arg()
        && a.src().len() == b.src().len()
}

/// The generic form of one kernel from its ASTs at the corners of the
/// probe box (corner order, see [`corner_dims`]); `None` when the
/// corners differ in structure or in a constant that no integer
/// polynomial fits (a float constant, say).
///
/// A hand-written walk over tuples of nodes (one per corner), with an
/// explicit stack: a rewrite rule sees one graph, not several in step.
pub(crate) fn generalize(corners: &[Arc<UOp>], vars: &[Arc<UOp>]) -> Option<GenericAst> {
    let first = corners.first()?;
    let key = |t: &[Arc<UOp>]| t.iter().map(|n| n.id()).collect::<Vec<u64>>();
    let mut done: HashMap<Vec<u64>, Arc<UOp>> = HashMap::new();
    let mut consts: HashMap<u64, Poly> = HashMap::new();
    let mut stack: Vec<(Vec<Arc<UOp>>, bool)> = vec![(corners.to_vec(), false)];
    while let Some((tuple, expanded)) = stack.pop() {
        let k = key(&tuple);
        if done.contains_key(&k) {
            continue;
        }
        let head = tuple[0].clone();
        if tuple.iter().all(|n| Arc::ptr_eq(n, &head)) {
            done.insert(k, head);
            continue;
        }
        if !tuple.iter().all(|n| same_head_or_const(&head, n)) {
            return None;
        }
        if head.op() == Op::Const {
            if head.dtype() != DType::INDEX {
                return None;
            }
            let values: Vec<i128> = tuple.iter().map(|n| n.const_int()).collect::<Option<_>>()?;
            let poly = fit(&values, vars.len())?;
            let node = poly_node(&poly, vars);
            consts.insert(node.id(), poly);
            done.insert(k, node);
            continue;
        }
        let arity = head.src().len();
        let child = |j: usize| tuple.iter().map(|n| n.s(j).clone()).collect::<Vec<_>>();
        if !expanded {
            stack.push((tuple.clone(), true));
            stack.extend((0..arity).map(|j| (child(j), false)));
            continue;
        }
        let src: Srcs = (0..arity)
            .map(|j| done.get(&key(&child(j))).cloned())
            .collect::<Option<_>>()?;
        done.insert(k, head.with_sources(src));
    }
    let ast = done.get(&key(corners))?.clone();
    (!Arc::ptr_eq(&ast, first)).then_some(GenericAst { ast, consts })
}

/// [`same_head`], except that two index CONSTs may hold different values.
fn same_head_or_const(a: &UOp, b: &UOp) -> bool {
    if a.op() == Op::Const && b.op() == Op::Const {
        a.dtype() == b.dtype()
    } else {
        same_head(a, b)
    }
}

/// Whether `g` with the variables (named `names`) set to `dims` computes
/// exactly `actual`. The values must lie in the variables' declared
/// range. Either `g` is `actual` node for node with every fitted constant
/// evaluating to the constant in its place, or the scheduler's
/// instantiation of `g` at the values (variables replaced, loops of one
/// iteration removed, simplified: `schedule::instantiate`) is `actual`'s
/// node; a batch of 1 takes the second way.
pub(crate) fn matches(g: &GenericAst, actual: &Arc<UOp>, names: &[&str], dims: &[i64]) -> bool {
    if dims.iter().any(|&d| !(1..=VAR_MAX).contains(&d)) {
        return false;
    }
    if same_up_to_fitted(g, actual, dims) {
        return true;
    }
    let values: HashMap<String, i64> = names
        .iter()
        .map(|n| n.to_string())
        .zip(dims.iter().copied())
        .collect();
    instantiate(&g.ast, &values).is_ok_and(|a| Arc::ptr_eq(&a, actual))
}

/// `g` is `actual` node for node, each fitted constant evaluating at
/// `dims` to the constant in its place.
fn same_up_to_fitted(g: &GenericAst, actual: &Arc<UOp>, dims: &[i64]) -> bool {
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    let mut stack = vec![(g.ast.clone(), actual.clone())];
    while let Some((a, b)) = stack.pop() {
        if Arc::ptr_eq(&a, &b) || !seen.insert((a.id(), b.id())) {
            continue;
        }
        if let Some(poly) = g.consts.get(&a.id()) {
            let same = b.op() == Op::Const
                && b.dtype() == DType::INDEX
                && b.const_int()
                    .is_some_and(|v| evaluate(poly, dims) == Some(v));
            if !same {
                return false;
            }
            continue;
        }
        if !same_head(&a, &b) {
            return false;
        }
        stack.extend(a.src().iter().cloned().zip(b.src().iter().cloned()));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_multilinear_polynomials() {
        // 64·x0·x1 + 3·x1 - 5 over two dims, and 10·x0 over one.
        let f = |d: &[usize]| 64 * d[0] as i128 * d[1] as i128 + 3 * d[1] as i128 - 5;
        let values: Vec<i128> = (0..4).map(|c| f(&corner_dims(c, 2))).collect();
        assert_eq!(fit(&values, 2), Some(vec![(0, -5), (2, 3), (3, 64)]));
        let values: Vec<i128> = (0..2).map(|c| 10 * corner_dims(c, 1)[0] as i128).collect();
        assert_eq!(fit(&values, 1), Some(vec![(1, 10)]));
        assert_eq!(evaluate(&vec![(1, 10), (0, 1)], &[7]), Some(71));
    }

    #[test]
    fn fit_refuses_non_integer_coefficients() {
        // x0 / 2 is 6 and 8 at the probes 13 and 17: the slope 1/2 is no integer.
        assert_eq!(fit(&[6, 8], 1), None);
    }

    #[test]
    fn generic_kernels_match_only_their_own_instances() {
        let r = |end: i64| UOp::range(&UOp::index(end), 0, morok_core::AxisType::Loop);
        let kernel = |b: i64| r(b).mul_const(64).add(&UOp::index(3));
        let corners: Vec<_> = (0..2)
            .map(|c| kernel(corner_dims(c, 1)[0] as i64))
            .collect();
        let g = generalize(&corners, &[variable("B")]).expect("fits");
        assert!(matches(&g, &kernel(1000), &["B"], &[1000]));
        assert!(!matches(&g, &kernel(1000), &["B"], &[999]));
        assert!(!matches(&g, &r(1000).mul_const(65), &["B"], &[1000]));
        assert!(!matches(&g, &kernel(7), &["B"], &[VAR_MAX + 1]));
    }
}
