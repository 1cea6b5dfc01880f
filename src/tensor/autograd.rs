//! Gradients: the functional API ([`Tensor::gradient`]), PyTorch's
//! ([`Tensor::requires_grad`], [`Tensor::backward`], [`Tensor::grad`],
//! [`Tensor::zero_grad`]), [`Tensor::detach`], and [`Tensor::assign`],
//! which writes a computed value into a realized tensor (the update of a
//! parameter).
//!
//! Gradients are lazy tensors built by `morok_core::gradient` from the
//! forward graph; realizing them together with the forward values and the
//! parameter updates ([`Tensor::assign_all`]) runs one schedule, which the
//! schedule cache replays from the second training step on.

use super::{Inner, Tensor};
use crate::error::{Error, Result};
use crate::storage;
use morok_core::gradient::{gradients, view_base};
use morok_core::uop::{Arg, IdSet, Op, UOp};
use morok_core::ConstValue;
use smallvec::smallvec;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// A tensor's `requires_grad` flag and accumulated gradient. Clones of a
/// tensor share it (they share `Inner`).
#[derive(Default)]
pub(super) struct GradSlot {
    requires_grad: AtomicBool,
    grad: Mutex<Option<Tensor>>,
}

impl GradSlot {
    fn grad(&self) -> MutexGuard<'_, Option<Tensor>> {
        // Every critical section is one read or one store of the slot, so
        // a poisoned lock cannot hold a half-written value.
        self.grad.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The tensors that asked for gradients ([`Tensor::requires_grad`]), for
/// [`Tensor::backward`] to find among the nodes of a loss graph. Dropped
/// tensors are pruned at each `backward`.
fn tracked() -> MutexGuard<'static, Vec<Weak<Inner>>> {
    static TRACKED: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());
    TRACKED.lock().unwrap_or_else(|e| e.into_inner())
}

/// True when one of `args` requires a gradient, or is a lazy tensor whose
/// graph reads one: a DSL call with such arguments returns its lazy
/// result, so that gradients flow through it (`dsl/plan.rs`).
pub(crate) fn wants_gradient(args: &[&Tensor]) -> bool {
    if args.iter().any(|a| a.needs_grad()) {
        return true;
    }
    let wanted: IdSet = {
        let list = tracked();
        list.iter()
            .filter_map(Weak::upgrade)
            .map(|inner| Tensor { inner })
            .filter(|t| t.needs_grad())
            .filter_map(|t| t.graph().ok().map(|g| view_base(&g.uop).id()))
            .collect()
    };
    !wanted.is_empty()
        && args.iter().filter(|a| a.buffer_view().is_none()).any(|a| {
            a.graph()
                .is_ok_and(|g| g.uop.toposort().iter().any(|n| wanted.contains(&n.id())))
        })
}

impl Tensor {
    /// The gradients of this scalar (one-element) float tensor with
    /// respect to each of `targets`, as lazy tensors of the targets'
    /// shapes and dtypes (realize them, or pass them to an optimizer).
    ///
    /// A target the output does not depend on gets a zero gradient.
    /// Integer and bool values carry no gradient, and [`Tensor::detach`]
    /// stops one. Errors: a non-scalar output (use
    /// [`Tensor::gradient_seeded`]), a non-float output or target.
    ///
    /// ```
    /// use morok::Tensor;
    /// let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    /// let y = (&x * &x).sum(None, false)?; // sum of squares
    /// let dx = y.gradient(&[&x])?.remove(0);
    /// assert_eq!(dx.to_vec::<f32>()?, [2.0, 4.0, 6.0]);
    /// # Ok::<(), morok::Error>(())
    /// ```
    #[track_caller]
    pub fn gradient(&self, targets: &[&Tensor]) -> Result<Vec<Tensor>> {
        let seed = self.unit_seed("gradient")?;
        self.gradient_seeded(&seed, targets)
    }

    /// The gradients of `sum(self * seed)` with respect to each of
    /// `targets`: the vector-Jacobian product of a non-scalar output.
    /// `seed` must have this tensor's shape; it is cast to its dtype.
    #[track_caller]
    pub fn gradient_seeded(&self, seed: &Tensor, targets: &[&Tensor]) -> Result<Vec<Tensor>> {
        let g = self.graph()?;
        let s = seed.graph()?;
        if s.shape != g.shape {
            return Err(Error::argument(
                "gradient",
                format!(
                    "the seed is {:?} but the output is {:?}",
                    s.shape.as_slice(),
                    g.shape.as_slice()
                ),
            ));
        }
        if !g.dtype.is_float() {
            return Err(Error::dtype(
                "gradient",
                format!(
                    "the output {:?} is {}: only float outputs can be differentiated",
                    g.shape.as_slice(),
                    g.dtype
                ),
            ));
        }
        let seed = seed.cast_to(g.dtype)?;
        let mut uops = Vec::with_capacity(targets.len());
        for (i, t) in targets.iter().enumerate() {
            let tg = t.graph()?;
            if !tg.dtype.is_float() {
                return Err(Error::dtype(
                    "gradient",
                    format!(
                        "target {i} {:?} is {}: only float tensors have gradients",
                        tg.shape.as_slice(),
                        tg.dtype
                    ),
                ));
            }
            uops.push(tg.uop.clone());
        }
        let grads = match gradients(&g.uop, &seed.graph()?.uop, &uops) {
            Ok(grads) => grads,
            Err(e) => return Err(Error::runtime("gradient", e.message)),
        };
        let buffers = Tensor::merged_buffers(&[self, &seed])?;
        Ok(grads
            .into_iter()
            .zip(targets)
            .map(|(uop, t)| Tensor::from_parts(uop, t.shape().into(), buffers.clone()))
            .collect())
    }

