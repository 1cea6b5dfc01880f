//! The `PARTIALS` opt: a reduce axis split into interleaved partial
//! reductions, combined by a balanced tree (why this is correct and what
//! it does to float results: `super::reduce_strategy`, which chooses it,
//! and `crate::kernel::reduce_order`).

use super::kernel::OptKernel;
use super::opts::{amount, check, pick, reduces_over_nest, Opt};
use crate::kernel::{combine_pairwise, range_size, reorderable};
use crate::uop::{Arg, AxisType, Op, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// Largest `PARTIALS` amount.
pub const MAX_PARTIALS: i64 = 32;

/// `PARTIALS(axis, amt)` on the reduce axis `axis` (of size `s`, `amt`
/// dividing it): every `REDUCE(v, …, r, …)` over that range becomes
///
/// ```text
/// ((P₀ ⊕ P₁) ⊕ (P₂ ⊕ P₃)) ⊕ …      Pᵤ = REDUCE(v[r := ro·amt + u], …, ro, …)
/// ```
///
/// with `ro` a reduce range of size `s/amt` (the old range's axis id).
/// Correct because `⊕` is associative and commutative (for floats up to
/// rounding, see the module docs): the `Pᵤ` together visit every value of
/// `r` once. Refused for a reduce whose value holds another reduce over
/// the same range, and for a reduction whose order must not change.
/// The `Pᵤ` have the same ranges, so lowering updates them in one shared
/// loop (`lower/reduce.rs`).
pub fn apply_partials(k: &mut OptKernel, opt: &Opt) -> Result<(), String> {
    let rng = pick(&k.ranges_of(&[AxisType::Reduce]), opt.axis, "reduce")?;
    let amt = amount(opt, &rng)?;
    check(amt <= MAX_PARTIALS, "PARTIALS amount above 32")?;
    check(
        !reduces_over_nest(&k.ast, &rng),
        "PARTIALS of a reduce whose value holds another reduce over the axis",
    )?;
    let size = range_size(&rng).ok_or("the axis size is not a constant")?;
    let Arg::Range { axis_id, .. } = *rng.arg() else {
        return Err("not a range".into());
    };
    let outer = UOp::range(&UOp::index(size / amt), axis_id, AxisType::Reduce);
    let mut map: HashMap<u64, Arc<UOp>> = HashMap::new();
    for n in k.ast.toposort() {
        if n.op() != Op::Reduce || !n.src()[1..].iter().any(|r| Arc::ptr_eq(r, &rng)) {
            continue;
        }
        let Arg::Reduce(op) = *n.arg() else {
            continue;
        };
        check(
            reorderable(op, n.dtype()),
            &format!("PARTIALS of a {op:?} reduction of {}", n.dtype()),
        )?;
        let ranges: Vec<Arc<UOp>> = n.src()[1..]
            .iter()
            .map(|r| {
                if Arc::ptr_eq(r, &rng) {
                    outer.clone()
                } else {
                    r.clone()
                }
            })
            .collect();
        let lanes: Vec<Arc<UOp>> = (0..amt)
            .map(|u| {
                let value = outer.mul(&UOp::index(amt)).add(&UOp::index(u));
                let lane = HashMap::from([(rng.id(), value)]);
                n.s(0).substitute(&lane).reduce(op, &ranges)
            })
            .collect();
        let combined = combine_pairwise(op, lanes).ok_or("PARTIALS of no lanes")?;
        map.insert(n.id(), combined);
    }
    check(!map.is_empty(), "no reduce runs over the axis")?;
    k.ast = k.ast.substitute(&map);
    Ok(())
}
