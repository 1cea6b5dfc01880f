//! [`CallCache`]: the kernel macros' call-site cache for any function of
//! tensors (an imported ONNX model's `forward`, a hand-written model).
//!
//! A call passes its arguments and a closure that builds the lazy
//! results from them. The first call with a given key (the arguments'
//! shapes, dtypes, device and aliasing) builds, schedules and compiles a
//! plan, as a cold `#[morok::kernel]` call does (`dsl/plan.rs`); later
//! calls with that key run the plan's kernels on the new arguments'
//! buffers without calling the closure: nothing is built, scheduled or
//! compiled.
//!
//! A plan is only right if the closure's graph depends on the arguments'
//! shapes and dtypes, not on their values. While the closure runs on a
//! cold call, this thread *traces* the arguments' buffers: a host read
//! (`to_vec`, `to_ndarray`, `reference`, `to_device`), a `realize` or a
//! cached call of a graph that reads one of them marks the key as
//! data-dependent, and such a key runs the closure on every call (the
//! result is right; only the cache is skipped). Values the closure reads
//! from other tensors (weights, constants) are fixed into the plan, as a
//! kernel macro's captured buffers are.

use crate::dsl::plan::{bind_buffers, compile_item, device_key, lock, prepare_plan, Prepared};
use crate::{Error, Tensor};
use morok_core::schedule_cached;
use morok_core::uop::{Arg, Op, UOp};
use morok_core::DType;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Plans a cache keeps (the least recently used is dropped past it).
const MAX_PLANS: usize = 16;

static WARM_CALLS: AtomicUsize = AtomicUsize::new(0);

/// How many [`CallCache`] calls in this process ran a cached plan.
pub fn call_cache_warm_calls() -> usize {
    WARM_CALLS.load(Ordering::Relaxed)
}

/// A plan's key: each argument's dtype and shape, the device, and for
/// each argument the first argument viewing the same buffer.
#[derive(Clone, PartialEq, Eq)]
struct Key {
    args: Vec<(DType, Vec<usize>)>,
    device: usize,
    alias: Vec<usize>,
}

/// What a key does.
#[derive(Clone)]
enum Entry {
    /// Run the cached plan (or build: the results need no kernel).
    Prepared(Prepared),
    /// The closure read its arguments' values: build on every call.
    DataDependent,
}

/// Compiled plans of one function of tensors, by its arguments' shapes,
/// dtypes, device and aliasing (see the module docs). Hold one per
/// function, e.g. in the struct whose method it serves or in a `static`.
///
/// ```
/// use morok::{CallCache, Tensor};
/// static SCALED: CallCache = CallCache::new();
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?;
/// for _ in 0..2 {
///     // The second call runs the compiled plan: the closure is not called.
///     let y = SCALED.call(&[&x], |a| Ok(vec![a[0].mul(2.0)?.relu()?]))?;
///     assert_eq!(y[0].to_vec::<f32>()?, [2.0, 4.0, 6.0]);
/// }
/// # Ok::<(), morok::Error>(())
/// ```
pub struct CallCache {
    plans: Mutex<Vec<(Key, Entry)>>,
    warm: AtomicUsize,
}

impl Default for CallCache {
    fn default() -> Self {
        CallCache::new()
    }
}

impl CallCache {
    /// An empty cache.
    pub const fn new() -> CallCache {
        CallCache {
            plans: Mutex::new(Vec::new()),
            warm: AtomicUsize::new(0),
        }
    }

