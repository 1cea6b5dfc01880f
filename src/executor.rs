//! The one way a schedule runs, for `realize` (`realize.rs`) and the
//! DSL's cached plans (`dsl/plan.rs`).
//!
//! A schedule's buffers become a *frame* ([`Layout::of`]): one entry per
//! input and output buffer and one per memory the memory plan shares
//! between intermediates (same storage and dtype, at the largest member's
//! size). A [`Run`] is the schedule's compiled kernels as [`Step`]s (the
//! kernel, the frame index of each of its buffer slots, its variables'
//! values) in the schedule's groups. [`Run::launch`] runs them on one
//! frame of buffers: through the device's prepared launches when the run
//! was prepared ([`Run::prepare`]: a DSL plan, checked once by the
//! device, then run on every call), otherwise group by group with
//! [`CompiledKernel::run`], the big kernels of a group at the same time.
//! `realize` builds a run, launches it once and drops it; a DSL plan is a
//! prepared run kept with where each call finds its frame's buffers.

use crate::device::Device;
use crate::Error;
use morok_core::device::{CompiledKernel, DeviceBuffer, FrameLaunch, FrameSlot, PreparedLaunches};
use morok_core::DType;
use morok_core::{BufferKind, Schedule, ScheduleItem};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

static KERNEL_LAUNCHES: AtomicUsize = AtomicUsize::new(0);

/// Number of kernel launches in this process so far.
pub fn kernel_launches() -> usize {
    KERNEL_LAUNCHES.load(Ordering::Relaxed)
}

/// Counts `n` kernel launches (see [`kernel_launches`]).
fn count_launches(n: usize) {
    KERNEL_LAUNCHES.fetch_add(n, Ordering::Relaxed);
}

/// `size` (at least one) elements of `dtype` on `dev`.
#[track_caller]
pub(crate) fn alloc(
    dev: &Device,
    dtype: DType,
    size: usize,
) -> Result<Arc<dyn DeviceBuffer>, Error> {
    match dev.backend().allocate(dtype, size.max(1)) {
        Ok(b) => Ok(Arc::from(b)),
        Err(e) => Err(Error::runtime("realize", e.to_string())),
    }
}

/// One entry of a schedule's frame.
pub(crate) struct Entry {
    /// The first schedule buffer stored there.
    pub id: u64,
    /// That buffer's role (every buffer of an entry has the same).
    pub kind: BufferKind,
    /// Type, element count (the largest of the buffers stored there) and
    /// whether kernels write it.
    pub slot: FrameSlot,
}

/// Where each buffer of a schedule lives in its frame.
pub(crate) struct Layout {
    /// The frame's entries, in the order of their first buffer in the
    /// schedule.
    pub entries: Vec<Entry>,
    /// Frame index and element count of each schedule buffer, by id.
    of_buffer: HashMap<u64, (usize, usize)>,
}

impl Layout {
    /// The frame of `sched`: inputs and outputs one entry each,
    /// intermediates one per (storage, dtype), so buffers whose
    /// lifetimes do not overlap share memory.
    pub(crate) fn of(sched: &Schedule) -> Layout {
        let mut entries: Vec<Entry> = Vec::with_capacity(sched.buffers.len());
        let mut shared: HashMap<(u64, DType), usize> = HashMap::new();
        let mut of_buffer = HashMap::with_capacity(sched.buffers.len());
        for b in &sched.buffers {
            let at = match b.kind {
                BufferKind::Intermediate => {
                    *shared.entry((b.storage, b.dtype)).or_insert(entries.len())
                }
                _ => entries.len(),
            };
            if at == entries.len() {
                entries.push(Entry {
                    id: b.id,
                    kind: b.kind,
                    slot: FrameSlot {
                        dtype: b.dtype,
                        len: 0,
                        written: b.kind != BufferKind::Input,
                    },
                });
            }
            let len = &mut entries[at].slot.len;
            *len = (*len).max(b.size);
            of_buffer.insert(b.id, (at, b.size));
        }
        Layout { entries, of_buffer }
    }

    /// The frame's slots, for [`Run::prepare`].
    pub(crate) fn frame(&self) -> Vec<FrameSlot> {
        self.entries.iter().map(|e| e.slot).collect()
    }

    /// The frame index of each buffer of `item` (its `DEFINE_GLOBAL`
    /// order) and the element count of those buffers in all.
    pub(crate) fn slots_of(&self, item: &ScheduleItem) -> Result<(Vec<usize>, usize), String> {
        let mut slots = Vec::with_capacity(item.buffers.len());
        let mut elements = 0;
        for id in &item.buffers {
            match self.of_buffer.get(id) {
                Some(&(at, size)) => {
                    slots.push(at);
                    elements += size;
                }
                None => return Err(format!("buffer {id} is not in the schedule")),
            }
        }
        Ok((slots, elements))
    }
}

/// One kernel launch of a [`Run`].
pub(crate) struct Step {
    /// The compiled kernel.
    pub kernel: Arc<dyn CompiledKernel>,
    /// The frame index of each of its buffer slots.
    pub slots: Vec<usize>,
    /// The values of its variables.
    pub vars: Vec<i64>,
    /// Their names (for `MOROK_DEBUG` reports).
    pub var_names: Vec<&'static str>,
    /// Elements its buffers hold in all (whether it gets a thread of its
    /// own beside the other kernels of its group).
    pub elements: usize,
}

/// Elements that the buffers of a kernel must hold in all for it to run
/// on a thread of its own beside the other kernels of its group: below
/// this, starting a thread costs more than the kernel takes.
pub(crate) const CONCURRENT_MIN_ELEMENTS: usize = 1 << 16;

