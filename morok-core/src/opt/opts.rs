//! The [`Opt`] model (what an opt names: an op, an axis, an argument) and
//! the checks every opt's validity rules share.

use crate::kernel::{range_size, uses_range};
use crate::uop::{Op, UOp};
use std::fmt;
use std::sync::Arc;

/// The kinds of opt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OptOps {
    /// Tensor cores (GPUs; refused on targets without them).
    Tc,
    /// Split an output axis; the inner part becomes vector lanes.
    Upcast,
    /// Split a reduce axis; the inner part is unrolled into the update.
    Unroll,
    /// Split an output axis into a workgroup dimension (GPUs).
    Local,
    /// Split a reduce axis into a grouped (shared-memory) reduce (GPUs).
    Group,
    /// `GROUP` with the group as the outer part of the axis (GPUs).
    GroupTop,
    /// Split an output axis across CPU threads (outer part).
    Thread,
    /// Forbid `LOCAL` from now on.
    NoLocals,
    /// Round an axis up to a multiple of the amount, gating the extra
    /// iterations.
    PadTo,
    /// Exchange the loop order of two output axes.
    Swap,
    /// Split a reduce axis into interleaved partial reductions with one
    /// accumulator each, combined after the loop (changes the order of a
    /// float sum; see `opt::reduce_strategy`).
    Partials,
}

/// The argument of an [`Opt`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OptArg {
    /// No argument (`NOLOCALS`).
    None,
    /// An amount (`0` = the whole axis) or, for `SWAP`, the other axis.
    Int(i64),
    /// `TC`: which tensor core, the TC opt level (0..=2), and use_tc
    /// (1..=2).
    Tc(i64, i64, i64),
}

/// One optimization action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Opt {
    /// What to do.
    pub op: OptOps,
    /// Which axis (see the module docs); `None` for `NOLOCALS`.
    pub axis: Option<usize>,
    /// The amount or other argument.
    pub arg: OptArg,
}

impl Opt {
    /// `op` on `axis` by `amt`.
    pub fn new(op: OptOps, axis: usize, amt: i64) -> Opt {
        Opt {
            op,
            axis: Some(axis),
            arg: OptArg::Int(amt),
        }
    }

    /// `NOLOCALS`.
    pub fn no_locals() -> Opt {
        Opt {
            op: OptOps::NoLocals,
            axis: None,
            arg: OptArg::None,
        }
    }
}

impl fmt::Display for Opt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.op)?;
        if let Some(a) = self.axis {
            write!(f, "(axis {a}")?;
            match self.arg {
                OptArg::None => {}
                OptArg::Int(n) => write!(f, ", {n}")?,
                OptArg::Tc(s, o, u) => write!(f, ", ({s}, {o}, {u})")?,
            }
            write!(f, ")")?;
        }
        Ok(())
    }
}

/// `Ok` when `cond` holds, else the refusal `what`.
pub(super) fn check(cond: bool, what: &str) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(what.to_string())
    }
}

/// The range an opt's axis names in `list`.
pub(super) fn pick(list: &[Arc<UOp>], axis: Option<usize>, what: &str) -> Result<Arc<UOp>, String> {
    let a = axis.ok_or_else(|| format!("{what} needs an axis"))?;
    list.get(a)
        .cloned()
        .ok_or_else(|| format!("axis {a} does not exist ({} {what} axes)", list.len()))
}

/// The amount of an opt on `rng` (`0` = the whole axis).
pub(super) fn amount(opt: &Opt, rng: &UOp) -> Result<i64, String> {
    let OptArg::Int(amt) = opt.arg else {
        return Err("needs an integer amount".into());
    };
    let size = range_size(rng).ok_or("the axis size is not a constant")?;
    let amt = if amt == 0 { size } else { amt };
    check(amt > 1, "the amount must be above 1")?;
    check(
        size % amt == 0,
        &format!("{amt} does not divide the axis size {size}"),
    )?;
    Ok(amt)
}

/// True if some `REDUCE` over `rng` has in its value another `REDUCE`
/// that uses `rng` (unrolled lanes cannot each own a loop of the inner
/// reduce).
pub(super) fn reduces_over_nest(ast: &Arc<UOp>, rng: &Arc<UOp>) -> bool {
    ast.toposort().iter().any(|n| {
        n.op() == Op::Reduce
            && n.src()[1..].iter().any(|r| Arc::ptr_eq(r, rng))
            && n.s(0)
                .toposort()
                .iter()
                .any(|m| m.op() == Op::Reduce && uses_range(m, rng))
    })
}
