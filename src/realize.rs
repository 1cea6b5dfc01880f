//! Runs the compiler pipeline for a set of tensor-level roots: schedule
//! (cached), then for each kernel the per-kernel pipeline and the device's
//! compiler (cached by AST, device and options, `kernel_cache.rs`) and a
//! run on device buffers, then hand the outputs to the storage registry.
//! Everything device-specific goes through the `Backend` trait of the
//! device the inputs live on.

use crate::device::Device;
use crate::storage::{self, BufferRef};
use crate::{Error, KernelRun};
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
    pub kernels: Vec<KernelRun>,
    /// Handles that keep the new output buffers registered until the
    /// tensors that view them take their own handles.
    pub _buffers: Vec<BufferRef>,
}

static KERNEL_LAUNCHES: AtomicUsize = AtomicUsize::new(0);

/// Number of kernel launches in this process so far.
pub fn kernel_launches() -> usize {
    KERNEL_LAUNCHES.load(Ordering::Relaxed)
}

/// Counts one kernel launch (see [`kernel_launches`]).
pub(crate) fn count_launch() {
    KERNEL_LAUNCHES.fetch_add(1, Ordering::Relaxed);
}

/// The per-kernel pipeline's options from the configuration
/// (`MOROK_NOOPT=1` turns the optimizer off, `MOROK_BEAM=N` or
/// `set_opt_mode` asks for beam search).
pub(crate) fn compile_options() -> CompileOptions {
    CompileOptions {
        mode: crate::config::opt_mode(),
    }
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
    let opts = compile_options();
    let sizes: HashMap<u64, usize> = sched.buffers.iter().map(|b| (b.id, b.size)).collect();
    let mut ready = compile_misses(&dev, &sched, opts);
    for group in &sched.groups {
        let mut compiled: Vec<(usize, Arc<dyn CompiledKernel>)> = Vec::with_capacity(group.len());
        for &i in group {
            let ast = &sched.items[i].ast;
            let result = ready
                .remove(&i)
                .unwrap_or_else(|| crate::kernel_cache::get_or_compile(&dev, ast, opts));
            let kernel = match result {
                Ok(k) => k,
                Err(e) => {
                    let name = kernel_name(ast);
                    return Err(Error::runtime("realize", format!("kernel `{name}`: {e}")));
                }
            };
            if config.debug >= 3 {
                eprintln!("{}", kernel.source());
            }
            compiled.push((i, kernel));
        }
        let launches: Vec<Launch<'_>> = compiled
            .iter()
            .map(|(i, k)| Launch {
                item: &sched.items[*i],
                kernel: k.as_ref(),
            })
            .collect();
        if let Err(e) = run_group(&launches, &buffers, &sizes, dev.name(), config.debug >= 1) {
            return Err(Error::runtime("realize", e));
        }
        kernels.extend(
            compiled
                .into_iter()
                .map(|(_, k)| KernelRun::new(k, dev.clone())),
        );
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

/// Compiled kernels (or compile errors) by schedule item.
type Ready = HashMap<usize, Result<Arc<dyn CompiledKernel>, String>>;

/// Compiles the kernels of `sched` that the kernel cache does not hold,
/// before any of them runs, on up to one thread per core, when there are
/// at least two: each compile (a C compiler process, or LLVM) is
/// independent of the others, so a first call waits for its share of the
/// compiles instead of their sum. Warm calls (every kernel cached) start
/// no thread. Items not in the result are compiled, or fetched from the
/// cache, in schedule order by the caller; errors are reported there, in
/// schedule order, as before.
fn compile_misses(dev: &Device, sched: &Schedule, opts: CompileOptions) -> Ready {
    let mut seen = std::collections::HashSet::new();
    let misses: Vec<usize> = (0..sched.items.len())
        .filter(|&i| {
            let ast = &sched.items[i].ast;
            seen.insert(ast.id()) && !crate::kernel_cache::is_cached(dev, ast, opts)
        })
        .collect();
    if misses.len() < 2 {
        // Warm calls: no thread, and no asking the OS for its cores (it
        // reads cgroup files: tens of microseconds per call).
        return Ready::new();
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(misses.len());
    if threads < 2 {
        return Ready::new();
    }
    let next = AtomicUsize::new(0);
    let ready = std::sync::Mutex::new(Ready::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while let Some(&i) = misses.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let r = crate::kernel_cache::get_or_compile(dev, &sched.items[i].ast, opts);
                    ready.lock().unwrap_or_else(|e| e.into_inner()).insert(i, r);
                }
            });
        }
    });
    ready.into_inner().unwrap_or_else(|e| e.into_inner())
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

/// Elements that the buffers of a kernel must hold in all for it to run
/// on a thread of its own beside the other kernels of its group: below
/// this, starting a thread costs more than the kernel takes.
pub(crate) const CONCURRENT_MIN_ELEMENTS: usize = 1 << 16;

/// One kernel of a group, ready to run.
struct Launch<'a> {
    item: &'a ScheduleItem,
    kernel: &'a dyn CompiledKernel,
}

/// Runs the kernels of one schedule group. They are independent (the
/// schedule's Kahn levels: none reads what another writes, and the memory
/// plan never lets two of them share storage), so those over
/// [`CONCURRENT_MIN_ELEMENTS`] run at the same time, each on its own
/// thread (a CPU kernel still splits its parallel loop over the device's
/// pool); the small ones run one after another on the calling thread.
/// The first error (in group order) is returned.
fn run_group(
    group: &[Launch<'_>],
    buffers: &HashMap<u64, Arc<dyn DeviceBuffer>>,
    sizes: &HashMap<u64, usize>,
    device: &str,
    report: bool,
) -> Result<(), String> {
    let big = |l: &Launch<'_>| {
        let total: usize = l.item.buffers.iter().filter_map(|b| sizes.get(b)).sum();
        total >= CONCURRENT_MIN_ELEMENTS
    };
    let (concurrent, serial): (Vec<&Launch<'_>>, Vec<&Launch<'_>>) =
        group.iter().partition(|l| big(l));
    if concurrent.len() < 2 {
        return group
            .iter()
            .try_for_each(|l| launch(l, buffers, device, report));
    }
    std::thread::scope(|s| {
        let spawned: Vec<_> = concurrent[1..]
            .iter()
            .map(|l| s.spawn(move || launch(l, buffers, device, report)))
            .collect();
        let mut results = vec![launch(concurrent[0], buffers, device, report)];
        results.extend(serial.iter().map(|l| launch(l, buffers, device, report)));
        for h in spawned {
            results.push(
                h.join()
                    .unwrap_or_else(|_| Err("a kernel thread panicked".to_string())),
            );
        }
        results.into_iter().collect()
    })
}

/// Runs one kernel on its buffers; the error says why it could not run.
fn launch(
    l: &Launch<'_>,
    buffers: &HashMap<u64, Arc<dyn DeviceBuffer>>,
    device: &str,
    report: bool,
) -> Result<(), String> {
    let mut args: Vec<&dyn DeviceBuffer> = Vec::with_capacity(l.item.buffers.len());
    for id in &l.item.buffers {
        match buffers.get(id) {
            Some(b) => args.push(b.as_ref()),
            None => return Err(format!("buffer {id} is not in the schedule")),
        }
    }
    let start = Instant::now();
    count_launch();
    l.kernel.run(&args, &[]).map_err(|e| e.to_string())?;
    if report {
        eprintln!(
            "*** {device:<4} {:<28} {:>10.3} ms",
            l.kernel.name(),
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
