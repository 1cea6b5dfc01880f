//! Reverse-mode differentiation of tensor-level graphs.
//!
//! [`gradients`] takes an output (`root`), the gradient flowing into it
//! (`seed`, of the root's shape and dtype: ones for a scalar loss) and a
//! list of targets, and builds one tensor-level graph per target: the
//! gradient of `sum(root * seed)` with respect to that target, lazy, in
//! the target's shape and dtype. Nothing is evaluated; the graphs share
//! the forward graph's nodes (hash consing), so a backward pass reuses the
//! forward values it needs and the scheduler fuses both.
//!
//! The derivative of each primitive is one rule of [`derivative_rules`]:
//! matched on a node, with the gradient flowing into that node as the
//! context, a rule returns a `SINK` with one gradient per operand (a
//! sourceless `NOOP` of dtype `void` where an operand gets none). Composite
//! operations of the `Tensor` API (matmul, softmax, convolutions, losses,
//! gather and scatter, ...) are built from these primitives, so they are
//! differentiated through their decomposition.
//!
//! A target that is a `RESHAPE` is differentiated through its source (the
//! same elements; builders of tensor graphs fold a reshape of a reshape
//! into one, so a graph may read the source without the target's node)
//! and its gradient reshaped back.
//!
//! Which nodes carry a gradient: a node is *on the path* when it is a
//! target, or when it has a float dtype, is not a `DETACH` or `BITCAST`,
//! and one of its operands is on the path. Integer and bool values
//! (comparisons, indices, random bits) never carry a gradient, and a
//! `DETACH` stops it. A target the root does not depend on gets a zero
//! gradient.
//!
//! The walk that feeds the rules is the one hand-written graph walk here,
//! and it must be: gradients flow from users to operands, against
//! `graph_rewrite`'s operands-first order, and the gradient of a node is
//! complete only once every user of it has contributed (contributions of
//! several users are summed). The reverse of [`UOp::toposort`] (operands
//! before users, iterative) is such an order; no recursion is involved.

use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{tensor_shape, IdMap, IdSet};
use crate::uop::{Arg, ConstValue, Op, ReduceOp, Shape, Srcs, UOp};
use crate::DType;
use smallvec::SmallVec;
use std::f64::consts::{LN_2, PI};
use std::sync::{Arc, OnceLock};

/// Why gradients cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("gradient: {message}")]
pub struct GradientError {
    /// What is wrong, naming the op or the argument and the dtypes or
    /// shapes involved.
    pub message: String,
}

impl GradientError {
    fn new(message: impl Into<String>) -> GradientError {
        GradientError {
            message: message.into(),
        }
    }
}

