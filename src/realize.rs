//! Runs the compiler pipeline for a set of tensor-level roots: schedule
//! (cached), then for each kernel the per-kernel pipeline and the device's
//! compiler (cached by AST, device and options, `kernel_cache.rs`), a run
//! on device buffers (`executor.rs`, the one way a schedule runs), then
//! hand the outputs to the storage registry. Everything device-specific
//! goes through the `Backend` trait of the device the inputs live on.

use crate::device::Device;
use crate::executor::{alloc, Layout, Run, Step};
use crate::storage::{self, BufferRef};
use crate::{Error, KernelRun};
use morok_core::device::{CompiledKernel, DeviceBuffer};
use morok_core::program::kernel_name;
use morok_core::CompileOptions;
use morok_core::UOp;
use morok_core::{schedule_cached, BufferKind, Schedule};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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
    let started = crate::debug_build::start();
    let sched = match schedule_cached(roots) {
        Ok(s) => s,
        Err(e) => return Err(Error::runtime("realize", e.to_string())),
    };
    if config.debug >= 2 {
        eprintln!("{}", describe_schedule(&sched));
    }
    let dev = device_of(&sched)?;
    let layout = Layout::of(&sched);
    let buffers = allocate(&dev, &layout)?;
    let opts = compile_options();
    let mut ready = compile_misses(&dev, &sched, opts);
    let mut kernels: Vec<Option<Arc<dyn CompiledKernel>>> = vec![None; sched.items.len()];
    let mut runs = Vec::with_capacity(sched.items.len());
    for &i in sched.groups.iter().flatten() {
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
        runs.push(KernelRun::new(kernel.clone(), dev.clone()));
        kernels[i] = Some(kernel);
    }
    let mut steps = Vec::with_capacity(sched.items.len());
    for (item, kernel) in sched.items.iter().zip(kernels) {
        let name = || kernel_name(&item.ast);
        let Some(kernel) = kernel else {
            let why = format!("kernel `{}` is in no schedule group", name());
            return Err(Error::runtime("realize", why));
        };
        let (slots, elements) = match layout.slots_of(item) {
            Ok(s) => s,
            Err(e) => {
                return Err(Error::runtime(
                    "realize",
                    format!("kernel `{}`: {e}", name()),
                ))
            }
        };
        steps.push(Step {
            kernel,
            slots,
            vars: Vec::new(),
            var_names: Vec::new(),
            elements,
        });
    }
    crate::debug_build::add(started);
    let run = Run::new(dev.clone(), steps, sched.groups.clone(), "");
    let frame: Vec<&dyn DeviceBuffer> = buffers.iter().map(|b| b.as_ref()).collect();
    if let Err(e) = run.launch(&frame, config.debug) {
        return Err(Error::runtime("realize", e));
    }
    let handles = layout
        .entries
        .iter()
        .zip(&buffers)
        .filter(|(e, _)| e.kind == BufferKind::Output)
        .map(|(e, b)| storage::register(e.id, dev.clone(), b.clone(), e.slot.len))
        .collect();
    Ok(Realized {
        outputs: sched.outputs.clone(),
        kernels: runs,
        _buffers: handles,
    })
}

/// Compiled kernels (or compile errors) by schedule item.
pub(crate) type Ready = HashMap<usize, Result<Arc<dyn CompiledKernel>, String>>;

/// Compiles the kernels of `sched` that the kernel cache does not hold,
/// before any of them runs, on up to one thread per core, when there are
/// at least two: each compile (a C compiler process, or LLVM) is
/// independent of the others, so a first call waits for its share of the
/// compiles instead of their sum. Warm calls (every kernel cached) start
/// no thread. Items not in the result are compiled, or fetched from the
/// cache, in schedule order by the caller; errors are reported there, in
/// schedule order, as before.
pub(crate) fn compile_misses(dev: &Device, sched: &Schedule, opts: CompileOptions) -> Ready {
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

/// The device memory of every entry of the frame `layout`: inputs are
/// the registered buffers themselves (no copy), outputs and the shared
/// memories of intermediates are allocated (at their largest member's
/// size).
#[track_caller]
fn allocate(dev: &Device, layout: &Layout) -> Result<Vec<Arc<dyn DeviceBuffer>>, Error> {
    let mut out = Vec::with_capacity(layout.entries.len());
    for e in &layout.entries {
        let buf = match e.kind {
            BufferKind::Input => match storage::device_buffer(e.id) {
                Some(buf) => buf,
                None => {
                    return Err(Error::runtime(
                        "realize",
                        format!("input buffer {} was freed", e.id),
                    ))
                }
            },
            _ => alloc(dev, e.slot.dtype, e.slot.len)?,
        };
        out.push(buf);
    }
    Ok(out)
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
