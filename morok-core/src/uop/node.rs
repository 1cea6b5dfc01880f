//! The node and its hash-consing table.
//!
//! Every [`UOp`] is created through [`intern`]: if a node with the same op,
//! dtype, arg and (pointer-identical) sources is alive, that node is
//! returned; otherwise a new one is inserted. The table holds only `Weak`
//! references, so nodes nobody uses are freed, and a node's `Drop` removes
//! its dead entry. The table is sharded by hash to keep contention low when
//! several threads build graphs at once.
//!
//! Hand-written rather than a concurrent-map crate because the entry must be
//! found by structural key without storing the key twice, and removed by
//! the dying node itself.

use super::fast_hash::FastHasher;
use super::fast_hash::{IdMap, IdSet};
use super::op::{Arg, ConstValue, Op};
use crate::dtype::DType;
use crate::shape::Shape;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasherDefault;
use std::hash::{Hash, Hasher};
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::sync::{Mutex, Weak};

/// Operand list of a node.
pub type Srcs = SmallVec<[Arc<UOp>; 4]>;

/// A fact about a node, computed by a layer above this one and cached in
/// the node ([`NodeCache::sum`]), that may hold other nodes.
pub trait CachedTerms: Send + Sync {
    /// The fact itself, for the layer that stored it to downcast.
    fn as_any(&self) -> &dyn std::any::Any;
    /// Moves every node the fact holds out (so a dying node can release
    /// them iteratively, see `UOp`'s `Drop`).
    fn into_terms(self: Box<Self>) -> Vec<Arc<UOp>>;
}

/// Lazily computed facts about a node, filled on first use.
#[derive(Default)]
pub struct NodeCache {
    /// Inclusive value bounds `(vmin, vmax)` (see `symbolic::bounds`).
    pub bounds: OnceLock<(ConstValue, ConstValue)>,
    /// Tensor shape, or the error that makes the node ill-shaped.
    pub shape: OnceLock<Result<Option<Shape>, crate::shape::ShapeError>>,
    /// The node read as a sum (`symbolic::linear::sum_forms` stores its
    /// `SumForms` here, behind [`CachedTerms`]: the node layer sits below
    /// the symbolic one); only stored when every term is a strict
    /// descendant.
    pub sum: OnceLock<Option<Box<dyn CachedTerms>>>,
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
        intern(op, dtype, src.into(), arg, Location::caller())
    }

    /// Interns a node with an explicit provenance location.
    pub fn new_at(
        op: Op,
        dtype: DType,
        src: impl Into<Srcs>,
        arg: Arg,
        location: &'static Location<'static>,
    ) -> Arc<UOp> {
        intern(op, dtype, src.into(), arg, location)
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
        forget(self.hash);
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

const SHARDS: usize = 64;

/// Identity hasher for keys that are already hashes.
#[derive(Default)]
struct PreHashed(u64);
impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("PreHashed only hashes u64 keys")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

type Bucket = SmallVec<[Weak<UOp>; 1]>;
type Shard = Mutex<HashMap<u64, Bucket, BuildHasherDefault<PreHashed>>>;

fn shards() -> &'static [Shard; SHARDS] {
    static TABLE: OnceLock<[Shard; SHARDS]> = OnceLock::new();
    TABLE.get_or_init(|| std::array::from_fn(|_| Mutex::new(HashMap::default())))
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The structural hash of a node: op, dtype, arg and source ids.
pub(super) fn structural_hash(op: Op, dtype: DType, src: &[Arc<UOp>], arg: &Arg) -> u64 {
    let mut h = FastHasher::default();
    op.hash(&mut h);
    dtype.hash(&mut h);
    arg.hash(&mut h);
    for s in src {
        s.id.hash(&mut h);
    }
    h.finish()
}

fn same_node(n: &UOp, op: Op, dtype: DType, src: &[Arc<UOp>], arg: &Arg) -> bool {
    n.op == op
        && n.dtype == dtype
        && n.src.len() == src.len()
        && n.src.iter().zip(src).all(|(a, b)| Arc::ptr_eq(a, b))
        && n.arg == *arg
}

/// Returns the live node with this structure, or creates it.
pub(super) fn intern(
    op: Op,
    dtype: DType,
    src: SmallVec<[Arc<UOp>; 4]>,
    arg: Arg,
    location: &'static Location<'static>,
) -> Arc<UOp> {
    let hash = structural_hash(op, dtype, &src, &arg);
    // Upgraded non-matching nodes must be dropped after the lock is released:
    // if one of them is the last reference, its Drop takes the shard lock.
    let mut others: SmallVec<[Arc<UOp>; 2]> = SmallVec::new();
    let shard = &shards()[(hash as usize) % SHARDS];
    let mut map = shard.lock().unwrap_or_else(|e| e.into_inner());
    let bucket = map.entry(hash).or_default();
    for weak in bucket.iter() {
        if let Some(node) = weak.upgrade() {
            if same_node(&node, op, dtype, &src, &arg) {
                drop(map);
                return node;
            }
            others.push(node);
        }
    }
    let node = Arc::new(UOp {
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        hash,
        op,
        dtype,
        src,
        arg,
        location,
        cache: Default::default(),
    });
    bucket.retain(|w| w.strong_count() > 0);
    bucket.push(Arc::downgrade(&node));
    drop(map);
    drop(others);
    node
}

/// Removes dead entries from the bucket of `hash` (called by a dying node).
pub(super) fn forget(hash: u64) {
    let shard = &shards()[(hash as usize) % SHARDS];
    let mut map = shard.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(bucket) = map.get_mut(&hash) {
        bucket.retain(|w| w.strong_count() > 0);
        if bucket.is_empty() {
            map.remove(&hash);
        }
    }
}

/// Number of entries (live or not yet swept) in the table; for tests.
pub fn interned_count() -> usize {
    shards()
        .iter()
        .map(|s| {
            s.lock()
                .unwrap_or_else(|e| e.into_inner())
                .values()
                .map(|b| b.len())
                .sum::<usize>()
        })
        .sum()
}