/// The gradients of `sum(root * seed)` with respect to each of `targets`
/// (see the module docs). `seed` must have the root's shape and dtype; the
/// root and every target must be float tensors.
pub fn gradients(
    root: &Arc<UOp>,
    seed: &Arc<UOp>,
    targets: &[Arc<UOp>],
) -> Result<Vec<Arc<UOp>>, GradientError> {
    let root_shape = tensor_shape(root).map_err(|e| GradientError::new(e.to_string()))?;
    if !root.dtype().is_float() {
        return Err(GradientError::new(format!(
            "the output {} is {}: only float outputs can be differentiated",
            root.op().dump_name(),
            root.dtype()
        )));
    }
    let seed_shape = tensor_shape(seed).map_err(|e| GradientError::new(e.to_string()))?;
    if seed_shape != root_shape || seed.dtype() != root.dtype() {
        return Err(GradientError::new(format!(
            "the seed is {:?} {} but the output is {:?} {}",
            seed_shape.as_slice(),
            seed.dtype(),
            root_shape.as_slice(),
            root.dtype()
        )));
    }
    let mut target_ids = IdSet::default();
    for (i, t) in targets.iter().map(view_base).enumerate() {
        tensor_shape(t).map_err(|e| GradientError::new(e.to_string()))?;
        if !t.dtype().is_float() {
            return Err(GradientError::new(format!(
                "target {i} ({}) is {}: only float tensors have gradients",
                t.op().dump_name(),
                t.dtype()
            )));
        }
        target_ids.insert(t.id());
    }

    let topo = root.toposort();
    let mut on_path = IdSet::default();
    for n in &topo {
        let carries = n.dtype().is_float() && !matches!(n.op(), Op::Detach | Op::Bitcast);
        if target_ids.contains(&n.id())
            || (carries && n.src().iter().any(|s| on_path.contains(&s.id())))
        {
            on_path.insert(n.id());
        }
    }

    let rules = derivative_rules();
    let mut grads: IdMap<Arc<UOp>> = IdMap::default();
    grads.insert(root.id(), seed.clone());
    for n in topo.iter().rev() {
        if !on_path.contains(&n.id()) || !n.src().iter().any(|s| on_path.contains(&s.id())) {
            continue;
        }
        let Some(grad) = grads.get(&n.id()).cloned() else {
            continue;
        };
        let mut ctx = Upstream {
            grad,
            shape: shape(n),
        };
        let per_operand = rules
            .rewrite(n, &mut ctx)
            .map_err(|e| GradientError::new(e.to_string()))?
            .ok_or_else(|| {
                GradientError::new(format!(
                    "{} ({}) has no derivative rule",
                    n.op().dump_name(),
                    n.dtype()
                ))
            })?;
        for (s, g) in n.src().iter().zip(per_operand.src()) {
            if is_none(g) || !on_path.contains(&s.id()) {
                continue;
            }
            let sum = match grads.get(&s.id()) {
                Some(prev) => prev.add(g),
                None => g.clone(),
            };
            grads.insert(s.id(), sum);
        }
    }
    Ok(targets
        .iter()
        .map(|t| {
            let base = view_base(t);
            match grads.get(&base.id()) {
                Some(g) => g.reshaped(&shape(base), &shape(t)),
                None => UOp::broadcast_const(
                    t.dtype(),
                    ConstValue::zero(t.dtype().scalar_type()),
                    &shape(t),
                ),
            }
        })
        .collect())
}

/// The node whose gradient is a target's: the target without its
/// `RESHAPE`s (see the module docs).
pub fn view_base(target: &Arc<UOp>) -> &Arc<UOp> {
    let mut n = target;
    while n.op() == Op::Reshape {
        n = n.s(0);
    }
    n
}

/// The shape of a node of a checked graph (cached on the node by
/// [`tensor_shape`], read without walking the graph again).
fn shape(n: &Arc<UOp>) -> Shape {
    match n.cache().shape.get() {
        Some(Ok(Some(s))) => s.clone(),
        _ => tensor_shape(n).unwrap_or_default(),
    }
}

/// The rules' context: the gradient flowing into the node and the node's
/// shape.
pub struct Upstream {
    grad: Arc<UOp>,
    shape: Shape,
}

impl Upstream {
    /// The incoming gradient.
    fn g(&self) -> Arc<UOp> {
        self.grad.clone()
    }

    /// `v` in the gradient's dtype, broadcast to the node's shape.
    fn c(&self, v: f64) -> Arc<UOp> {
        UOp::broadcast_const(self.grad.dtype(), ConstValue::Float(v), &self.shape)
    }

    /// `g * x`.
    fn times(&self, x: &Arc<UOp>) -> Arc<UOp> {
        self.grad.mul(x)
    }

    /// `g * v` for a constant `v`.
    fn scaled(&self, v: f64) -> Arc<UOp> {
        self.grad.mul(&self.c(v))
    }

    /// `where(cond, g, 0)`.
    fn masked(&self, cond: &Arc<UOp>) -> Arc<UOp> {
        cond.where_(&self.grad, &self.c(0.0))
    }

    /// The rule's result: one gradient per operand (`None`: no gradient).
    fn each<const N: usize>(&self, grads: [Option<Arc<UOp>>; N]) -> Arc<UOp> {
        let srcs: Srcs = grads.into_iter().map(|g| g.unwrap_or_else(none)).collect();
        UOp::sink(srcs)
    }
}

/// The marker of an operand that gets no gradient.
fn none() -> Arc<UOp> {
    UOp::new(Op::Noop, DType::VOID, Srcs::new(), Arg::None)
}

fn is_none(g: &Arc<UOp>) -> bool {
    g.op() == Op::Noop && g.src().is_empty() && g.dtype() == DType::VOID
}

