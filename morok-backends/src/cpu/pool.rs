//! The CPU device's worker threads: a small pool that runs the chunks of
//! one parallel kernel launch at a time, with a wake-up cost close to zero
//! for launches that follow each other.
//!
//! Why not a general pool: a launch is a few chunks of equal work, and the
//! kernels of one realization follow each other within microseconds. A
//! pool whose idle workers sleep on a condition variable pays a futex
//! wake-up per launch (30–40 µs measured on a 2-core VM: a 3 µs kernel
//! took 40 µs on two threads), more than small kernels take. Here idle
//! workers spin on the pool's state for `SPIN` after their last chunk
//! before they sleep, so back-to-back launches find them awake.
//!
//! Chunks are claimed, not assigned: the caller and the workers take the
//! next unclaimed chunk with a compare-and-swap on one word (generation,
//! chunk count, next chunk), so a worker that is late (its core taken by
//! another process) leaves its chunk to whoever is free, the caller
//! included. A chunk claimed for generation `g` is always a chunk of the
//! job published with `g`: the job pointer is only replaced after every
//! chunk of `g` has finished, and a claim of a stale generation fails.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an idle worker keeps spinning for the next launch before it
/// sleeps: long enough to bridge the host-side gap between the kernels of
/// one realization and between repeated calls, short enough that an idle
/// program gives its cores back quickly.
const SPIN: Duration = Duration::from_micros(300);

/// Spins between two looks at the clock while waiting.
const SPINS_PER_CLOCK_CHECK: u32 = 64;

/// A chunked job: called with each chunk index exactly once.
type Job<'a> = &'a (dyn Fn(usize) + Sync);

/// The pool's state word: generation (bits 32..64), chunk count (16..32)
/// and the next unclaimed chunk (0..16).
fn pack(generation: u64, chunks: usize, next: usize) -> u64 {
    (generation << 32) | ((chunks as u64) << 16) | next as u64
}

fn unpack(state: u64) -> (u64, usize, usize) {
    (
        state >> 32,
        ((state >> 16) & 0xffff) as usize,
        (state & 0xffff) as usize,
    )
}

/// What the caller and the workers share.
struct Shared {
    /// [`pack`]ed generation, chunk count and next chunk.
    state: AtomicU64,
    /// The current job: a pointer to the caller's `Job` (a thin pointer to
    /// a fat one), valid while a chunk of the current generation runs.
    job: AtomicPtr<()>,
    /// Chunks of the current generation that have finished.
    done: AtomicUsize,
    /// Workers asleep (or about to be) on `wake`.
    sleepers: AtomicUsize,
    sleep: Mutex<()>,
    wake: Condvar,
    shutdown: AtomicBool,
}

