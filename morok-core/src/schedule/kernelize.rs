//! Kernel splitting: BUFFERIZE → STORE → KERNEL.
//!
//! Phase 1 ([`load_rules`]): a view index of a BUFFERIZE becomes a load of
//! its buffer, `LOAD(INDEX(B, Σ idx_k·stride_k [, gate]))`, the row-major
//! offset over the BUFFERIZE's axes. After this phase every kernel body
//! reads memory only through pointer indexes.
//!
//! Phase 2 ([`kernel_rules`], bottom-up, so producers are split first):
//! `BUFFERIZE(v, a…)` becomes `AFTER(BUFFER(id), KERNEL(ast, bufs…))`, where
//!
//! - `bufs` are the kernel's buffers in DEFINE_GLOBAL slot order: slot 0 is
//!   the buffer it writes, then every buffer it reads in order of first
//!   appearance in a top-down walk of `v`. An input written by another
//!   kernel appears as that kernel's AFTER node, which is the dependency
//!   edge between the two kernels;
//! - `ast = SINK(END(STORE(INDEX(DEFINE_GLOBAL(0), Σ a_k·stride_k), v'), ranges…))`,
//!   `v'` being `v` with each pointer index retargeted to its DEFINE_GLOBAL
//!   slot, and the ranges renumbered `0..` in first-appearance order so that
//!   equal kernels are the same hash-consed AST.

use super::rangeify::{
    bufferize_dims, index_simplify, is_view_index, linearize, ptr_index, split_view_index,
};
use crate::dtype::DType;
use crate::patterns;
use crate::rewrite::{graph_rewrite, PatternMatcher, RewriteError};
use crate::uop::{new_buffer_id, Arg, Op, Srcs, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// Phase 1: view indexes of BUFFERIZE nodes become loads.
pub fn load_rules() -> PatternMatcher {
    patterns! {
        @name "bufferize-loads";
        n @ Index(Bufferize(..), ..) if is_view_index(n) ~> {
            let (b, idx, gate) = split_view_index(n);
            ptr_index(b, &linearize(idx, &bufferize_dims(b)), gate).load()
        },
    }
}

/// Phase 2: each BUFFERIZE becomes a kernel writing a fresh buffer (the
/// rule fails if building the kernel's AST fails).
pub fn kernel_rules() -> PatternMatcher {
    patterns! {
        @name "kernelize";
        b @ Bufferize(..) => try split_kernel(b).map(Some),
    }
}

/// Builds `AFTER(BUFFER, KERNEL(ast, bufs…))` for one BUFFERIZE.
fn split_kernel(b: &Arc<UOp>) -> Result<Arc<UOp>, RewriteError> {
    let output = match b.arg() {
        Arg::Bufferize { output, .. } => *output,
        _ => None,
    };
    let dims = bufferize_dims(b);
    let dtype = b.dtype().base();
    let out = UOp::new(
        Op::Buffer,
        dtype,
        Srcs::new(),
        Arg::Buffer {
            id: output.unwrap_or_else(new_buffer_id),
            size: dims.iter().product(),
        },
    );
    let mut slots = vec![out.clone()];
    let value = graph_rewrite(&slot_rules(), b.s(0), &mut slots)?;
    let axes = &b.src()[1..];
    let store_idx = index_simplify::canonical(&linearize(axes, &dims));
    let ranges: Vec<Arc<UOp>> = axes
        .iter()
        .filter(|a| a.op() == Op::Range)
        .cloned()
        .collect();
    let store = UOp::define_global(0, dtype)
        .index_into(&store_idx, None)
        .store(&value);
    let ast = renumber_ranges(&UOp::sink(Srcs::from_iter([store.end(&ranges)])));
    let mut src: Srcs = Srcs::from_iter([ast]);
    src.extend(slots);
    let kernel = UOp::new(Op::Kernel, DType::VOID, src, Arg::None);
    Ok(UOp::new(
        Op::After,
        dtype,
        Srcs::from_iter([out, kernel]),
        Arg::None,
    ))
}

/// Retargets pointer indexes of BUFFER / AFTER nodes to DEFINE_GLOBAL slots
/// (the context lists the kernel's buffers, slot 0 = its output).
fn slot_rules() -> PatternMatcher<Vec<Arc<UOp>>> {
    patterns! {
        @context Vec<Arc<UOp>>;
        @name "define-globals";
        n @ Index(buf @ Buffer(), ..) if n.dtype().is_ptr() ~> to_slot(n, buf, ctx),
        n @ Index(buf @ After(..), ..) if n.dtype().is_ptr() ~> to_slot(n, buf, ctx),
    }
}

/// `INDEX(buf, …)` → `INDEX(DEFINE_GLOBAL(slot of buf), …)`, giving `buf`
/// the next free slot on first sight.
fn to_slot(n: &Arc<UOp>, buf: &Arc<UOp>, slots: &mut Vec<Arc<UOp>>) -> Arc<UOp> {
    let slot = match slots.iter().position(|s| Arc::ptr_eq(s, buf)) {
        Some(i) => i,
        None => {
            slots.push(buf.clone());
            slots.len() - 1
        }
    };
    let mut src: Srcs = Srcs::from_iter([UOp::define_global(slot as i64, buf.dtype().base())]);
    src.extend(n.src()[1..].iter().cloned());
    n.with_sources(src)
}

/// Renumbers the RANGEs of a kernel `0..` in first-appearance order.
pub(crate) fn renumber_ranges(ast: &Arc<UOp>) -> Arc<UOp> {
    let mut map: HashMap<u64, Arc<UOp>> = HashMap::new();
    for n in ast.toposort() {
        if let Arg::Range { axis_type, .. } = n.arg() {
            let new = UOp::range(n.s(0), map.len(), *axis_type);
            map.insert(n.id(), new);
        }
    }
    ast.substitute(&map)
}