/// `a < b` as a node.
fn lt(a: &Arc<UOp>, b: &Arc<UOp>) -> Arc<UOp> {
    a.bin(Op::CmpLt, b)
}

/// `a == b` as a node.
fn eq(a: &Arc<UOp>, b: &Arc<UOp>) -> Arc<UOp> {
    a.bin(Op::CmpEq, b)
}

/// The derivative rules, one per differentiable primitive (built once).
///
/// Each matches a node whose incoming gradient is `ctx.g()` and returns,
/// through `Upstream::each`, the gradient of each operand:
/// the chain rule applied to the primitive's local derivative, written
/// with the primitive's own operands and result (`n`) so that the
/// backward graph reuses forward values instead of recomputing them.
pub fn derivative_rules() -> &'static PatternMatcher<Upstream> {
    static RULES: OnceLock<PatternMatcher<Upstream>> = OnceLock::new();
    RULES.get_or_init(|| {
        patterns! {
            @context Upstream;
            @name "gradient";
            // d(a+b) = da + db; d(a-b) = da - db.
            Add(_, _) ~> ctx.each([Some(ctx.g()), Some(ctx.g())]),
            Sub(_, _) ~> ctx.each([Some(ctx.g()), Some(ctx.g().un(Op::Neg))]),
            Neg(_) ~> ctx.each([Some(ctx.g().un(Op::Neg))]),
            // d(ab) = b da + a db.
            Mul(a, b) ~> ctx.each([Some(ctx.times(b)), Some(ctx.times(a))]),
            // d(a/b) = da / b - (a/b) db / b.
            n @ Fdiv(_, b) ~> ctx.each([
                Some(ctx.g().bin(Op::Fdiv, b)),
                Some(ctx.times(n).bin(Op::Fdiv, b).un(Op::Neg)),
            ]),
            // a*b + c.
            MulAcc(a, b, _) ~> ctx.each([Some(ctx.times(b)), Some(ctx.times(a)), Some(ctx.g())]),
            // max/min: the gradient goes to the larger (smaller) operand,
            // split in halves on ties (as tinygrad and PyTorch do).
            Max(a, b) ~> ctx.each([Some(ctx.tie_split(b, a)), Some(ctx.tie_split(a, b))]),
            Min(a, b) ~> ctx.each([Some(ctx.tie_split(a, b)), Some(ctx.tie_split(b, a))]),
            // a^b: b a^(b-1) da (exact at a = 0 for b ≥ 1), and
            // a^b ln(a) db, taken as 0 where a = 0 (the limit for b > 0).
            n @ Pow(a, b) ~> ctx.pow(n, a, b),
            // C's fmod on floats: a - trunc(a/b) b.
            Mod(a, b) ~> ctx.each([
                Some(ctx.g()),
                Some(ctx.times(&a.bin(Op::Fdiv, b).un(Op::Trunc)).un(Op::Neg)),
            ]),
            n @ Exp(_) ~> ctx.each([Some(ctx.times(n))]),
            n @ Exp2(_) ~> ctx.each([Some(ctx.times(n).mul(&ctx.c(LN_2)))]),
            Log(a) ~> ctx.each([Some(ctx.g().bin(Op::Fdiv, a))]),
            Log2(a) ~> ctx.each([Some(ctx.g().bin(Op::Fdiv, &a.mul(&ctx.c(LN_2))))]),
            // sqrt: 1 / (2 sqrt a); rsqrt: -rsqrt(a) / (2a); 1/a: -1/a².
            n @ Sqrt(_) ~> ctx.each([Some(ctx.scaled(0.5).bin(Op::Fdiv, n))]),
            n @ Rsqrt(a) ~> ctx.each([Some(ctx.times(n).mul(&ctx.c(-0.5)).bin(Op::Fdiv, a))]),
            n @ Recip(_) ~> ctx.each([Some(ctx.times(&n.mul(n)).un(Op::Neg))]),
            Sin(a) ~> ctx.each([Some(ctx.times(&a.un(Op::Cos)))]),
            Cos(a) ~> ctx.each([Some(ctx.times(&a.un(Op::Sin)).un(Op::Neg))]),
            // tan' = 1 + tan², tanh' = 1 - tanh².
            n @ Tan(_) ~> ctx.each([Some(ctx.times(&ctx.c(1.0).add(&n.mul(n))))]),
            n @ Tanh(_) ~> ctx.each([Some(ctx.times(&ctx.c(1.0).sub(&n.mul(n))))]),
            // erf' = 2/√π e^(-a²).
            Erf(a) ~> ctx.each([Some(ctx.times(&a.mul(a).un(Op::Neg).un(Op::Exp)).mul(&ctx.c(2.0 / PI.sqrt())))]),
            // |a|' = sign(a), 0 at 0.
            Abs(a) ~> ctx.each([Some(
                lt(&ctx.c(0.0), a).where_(&ctx.g(), &ctx.masked(&lt(a, &ctx.c(0.0))).un(Op::Neg)),
            )]),
            // Rounding is piecewise constant.
            for op in unary [Floor, Ceil, Round, Trunc] {
                op(_) ~> ctx.each([Some(ctx.c(0.0))]),
            },
            // The condition gets none; each branch where it was chosen.
            Where(c, _, _) ~> ctx.each([
                None,
                Some(ctx.masked(c)),
                Some(c.where_(&ctx.c(0.0), &ctx.g())),
            ]),
            // A float-to-float conversion converts the gradient back.
            Cast(x) ~> ctx.each([Some(ctx.g().cast(x.dtype()))]),
            Contiguous(_) ~> ctx.each([Some(ctx.g())]),
            Copy(_) ~> ctx.each([Some(ctx.g())]),
            Noop(_) ~> ctx.each([Some(ctx.g())]),
            n @ Reshape(x) ~> ctx.each([Some(ctx.g().reshaped(&shape(n), &shape(x)))]),
            n @ Permute(_) => ctx.permute(n),
            n @ Expand(x) ~> ctx.expand(n, x),
            n @ Pad(x) => ctx.pad(n, x),
            n @ Shrink(x) => ctx.shrink(n, x),
            n @ Flip(_) ~> ctx.each([Some(ctx.g().moved(Op::Flip, n.arg().clone()))]),
            n @ ReduceAxis(x) => ctx.reduce(n, x),
        }
    })
}