/// A schedule's kernels ready to run on a frame of buffers.
pub(crate) struct Run {
    device: Device,
    steps: Vec<Step>,
    /// Step indices by schedule group (the schedule's Kahn levels).
    groups: Vec<Vec<usize>>,
    /// The launches as the device checked them ([`Run::prepare`]).
    prepared: Option<Box<dyn PreparedLaunches>>,
    /// Appended to each launch's report line (`" (plan)"` for DSL plans).
    label: &'static str,
}

impl Run {
    /// The steps of a schedule on `device`, run in `groups` (step indices;
    /// the kernels of a group are independent). `label` marks this kind of
    /// run in `MOROK_DEBUG` reports.
    pub(crate) fn new(
        device: Device,
        steps: Vec<Step>,
        groups: Vec<Vec<usize>>,
        label: &'static str,
    ) -> Run {
        Run {
            device,
            steps,
            groups,
            prepared: None,
            label,
        }
    }

    /// Asks the device to check the launches once against `frame` (the
    /// slots every later frame of buffers matches); launches then run
    /// one after another through its prepared launches. Where the device
    /// has none, or a launch fails a check, the run keeps its checked
    /// launch per kernel.
    pub(crate) fn prepare(&mut self, frame: &[FrameSlot]) {
        let launches: Vec<FrameLaunch<'_>> = self
            .steps
            .iter()
            .map(|s| FrameLaunch {
                kernel: s.kernel.as_ref(),
                slots: &s.slots,
                vars: &s.vars,
            })
            .collect();
        self.prepared = self.device.backend().prepare_launches(frame, &launches);
    }

    /// Runs every step on `buffers` (frame order). With `report` ≥ 1
    /// (`MOROK_DEBUG`) each launch is printed with its time, at ≥ 2 with
    /// its variables' values. The first error (in group order) is
    /// returned.
    pub(crate) fn launch(&self, buffers: &[&dyn DeviceBuffer], report: u8) -> Result<(), String> {
        morok_core::profile::timed(morok_core::profile::Stage::Run, || {
            self.launch_untimed(buffers, report)
        })
    }

    /// [`Run::launch`] without the stage timer.
    fn launch_untimed(&self, buffers: &[&dyn DeviceBuffer], report: u8) -> Result<(), String> {
        if let Some(prepared) = &self.prepared {
            if report == 0 {
                prepared.run(buffers, None).map_err(|e| e.to_string())?;
                count_launches(self.steps.len());
                return Ok(());
            }
            let mut start = Instant::now();
            let mut done = |i: usize| {
                count_launches(1);
                self.report(&self.steps[i], start.elapsed(), report);
                start = Instant::now();
            };
            return prepared
                .run(buffers, Some(&mut done))
                .map_err(|e| e.to_string());
        }
        self.groups
            .iter()
            .try_for_each(|group| self.run_group(group, buffers, report))
    }

    /// Runs the kernels of one schedule group. They are independent (none
    /// reads what another writes, and the memory plan never lets two of
    /// them share storage), so those over [`CONCURRENT_MIN_ELEMENTS`] run
    /// at the same time, each on its own thread (a CPU kernel still splits
    /// its parallel loop over the device's pool); the small ones run one
    /// after another on the calling thread.
    fn run_group(
        &self,
        group: &[usize],
        buffers: &[&dyn DeviceBuffer],
        report: u8,
    ) -> Result<(), String> {
        let (concurrent, serial): (Vec<usize>, Vec<usize>) = group
            .iter()
            .partition(|&&i| self.steps[i].elements >= CONCURRENT_MIN_ELEMENTS);
        if concurrent.len() < 2 {
            return group
                .iter()
                .try_for_each(|&i| self.run_step(i, buffers, report));
        }
        std::thread::scope(|s| {
            let spawned: Vec<_> = concurrent[1..]
                .iter()
                .map(|&i| s.spawn(move || self.run_step(i, buffers, report)))
                .collect();
            let mut results = vec![self.run_step(concurrent[0], buffers, report)];
            results.extend(serial.iter().map(|&i| self.run_step(i, buffers, report)));
            for h in spawned {
                results.push(
                    h.join()
                        .unwrap_or_else(|_| Err("a kernel thread panicked".to_string())),
                );
            }
            results.into_iter().collect()
        })
    }

    /// Runs step `i` with [`CompiledKernel::run`] (which checks its
    /// buffers); the error says why it could not run.
    fn run_step(&self, i: usize, buffers: &[&dyn DeviceBuffer], report: u8) -> Result<(), String> {
        let step = &self.steps[i];
        let mut args: Vec<&dyn DeviceBuffer> = Vec::with_capacity(step.slots.len());
        for &f in &step.slots {
            match buffers.get(f) {
                Some(b) => args.push(*b),
                None => return Err(format!("frame slot {f} is not bound")),
            }
        }
        let start = Instant::now();
        count_launches(1);
        step.kernel
            .run(&args, &step.vars)
            .map_err(|e| e.to_string())?;
        if report >= 1 {
            self.report(step, start.elapsed(), report);
        }
        Ok(())
    }

    /// Prints one launch (`MOROK_DEBUG`).
    fn report(&self, step: &Step, took: Duration, level: u8) {
        let vars = if level >= 2 && !step.vars.is_empty() {
            let values: Vec<String> = step
                .var_names
                .iter()
                .zip(&step.vars)
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            format!("  vars {}", values.join(" "))
        } else {
            String::new()
        };
        eprintln!(
            "*** {:<4} {:<28} {:>10.3} ms{}{vars}",
            self.device.name(),
            step.kernel.name(),
            took.as_secs_f64() * 1e3,
            self.label
        );
    }
}
