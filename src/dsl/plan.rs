//! The per-call-site cache of a kernel macro: compiled plans keyed by the
//! arguments' dims, device and aliasing.
//!
//! Each expansion of `#[morok::kernel]` or `kernel!` holds a `static`
//! [`CallSite`]. A call checks its arguments against the signature; when
//! every argument views a whole buffer (a realized tensor or host data),
//! the site looks up the [`Plan`] for the dims' values. A warm call (plan
//! found) only takes the arguments' device buffers, allocates the
//! output, reuses pooled intermediates and launches the kernels: no graph
//! is built, nothing is scheduled or compiled. A cold call builds the
//! graph with the generated code, schedules it, compiles its kernels and
//! stores the plan. The graph is the expansion's static table
//! (`graph.rs`), built into tensors on cold calls only. Kernels take the named dims as variables
//! (`generic.rs`) wherever that was proven exact, so a new value of `B`
//! schedules once but compiles nothing. A call with a lazy argument runs
//! through the `Tensor` API (`realize`). A plan is the prepared form of
//! the schedule: an executor [`Run`] (`executor.rs`, the one way a
//! schedule runs) whose launches the device checked once, and where a
//! call finds each buffer of its frame.

use super::generic::{self, GenericAst, MAX_NAMES};
use super::graph::Graph;
use super::rt::{DimValues, Signature};
use crate::device::Device;
use crate::executor::{alloc, Layout, Run, Step};
use crate::kernel_cache::get_or_compile_with_vars;
use crate::realize::compile_options;
use crate::storage::{self, BufferRef};
use crate::{Error, KernelRun, Result, Tensor};
use morok_core::device::CompiledKernel;
use morok_core::device::DeviceBuffer;
use morok_core::program::kernel_name;
use morok_core::uop::{Arg, Op, UOp};
use morok_core::{new_buffer_id, DType};
use morok_core::{schedule_cached, BufferKind, Schedule, ScheduleItem};
use smallvec::SmallVec;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Plans a call site keeps (each holds pooled intermediates).
const MAX_PLANS: usize = 64;

static WARM_CALLS: AtomicUsize = AtomicUsize::new(0);

/// How many kernel-macro calls in this process took the warm path (a
/// cached plan: no graph, no schedule, no compile).
pub fn dsl_warm_calls() -> usize {
    WARM_CALLS.load(Ordering::Relaxed)
}

/// Arguments a call binds without allocating.
const INLINE_ARGS: usize = 8;

/// A plan's key: the dims' values, the device, and for each argument the
/// first argument viewing the same buffer (aliasing changes the graph).
type PlanKey = (DimValues, usize, SmallVec<[usize; INLINE_ARGS]>);

/// What a call site does for one key.
#[derive(Clone)]
pub(crate) enum Prepared {
    /// Run the cached kernels.
    Plan(Arc<Plan>),
    /// The result needs no kernel of its own (it views an argument):
    /// build the graph and realize it.
    TensorPath,
}

/// Generic kernels of a site, by schedule position, once tried.
type Generic = Option<Arc<Vec<Option<GenericAst>>>>;

#[derive(Default)]
struct SiteState {
    /// `None` until tried, then the generic kernels (if any).
    generic: Option<Generic>,
    /// Generic kernels the pipeline could not compile (by AST id): their
    /// concrete instances are used instead.
    broken: HashSet<u64>,
    /// Plans by key, least recently used first, searched linearly from
    /// the most recent (at most [`MAX_PLANS`] small keys: a warm call
    /// compares a few integers and hashes nothing).
    plans: Vec<(PlanKey, Prepared)>,
}

impl SiteState {
    /// The plan for `key`, made the most recently used.
    fn lookup(&mut self, key: &PlanKey) -> Option<Prepared> {
        let i = self.plans.iter().rposition(|(k, _)| k == key)?;
        let last = self.plans.len() - 1;
        if i != last {
            self.plans[i..].rotate_left(1);
        }
        Some(self.plans[last].1.clone())
    }