impl Upstream {
    /// The gradient of `max(a, b)` to its operand `a` where `a` is the
    /// larger one (call with the operands swapped for `b`, and with the
    /// order reversed for `min`): all of it where `other < a`, half of it
    /// on a tie.
    fn tie_split(&self, other: &Arc<UOp>, a: &Arc<UOp>) -> Arc<UOp> {
        let half = self.masked(&eq(a, other)).mul(&self.c(0.5));
        lt(other, a).where_(&self.grad, &half)
    }

    fn pow(&self, n: &Arc<UOp>, a: &Arc<UOp>, b: &Arc<UOp>) -> Arc<UOp> {
        let to_a = self.times(b).mul(&a.bin(Op::Pow, &b.sub(&self.c(1.0))));
        let log_term = n.mul(&a.un(Op::Log));
        let to_b = eq(a, &self.c(0.0)).where_(&self.c(0.0), &self.times(&log_term));
        self.each([Some(to_a), Some(to_b)])
    }

    /// PERMUTE: the gradient permuted back by the inverse permutation.
    fn permute(&self, n: &Arc<UOp>) -> Option<Arc<UOp>> {
        let Arg::Axes(perm) = n.arg() else {
            return None;
        };
        let mut inverse: SmallVec<[usize; 4]> = SmallVec::from_elem(0, perm.len());
        for (i, &p) in perm.iter().enumerate() {
            inverse[p] = i;
        }
        Some(self.each([Some(self.grad.moved(Op::Permute, Arg::Axes(inverse)))]))
    }

    /// EXPAND: the gradient summed over the broadcast axes (kept as 1, so
    /// the result has the operand's shape). A half-float gradient is summed
    /// in its accumulator type (f32) and rounded once, as the forward `sum`
    /// is: summed in f16 or bf16, a broadcast weight's gradient loses a bit
    /// of precision per term, and more the longer the axis.
    fn expand(&self, n: &Arc<UOp>, x: &Arc<UOp>) -> Arc<UOp> {
        let (from, to) = (shape(x), shape(n));
        let axes: SmallVec<[usize; 4]> = (0..to.len()).filter(|&i| from[i] != to[i]).collect();
        let dt = self.grad.dtype();
        let acc = DType::from(dt.scalar_type().sum_accumulator());
        let summed = if axes.is_empty() || acc == dt {
            self.grad.reduced(ReduceOp::Add, &axes)
        } else {
            self.grad.cast(acc).reduced(ReduceOp::Add, &axes).cast(dt)
        };
        self.each([Some(summed)])
    }

