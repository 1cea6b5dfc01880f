//! Memory planning: liveness-based reuse of intermediate buffers.
//!
//! An intermediate is live from the group (Kahn level) of the kernel that
//! writes it to the last group that reads it, inclusive. Kernels of one
//! group may run at the same time, so two intermediates can share memory
//! only if one's last read is in an earlier group than the other's write.
//! Buffers are assigned greedily in order of their write group: a buffer
//! takes over a storage whose members are all dead by then (the one with
//! the closest byte size, preferring one that is large enough), else it
//! gets a storage of its own. Inputs and outputs are never shared.

use super::{BufferKind, Schedule};
use std::collections::HashMap;

/// A storage being handed out: its id, byte capacity and the last group
/// in which one of its members is still read.
struct Storage {
    id: u64,
    bytes: usize,
    last_use: usize,
}

/// Fills in `BufferSpec::storage` for every intermediate of `schedule`.
pub fn plan(schedule: &mut Schedule) {
    let mut group_of = vec![0; schedule.items.len()];
    for (g, items) in schedule.groups.iter().enumerate() {
        for &i in items {
            group_of[i] = g;
        }
    }
    // (first write, last read) per buffer id.
    let mut live: HashMap<u64, (usize, usize)> = HashMap::new();
    for (i, item) in schedule.items.iter().enumerate() {
        let g = group_of[i];
        for (slot, &id) in item.buffers.iter().enumerate() {
            let e = live.entry(id).or_insert((g, g));
            if slot == 0 {
                e.0 = e.0.min(g);
            }
            e.1 = e.1.max(g);
        }
    }
    let mut order: Vec<usize> = (0..schedule.buffers.len())
        .filter(|&i| schedule.buffers[i].kind == BufferKind::Intermediate)
        .collect();
    order.sort_by_key(|&i| (live.get(&schedule.buffers[i].id).map_or(0, |l| l.0), i));
    let mut storages: Vec<Storage> = Vec::new();
    for i in order {
        let spec = &schedule.buffers[i];
        let (first, last) = live.get(&spec.id).copied().unwrap_or((0, 0));
        let bytes = spec.size * spec.dtype.itemsize();
        let free = storages
            .iter_mut()
            .filter(|s| s.last_use < first)
            .min_by_key(|s| (s.bytes < bytes, s.bytes.abs_diff(bytes)));
        let storage = match free {
            Some(s) => {
                s.bytes = s.bytes.max(bytes);
                s.last_use = last;
                s.id
            }
            None => {
                storages.push(Storage {
                    id: spec.id,
                    bytes,
                    last_use: last,
                });
                spec.id
            }
        };
        schedule.buffers[i].storage = storage;
    }
}