    /// Adds the plan for `key` as the most recently used, forgetting the
    /// least recently used past [`MAX_PLANS`] (a site called with ever
    /// new sizes keeps bounded memory; its frequent sizes stay warm).
    fn insert(&mut self, key: PlanKey, plan: Prepared) {
        self.plans.retain(|(k, _)| *k != key);
        if self.plans.len() >= MAX_PLANS {
            self.plans.remove(0);
        }
        self.plans.push((key, plan));
    }
}

/// The cache of one kernel-macro expansion (a `static` in the expansion).
pub struct CallSite {
    sig: &'static Signature,
    graph: &'static Graph,
    state: OnceLock<Mutex<SiteState>>,
}

/// Where a call finds a buffer of the plan's frame.
enum Source {
    /// The argument at this position.
    Arg(usize),
    /// A registered buffer the graph read that is no argument (the plan
    /// keeps its handle).
    Fixed(Arc<dyn DeviceBuffer>),
    /// The call's output number `k`.
    Output(usize),
    /// Pooled intermediate number `k`.
    Scratch(usize),
}

/// One output of a plan: its element type, length and shape.
struct OutputSpec {
    dtype: DType,
    len: usize,
    shape: Vec<usize>,
}

/// Everything a warm call needs: the prepared run, where its frame's
/// buffers come from, the outputs' types and shapes, and intermediate
/// sizes.
pub(crate) struct Plan {
    device: Device,
    run: Run,
    /// One per frame entry.
    sources: Vec<Source>,
    outputs: Vec<OutputSpec>,
    scratch: Vec<(DType, usize)>,
    /// The kernels, as the results' [`Tensor::kernels`] list them.
    kernels: Arc<[KernelRun]>,
    /// Handles of the `Fixed` buffers, which keep them registered.
    _fixed: Vec<BufferRef>,
    /// Sets of intermediates not in use by a running call.
    pool: Mutex<Vec<Vec<Arc<dyn DeviceBuffer>>>>,
}

/// The arguments' device buffers, if every argument views a whole
/// registered buffer on one device.
pub(crate) struct Bound {
    ids: SmallVec<[u64; INLINE_ARGS]>,
    pub(crate) buffers: SmallVec<[Arc<dyn DeviceBuffer>; INLINE_ARGS]>,
    pub(crate) device: Device,
    /// For each argument, the first argument viewing the same buffer.
    pub(crate) alias: SmallVec<[usize; INLINE_ARGS]>,
}

/// A key for the device `d` (its backend's address).
pub(crate) fn device_key(d: &Device) -> usize {
    Arc::as_ptr(d.backend_arc()) as *const () as usize
}

/// The arguments' buffers (see [`Bound`]), or `None` when one is lazy,
/// a partial view, or on another device.
pub(crate) fn bind_buffers(args: &[&Tensor]) -> Option<Bound> {
    let mut ids = SmallVec::new();
    let mut buffers = SmallVec::new();
    let mut device: Option<Device> = None;
    for t in args {
        let id = t.whole_buffer_id()?;
        let (buf, dev) = storage::buffer_and_device(id)?;
        match &device {
            Some(d) if device_key(d) != device_key(&dev) => return None,
            Some(_) => {}
            None => device = Some(dev),
        }
        ids.push(id);
        buffers.push(buf);
    }
    let alias = ids
        .iter()
        .map(|id| ids.iter().position(|x| x == id).unwrap_or(0))
        .collect();
    Some(Bound {
        ids,
        buffers,
        device: device?,
        alias,
    })
}

/// The one result of a single-output plan.
fn first(mut results: Vec<Tensor>) -> Result<Tensor> {
    results
        .pop()
        .ok_or_else(|| Error::runtime("realize", "the plan made no output"))
}