    /// PAD: the gradient shrunk back to the operand's window.
    fn pad(&self, n: &Arc<UOp>, x: &Arc<UOp>) -> Option<Arc<UOp>> {
        let Arg::Pairs(pairs) = n.arg() else {
            return None;
        };
        let window = pairs
            .iter()
            .zip(shape(x).iter())
            .map(|(&(before, _), &d)| (before, before + d as i64))
            .collect();
        Some(self.each([Some(self.grad.moved(Op::Shrink, Arg::Pairs(window)))]))
    }

    /// SHRINK: the gradient padded with zeros back to the operand's shape.
    fn shrink(&self, n: &Arc<UOp>, x: &Arc<UOp>) -> Option<Arc<UOp>> {
        let Arg::Pairs(pairs) = n.arg() else {
            return None;
        };
        let margins = pairs
            .iter()
            .zip(shape(x).iter())
            .map(|(&(begin, end), &d)| (begin, d as i64 - end))
            .collect();
        Some(self.each([Some(self.grad.moved(Op::Pad, Arg::Pairs(margins)))]))
    }

    /// REDUCE_AXIS: a sum broadcasts the gradient back; a max or min sends
    /// it to the elements equal to the result, split evenly among ties
    /// (tinygrad's rule); a product sends each factor `g` times the
    /// product of the other factors (see `Upstream::product`).
    fn reduce(&self, n: &Arc<UOp>, x: &Arc<UOp>) -> Option<Arc<UOp>> {
        let Arg::ReduceAxis(op, axes) = n.arg() else {
            return None;
        };
        let (small, full) = (shape(n), shape(x));
        let grad = match op {
            ReduceOp::Add => self.grad.expanded(&small, &full),
            ReduceOp::Mul => self.product(n, x, axes, &small, &full),
            ReduceOp::Max | ReduceOp::Min => {
                let hit = eq(x, &n.expanded(&small, &full)).cast(x.dtype());
                let count = hit.reduced(ReduceOp::Add, axes);
                let share = self.grad.bin(Op::Fdiv, &count);
                hit.mul(&share.expanded(&small, &full))
            }
        };
        Some(self.each([Some(grad)]))
    }

    /// The gradient of the product `n` of `x` over `axes` to each factor:
    /// `g` times the product of the other factors. Where no factor is 0
    /// that is `g · n / x`. Dividing alone gives `0 / 0 = NaN` at a zero
    /// factor, so zeros are counted: where there is exactly one, its
    /// factor gets `g` times the product of the non-zero factors and the
    /// others 0 (their products include the zero); with two or more,
    /// every product of the others includes a zero and all get 0.
    fn product(
        &self,
        n: &Arc<UOp>,
        x: &Arc<UOp>,
        axes: &[usize],
        small: &[usize],
        full: &[usize],
    ) -> Arc<UOp> {
        let dt = x.dtype();
        let c = |v: f64, shape: &[usize]| UOp::broadcast_const(dt, ConstValue::Float(v), shape);
        let zero = eq(x, &c(0.0, full));
        // Per product (the reduced shape): the count of zero factors and
        // the product of the non-zero ones.
        let zeros = zero.cast(dt).reduced(ReduceOp::Add, axes);
        let nonzero_product = zero.where_(&c(1.0, full), x).reduced(ReduceOp::Mul, axes);
        let none = eq(&zeros, &c(0.0, small)).expanded(small, full);
        let one = eq(&zeros, &c(1.0, small)).expanded(small, full);
        let no_zero = self.times(n).expanded(small, full).bin(Op::Fdiv, x);
        let at_zero = self.times(&nonzero_product).expanded(small, full);
        let one_zero = one.where_(&zero.where_(&at_zero, &c(0.0, full)), &c(0.0, full));
        none.where_(&no_zero, &one_zero)
    }
}