    /// Ones of this tensor's shape and dtype, the seed of a scalar output;
    /// an error naming `op` when the tensor has more than one element.
    #[track_caller]
    fn unit_seed(&self, op: &str) -> Result<Tensor> {
        let g = self.graph()?;
        if g.shape.iter().product::<usize>() != 1 {
            return Err(Error::argument(
                op,
                format!(
                    "the output {:?} is not a scalar: give a seed of its shape (`gradient_seeded`, `backward_seeded`)",
                    g.shape.as_slice()
                ),
            ));
        }
        Ok(Tensor::constant(ConstValue::Float(1.0), g.dtype, &g.shape))
    }

    /// Marks this tensor (and every clone of it) as one whose gradient
    /// [`Tensor::backward`] computes and accumulates in [`Tensor::grad`];
    /// `false` unmarks it. Only float tensors can require gradients.
    /// Returns a handle to the same tensor, for chaining.
    #[track_caller]
    pub fn requires_grad(&self, on: bool) -> Result<Tensor> {
        let g = self.graph()?;
        if on && !g.dtype.is_float() {
            return Err(Error::dtype(
                "requires_grad",
                format!(
                    "{:?} is {}: only float tensors can require gradients",
                    g.shape.as_slice(),
                    g.dtype
                ),
            ));
        }
        let was = self
            .inner
            .autograd
            .requires_grad
            .swap(on, Ordering::Relaxed);
        if on && !was {
            tracked().push(Arc::downgrade(&self.inner));
        }
        Ok(self.clone())
    }

    /// True when [`Tensor::requires_grad`] marked this tensor.
    pub fn needs_grad(&self) -> bool {
        self.inner.autograd.requires_grad.load(Ordering::Relaxed)
    }

    /// The gradient [`Tensor::backward`] accumulated for this tensor
    /// (lazy), if any.
    pub fn grad(&self) -> Option<Tensor> {
        self.inner.autograd.grad().clone()
    }

    /// Forgets the accumulated gradient ([`Tensor::grad`] is `None` again).
    pub fn zero_grad(&self) {
        *self.inner.autograd.grad() = None;
    }

    /// Computes the gradient of this scalar tensor with respect to every
    /// tensor in its graph that [`requires_grad`](Tensor::requires_grad),
    /// and adds it to that tensor's [`Tensor::grad`] (lazily: the sums are
    /// realized when used). Errors: a non-scalar output (use
    /// [`Tensor::backward_seeded`]), no tensor of the graph requiring a
    /// gradient.
    ///
    /// ```
    /// use morok::Tensor;
    /// let w = Tensor::from_slice(&[1.0f32, -2.0]).requires_grad(true)?;
    /// let loss = (&w * 3.0).sum(None, false)?;
    /// loss.backward()?;
    /// assert_eq!(w.grad().unwrap().to_vec::<f32>()?, [3.0, 3.0]);
    /// # Ok::<(), morok::Error>(())
    /// ```
    #[track_caller]
    pub fn backward(&self) -> Result<()> {
        let seed = self.unit_seed("backward")?;
        self.backward_seeded(&seed)
    }

    /// [`Tensor::backward`] for a non-scalar output: accumulates the
    /// gradients of `sum(self * seed)`.
    #[track_caller]
    pub fn backward_seeded(&self, seed: &Tensor) -> Result<()> {
        let in_graph: IdSet = self
            .graph()?
            .uop
            .toposort()
            .iter()
            .map(|n| n.id())
            .collect();
        let targets: Vec<Tensor> = {
            let mut list = tracked();
            list.retain(|w| w.strong_count() > 0);
            list.iter()
                .filter_map(Weak::upgrade)
                .map(|inner| Tensor { inner })
                .filter(|t| t.needs_grad())
                .filter(|t| {
                    t.graph()
                        .is_ok_and(|g| in_graph.contains(&view_base(&g.uop).id()))
                })
                .collect()
        };
        if targets.is_empty() {
            return Err(Error::argument(
                "backward",
                format!(
                    "no tensor in the graph of this {:?} output requires a gradient (mark parameters with `requires_grad(true)`)",
                    self.shape()
                ),
            ));
        }
        let refs: Vec<&Tensor> = targets.iter().collect();
        let grads = self.gradient_seeded(seed, &refs)?;
        for (t, g) in targets.iter().zip(grads) {
            let mut slot = t.inner.autograd.grad();
            let sum = match slot.take() {
                Some(old) => old.add(&g)?,
                None => g,
            };
            *slot = Some(sum);
        }
        Ok(())
    }