    /// The realized results of `build(args)`: from the plan cached for
    /// the arguments' key, or by calling `build`, realizing its results
    /// together and caching the plan. Arguments that are lazy or partial
    /// views are not keyed: `build` runs and its results are realized.
    /// Errors of `build` come back as they are.
    #[track_caller]
    pub fn call<E: From<Error>>(
        &self,
        args: &[&Tensor],
        build: impl FnOnce(&[&Tensor]) -> Result<Vec<Tensor>, E>,
    ) -> Result<Vec<Tensor>, E> {
        touch_tensors(args);
        let Some(bound) = bind_buffers(args).filter(|b| !b.buffers.is_empty()) else {
            return realize(build(args)?);
        };
        let key = Key {
            args: args
                .iter()
                .map(|t| (t.dtype(), t.shape().to_vec()))
                .collect(),
            device: device_key(&bound.device),
            alias: bound.alias.to_vec(),
        };
        let cached = self.lookup(&key);
        match cached {
            Some(Entry::Prepared(Prepared::Plan(plan))) => {
                WARM_CALLS.fetch_add(1, Ordering::Relaxed);
                self.warm.fetch_add(1, Ordering::Relaxed);
                return Ok(plan.run(&bound.buffers, 0)?);
            }
            Some(_) => return realize(build(args)?),
            None => {}
        }
        let ids: Vec<u64> = args.iter().filter_map(|t| t.whole_buffer_id()).collect();
        let previous = TRACE.with(|t| t.replace(Some(Trace { ids, read: false })));
        let built = build(args);
        let trace = TRACE.with(|t| t.replace(previous));
        let results = built?;
        if trace.is_some_and(|t| t.read) {
            self.insert(key, Entry::DataDependent);
            return realize(results);
        }
        let roots: Vec<Arc<UOp>> = results.iter().map(Tensor::uop).collect();
        let sched =
            schedule_cached(&roots).map_err(|e| Error::runtime("realize", e.to_string()))?;
        // The kernels the cache lacks, compiled on every core first.
        crate::realize::compile_misses(&bound.device, &sched, crate::realize::compile_options());
        let prepared = prepare_plan(&results, &sched, &bound, |_, item| {
            let compiled = compile_item(&bound, item)?;
            if !compiled.vars.is_empty() {
                return Err(Error::runtime(
                    "realize",
                    "a kernel of the plan has variables (a symbolic shape)",
                ));
            }
            Ok((compiled.kernel, Vec::new(), Vec::new()))
        })?;
        self.insert(key, Entry::Prepared(prepared.clone()));
        match prepared {
            Prepared::Plan(plan) => Ok(plan.run(&bound.buffers, crate::config::get().debug)?),
            Prepared::TensorPath => realize(results),
        }
    }

    /// How many calls of this cache ran a cached plan.
    pub fn warm_calls(&self) -> usize {
        self.warm.load(Ordering::Relaxed)
    }

    /// How many keys the cache holds.
    pub fn len(&self) -> usize {
        lock(&self.plans).len()
    }

    /// Whether the cache holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry for `key`, made the most recently used.
    fn lookup(&self, key: &Key) -> Option<Entry> {
        let mut plans = lock(&self.plans);
        let i = plans.iter().rposition(|(k, _)| k == key)?;
        let entry = plans.remove(i);
        let found = entry.1.clone();
        plans.push(entry);
        Some(found)
    }

    /// Adds `entry` as the most recently used, forgetting the least
    /// recently used past [`MAX_PLANS`].
    fn insert(&self, key: Key, entry: Entry) {
        let mut plans = lock(&self.plans);
        plans.retain(|(k, _)| *k != key);
        if plans.len() >= MAX_PLANS {
            plans.remove(0);
        }
        plans.push((key, entry));
    }
}

/// Realizes `results` together (shared work runs once).
#[track_caller]
fn realize<E: From<Error>>(results: Vec<Tensor>) -> Result<Vec<Tensor>, E> {
    let refs: Vec<&Tensor> = results.iter().collect();
    Ok(Tensor::realize_all(&refs)?)
}

/// The buffers a cold call traces, and whether a traced value was read.
struct Trace {
    ids: Vec<u64>,
    read: bool,
}

thread_local! {
    static TRACE: RefCell<Option<Trace>> = const { RefCell::new(None) };
}

/// Notes that the graph under `uop` is read on the host or realized: if
/// a cold [`CallCache`] call on this thread traces a buffer it reads, that
/// call's key becomes data-dependent. Free when nothing is traced.
pub(crate) fn touch(uop: &Arc<UOp>) {
    TRACE.with(|t| {
        let mut t = t.borrow_mut();
        let Some(trace) = t.as_mut().filter(|t| !t.read && !t.ids.is_empty()) else {
            return;
        };
        trace.read = uop.toposort().iter().any(|n| {
            n.op() == Op::Buffer
                && matches!(n.arg(), Arg::Buffer { id, .. } if trace.ids.contains(id))
        });
    });
}

/// [`touch`] for each tensor (the arguments of a cached call).
pub(crate) fn touch_tensors(tensors: &[&Tensor]) {
    if TRACE.with(|t| t.borrow().is_none()) {
        return;
    }
    for t in tensors {
        touch(&t.uop());
    }
}
