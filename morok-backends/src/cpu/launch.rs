//! Running a kernel's parallel loop: the calling thread takes part.
//!
//! The loop `[0, size)` is cut into `chunks` contiguous blocks. The
//! calling thread and `chunks - 1` jobs sent to the pool claim blocks
//! from one shared counter until none is left; the caller then waits
//! only for blocks another thread has claimed and is running. A worker
//! that wakes late (a busy machine, or a kernel shorter than a thread's
//! wake-up) finds nothing to claim and returns without touching the
//! kernel's arguments, so a launch never waits for a wake-up, and costs
//! at worst what a single-threaded run costs plus sending the jobs.
//! Handing the whole loop to the pool (`install`) instead made every
//! launch wait for two thread switches even when one thread ran all of
//! it, which is most of a small kernel's time (an MLP's batch of 64).
//!
//! Which thread runs which block does not change any result: each block
//! is the same function on a disjoint part of the loop.

use super::codegen::KernelFn;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// One launch's arguments and progress, shared with the pool's jobs.
struct Shared {
    func: KernelFn,
    ptrs: Vec<*mut c_void>,
    sizes: Vec<i64>,
    vars: Vec<i64>,
    size: usize,
    chunks: usize,
    /// The next block to claim.
    next: AtomicUsize,
    /// Blocks finished.
    done: AtomicUsize,
}

// SAFETY: the pointers are dereferenced only by the kernel, on a block
// claimed from `next`; every claimed block is finished before `run_split`
// returns (it waits for `done == chunks`), and `run_split`'s caller holds
// the buffers' locks until then. A job that claims nothing touches only
// the counters, which it owns a share of through the `Arc`.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// Claims and runs blocks until none is left.
    fn work(&self) {
        loop {
            let c = self.next.fetch_add(1, Ordering::AcqRel);
            if c >= self.chunks {
                return;
            }
            let (start, end) = (
                self.size * c / self.chunks,
                self.size * (c + 1) / self.chunks,
            );
            // SAFETY: see the `Send`/`Sync` impls; [start, end) lies
            // inside the parallel loop and no other thread runs it.
            unsafe {
                (self.func)(
                    self.ptrs.as_ptr(),
                    self.sizes.as_ptr(),
                    self.vars.as_ptr(),
                    start as i64,
                    end as i64,
                )
            }
            self.done.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// Runs `func` over `[0, size)` in `chunks` blocks on the calling thread
/// and `pool` (see the module docs). The caller must hold the buffers'
/// locks and have checked the arguments, as for a direct call.
pub(crate) fn run_split(
    pool: &rayon::ThreadPool,
    func: KernelFn,
    args: (Vec<*mut c_void>, Vec<i64>),
    vars: &[i64],
    size: usize,
    chunks: usize,
) {
    let shared = Arc::new(Shared {
        func,
        ptrs: args.0,
        sizes: args.1,
        vars: vars.to_vec(),
        size,
        chunks,
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
    });
    for _ in 1..chunks {
        let s = shared.clone();
        pool.spawn(move || s.work());
    }
    shared.work();
    let mut spins = 0u32;
    while shared.done.load(Ordering::Acquire) < chunks {
        // A claimed block is running on another thread: wait briefly,
        // then give the core away (the machine may have fewer cores free
        // than threads).
        if spins < 1 << 10 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds `gend - gstart` ones into slot 0's element `gstart`… (each
    /// element of the loop written once: the blocks are disjoint and
    /// cover the loop).
    unsafe extern "C" fn mark(
        bufs: *const *mut c_void,
        _sizes: *const i64,
        _vars: *const i64,
        start: i64,
        end: i64,
    ) {
        let data = unsafe { *bufs }.cast::<i64>();
        for i in start..end {
            unsafe { *data.add(i as usize) += 1 };
        }
    }

    #[test]
    fn every_iteration_runs_once_for_any_block_count() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        for (size, chunks) in [(1, 1), (2, 2), (7, 3), (100, 4), (5, 5)] {
            let mut v = vec![0i64; size];
            let ptrs = vec![v.as_mut_ptr().cast::<c_void>()];
            run_split(&pool, mark, (ptrs, vec![size as i64]), &[], size, chunks);
            assert!(v.iter().all(|&x| x == 1), "{size}/{chunks}: {v:?}");
        }
    }
}
