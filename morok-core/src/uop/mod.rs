//! The UOp: one hash-consed node type for every level of the compiler.
//!
//! A [`UOp`] is an operation ([`Op`]), a result [`DType`], its operands
//! (`src`) and an [`Arg`]. Nodes are immutable and interned: building the
//! same node twice returns the same `Arc`, so pointer equality is
//! structural equality. Each node remembers the source location of the
//! code that first built it (provenance), which errors quote.

mod build;
pub mod fast_hash;
mod intern;
pub mod op;
mod print;
mod shape;
mod tensor_build;

pub use fast_hash::{IdMap, IdSet};
pub use intern::interned_count;
pub use op::{Arg, AxisType, ConstValue, Op, OpGroup, ReduceOp};
pub use shape::{shape_of, tensor_shape};

use crate::dtype::DType;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::panic::Location;
use std::sync::{Arc, OnceLock};

/// Operand list of a node.
pub type Srcs = SmallVec<[Arc<UOp>; 4]>;

pub use crate::shape::Shape;

/// Lazily computed facts about a node, filled on first use.
#[derive(Default)]
pub struct NodeCache {
    /// Inclusive value bounds `(vmin, vmax)` (see `symbolic::bounds`).
    pub bounds: OnceLock<(ConstValue, ConstValue)>,
    /// Tensor shape, or the error that makes the node ill-shaped.
    pub shape: OnceLock<Result<Option<Shape>, crate::shape::ShapeError>>,
    /// The node read as a sum (see `symbolic::linear::sum_forms`); only
    /// stored when every term is a strict descendant.
    pub sum: OnceLock<Option<Box<crate::symbolic::linear::SumForms>>>,
}

/// A node of the IR. Always handled as `Arc<UOp>`.
pub struct UOp {
    id: u64,
    hash: u64,
    op: Op,
    dtype: DType,
    src: Srcs,
    arg: Arg,
    location: &'static Location<'static>,
    cache: NodeCache,
}

impl UOp {
    /// Interns a node; the caller's location is recorded as provenance when
    /// the node is new.
    #[track_caller]
    pub fn new(op: Op, dtype: DType, src: impl Into<Srcs>, arg: Arg) -> Arc<UOp> {
        intern::intern(op, dtype, src.into(), arg, Location::caller())
    }

    /// Interns a node with an explicit provenance location.
    pub fn new_at(
        op: Op,
        dtype: DType,
        src: impl Into<Srcs>,
        arg: Arg,
        location: &'static Location<'static>,
    ) -> Arc<UOp> {
        intern::intern(op, dtype, src.into(), arg, location)
    }

    /// Unique id of this node (stable for its lifetime, used in dumps).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The operation.
    pub fn op(&self) -> Op {
        self.op
    }

    /// The result type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The operands.
    pub fn src(&self) -> &[Arc<UOp>] {
        &self.src
    }

    /// Operand `i` (panics if absent: callers check the op's arity first).
    pub fn s(&self, i: usize) -> &Arc<UOp> {
        &self.src[i]
    }

    /// The extra data.
    pub fn arg(&self) -> &Arg {
        &self.arg
    }

    /// Where in user (or library) source code this node was first built.
    pub fn location(&self) -> &'static Location<'static> {
        self.location
    }

    /// Cached per-node facts.
    pub fn cache(&self) -> &NodeCache {
        &self.cache
    }

    /// The constant value, if this is a CONST.
    pub fn const_value(&self) -> Option<ConstValue> {
        match (&self.op, &self.arg) {
            (Op::Const, Arg::Const(c)) => Some(*c),
            _ => None,
        }
    }

    /// The integer (or bool) value of a CONST of integer or bool type,
    /// exactly (as `i128`); `None` for float constants and other nodes.
    /// The one way to ask "which integer is this constant".
    pub fn const_int(&self) -> Option<i128> {
        if self.dtype.is_float() {
            return None;
        }
        self.const_value()?.as_i128()
    }

