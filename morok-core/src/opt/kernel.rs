//! The optimizer's view of one kernel AST: its ranges in a fixed order
//! (what an [`Opt`]'s `axis` indexes) and the one piece of
//! range surgery every opt is built from, [`OptKernel::shift_to`].

use super::opts::Opt;
use crate::kernel::{axis_id, range_size, replace_range};
use crate::target::Target;
use crate::uop::{AxisType, Op, Srcs, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// A kernel being optimized: the current AST, the opts applied so far and
/// the target.
#[derive(Clone, Debug)]
pub struct OptKernel {
    /// The current kernel AST (a valid kernel AST after every opt).
    pub ast: Arc<UOp>,
    /// The opts applied so far, in order.
    pub applied: Vec<Opt>,
    /// Set by `NOLOCALS`: no `LOCAL` may be applied afterwards.
    pub dont_use_locals: bool,
    /// The machine the kernel is optimized for.
    pub target: Target,
}

impl OptKernel {
    /// Starts optimizing `ast` for `target`.
    pub fn new(ast: &Arc<UOp>, target: Target) -> Self {
        OptKernel {
            ast: ast.clone(),
            applied: Vec::new(),
            dont_use_locals: false,
            target,
        }
    }

    /// The kernel's ranges that an opt may address: every `RANGE` except
    /// those of constant size 1, sorted by [`AxisType::priority`] and then
    /// axis id (deterministic for one AST).
    pub fn ranges(&self) -> Vec<Arc<UOp>> {
        let mut rs: Vec<Arc<UOp>> = self
            .ast
            .toposort()
            .into_iter()
            .filter(|n| n.op() == Op::Range && range_size(n) != Some(1))
            .collect();
        rs.sort_by_key(|r| (r.axis_type().map_or(0, |t| t.priority()), axis_id(r)));
        rs
    }

    /// The ranges of the given types, in [`OptKernel::ranges`] order.
    pub fn ranges_of(&self, types: &[AxisType]) -> Vec<Arc<UOp>> {
        self.ranges()
            .into_iter()
            .filter(|r| r.axis_type().is_some_and(|t| types.contains(&t)))
            .collect()
    }

    /// The output ranges (`LOOP`, `GLOBAL`, `THREAD`, `LOCAL`, `WARP`,
    /// `UPCAST`).
    pub fn output_ranges(&self) -> Vec<Arc<UOp>> {
        self.ranges_of(&[
            AxisType::Loop,
            AxisType::Global,
            AxisType::Thread,
            AxisType::Local,
            AxisType::Warp,
            AxisType::Upcast,
        ])
    }

    /// A fresh axis id (one more than the largest in the AST).
    fn fresh_axis_id(&self) -> usize {
        crate::kernel::next_axis_id(&self.ast)
    }

    /// Splits range `rng` (constant size `s`, `amt` dividing `s`) into an
    /// old-type range of size `s/amt` and a new range of size `amt` and
    /// type `new_type`. The old range's value becomes `old·amt + new`
    /// (the new range is the fastest-moving part), or with `top`
    /// `new·(s/amt) + old` (each value of the new range owns a contiguous
    /// block, as threads want). In `END` and `REDUCE` range lists the old
    /// range becomes the pair with the slower part first, so iteration
    /// visits the values of `0..s` in the same order as before and every
    /// reduction accumulates in the same order. With `amt == s` the range
    /// is replaced by the new one. Returns the new range.
    pub fn shift_to(
        &mut self,
        rng: &Arc<UOp>,
        amt: i64,
        new_type: AxisType,
        top: bool,
    ) -> Result<Arc<UOp>, String> {
        let size = range_size(rng).ok_or("the range's size is not a constant")?;
        if amt < 1 || size % amt != 0 {
            return Err(format!("{amt} does not divide the axis size {size}"));
        }
        let new = UOp::range(&UOp::index(amt), self.fresh_axis_id(), new_type);
        let (value, loops) = if amt == size {
            (new.clone(), vec![new.clone()])
        } else {
            let old_type = rng.axis_type().unwrap_or(AxisType::Loop);
            let outer = UOp::range(&UOp::index(size / amt), axis_id(rng), old_type);
            if top {
                let v = new.mul(&UOp::index(size / amt)).add(&outer);
                (v, vec![new.clone(), outer])
            } else {
                (
                    outer.mul(&UOp::index(amt)).add(&new),
                    vec![outer, new.clone()],
                )
            }
        };
        self.ast = replace_range(&self.ast, rng, &value, &loops, |n| n);
        Ok(new)
    }

    /// Whether loop `a` runs outside loop `b` (`None`: no `END` closes
    /// both).
    pub fn runs_outside(&self, a: &Arc<UOp>, b: &Arc<UOp>) -> Option<bool> {
        self.ast.toposort().iter().find_map(|n| {
            if n.op() != Op::End {
                return None;
            }
            let pa = n.src().iter().position(|s| Arc::ptr_eq(s, a))?;
            let pb = n.src().iter().position(|s| Arc::ptr_eq(s, b))?;
            Some(pa < pb)
        })
    }

    /// Exchanges the positions of output ranges `a` and `b` in every
    /// `END` list that holds both (the loop order changes; each store
    /// still runs once per element).
    pub fn swap_ranges(&mut self, a: &Arc<UOp>, b: &Arc<UOp>) {
        let mut map = HashMap::new();
        for n in self.ast.toposort() {
            if n.op() != Op::End {
                continue;
            }
            let pa = n.src().iter().position(|s| Arc::ptr_eq(s, a));
            let pb = n.src().iter().position(|s| Arc::ptr_eq(s, b));
            if let (Some(pa), Some(pb)) = (pa, pb) {
                let mut src: Srcs = n.src().iter().cloned().collect();
                src.swap(pa, pb);
                map.insert(n.id(), n.with_sources(src));
            }
        }
        // ENDs are roots of the SINK, never nested in one another.
        self.ast = self.ast.substitute(&map);
    }
}