    /// The id of the buffer this tensor views in full, when it is a
    /// realized tensor (a result of [`Tensor::realize`], or built from
    /// data): what [`Tensor::assign`] can write into.
    pub fn realized_buffer(&self) -> Option<u64> {
        self.buffer_view()
    }

    /// The realized buffers this tensor's graph reads, each as a flat
    /// tensor viewing the whole buffer (in the order the graph reaches
    /// them): the leaves a gradient can be taken with respect to.
    #[track_caller]
    pub fn inputs(&self) -> Result<Vec<Tensor>> {
        let g = self.graph()?;
        let mut out = Vec::new();
        for n in g.uop.toposort() {
            let (Op::Buffer, Arg::Buffer { id, size }) = (n.op(), n.arg()) else {
                continue;
            };
            if let Some(handle) = g.buffers.iter().find(|b| b.id() == *id) {
                let dtype = n.dtype().scalar_type();
                out.push(Tensor::view_buffer(handle.clone(), dtype, *size, &[*size])?);
            }
        }
        Ok(out)
    }

    /// The same values, materialized in row-major order in a buffer of
    /// their own when realized (a copy where the tensor is a view of
    /// another buffer or a broadcast constant).
    #[track_caller]
    pub fn contiguous(&self) -> Result<Tensor> {
        self.marked(Op::Contiguous)
    }

    /// `self` under a tensor-level marker op (`CONTIGUOUS`, `DETACH`).
    #[track_caller]
    fn marked(&self, op: Op) -> Result<Tensor> {
        let g = self.graph()?;
        let uop = UOp::new(op, g.uop.dtype(), smallvec![g.uop.clone()], Arg::None);
        self.derive(uop, g.shape.clone())
    }

    /// The same values with no gradient flowing back through them.
    #[track_caller]
    pub fn detach(&self) -> Result<Tensor> {
        self.marked(Op::Detach)
    }

    /// Writes `value` (computed now) into this realized tensor, in place:
    /// every tensor that views this buffer, and every later graph that
    /// reads it, sees the new values. This is how an optimizer updates a
    /// parameter; no copy to the host is made. The target must be a
    /// realized tensor (a result of [`Tensor::realize`] or built from
    /// data) and `value` must have its shape and dtype.
    #[track_caller]
    pub fn assign(&self, value: &Tensor) -> Result<()> {
        Tensor::assign_all(&[(self, value)], &[]).map(|_| ())
    }

    /// Several [`Tensor::assign`]s and the realization of `also`, in one
    /// schedule: a training step's parameter and optimizer-state updates
    /// together with its loss. Every value is computed from the contents
    /// before any assignment; the realized `also` tensors are returned.
    #[track_caller]
    pub fn assign_all(pairs: &[(&Tensor, &Tensor)], also: &[&Tensor]) -> Result<Vec<Tensor>> {
        let mut targets = IdSet::default();
        let mut roots: Vec<Tensor> = Vec::with_capacity(pairs.len() + also.len());
        for (target, value) in pairs {
            let (tg, vg) = (target.graph()?, value.graph()?);
            let Some(id) = target.buffer_view() else {
                return Err(Error::argument(
                    "assign",
                    format!(
                        "the target {:?} {} is not a realized tensor: realize it (or build it from data) first",
                        tg.shape.as_slice(),
                        tg.dtype
                    ),
                ));
            };
            if tg.shape != vg.shape || tg.dtype != vg.dtype {
                return Err(Error::argument(
                    "assign",
                    format!(
                        "the value {:?} {} does not match the target {:?} {}",
                        vg.shape.as_slice(),
                        vg.dtype,
                        tg.shape.as_slice(),
                        tg.dtype
                    ),
                ));
            }
            if !targets.insert(id) {
                return Err(Error::argument(
                    "assign",
                    format!("the target {:?} is assigned twice", tg.shape.as_slice()),
                ));
            }
            roots.push((*value).clone());
        }
        roots.extend(also.iter().map(|t| (*t).clone()));
        let refs: Vec<&Tensor> = roots.iter().collect();
        let mut realized = Tensor::realize_all(&refs)?;
        for ((target, _), value) in pairs.iter().zip(&realized) {
            let (Some(to), Some(from)) = (target.buffer_view(), value.whole_buffer_id()) else {
                return Err(Error::runtime(
                    "assign",
                    "the value did not realize into a buffer of its own",
                ));
            };
            if to != from {
                if let Err(e) = storage::rebind(to, from) {
                    return Err(Error::runtime("assign", e));
                }
            }
        }
        Ok(realized.split_off(pairs.len()))
    }
}