/// Locks `m`, whether or not a panic poisoned it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section is a single map or vector operation, so a
    // poisoned lock holds consistent data.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl CallSite {
    /// The cache of the kernel with signature `sig` and body `graph`.
    pub const fn new(sig: &'static Signature, graph: &'static Graph) -> CallSite {
        CallSite {
            sig,
            graph,
            state: OnceLock::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, SiteState> {
        lock(self.state.get_or_init(Default::default))
    }

    /// The lazy result of the embedded graph for `args` (checked again).
    #[track_caller]
    fn build(&self, args: &[&Tensor]) -> Result<Tensor> {
        self.graph.build(self.sig, args, &[], &[])
    }

    /// Checks `args` against the signature and computes the kernel's
    /// result: from a cached plan, or by building the embedded graph and
    /// running it through the scheduler and the compiler.
    #[track_caller]
    pub fn call(&self, args: &[&Tensor]) -> Result<Tensor> {
        let dims = self.sig.bind(args)?;
        crate::call_cache::touch_tensors(args);
        if crate::tensor::wants_gradient(args) {
            // Part of a computation being differentiated: the lazy result,
            // which the gradient can see through.
            return self.build(args);
        }
        let Some(bound) = bind_buffers(args).filter(|b| !b.ids.is_empty()) else {
            return self.build(args)?.realize();
        };
        let key = (dims, device_key(&bound.device), bound.alias.clone());
        let cached = self.state().lookup(&key);
        let mut report = 0;
        let prepared = match cached {
            Some(p) => {
                WARM_CALLS.fetch_add(1, Ordering::Relaxed);
                p
            }
            None => {
                report = crate::config::get().debug;
                let started = crate::debug_build::start();
                let p = self.prepare(args, &key.0, &bound);
                crate::debug_build::add(started);
                let p = p?;
                self.state().insert(key, p.clone());
                p
            }
        };
        match prepared {
            Prepared::Plan(plan) => first(plan.run(&bound.buffers, report)?),
            Prepared::TensorPath => self.build(args)?.realize(),
        }
    }

    /// The generic kernels of this site: its graph scheduled at the
    /// corners of the probe box, generalized position by position.
    fn generic(&self) -> Generic {
        if let Some(g) = &self.state().generic {
            return g.clone();
        }
        let names = self.sig.names.len();
        // Fixed dims take one value only: nothing to generalize.
        let found = if names > MAX_NAMES || self.sig.is_fixed() {
            None
        } else {
            self.probe(names).map(Arc::new)
        };
        self.state().generic = Some(found.clone());
        found
    }

    fn probe(&self, names: usize) -> Option<Vec<Option<GenericAst>>> {
        let mut corners: Vec<Schedule> = Vec::new();
        for corner in 0..1usize << names {
            let dims = generic::corner_dims(corner, names);
            let mut args = Vec::with_capacity(self.sig.params.len());
            for p in self.sig.params {
                let shape: Vec<usize> = p
                    .dims
                    .iter()
                    .map(|d| match *d {
                        super::rt::DimSpec::Lit(n) => n,
                        super::rt::DimSpec::Name(i) => dims[i],
                    })
                    .collect();
                args.push(Tensor::placeholder(p.dtype, &shape).ok()?);
            }
            let refs: Vec<&Tensor> = args.iter().collect();
            let root = self.build(&refs).ok()?.uop();
            corners.push(schedule_cached(&[root]).ok()?);
        }
        let count = corners[0].items.len();
        if corners.iter().any(|s| s.items.len() != count) {
            return None;
        }
        let vars: Vec<Arc<UOp>> = self
            .sig
            .names
            .iter()
            .map(|n| generic::variable(n))
            .collect();
        Some(
            (0..count)
                .map(|i| {
                    let asts: Vec<Arc<UOp>> =
                        corners.iter().map(|s| s.items[i].ast.clone()).collect();
                    generic::generalize(&asts, &vars)
                })
                .collect(),
        )
    }

    /// The cold path: builds, schedules and compiles the plan for `dims`.
    #[track_caller]
    fn prepare(&self, args: &[&Tensor], dims: &[usize], bound: &Bound) -> Result<Prepared> {
        let result = self.build(args)?;
        let sched = match schedule_cached(&[result.uop()]) {
            Ok(s) => s,
            Err(e) => return Err(Error::runtime("realize", e.to_string())),
        };
        if output_ids(&sched).is_none() {
            return Ok(Prepared::TensorPath);
        }
        let generic = self.generic();
        let values: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        let opts = compile_options();
        let compile = |i: usize, item: &ScheduleItem| -> Result<CompiledWithVars> {
            let g = generic
                .as_ref()
                .and_then(|g| g.get(i))
                .and_then(Option::as_ref)
                .filter(|g| !self.state().broken.contains(&g.ast.id()))
                .filter(|g| generic::matches(g, &item.ast, self.sig.names, &values));
            let compiled = match g.map(|g| get_or_compile_with_vars(&bound.device, &g.ast, opts)) {
                Some(Ok(c)) => c,
                other => {
                    if let (Some(g), Some(Err(_))) = (g, other) {
                        self.state().broken.insert(g.ast.id());
                    }
                    compile_item(bound, item)?
                }
            };
            let mut vars = Vec::with_capacity(compiled.vars.len());
            let mut var_names = Vec::with_capacity(compiled.vars.len());
            for v in &compiled.vars {
                match self.sig.names.iter().position(|n| *n == v.name) {
                    Some(k) => {
                        vars.push(values[k]);
                        var_names.push(self.sig.names[k]);
                    }
                    None => {
                        return Err(Error::runtime(
                            "realize",
                            format!("kernel variable `{}` is no dim of the signature", v.name),
                        ))
                    }
                }
            }
            Ok((compiled.kernel, vars, var_names))
        };
        prepare_plan(&[result], &sched, bound, compile)
    }
}

/// A compiled kernel with the values and names of its variables.
pub(crate) type CompiledWithVars = (Arc<dyn CompiledKernel>, Vec<i64>, Vec<&'static str>);

/// Compiles the concrete kernel of `item` for the arguments' device.
#[track_caller]
pub(crate) fn compile_item(
    bound: &Bound,
    item: &ScheduleItem,
) -> Result<crate::kernel_cache::Compiled> {
    get_or_compile_with_vars(&bound.device, &item.ast, compile_options()).map_err(|e| {
        let name = kernel_name(&item.ast);
        Error::runtime("realize", format!("kernel `{name}`: {e}"))
    })
}

/// The plan that runs `sched` (the schedule of `results`) on the bound
/// arguments: each item's kernel from `compile` (by position), each frame
/// buffer found among the arguments, the registered buffers the graph
/// reads (kept by handle), the outputs or pooled intermediates.
/// [`Prepared::TensorPath`] when a result got no kernel of its own.
#[track_caller]
pub(crate) fn prepare_plan(
    results: &[Tensor],
    sched: &Schedule,
    bound: &Bound,
    mut compile: impl FnMut(usize, &ScheduleItem) -> Result<CompiledWithVars>,
) -> Result<Prepared> {
    let Some(outs) = output_ids(sched).filter(|o| o.len() == results.len()) else {
        return Ok(Prepared::TensorPath);
    };
    let layout = Layout::of(sched);
    let mut steps = Vec::with_capacity(sched.items.len());
    for (i, item) in sched.items.iter().enumerate() {
        let (kernel, vars, var_names) = compile(i, item)?;
        if crate::config::get().debug >= 3 {
            eprintln!("{}", kernel.source());
        }
        let (slots, elements) = match layout.slots_of(item) {
            Ok(s) => s,
            Err(e) => return Err(Error::runtime("realize", e)),
        };
        steps.push(Step {
            kernel,
            slots,
            vars,
            var_names,
            elements,
        });
    }
    let mut sources = Vec::with_capacity(layout.entries.len());
    let mut scratch = Vec::new();
    let mut fixed = Vec::new();
    let mut outputs: Vec<Option<(DType, usize)>> = vec![None; outs.len()];
    for e in &layout.entries {
        let out = outs.iter().position(|&o| o == e.id);
        sources.push(match (e.kind, out) {
            (BufferKind::Output, Some(k)) => {
                outputs[k] = Some((e.slot.dtype, e.slot.len));
                Source::Output(k)
            }
            (BufferKind::Intermediate, _) => {
                scratch.push((e.slot.dtype, e.slot.len));
                Source::Scratch(scratch.len() - 1)
            }
            _ => source(e.id, &bound.ids, &mut fixed)?,
        });
    }
    let mut specs = Vec::with_capacity(outputs.len());
    for (spec, result) in outputs.into_iter().zip(results) {
        let Some((dtype, len)) = spec else {
            return Ok(Prepared::TensorPath);
        };
        specs.push(OutputSpec {
            dtype,
            len,
            shape: result.shape().to_vec(),
        });
    }
    let kernels = steps
        .iter()
        .map(|s| KernelRun::new(s.kernel.clone(), bound.device.clone()))
        .collect();
    let mut run = Run::new(bound.device.clone(), steps, sched.groups.clone(), " (plan)");
    run.prepare(&layout.frame());
    Ok(Prepared::Plan(Arc::new(Plan {
        device: bound.device.clone(),
        run,
        sources,
        outputs: specs,
        scratch,
        kernels,
        _fixed: fixed,
        pool: Mutex::new(Vec::new()),
    })))
}

/// The ids of the schedule's output buffers, one per root, if every root
/// got a kernel of its own (not a view of an input) and no two share a
/// buffer.
fn output_ids(sched: &Schedule) -> Option<Vec<u64>> {
    let mut ids: Vec<u64> = Vec::with_capacity(sched.outputs.len());
    for root in &sched.outputs {
        let id = root.toposort().iter().find_map(|n| match n.arg() {
            Arg::Buffer { id, .. } if n.op() == Op::Buffer => Some(*id),
            _ => None,
        })?;
        let output = sched
            .buffers
            .iter()
            .any(|b| b.id == id && b.kind == BufferKind::Output);
        if !output || ids.contains(&id) {
            return None;
        }
        ids.push(id);
    }
    Some(ids)
}

/// Where a call finds the buffer `id` the graph reads: the argument
/// viewing it, or else the registered buffer itself (kept registered by a
/// handle in `fixed`).
#[track_caller]
fn source(id: u64, args: &[u64], fixed: &mut Vec<BufferRef>) -> Result<Source> {
    if let Some(j) = args.iter().position(|&a| a == id) {
        return Ok(Source::Arg(j));
    }
    match (storage::device_buffer(id), storage::handle(id)) {
        (Some(b), Some(h)) => {
            fixed.push(h);
            Ok(Source::Fixed(b))
        }
        _ => Err(Error::runtime(
            "realize",
            format!("input buffer {id} was freed"),
        )),
    }
}

impl Plan {
    /// Runs the kernels on the arguments' buffers; each result views a new
    /// registered buffer. With `report` ≥ 1 (`MOROK_DEBUG`, cold calls)
    /// each launch is printed as the lazy path prints its kernels, at ≥ 2
    /// with its variables' values.
    #[track_caller]
    pub(crate) fn run(&self, args: &[Arc<dyn DeviceBuffer>], report: u8) -> Result<Vec<Tensor>> {
        let mut outs = Vec::with_capacity(self.outputs.len());
        for o in &self.outputs {
            outs.push(alloc(&self.device, o.dtype, o.len)?);
        }
        let pooled = lock(&self.pool).pop();
        let scratch = match pooled {
            Some(s) => s,
            None => {
                let mut s = Vec::with_capacity(self.scratch.len());
                for &(dtype, size) in &self.scratch {
                    s.push(alloc(&self.device, dtype, size)?);
                }
                s
            }
        };
        let frame: SmallVec<[&dyn DeviceBuffer; 16]> = self
            .sources
            .iter()
            .map(|s| match s {
                Source::Arg(j) => args[*j].as_ref(),
                Source::Fixed(b) => b.as_ref(),
                Source::Output(k) => outs[*k].as_ref(),
                Source::Scratch(k) => scratch[*k].as_ref(),
            })
            .collect();
        if let Err(e) = self.run.launch(&frame, report) {
            return Err(Error::runtime("realize", e));
        }
        drop(frame);
        lock(&self.pool).push(scratch);
        let mut tensors = Vec::with_capacity(outs.len());
        for (o, buffer) in self.outputs.iter().zip(outs) {
            let handle = storage::register(new_buffer_id(), self.device.clone(), buffer, o.len);
            tensors.push(
                Tensor::from_registered(handle, o.dtype.scalar_type(), o.len, &o.shape)?
                    .with_kernel_list(self.kernels.clone()),
            );
        }
        Ok(tensors)
    }
}
