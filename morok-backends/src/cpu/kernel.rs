//! A compiled CPU kernel: argument checks, locking and threaded launch
//! through the [`KernelFn`] ABI.

use super::buffer::CpuBuffer;
use super::codegen::{KernelFn, LoadedKernel};
use super::pool::WorkerPool;
use crate::launch_check::LaunchChecks;
use morok_core::device::{CompiledKernel, DeviceBuffer, DeviceResult};
use morok_core::program::{ParallelVar, Program};
use morok_core::threads_for_work;
use std::any::Any;
use std::ffi::c_void;
use std::sync::Arc;

/// A kernel built by a codegen, ready to launch.
pub struct CpuKernel {
    source: String,
    // Keeps the code mapped while `func` may be called.
    pub(super) _code: Arc<dyn Any + Send + Sync>,
    pub(super) func: KernelFn,
    /// What its launches are checked against (name, slots, variables).
    pub(super) checks: LaunchChecks,
    /// Trip count of the parallel loop, if any.
    parallel: Option<usize>,
    /// For a parallel loop bounded by a variable: its trip count at launch.
    parallel_var: Option<ParallelVar>,
    /// Iterations of the loop nest (`Launch::work`).
    work: u64,
    threads: usize,
    pub(super) pool: Option<Arc<WorkerPool>>,
}

impl CpuKernel {
    /// Wraps the built entry point of `program`.
    pub(crate) fn new(
        program: &Program,
        loaded: LoadedKernel,
        threads: usize,
        pool: Option<Arc<WorkerPool>>,
    ) -> CpuKernel {
        CpuKernel {
            source: program.source.clone(),
            _code: loaded.code,
            func: loaded.func,
            checks: LaunchChecks::new(program),
            parallel: program.launch.parallel,
            parallel_var: program.launch.parallel_var,
            work: program.launch.work,
            threads,
            pool,
        }
    }

    /// The parallel loop's trip count for a launch with `vars`, and how
    /// many threads share it: as many as every thread gets at least
    /// `MIN_WORK_PER_THREAD` iterations of the loop nest, the rule the
    /// optimizer plans `THREAD` axes with ([`threads_for_work`]; a loop
    /// bounded by a variable has its count only now).
    pub(super) fn split(&self, vars: &[i64]) -> (Option<usize>, usize) {
        let threads = if self.pool.is_some() { self.threads } else { 1 };
        match (self.parallel_var, self.parallel) {
            (Some(pv), _) => {
                let Some(trip) = pv.trip_count(vars) else {
                    return (Some(0), 1);
                };
                let nest = (trip as u64).saturating_mul(pv.inner);
                (Some(trip), threads_for_work(nest, threads.min(trip)))
            }
            (None, Some(size)) => (Some(size), threads_for_work(self.work, threads.min(size))),
            (None, size) => (size, 1),
        }
    }
}

/// Buffer pointers shared by the worker threads.
struct Args<'a>(&'a [*mut c_void]);
// SAFETY: the pointers are only dereferenced by the kernel, which each
// thread runs on a disjoint part of the parallel loop (writes are indexed
// by that loop, see `find_parallel` in lowering), while the caller of
// `dispatch` holds the buffers' locks.
unsafe impl Sync for Args<'_> {}

impl Args<'_> {
    /// The pointer array in the kernel's calling convention (a method, so
    /// closures capture the whole `Sync` wrapper).
    fn as_ptr(&self) -> *const *mut c_void {
        self.0.as_ptr()
    }
}

