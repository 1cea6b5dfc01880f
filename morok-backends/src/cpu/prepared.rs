//! Launches checked once, for a cached plan of launches (the DSL's call
//! sites): a warm call binds its buffers and launches, nothing more.
//!
//! A plan describes every buffer its launches touch in a [`FrameTable`]
//! (element type, element count, written or not). When the plan is built,
//! [`CpuKernel::prepare`] checks each launch against the table once
//! (buffer count and types, the kernel's access ranges at the variables'
//! values, variable bounds, no written buffer in two slots) and computes
//! its thread split. A call binds its buffers to the table with
//! [`Frame::bind`]: one type and size check per buffer (not per kernel),
//! and each buffer locked once, in address order, for the whole call.
//! [`PreparedLaunch::launch`] then only gathers pointers and calls the
//! kernel, on this thread when the split is one chunk. The device's
//! [`Device::prepare_launches`](morok_core::device::Device::prepare_launches)
//! hands a plan's launches out as one [`PreparedLaunches`] built from
//! these (`prepare_launches`).

use super::buffer::CpuBuffer;
use super::codegen::KernelFn;
use super::kernel::{dispatch, CpuKernel};
use super::pool::WorkerPool;
pub use morok_core::device::FrameSlot;
use morok_core::device::{DeviceBuffer, DeviceError, DeviceResult, FrameLaunch, PreparedLaunches};
use smallvec::SmallVec;
use std::any::Any;
use std::ffi::c_void;
use std::sync::{Arc, RwLockReadGuard, RwLockWriteGuard};

/// Buffers a frame or a launch holds without allocating.
const INLINE: usize = 8;

/// The buffers of a plan, by frame index.
#[derive(Debug)]
pub struct FrameTable {
    slots: Vec<FrameSlot>,
}

impl FrameTable {
    /// A table of `slots`, shared by the plan's launches and frames.
    pub fn new(slots: Vec<FrameSlot>) -> Arc<FrameTable> {
        Arc::new(FrameTable { slots })
    }
}

fn bad(what: &str, reason: String) -> DeviceError {
    DeviceError::BadArgs {
        what: what.to_string(),
        reason,
    }
}

/// One call's buffers bound to a [`FrameTable`]: checked against it and
/// locked until the frame is dropped.
pub struct Frame<'a> {
    table: &'a FrameTable,
    ptrs: SmallVec<[*mut c_void; INLINE]>,
    lens: SmallVec<[i64; INLINE]>,
    // The buffers' locks, held until the frame is dropped.
    _reads: SmallVec<[RwLockReadGuard<'a, ()>; INLINE]>,
    _writes: SmallVec<[RwLockWriteGuard<'a, ()>; INLINE]>,
}

impl<'a> Frame<'a> {
    /// Binds `buffers` (frame order) to `table`: each is a CPU buffer of
    /// the slot's element type with at least its element count, no buffer
    /// is bound twice, and each is locked (exclusively where written) in
    /// address order, so concurrent calls and kernel runs cannot deadlock.
    pub fn bind(
        table: &'a FrameTable,
        buffers: &[&'a dyn DeviceBuffer],
    ) -> DeviceResult<Frame<'a>> {
        let what = "a plan's buffers";
        if buffers.len() != table.slots.len() {
            return Err(bad(
                what,
                format!(
                    "{} buffers given, the plan takes {}",
                    buffers.len(),
                    table.slots.len()
                ),
            ));
        }
        let mut cpu: SmallVec<[&'a CpuBuffer; INLINE]> = SmallVec::new();
        for (i, (b, slot)) in buffers.iter().zip(&table.slots).enumerate() {
            let c = b
                .as_any()
                .downcast_ref::<CpuBuffer>()
                .ok_or_else(|| bad(what, format!("buffer {i} is not a CPU buffer")))?;
            if c.dtype() != slot.dtype || c.len() < slot.len {
                return Err(bad(
                    what,
                    format!(
                        "buffer {i} holds {} {}, the plan expects {} {}",
                        c.len(),
                        c.dtype(),
                        slot.len,
                        slot.dtype
                    ),
                ));
            }
            cpu.push(c);
        }
        let mut order: SmallVec<[(usize, usize); INLINE]> = cpu
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_ptr() as usize, i))
            .collect();
        order.sort_unstable();
        if order.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(bad(what, "a buffer is bound twice".to_string()));
        }
        let (mut reads, mut writes) = (SmallVec::new(), SmallVec::new());
        for &(_, i) in &order {
            match table.slots[i].written {
                true => writes.push(cpu[i].write_lock()),
                false => reads.push(cpu[i].read_lock()),
            }
        }
        Ok(Frame {
            table,
            ptrs: cpu.iter().map(|c| c.as_ptr().cast::<c_void>()).collect(),
            lens: cpu.iter().map(|c| c.len() as i64).collect(),
            _reads: reads,
            _writes: writes,
        })
    }
}

/// A kernel launch checked against a [`FrameTable`] when the plan was
/// built; see [`CpuKernel::prepare`].
pub struct PreparedLaunch {
    table: Arc<FrameTable>,
    func: KernelFn,
    // Keeps the code mapped while `func` may be called.
    _code: Arc<dyn Any + Send + Sync>,
    pool: Option<Arc<WorkerPool>>,
    /// The frame index of each kernel slot.
    slots: Box<[usize]>,
    vars: Box<[i64]>,
    /// The parallel loop's trip count and chunks at `vars`.
    split: (Option<usize>, usize),
}

