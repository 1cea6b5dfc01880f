//! A compiled CPU kernel: argument checks, locking and threaded launch.

use super::buffer::CpuBuffer;
use morok_core::device::{CompiledKernel, DeviceBuffer, DeviceError, DeviceResult};
use morok_core::lower::{BufferSlot, LoweredKernel};
use morok_core::uop::Op;
use rayon::prelude::*;
use std::ffi::c_void;
use std::sync::Arc;

/// The C entry point:
/// `void f(void *const *bufs, const int64_t *sizes, int64_t gstart, int64_t gend)`.
pub type KernelFn = unsafe extern "C" fn(*const *mut c_void, *const i64, i64, i64);

/// Kernels estimated to execute fewer operations than this run on one
/// thread: below it, waking threads costs more than it saves.
pub const PARALLEL_THRESHOLD: u64 = 1 << 16;

/// A kernel loaded from a compiled object.
pub struct CpuKernel {
    name: String,
    source: String,
    // Keeps the object mapped while `func` may be called.
    _lib: Arc<libloading::Library>,
    func: KernelFn,
    buffers: Vec<BufferSlot>,
    /// Trip count of the parallel loop, if any.
    parallel: Option<usize>,
    /// Estimated executed operations (see [`estimate_work`]).
    work: u64,
    threads: usize,
    pool: Option<Arc<rayon::ThreadPool>>,
}

/// Estimated number of operations one run executes: every op counts once
/// per iteration of the loops around it (non-constant trip counts count
/// as one).
pub fn estimate_work(k: &LoweredKernel) -> u64 {
    let mut trips: Vec<u64> = vec![1];
    let mut total: u64 = 0;
    for op in &k.ops {
        let cur = *trips.last().unwrap_or(&1);
        match op.op() {
            Op::Range => {
                let n = op
                    .s(0)
                    .const_int()
                    .and_then(|v| i64::try_from(v).ok())
                    .unwrap_or(1);
                trips.push(cur.saturating_mul(n.max(1) as u64));
            }
            Op::End => {
                trips.pop();
            }
            _ => total = total.saturating_add(cur),
        }
    }
    total
}

impl CpuKernel {
    /// Wraps a loaded entry point for `kernel`.
    pub(crate) fn new(
        kernel: &LoweredKernel,
        source: String,
        lib: Arc<libloading::Library>,
        func: KernelFn,
        threads: usize,
        pool: Option<Arc<rayon::ThreadPool>>,
    ) -> CpuKernel {
        CpuKernel {
            name: kernel.name.clone(),
            source,
            _lib: lib,
            func,
            buffers: kernel.buffers.clone(),
            parallel: kernel.parallel.as_ref().map(|p| p.size),
            work: estimate_work(kernel),
            threads,
            pool,
        }
    }

    fn bad(&self, reason: String) -> DeviceError {
        DeviceError::BadArgs {
            what: format!("kernel `{}`", self.name),
            reason,
        }
    }

    /// Checks `buffers` against the slots and returns the CPU buffers.
    fn check<'a>(&self, buffers: &[&'a dyn DeviceBuffer]) -> DeviceResult<Vec<&'a CpuBuffer>> {
        if buffers.len() != self.buffers.len() {
            return Err(self.bad(format!(
                "{} buffers given, the kernel takes {}",
                buffers.len(),
                self.buffers.len()
            )));
        }
        let mut out = Vec::with_capacity(buffers.len());
        for (i, (b, slot)) in buffers.iter().zip(&self.buffers).enumerate() {
            let cpu = b
                .as_any()
                .downcast_ref::<CpuBuffer>()
                .ok_or_else(|| self.bad(format!("buffer {i} is not a CPU buffer")))?;
            if cpu.dtype() != slot.dtype {
                return Err(self.bad(format!(
                    "buffer {i} holds {}, the kernel expects {}",
                    cpu.dtype(),
                    slot.dtype
                )));
            }
            if let Some((lo, hi)) = slot.access {
                if lo < 0 || hi as u64 >= cpu.len() as u64 {
                    return Err(self.bad(format!(
                        "buffer {i} has {} elements, the kernel may access elements {lo}..={hi}",
                        cpu.len()
                    )));
                }
            }
            out.push(cpu);
        }
        for (i, slot) in self.buffers.iter().enumerate() {
            let aliased = out
                .iter()
                .enumerate()
                .any(|(j, b)| j != i && std::ptr::eq(*b, out[i]));
            if slot.written && aliased {
                return Err(self.bad(format!(
                    "buffer {i} is written and also passed in another slot"
                )));
            }
        }
        Ok(out)
    }
}

/// Buffer pointers shared by the worker threads.
struct Args(Vec<*mut c_void>, Vec<i64>);
// SAFETY: the pointers are only dereferenced by the kernel, which each
// thread runs on a disjoint part of the parallel loop (writes are indexed
// by that loop, see `find_parallel` in lowering), while `run` holds the
// buffers' locks.
unsafe impl Sync for Args {}

impl Args {
    /// The pointer array in the kernel's calling convention.
    fn as_ptr(&self) -> *const *mut c_void {
        self.0.as_ptr()
    }

    /// The element counts, slot by slot.
    fn sizes(&self) -> *const i64 {
        self.1.as_ptr()
    }
}

impl CompiledKernel for CpuKernel {
    fn name(&self) -> &str {
        &self.name
    }

    fn source(&self) -> &str {
        &self.source
    }

    fn run(&self, buffers: &[&dyn DeviceBuffer]) -> DeviceResult<()> {
        let cpu = self.check(buffers)?;
        // Lock each distinct buffer once, in address order (no deadlock
        // between concurrent runs): exclusively if the kernel writes it.
        let mut order: Vec<(usize, bool)> = cpu
            .iter()
            .enumerate()
            .map(|(i, b)| (b.as_ptr() as usize, self.buffers[i].written))
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
        let args = Args(
            cpu.iter().map(|b| b.as_ptr().cast::<c_void>()).collect(),
            cpu.iter().map(|b| b.len() as i64).collect(),
        );
        let f = self.func;
        let call = |start: usize, end: usize| {
            // SAFETY: `check` verified count, types and that every index
            // the kernel can touch is inside its buffer; the locks are
            // held; [start, end) lies inside the parallel loop's range.
            unsafe { f(args.as_ptr(), args.sizes(), start as i64, end as i64) }
        };
        match (self.parallel, &self.pool) {
            (Some(size), Some(pool)) if self.threads > 1 && self.work >= PARALLEL_THRESHOLD => {
                let chunks = self.threads.min(size).max(1);
                pool.install(|| {
                    (0..chunks).into_par_iter().for_each(|c| {
                        call(size * c / chunks, size * (c + 1) / chunks);
                    })
                });
            }
            (Some(size), _) => call(0, size),
            (None, _) => call(0, 0),
        }
        drop(writes);
        drop(reads);
        Ok(())
    }
}