/// Calls `f` on `ptrs` (with element counts `sizes`) and `vars` over the
/// parallel loop split as [`CpuKernel::split`] returned: on this thread
/// when it is one chunk (no thread wakes up), else on this thread and the
/// pool's workers together, each taking the next unstarted chunk (see
/// [`WorkerPool`]).
///
/// The caller takes chunks too because it is the one thread sure to be
/// running: handing every chunk to sleeping workers left the caller
/// waiting for a worker to wake (a two-thread 4096² row sum took 1.35 ms,
/// one core's time, instead of 0.7 ms).
///
/// # Safety
///
/// `ptrs` and `sizes` are in the kernel's slot order, each buffer holds
/// every element the kernel can touch at `vars`, the buffers' locks are
/// held (exclusive for written ones) and no written buffer is in two slots.
pub(super) unsafe fn dispatch(
    f: KernelFn,
    pool: Option<&WorkerPool>,
    (size, chunks): (Option<usize>, usize),
    ptrs: &[*mut c_void],
    sizes: &[i64],
    vars: &[i64],
) {
    let args = Args(ptrs);
    let call = |start: usize, end: usize| {
        // SAFETY: the caller's contract; [start, end) lies inside the
        // parallel loop's range.
        unsafe {
            f(
                args.as_ptr(),
                sizes.as_ptr(),
                vars.as_ptr(),
                start as i64,
                end as i64,
            )
        }
    };
    match (size, pool) {
        (Some(size), Some(pool)) if chunks > 1 => {
            let chunk = |c: usize| call(size * c / chunks, size * (c + 1) / chunks);
            pool.run(chunks, &chunk);
        }
        (Some(size), _) => call(0, size),
        (None, _) => call(0, 0),
    }
}

impl CompiledKernel for CpuKernel {
    fn name(&self) -> &str {
        self.checks.name()
    }

    fn source(&self) -> &str {
        &self.source
    }

    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }

    fn run(&self, buffers: &[&dyn DeviceBuffer], vars: &[i64]) -> DeviceResult<()> {
        self.checks.check_vars(vars)?;
        let access = self.checks.access(vars);
        let cpu: Vec<&CpuBuffer> = self.checks.check(buffers, access.as_deref(), "CPU")?;
        // Lock each distinct buffer once, in address order (no deadlock
        // between concurrent runs): exclusively if the kernel writes it.
        let mut order: Vec<(usize, bool)> = cpu
            .iter()
            .enumerate()
            .map(|(i, b)| (b.as_ptr() as usize, self.checks.buffers[i].written))
            .collect();
        order.sort();
        order.dedup_by_key(|(p, _)| *p);
        let mut reads = Vec::new();
        let mut writes = Vec::new();
        for (p, written) in order {
            let b = cpu.iter().find(|b| b.as_ptr() as usize == p).copied();
            if let Some(b) = b {
                if written {
                    writes.push(b.write_lock());
                } else {
                    reads.push(b.read_lock());
                }
            }
        }
        let ptrs: Vec<*mut c_void> = cpu.iter().map(|b| b.as_ptr().cast::<c_void>()).collect();
        let sizes: Vec<i64> = cpu.iter().map(|b| b.len() as i64).collect();
        // SAFETY: `check` verified count, types and that every index the
        // kernel can touch is inside its buffer; the locks are held.
        unsafe {
            dispatch(
                self.func,
                self.pool.as_deref(),
                self.split(vars),
                &ptrs,
                &sizes,
                vars,
            )
        };
        drop(writes);
        drop(reads);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::thread::ThreadId;

    /// The chunks [`dispatch`]'s test kernel ran: `[start, end)` and the
    /// thread that ran it.
    static RAN: Mutex<Vec<(i64, i64, ThreadId)>> = Mutex::new(Vec::new());

    unsafe extern "C" fn record(
        _: *const *mut c_void,
        _: *const i64,
        _: *const i64,
        start: i64,
        end: i64,
    ) {
        let me = std::thread::current().id();
        RAN.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((start, end, me));
    }

    #[test]
    fn dispatch_runs_each_chunk_once_and_on_several_threads() {
        let pool = WorkerPool::new(2).expect("a pool");
        // SAFETY: `record` touches no buffer.
        unsafe { dispatch(record, Some(&pool), (Some(10), 3), &[], &[], &[]) };
        let mut ran = std::mem::take(&mut *RAN.lock().unwrap_or_else(|e| e.into_inner()));
        ran.sort_by_key(|r| r.0);
        let bounds: Vec<(i64, i64)> = ran.iter().map(|r| (r.0, r.1)).collect();
        assert_eq!(bounds, [(0, 3), (3, 6), (6, 10)]);
    }
}