impl CpuKernel {
    /// Checks a launch of this kernel whose slot `i` is buffer `slots[i]`
    /// of `table`, with variable values `vars`: the count, element types,
    /// variable bounds, every access range at `vars` inside the table's
    /// element counts, written slots marked written in the table and bound
    /// to no other slot. The handle launches on any [`Frame`] of `table`.
    pub fn prepare(
        &self,
        table: &Arc<FrameTable>,
        slots: &[usize],
        vars: &[i64],
    ) -> DeviceResult<PreparedLaunch> {
        let checks = &self.checks;
        checks.check_vars(vars)?;
        if slots.len() != checks.buffers.len() {
            return Err(checks.bad(format!(
                "{} buffers given, the kernel takes {}",
                slots.len(),
                checks.buffers.len()
            )));
        }
        let access = checks.access(vars);
        for (i, (&f, want)) in slots.iter().zip(&checks.buffers).enumerate() {
            let Some(have) = table.slots.get(f) else {
                return Err(checks.bad(format!("buffer {i} is frame slot {f}, outside the plan")));
            };
            if have.dtype != want.dtype {
                return Err(checks.bad(format!(
                    "buffer {i} holds {}, the kernel expects {}",
                    have.dtype, want.dtype
                )));
            }
            let range = match &access {
                None => want.access,
                Some(a) => match a.get(i) {
                    Some(r) => *r,
                    None => return Err(checks.bad(format!("no access range for buffer {i}"))),
                },
            };
            if let Some((lo, hi)) = range {
                if lo < 0 || hi as u64 >= have.len as u64 {
                    return Err(checks.bad(format!(
                        "buffer {i} has {} elements, the kernel may access elements {lo}..={hi}",
                        have.len
                    )));
                }
            }
            if want.written && slots.iter().filter(|&&g| g == f).count() > 1 {
                return Err(checks.bad(format!(
                    "buffer {i} is written but shared with another slot"
                )));
            }
            if want.written && !have.written {
                return Err(checks.bad(format!(
                    "buffer {i} is written but the plan does not lock it for writing"
                )));
            }
        }
        Ok(PreparedLaunch {
            table: table.clone(),
            func: self.func,
            _code: self._code.clone(),
            pool: self.pool.clone(),
            slots: slots.into(),
            vars: vars.into(),
            split: self.split(vars),
        })
    }
}

impl PreparedLaunch {
    /// Runs the kernel on `frame`'s buffers; fails only if `frame` binds
    /// another table than the one the launch was prepared with.
    pub fn launch(&self, frame: &Frame<'_>) -> DeviceResult<()> {
        if !std::ptr::eq(frame.table, Arc::as_ptr(&self.table)) {
            return Err(bad(
                "a prepared launch",
                "the frame binds another plan".to_string(),
            ));
        }
        let n = self.slots.len();
        let gather = |ptrs: &mut [*mut c_void], lens: &mut [i64]| {
            for (k, &f) in self.slots.iter().enumerate() {
                ptrs[k] = frame.ptrs[f];
                lens[k] = frame.lens[f];
            }
        };
        // Slot arrays on the stack (a heap pair only for a kernel with
        // more than `INLINE` buffers).
        let (mut ptr_buf, mut len_buf) = ([std::ptr::null_mut(); INLINE], [0i64; INLINE]);
        let (mut ptr_vec, mut len_vec) = (Vec::new(), Vec::new());
        let (ptrs, lens): (&mut [*mut c_void], &mut [i64]) = if n <= INLINE {
            (&mut ptr_buf[..n], &mut len_buf[..n])
        } else {
            ptr_vec.resize(n, std::ptr::null_mut());
            len_vec.resize(n, 0);
            (&mut ptr_vec, &mut len_vec)
        };
        gather(ptrs, lens);
        // SAFETY: `prepare` checked the slots against the table (types,
        // access ranges within the table's counts, no written slot
        // shared); `Frame::bind` checked each buffer against the same
        // table (type, at least the count) and holds the locks, exclusive
        // for every written slot.
        unsafe {
            dispatch(
                self.func,
                self.pool.as_deref(),
                self.split,
                ptrs,
                lens,
                &self.vars,
            )
        };
        Ok(())
    }
}

/// A plan's launches prepared against one table: what
/// [`prepare_launches`] returns.
struct PreparedPlan {
    table: Arc<FrameTable>,
    launches: Vec<PreparedLaunch>,
}

impl PreparedLaunches for PreparedPlan {
    fn run(
        &self,
        buffers: &[&dyn DeviceBuffer],
        done: Option<&mut dyn FnMut(usize)>,
    ) -> DeviceResult<()> {
        let frame = Frame::bind(&self.table, buffers)?;
        match done {
            None => {
                for launch in &self.launches {
                    launch.launch(&frame)?;
                }
            }
            Some(done) => {
                for (i, launch) in self.launches.iter().enumerate() {
                    launch.launch(&frame)?;
                    done(i);
                }
            }
        }
        Ok(())
    }
}

/// `launches` of CPU kernels checked against a table of `frame`
/// ([`CpuKernel::prepare`]), or `None` when a kernel is no CPU kernel or a
/// launch fails its checks.
pub(super) fn prepare_launches(
    frame: &[FrameSlot],
    launches: &[FrameLaunch<'_>],
) -> Option<Box<dyn PreparedLaunches>> {
    let table = FrameTable::new(frame.to_vec());
    let mut prepared = Vec::with_capacity(launches.len());
    for l in launches {
        let kernel = l.kernel.as_any()?.downcast_ref::<CpuKernel>()?;
        prepared.push(kernel.prepare(&table, l.slots, l.vars).ok()?);
    }
    Some(Box::new(PreparedPlan {
        table,
        launches: prepared,
    }))
}