impl Shared {
    /// Claims and runs chunks of the published generation until none is
    /// left; false if there was none to claim.
    fn run_chunks(&self) -> bool {
        let mut ran = false;
        loop {
            let s = self.state.load(Ordering::Acquire);
            let (_, chunks, next) = unpack(s);
            if next >= chunks {
                return ran;
            }
            if self
                .state
                .compare_exchange_weak(s, s + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            // SAFETY: chunk `next` of this generation is claimed and not
            // finished, so the caller is still waiting in `run` and the job
            // it published for this generation is alive (module docs).
            let job = unsafe { *(self.job.load(Ordering::Acquire) as *const Job<'_>) };
            job(next);
            self.done.fetch_add(1, Ordering::Release);
            ran = true;
        }
    }

    /// A worker's life: run chunks, spin for the next launch, sleep.
    fn work(&self) {
        let mut seen = self.state.load(Ordering::Acquire);
        loop {
            if self.run_chunks() {
                seen = self.state.load(Ordering::Acquire);
            }
            let start = Instant::now();
            let mut spins = 0u32;
            loop {
                if self.shutdown.load(Ordering::Acquire) {
                    return;
                }
                let s = self.state.load(Ordering::Acquire);
                if s != seen {
                    seen = s;
                    break;
                }
                spins += 1;
                if !spins.is_multiple_of(SPINS_PER_CLOCK_CHECK) || start.elapsed() < SPIN {
                    std::hint::spin_loop();
                    continue;
                }
                // Sleep until the state changes; the caller notifies when
                // it sees a sleeper after publishing (SeqCst on both
                // sides: one of them sees the other's write).
                let guard = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
                self.sleepers.fetch_add(1, Ordering::SeqCst);
                if self.state.load(Ordering::SeqCst) == seen
                    && !self.shutdown.load(Ordering::SeqCst)
                {
                    drop(self.wake.wait(guard).unwrap_or_else(|e| e.into_inner()));
                }
                self.sleepers.fetch_sub(1, Ordering::SeqCst);
                spins = 0;
            }
        }
    }
}

/// Worker threads that run the chunks of one launch at a time together
/// with the launching thread (see the module docs).
pub struct WorkerPool {
    shared: Arc<Shared>,
    /// Held by the launch in progress: one job at a time.
    launch: Mutex<()>,
    workers: Vec<JoinHandle<()>>,
}

impl WorkerPool {
    /// A pool for launches on `threads` threads: the caller and
    /// `threads - 1` workers. `None` if a thread cannot be started.
    pub fn new(threads: usize) -> Option<WorkerPool> {
        let shared = Arc::new(Shared {
            state: AtomicU64::new(0),
            job: AtomicPtr::new(std::ptr::null_mut()),
            done: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
            shutdown: AtomicBool::new(false),
        });
        let mut pool = WorkerPool {
            shared: shared.clone(),
            launch: Mutex::new(()),
            workers: Vec::new(),
        };
        for i in 1..threads.min(0xffff) {
            let shared = shared.clone();
            let worker = std::thread::Builder::new()
                .name(format!("morok-cpu-{i}"))
                .spawn(move || shared.work())
                .ok()?;
            pool.workers.push(worker);
        }
        Some(pool)
    }

    /// Threads a launch can run on: the workers and the caller.
    pub fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// Calls `job(c)` once for every chunk `c` in `0..chunks`, on this
    /// thread and the workers, and returns when all have finished. While
    /// another thread's launch holds the pool, runs every chunk here.
    pub fn run(&self, chunks: usize, job: &(dyn Fn(usize) + Sync)) {
        let guard = match self.launch.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => {
                (0..chunks).for_each(job);
                return;
            }
        };
        if chunks <= 1 || self.workers.is_empty() || chunks > 0xffff {
            (0..chunks).for_each(job);
            return;
        }
        let sh = &*self.shared;
        let (generation, _, _) = unpack(sh.state.load(Ordering::Acquire));
        let job_ref: Job<'_> = job;
        sh.done.store(0, Ordering::Relaxed);
        sh.job
            .store(&job_ref as *const Job<'_> as *mut (), Ordering::Release);
        let next_generation = (generation + 1) & 0xffff_ffff;
        sh.state
            .store(pack(next_generation, chunks, 0), Ordering::SeqCst);
        if sh.sleepers.load(Ordering::SeqCst) > 0 {
            let _sleep = sh.sleep.lock().unwrap_or_else(|e| e.into_inner());
            sh.wake.notify_all();
        }
        sh.run_chunks();
        let start = Instant::now();
        let mut spins = 0u32;
        while sh.done.load(Ordering::Acquire) < chunks {
            spins += 1;
            if spins.is_multiple_of(SPINS_PER_CLOCK_CHECK) && start.elapsed() > SPIN {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        drop(guard);
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        {
            let _sleep = self.shared.sleep.lock().unwrap_or_else(|e| e.into_inner());
            self.shared.wake.notify_all();
        }
        for w in self.workers.drain(..) {
            // A worker only ends by returning; nothing to report.
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_chunk_runs_once_per_launch() {
        let pool = WorkerPool::new(3).expect("a pool");
        assert_eq!(pool.threads(), 3);
        for chunks in [1, 2, 3, 7, 64] {
            for _ in 0..200 {
                let counts: Vec<AtomicU32> = (0..chunks).map(|_| AtomicU32::new(0)).collect();
                pool.run(chunks, &|c| {
                    counts[c].fetch_add(1, Ordering::Relaxed);
                });
                assert!(counts.iter().all(|n| n.load(Ordering::Relaxed) == 1));
            }
        }
    }

    #[test]
    fn sleeping_workers_wake_for_the_next_launch() {
        let pool = WorkerPool::new(2).expect("a pool");
        std::thread::sleep(SPIN * 4);
        // Each chunk waits until both have started: the launch only ends
        // (within the deadline) if the sleeping worker woke up and took one.
        let arrived = AtomicU32::new(0);
        let deadline = Instant::now() + Duration::from_secs(20);
        let both_started = AtomicBool::new(true);
        pool.run(2, &|_| {
            arrived.fetch_add(1, Ordering::AcqRel);
            while arrived.load(Ordering::Acquire) < 2 {
                if Instant::now() > deadline {
                    both_started.store(false, Ordering::Release);
                    return;
                }
                std::hint::spin_loop();
            }
        });
        assert!(both_started.load(Ordering::Acquire));
    }

    #[test]
    fn concurrent_launches_each_run_every_chunk() {
        let pool = WorkerPool::new(2).expect("a pool");
        let total = AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..100 {
                        pool.run(4, &|_| {
                            total.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 4 * 100 * 4);
    }
}
