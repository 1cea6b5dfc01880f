//! The hash-consing table.
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
use super::{Op, UOp};
use crate::dtype::DType;
use crate::uop::op::Arg;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

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
