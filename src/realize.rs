//! Runs the compiler pipeline for a set of tensor-level roots: schedule
//! (cached), then for each kernel the per-kernel pipeline and the device's
//! compiler (cached by AST, device and options, `kernel_cache.rs`) and a
//! run on device buffers, then hand the outputs to the storage registry.
//! Everything device-specific goes through the `Backend` trait of the
//! device the inputs live on.

use crate::device::Device;
use crate::storage::{self, BufferRef};
use crate::{Error, KernelInfo};
use morok_core::device::{CompiledKernel, DeviceBuffer};
use morok_core::pipeline::CompileOptions;
use morok_core::program::kernel_name;
use morok_core::schedule::{schedule_cached, BufferKind, Schedule, ScheduleItem};
use morok_core::{DType, UOp};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The materialized results of [`realize_graph`].
pub(crate) struct Realized {
    /// One tensor-level UOp per root (a view of a BUFFER that is in
    /// storage), with the root's shape.
    pub outputs: Vec<Arc<UOp>>,
    /// The kernels that ran.
    pub kernels: Vec<KernelInfo>,
    /// Handles that keep the new output buffers registered until the
    /// tensors that view them take their own handles.
    pub _buffers: Vec<BufferRef>,
}

static KERNEL_LAUNCHES: AtomicUsize = AtomicUsize::new(0);

/// Number of kernel launches in this process so far.
pub fn kernel_launches() -> usize {
    KERNEL_LAUNCHES.load(Ordering::Relaxed)
}

/// Schedules, compiles and runs the graphs of `roots`. Errors are located
/// at the caller (no closure builds one: closures cannot forward it).
#[track_caller]
pub(crate) fn realize_graph(roots: &[Arc<UOp>]) -> Result<Realized, Error> {
    let config = crate::config::get();
    let sched = match schedule_cached(roots) {
        Ok(s) => s,
        Err(e) => return Err(Error::runtime("realize", e.to_string())),
    };
    if config.debug >= 2 {
        eprintln!("{}", describe_schedule(&sched));
    }
    let dev = device_of(&sched)?;
    let buffers = allocate(&dev, &sched)?;
    let mut kernels = Vec::with_capacity(sched.items.len());
    let opts = CompileOptions {
        mode: crate::config::opt_mode(),
    };
    for item in &sched.items {
        let kernel = match crate::kernel_cache::get_or_compile(&dev, &item.ast, opts) {
            Ok(k) => k,
            Err(e) => {
                let name = kernel_name(&item.ast);
                return Err(Error::runtime("realize", format!("kernel `{name}`: {e}")));
            }
        };
        if config.debug >= 3 {
            eprintln!("{}", kernel.source());
        }
        run(
            item,
            &buffers,
            kernel.as_ref(),
            dev.name(),
            config.debug >= 1,
        )?;
        kernels.push(KernelInfo {
            name: kernel.name().to_string(),
            backend: dev.name().to_string(),
            code: kernel.source().to_string(),
        });
    }
    let handles = sched
        .buffers
        .iter()
        .filter(|b| b.kind == BufferKind::Output)
        .map(|spec| storage::register(spec.id, dev.clone(), buffers[&spec.id].clone(), spec.size))
        .collect();
    Ok(Realized {
        outputs: sched.outputs.clone(),
        kernels,
        _buffers: handles,
    })
}

/// The device the schedule runs on: the one holding its inputs (all of
/// them must be on one device), or the default device when it reads none.
#[track_caller]
fn device_of(sched: &Schedule) -> Result<Device, Error> {
    let inputs = sched.buffers.iter().filter(|b| b.kind == BufferKind::Input);
    match storage::common_device(inputs.map(|b| b.id)) {
        Ok(Some(d)) => Ok(d),
        Ok(None) => Device::default_device(),
        Err(two) => Err(Error::runtime(
            "realize",
            format!("the inputs are on two devices, {two}: move them to one with `to_device`"),
        )),
    }
}

/// Finds or allocates the device memory of every buffer of the schedule:
/// inputs are the registered buffers themselves (no copy), outputs get
/// their own memory, and intermediates are allocated once per (storage,
/// dtype) at the largest member's size, so buffers whose lifetimes do not
/// overlap share memory.
#[track_caller]
fn allocate(dev: &Device, sched: &Schedule) -> Result<HashMap<u64, Arc<dyn DeviceBuffer>>, Error> {
    let mut shared_sizes: HashMap<(u64, DType), usize> = HashMap::new();
    for b in sched
        .buffers
        .iter()
        .filter(|b| b.kind == BufferKind::Intermediate)
    {
        let e = shared_sizes.entry((b.storage, b.dtype)).or_default();
        *e = (*e).max(b.size);
    }
    let mut shared: HashMap<(u64, DType), Arc<dyn DeviceBuffer>> = HashMap::new();
    let mut out = HashMap::with_capacity(sched.buffers.len());
    for b in &sched.buffers {
        let buf = match b.kind {
            BufferKind::Input => match storage::device_buffer(b.id) {
                Some(buf) => buf,
                None => {
                    return Err(Error::runtime(
                        "realize",
                        format!("input buffer {} was freed", b.id),
                    ))
                }
            },
            BufferKind::Output => alloc(dev, b.dtype, b.size)?,
            BufferKind::Intermediate => {
                let key = (b.storage, b.dtype);
                match shared.get(&key) {
                    Some(buf) => buf.clone(),
                    None => {
                        let buf = alloc(dev, b.dtype, shared_sizes[&key])?;
                        shared.insert(key, buf.clone());
                        buf
                    }
                }
            }
        };
        out.insert(b.id, buf);
    }
    Ok(out)
}

/// `size` (at least one) elements of `dtype` on `dev`.
#[track_caller]
fn alloc(dev: &Device, dtype: DType, size: usize) -> Result<Arc<dyn DeviceBuffer>, Error> {
    match dev.backend().allocate(dtype, size.max(1)) {
        Ok(b) => Ok(Arc::from(b)),
        Err(e) => Err(Error::runtime("realize", e.to_string())),
    }
}

#[track_caller]
fn run(
    item: &ScheduleItem,
    buffers: &HashMap<u64, Arc<dyn DeviceBuffer>>,
    kernel: &dyn CompiledKernel,
    device: &str,
    report: bool,
) -> Result<(), Error> {
    let mut args: Vec<&dyn DeviceBuffer> = Vec::with_capacity(item.buffers.len());
    for id in &item.buffers {
        match buffers.get(id) {
            Some(b) => args.push(b.as_ref()),
            None => {
                return Err(Error::runtime(
                    "realize",
                    format!("buffer {id} is not in the schedule"),
                ))
            }
        }
    }
    let start = Instant::now();
    KERNEL_LAUNCHES.fetch_add(1, Ordering::Relaxed);
    if let Err(e) = kernel.run(&args, &[]) {
        return Err(Error::runtime("realize", e.to_string()));
    }
    if report {
        eprintln!(
            "*** {device:<4} {:<28} {:>10.3} ms",
            kernel.name(),
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(())
}

fn describe_schedule(sched: &Schedule) -> String {
    let mut s = format!(
        "schedule: {} kernel(s) in {} group(s)\n",
        sched.items.len(),
        sched.groups.len()
    );
    for (g, items) in sched.groups.iter().enumerate() {
        for &i in items {
            let item = &sched.items[i];
            s.push_str(&format!(
                "  group {g}: {} buffers {:?}\n",
                kernel_name(&item.ast),
                item.buffers
            ));
        }
    }
    s
}
