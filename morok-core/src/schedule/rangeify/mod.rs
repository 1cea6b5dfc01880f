//! Rangeify: from the tensor-level graph to loop-level BUFFERIZE bodies.
//!
//! The passes, in pipeline order (one file each):
//!
//! 1. [`zero_size`]: nodes without elements become constants, reductions
//!    over no elements their identity (tensor level);
//! 2. [`split_reduce`]: a huge reduction becomes two stages (tensor level);
//! 3. [`realize`]: which tensor nodes are materialized (kernel boundaries);
//! 4. [`indexing`]: view INDEX nodes are pushed through the tensor graph,
//!    turning movement ops into index arithmetic, REDUCE_AXIS into REDUCE
//!    over fresh ranges and every realized node into a BUFFERIZE;
//! 5. [`index_simplify`] + [`reduce_simplify`]: index algebra, reduce
//!    collapse (closed forms for gated sums such as `arange`),
//!    [`reduce_unparented`] (ranges a reduction's body does not use) and [`gather_collapse`] (a one-hot sum
//!    becomes one gated read), both reading comparisons with
//!    [`range_compare`] (load collapse: a count against a loaded length);
//! 6. [`buffer_removal`]: buffer folding, inlining of cheap heuristic
//!    buffers (partial contiguous) and dead-axis removal.
//!
//! After kernel splitting, [`kernel_range_rules`] rewrites each kernel
//! AST's loops (the seed's codegen stages 1–6, before the optimizer):
//! [`range_split`] (`r % c` / `r / c` → two ranges), [`range_merge`]
//! (adjacent ranges → one, cost-checked) and [`split_store`] (a store loop
//! cut at its constant comparisons, CPU).
//!
//! Intermediate form. Between these passes the graph uses two flavours of
//! INDEX, told apart by dtype:
//!
//! - a *view index* `INDEX(t, i_0, …, i_{k-1} [, gate])` has the element
//!   dtype of `t` and means "the element of the rank-`k` tensor `t` at these
//!   coordinates". `t` is a tensor-level node or a BUFFERIZE. The optional
//!   last operand (dtype bool) is a *gate*: the access is only valid where
//!   it holds, so loads under it must be guarded;
//! - a *pointer index* `INDEX(buf, lin [, gate])` has a pointer dtype and
//!   addresses element `lin` of a BUFFER (later: a DEFINE_GLOBAL).
//!
//! `BUFFERIZE(value, a_0, …, a_{k-1})` materializes `value` over axes whose
//! entries are Loop RANGEs, or `CONST 0` for an axis of size 1.

pub mod buffer_removal;
pub mod gated_index;
pub mod gather_collapse;
pub mod index_simplify;
pub mod indexing;
pub mod range_compare;
pub mod range_merge;
pub mod range_split;
pub mod realize;
pub mod reduce_simplify;
pub mod reduce_unparented;
pub mod split_reduce;
pub mod split_store;
pub mod zero_size;

use crate::dtype::AddrSpace;
use crate::patterns;
use crate::rewrite::{graph_rewrite, PatternMatcher, RewriteError};
use crate::uop::{Op, Srcs, UOp};
use std::sync::Arc;

/// True for a view index (see the module docs).
pub fn is_view_index(n: &UOp) -> bool {
    n.op() == Op::Index && !n.dtype().is_ptr()
}

/// Builds the view index `INDEX(t, idx… [, gate])`.
#[track_caller]
pub fn view_index(t: &Arc<UOp>, idx: &[Arc<UOp>], gate: Option<&Arc<UOp>>) -> Arc<UOp> {
    let mut src: Srcs = Srcs::new();
    src.push(t.clone());
    src.extend(idx.iter().cloned());
    src.extend(gate.cloned());
    UOp::new(Op::Index, t.dtype().base(), src, crate::uop::Arg::None)
}

/// Splits a view index into its target, coordinates and gate.
pub fn split_view_index(n: &Arc<UOp>) -> (&Arc<UOp>, &[Arc<UOp>], Option<&Arc<UOp>>) {
    let src = n.src();
    match src.last() {
        Some(g) if src.len() > 1 && g.dtype().is_bool() => {
            (&src[0], &src[1..src.len() - 1], Some(g))
        }
        _ => (&src[0], &src[1..], None),
    }
}

/// Builds the pointer index `INDEX(buf, lin [, gate])` into a BUFFER-like
/// node of element type `buf.dtype()`.
#[track_caller]
pub fn ptr_index(buf: &Arc<UOp>, lin: &Arc<UOp>, gate: Option<&Arc<UOp>>) -> Arc<UOp> {
    let mut src: Srcs = Srcs::new();
    src.push(buf.clone());
    src.push(lin.clone());
    src.extend(gate.cloned());
    let dtype = buf.dtype().base().ptr(AddrSpace::Global);
    UOp::new(Op::Index, dtype, src, crate::uop::Arg::None)
}

/// The size of a BUFFERIZE axis entry: a RANGE's end, 1 for `CONST 0`.
pub fn axis_size(a: &UOp) -> usize {
    match a.op() {
        Op::Range => a
            .s(0)
            .const_int()
            .and_then(|v| usize::try_from(v).ok())
            .unwrap_or(0),
        _ => 1,
    }
}