    /// The same node with new operands (interned; returns `self` when the
    /// operands are unchanged). Provenance is kept.
    pub fn with_sources(self: &Arc<Self>, src: Srcs) -> Arc<UOp> {
        if src.len() == self.src.len() && src.iter().zip(&self.src).all(|(a, b)| Arc::ptr_eq(a, b))
        {
            return self.clone();
        }
        UOp::new_at(self.op, self.dtype, src, self.arg.clone(), self.location)
    }

    /// The same node with a new arg.
    pub fn with_arg(self: &Arc<Self>, arg: Arg) -> Arc<UOp> {
        UOp::new_at(self.op, self.dtype, self.src.clone(), arg, self.location)
    }

    /// The same node with a new dtype.
    pub fn with_dtype(self: &Arc<Self>, dtype: DType) -> Arc<UOp> {
        UOp::new_at(
            self.op,
            dtype,
            self.src.clone(),
            self.arg.clone(),
            self.location,
        )
    }

    /// All nodes reachable from `self`, operands before users (post-order),
    /// each once. Iterative, so deep graphs do not overflow the stack.
    pub fn toposort(self: &Arc<Self>) -> Vec<Arc<UOp>> {
        self.toposort_until(|_| false)
    }

    /// Like [`UOp::toposort`], but the operands of a node for which `stop`
    /// is true are not visited (the node itself is listed). Iterative.
    pub fn toposort_until(self: &Arc<Self>, stop: impl Fn(&UOp) -> bool) -> Vec<Arc<UOp>> {
        let mut order = Vec::new();
        let mut seen = IdSet::default();
        let mut stack: Vec<(Arc<UOp>, bool)> = vec![(self.clone(), false)];
        while let Some((node, expanded)) = stack.pop() {
            if expanded {
                order.push(node);
                continue;
            }
            if !seen.insert(node.id) {
                continue;
            }
            let enter = !stop(&node);
            stack.push((node.clone(), true));
            if enter {
                for s in node.src.iter().rev() {
                    if !seen.contains(&s.id) {
                        stack.push((s.clone(), false));
                    }
                }
            }
        }
        order
    }

    /// Replaces nodes by pointer identity throughout the graph.
    pub fn substitute(self: &Arc<Self>, map: &HashMap<u64, Arc<UOp>>) -> Arc<UOp> {
        let mut done: IdMap<Arc<UOp>> = IdMap::default();
        for node in self.toposort() {
            let new = if let Some(r) = map.get(&node.id) {
                r.clone()
            } else {
                let src: Srcs = node.src.iter().map(|s| done[&s.id].clone()).collect();
                node.with_sources(src)
            };
            done.insert(node.id, new);
        }
        done[&self.id].clone()
    }

    /// Number of distinct nodes reachable from `self`.
    pub fn node_count(self: &Arc<Self>) -> usize {
        self.toposort().len()
    }
}

impl Drop for UOp {
    /// Releases the interning entry and drops operand chains iteratively,
    /// so a million-node chain does not recurse a million frames deep.
    fn drop(&mut self) {
        intern::forget(self.hash);
        let mut stack = Srcs::new();
        self.release_children(&mut stack);
        while let Some(child) = stack.pop() {
            if let Some(mut inner) = Arc::into_inner(child) {
                inner.release_children(&mut stack);
            }
        }
    }
}

impl UOp {
    /// Moves every node this one holds (operands, and the terms of its
    /// cached sum form) onto `stack`, for the iterative `Drop`.
    fn release_children(&mut self, stack: &mut Srcs) {
        stack.extend(std::mem::take(&mut self.src));
        if let Some(Some(forms)) = self.cache.sum.take() {
            stack.extend(forms.into_terms());
        }
    }
}

impl PartialEq for UOp {
    /// Interned nodes are equal exactly when they are the same node.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}
impl Eq for UOp {}

impl Hash for UOp {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl fmt::Debug for UOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.id, self.op.name())?;
        if self.arg != Arg::None {
            write!(f, "({})", self.arg)?;
        }
        write!(f, " : {}", self.dtype)
    }
}

/// A fresh, process-unique buffer id for a BUFFER node (`Arg::Buffer`).
pub fn new_buffer_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests;
