//! The schedule cache: one pipeline run per graph structure.
//!
//! The key of a list of roots is its graph with every BUFFER id replaced by
//! the buffer's position of first appearance (sizes and dtypes stay in the
//! key). Two calls over different buffers but the same computation get the
//! same key; the second reuses the first's kernel ASTs (the same `Arc`s)
//! and only renames buffers: input ids by position to the new call's
//! buffers, outputs and intermediates to fresh ids from
//! [`new_buffer_id`]. The pipeline does not run again.
//!
//! The cache holds at most [`schedule_cache_limit`] graphs and forgets the
//! least recently used one past that (each holds its kernel ASTs alive):
//! a process that sees ever new shapes keeps bounded memory.

use super::{schedule, Schedule, ScheduleError};
use crate::dtype::DType;
use crate::uop::fast_hash::FastBuild;
use crate::uop::{new_buffer_id, Arg, IdMap, Op, UOp};
use lru::LruCache;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// One node of a structural key: op, dtype, arg (buffer ids renamed to
/// positions) and operand positions in the key's node list.
type KeyNode = (Op, DType, Arg, SmallVec<[u32; 4]>);

/// A cached schedule and the input buffer ids it was built for, by position.
struct Entry {
    schedule: Schedule,
    inputs: Vec<u64>,
}

/// The cache: structural key → entry. Keys and the key builder's maps are
/// fast-hashed (`crate::uop::fast_hash`): every warm realization hashes its
/// whole graph here, and SipHash made this lookup the largest share of a
/// warm call's host time.
type Cache = LruCache<Vec<KeyNode>, Entry, FastBuild>;

/// Graphs the cache holds by default.
pub const DEFAULT_SCHEDULE_CACHE_LIMIT: usize = 4096;

static LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_SCHEDULE_CACHE_LIMIT);

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Cache::with_hasher(capacity(), FastBuild::default())))
}

fn capacity() -> NonZeroUsize {
    NonZeroUsize::new(LIMIT.load(Ordering::Relaxed)).unwrap_or(NonZeroUsize::MIN)
}

/// How many graphs the schedule cache holds before it forgets the least
/// recently used.
pub fn schedule_cache_limit() -> usize {
    LIMIT.load(Ordering::Relaxed)
}

/// Sets [`schedule_cache_limit`] (at least 1; the facade sets it from
/// `MOROK_KERNEL_CACHE`), forgetting the least recently used graphs past
/// it now.
pub fn set_schedule_cache_limit(limit: usize) {
    LIMIT.store(limit.max(1), Ordering::Relaxed);
    cache()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .resize(capacity());
}

/// How many graphs the schedule cache holds now.
pub fn schedule_cache_len() -> usize {
    cache().lock().unwrap_or_else(|e| e.into_inner()).len()
}

/// The structural key of `roots` and their buffer ids by first appearance.
fn key(roots: &[Arc<UOp>]) -> (Vec<KeyNode>, Vec<u64>) {
    let sink = UOp::sink(roots.iter().cloned().collect::<SmallVec<_>>());
    let nodes = sink.toposort();
    let pos: IdMap<u32> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id(), i as u32))
        .collect();
    let mut buffers: Vec<u64> = Vec::new();
    let key = nodes
        .iter()
        .map(|n| {
            let arg = match n.arg() {
                Arg::Buffer { id, size } => {
                    let p = buffers.iter().position(|b| b == id).unwrap_or_else(|| {
                        buffers.push(*id);
                        buffers.len() - 1
                    });
                    Arg::Buffer {
                        id: p as u64,
                        size: *size,
                    }
                }
                a => a.clone(),
            };
            (
                n.op(),
                n.dtype(),
                arg,
                n.src().iter().map(|s| pos[&s.id()]).collect(),
            )
        })
        .collect();
    (key, buffers)
}

/// [`schedule()`] with a cache keyed by graph structure (see the module docs).
pub fn schedule_cached(roots: &[Arc<UOp>]) -> Result<Schedule, ScheduleError> {
    crate::profile::timed(crate::profile::Stage::Schedule, || {
        schedule_cached_untimed(roots)
    })
}

fn schedule_cached_untimed(roots: &[Arc<UOp>]) -> Result<Schedule, ScheduleError> {
    let (key, inputs) = key(roots);
    if let Some(entry) = cache().lock().map_err(poisoned)?.get(&key) {
        tracing::debug!(target: "morok::schedule", kernels = entry.schedule.items.len(), "schedule cache hit");
        return Ok(rename(&entry.schedule, &entry.inputs, &inputs));
    }
    let sched = schedule(roots)?;
    cache().lock().map_err(poisoned)?.put(
        key,
        Entry {
            schedule: sched.clone(),
            inputs,
        },
    );
    Ok(sched)
}

fn poisoned<T>(_: T) -> ScheduleError {
    ScheduleError::Unsupported {
        op: "SINK".into(),
        shape: Vec::new(),
        reason: "the schedule cache lock was poisoned by a panic".into(),
    }
}

/// A copy of `cached` with input ids `old_inputs[i] → new_inputs[i]` and
/// every other buffer id fresh.
fn rename(cached: &Schedule, old_inputs: &[u64], new_inputs: &[u64]) -> Schedule {
    let mut ids: IdMap<u64> = old_inputs
        .iter()
        .copied()
        .zip(new_inputs.iter().copied())
        .collect();
    for b in &cached.buffers {
        ids.entry(b.id).or_insert_with(new_buffer_id);
    }
    let id = |old: u64| ids.get(&old).copied().unwrap_or(old);
    let mut out = cached.clone();
    for item in &mut out.items {
        for b in &mut item.buffers {
            *b = id(*b);
        }
    }
    for b in &mut out.buffers {
        b.id = id(b.id);
        b.storage = id(b.storage);
    }
    out.outputs = cached
        .outputs
        .iter()
        .map(|o| {
            let map: HashMap<u64, Arc<UOp>> = o
                .toposort()
                .into_iter()
                .filter_map(|n| match n.arg() {
                    Arg::Buffer { id: old, size } => Some((
                        n.id(),
                        UOp::new(
                            Op::Buffer,
                            n.dtype(),
                            SmallVec::new(),
                            Arg::Buffer {
                                id: id(*old),
                                size: *size,
                            },
                        ),
                    )),
                    _ => None,
                })
                .collect();
            o.substitute(&map)
        })
        .collect();
    out
}