/// The dimensions of a BUFFERIZE (one per axis entry).
pub fn bufferize_dims(b: &UOp) -> Vec<usize> {
    b.src()[1..].iter().map(|a| axis_size(a)).collect()
}

/// Row-major linear offset of coordinates `idx` in a tensor of shape
/// `dims` (size-1 axes contribute nothing).
#[track_caller]
pub fn linearize(idx: &[Arc<UOp>], dims: &[usize]) -> Arc<UOp> {
    let mut lin = UOp::index(0);
    let mut stride = 1i64;
    for (i, &d) in idx.iter().zip(dims).rev() {
        if d != 1 {
            lin = index_simplify::add(&index_simplify::mul_c(i, stride), &lin);
        }
        stride *= d as i64;
    }
    lin
}

/// Coordinates in a tensor of shape `dims` of the row-major offset `lin`.
#[track_caller]
pub fn unravel(lin: &Arc<UOp>, dims: &[usize]) -> Vec<Arc<UOp>> {
    // A shape with a size-0 axis has no element to address (and dividing
    // by the strides past that axis would divide by zero).
    if dims.contains(&0) {
        return vec![UOp::index(0); dims.len()];
    }
    let first = dims.iter().position(|&d| d != 1);
    let mut stride = 1i64;
    let mut out = vec![UOp::index(0); dims.len()];
    for (i, &d) in dims.iter().enumerate().rev() {
        if d != 1 {
            let mut v = index_simplify::div_c(lin, stride);
            if Some(i) != first {
                v = index_simplify::mod_c(&v, d as i64);
            }
            out[i] = v;
        }
        stride *= d as i64;
    }
    out
}

/// True if `needle` occurs in the graph rooted at `hay`.
pub fn depends_on(hay: &Arc<UOp>, needle: &Arc<UOp>) -> bool {
    hay.toposort().iter().any(|n| Arc::ptr_eq(n, needle))
}

/// A fresh loop range over `[0, size)`, or `CONST 0` for a size-1 axis.
pub fn fresh_axis(size: usize, next_axis: &mut usize, axis_type: crate::uop::AxisType) -> Arc<UOp> {
    if size == 1 {
        return UOp::index(0);
    }
    *next_axis += 1;
    UOp::range(&UOp::index(size as i64), *next_axis - 1, axis_type)
}

/// The context of [`kernel_range_rules`]: the scheduler's simplification
/// rules, run after each loop rewrite.
pub struct KernelRanges {
    /// The scheduler's simplification rules.
    pub simplify: PatternMatcher,
}

/// Rewrites the AST of every `KERNEL` with [`kernel_ranges`].
pub fn kernel_range_rules() -> PatternMatcher<KernelRanges> {
    patterns! {
        @context KernelRanges;
        @name "kernel-ranges";
        k @ Kernel(..) => try kernel_ranges(k.s(0), &ctx.simplify).map(|ast| {
            let mut src: Srcs = Srcs::from_iter([ast.clone()]);
            src.extend(k.src()[1..].iter().cloned());
            (!Arc::ptr_eq(&ast, k.s(0))).then(|| k.with_sources(src))
        }),
    }
}

/// One kernel AST's loop rewrites, in the seed's order: range splitting,
/// cost-checked merging, split store; ranges renumbered `0..` again.
pub fn kernel_ranges(ast: &Arc<UOp>, simplify: &PatternMatcher) -> Result<Arc<UOp>, RewriteError> {
    let split = range_split::split_ranges(ast, simplify)?;
    let mut merge = range_merge::MergeCtx {
        simplify: simplify.clone(),
    };
    let merged = graph_rewrite(&range_merge::range_merge_rules(), &split, &mut merge)?;
    let cut = graph_rewrite(&split_store::split_store_rules(), &merged, &mut ())?;
    let out = if Arc::ptr_eq(&cut, &merged) {
        cut
    } else {
        graph_rewrite(simplify, &cut, &mut ())?
    };
    Ok(if Arc::ptr_eq(&out, ast) {
        out
    } else {
        renumber_in_loop_order(&out)
    })
}

/// Renumbers the ranges of a rewritten kernel `0..`: first the loops of
/// each END in nesting order, then the others in first-appearance order.
/// The optimizer orders axes by id, so ids must follow the loop nest (a
/// merged range is first used deep inside the store's index).
fn renumber_in_loop_order(ast: &Arc<UOp>) -> Arc<UOp> {
    let mut order: Vec<Arc<UOp>> = Vec::new();
    let ends = ast.src().iter().filter(|e| e.op() == Op::End);
    let listed = ends.flat_map(|e| e.src()[1..].iter().cloned());
    for r in listed.chain(ast.toposort().into_iter().filter(|n| n.op() == Op::Range)) {
        if !order.iter().any(|o| Arc::ptr_eq(o, &r)) {
            order.push(r);
        }
    }
    let map: std::collections::HashMap<u64, Arc<UOp>> = order
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((r.id(), UOp::range(r.s(0), i, r.axis_type()?))))
        .collect();
    ast.substitute(&map)
}
