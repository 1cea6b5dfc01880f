//! The generator's op choices: one random op on a random node, as a
//! [`Step`] whose arguments fit the node's shape and dtype.

use super::{broadcast, step, Gen};
use crate::data::{Domain, DTYPES};
use crate::program::Step;
use morok::DType;
use serde_json::{json, Value};

impl Gen {
    /// One random op on a random node, or `None` when the op drawn does
    /// not apply to that node.
    pub(super) fn op(&mut self) -> Option<Step> {
        let x = self.pick();
        let t = self.nodes[x].clone();
        let shape = t.shape().to_vec();
        let rank = shape.len();
        let numel = t.numel();
        let dtype = t.dtype();
        let float = dtype.is_float();
        Some(match self.below(36) {
            0 if numel > 0 => step("reshape", vec![x], json!(self.factor(numel))),
            1 if rank >= 2 => {
                let mut perm: Vec<i64> = (0..rank as i64).collect();
                for i in (1..rank).rev() {
                    let j = self.below(i + 1);
                    perm.swap(i, j);
                }
                step("permute", vec![x], json!(perm))
            }
            2 if rank >= 2 => {
                let (a, b) = (self.axis(rank), self.axis(rank));
                step("transpose", vec![x], json!([a, b]))
            }
            3 => {
                let at = self.below(rank + 1);
                let mut target: Vec<i64> = vec![-1; rank + 1];
                target[at] = self.rng.int(2, 4);
                step("expand_new", vec![x], json!([at, target]))
            }
            4 => {
                let mut target = shape.clone();
                for d in target.iter_mut() {
                    if *d == 1 && self.chance(0.6) {
                        *d = self.rng.int(2, 4) as usize;
                    }
                }
                if self.chance(0.5) {
                    target.insert(0, self.rng.int(1, 3) as usize);
                }
                step("broadcast_to", vec![x], json!(target))
            }
            5 if rank >= 1 => {
                let pads: Vec<[i64; 2]> = shape
                    .iter()
                    .map(|&d| {
                        let lo = if d > 1 { -1 } else { 0 };
                        let a = self.rng.int(lo, 2);
                        let lo = if d as i64 + a.min(0) > 1 { -1 } else { 0 };
                        [a, self.rng.int(lo, 2)]
                    })
                    .collect();
                let v = self.rng.int(-2, 2);
                let v = if dtype.is_bool() {
                    json!((v > 0) as i64)
                } else if float {
                    json!(v as f64 * 0.75)
                } else {
                    json!(v)
                };
                step("pad", vec![x], json!([pads, v]))
            }
            6 if rank >= 1 => {
                let bounds: Vec<[i64; 2]> = shape
                    .iter()
                    .map(|&d| {
                        let d = d as i64;
                        if d == 0 {
                            return [0, 0];
                        }
                        let b = self.rng.int(0, d - 1);
                        // Sometimes an empty range: a size-0 axis.
                        let e = if self.chance(0.05) {
                            b
                        } else {
                            self.rng.int(b + 1, d)
                        };
                        [b, e]
                    })
                    .collect();
                step("shrink", vec![x], json!(bounds))
            }
            7 | 8 if rank >= 1 => {
                let k = self.rng.int(1, rank as i64) as usize;
                let slices: Vec<Value> = (0..k).map(|_| self.slice()).collect();
                step("slice", vec![x], json!(slices))
            }
            9 if rank >= 1 => {
                let axes: Vec<i64> = (0..rank as i64).filter(|_| self.chance(0.5)).collect();
                step("flip", vec![x], json!(axes))
            }
            10 => match shape.iter().position(|&d| d == 1) {
                Some(a) => step("squeeze", vec![x], json!(a)),
                None => step("unsqueeze", vec![x], json!(self.below(rank + 1))),
            },
            11 if rank >= 2 => {
                let s = self.below(rank);
                let e = s + self.below(rank - s);
                step("flatten", vec![x], json!([s, e]))
            }
            12 => {
                let extra = self.below(2);
                let reps: Vec<i64> = (0..rank + extra).map(|_| self.rng.int(1, 3)).collect();
                step("repeat", vec![x], json!(reps))
            }
            13 if rank >= 1 => {
                let axis = self.below(rank);
                let mut parts = vec![x];
                for i in 0..self.nodes.len() {
                    let s = self.nodes[i].shape();
                    let fits = s.len() == rank
                        && (0..rank).all(|a| a == axis || s[a] == shape[a])
                        && self.chance(0.5);
                    if fits && parts.len() < 3 {
                        parts.push(i);
                    }
                }
                if parts.len() == 1 {
                    parts.push(x);
                }
                step("cat", parts, json!(axis))
            }
            14 => {
                let mut parts = vec![x];
                for i in 0..self.nodes.len() {
                    if self.nodes[i].shape() == shape.as_slice() && self.chance(0.5) {
                        parts.push(i);
                    }
                }
                if parts.len() == 1 {
                    parts.push(x);
                }
                step("stack", parts, json!(self.below(rank + 1)))
            }
            15 if shape.iter().any(|&d| d >= 2) => {
                let axes: Vec<usize> = (0..rank).filter(|&a| shape[a] >= 2).collect();
                let axis = axes[self.below(axes.len())];
                let len = shape[axis];
                if self.chance(0.5) {
                    let chunks = self.rng.int(2, len as i64) as usize;
                    let parts = len.div_ceil(len.div_ceil(chunks));
                    step("chunk", vec![x], json!([chunks, axis, self.below(parts)]))
                } else {
                    let cut = self.rng.int(1, len as i64 - 1) as usize;
                    step(
                        "split",
                        vec![x],
                        json!([[cut, len - cut], axis, self.below(2)]),
                    )
                }
            }
            16..=18 => step(self.unary(dtype), vec![x], Value::Null),
            19..=22 => {
                let (kind, nonzero) = self.binary_kind(dtype);
                let (y, arg) = self.other(x, nonzero);
                step(kind, [x].into_iter().chain(y).collect(), arg)
            }
            23 => return self.where_(x),
            24 if !dtype.is_bool() => {
                if float {
                    let lo = self.rng.int(-4, 1) as f64 * 0.5;
                    let hi = lo + self.rng.int(0, 4) as f64 * 0.5;
                    step("clamp", vec![x], json!([lo, hi]))
                } else {
                    let lo = self.rng.int(-5, 1);
                    let hi = lo + self.rng.int(0, 6);
                    step("clamp", vec![x], json!([lo, hi]))
                }
            }
            25 => {
                let to = if self.chance(0.5) {
                    [DType::F32, DType::I32, DType::BOOL][self.below(3)]
                } else {
                    DTYPES[self.below(DTYPES.len())]
                };
                step("cast", vec![x], json!(to.to_string()))
            }
            26..=28 if rank >= 1 => self.reduce(x),
            29 if rank >= 1 && !dtype.is_bool() => return self.matmul(x),
            30 if rank >= 1 && float => {
                let op = if self.chance(0.5) {
                    "softmax"
                } else {
                    "log_softmax"
                };
                step(op, vec![x], json!(self.axis(rank)))
            }
            31..=35 if rank >= 1 => return self.indexing(x),
            _ => return None,
        })
    }

    /// A slice of one axis: `[start, end, step]`, start and end often
    /// left out, negative steps too.
    fn slice(&mut self) -> Value {
        let st = [-3, -2, -1, 1, 2, 3][self.below(6)];
        let start = if self.chance(0.4) {
            json!(self.rng.int(-4, 4))
        } else {
            Value::Null
        };
        let end = if self.chance(0.3) {
            json!(self.rng.int(-4, 5))
        } else {
            Value::Null
        };
        json!([start, end, st])
    }

    /// `cond.where_(x, y)` (or `(y, x)`) with a condition that broadcasts
    /// to `x`'s shape: a bool node, `x` itself, or `x > 0`.
    fn where_(&mut self, x: usize) -> Option<Step> {
        let shape = self.nodes[x].shape().to_vec();
        let dtype = self.nodes[x].dtype();
        let conds: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                let c = &self.nodes[i];
                c.dtype().is_bool()
                    && broadcast(&shape, c.shape()).as_deref() == Some(shape.as_slice())
            })
            .collect();
        let cond = match conds.len() {
            k if k > 0 && self.chance(0.7) => conds[self.below(k)],
            _ if dtype.is_bool() => x,
            _ => self.push(step("gt0", vec![x], Value::Null))?,
        };
        let (y, scalar) = self.other(x, false);
        let swap = self.chance(0.5);
        let src = [cond, x].into_iter().chain(y).collect();
        Some(step("where", src, json!({"scalar": scalar, "swap": swap})))
    }

    /// A random shape of `numel` elements with up to 4 axes, one of them
    /// sometimes given as `-1`.
    fn factor(&mut self, numel: usize) -> Vec<i64> {
        let rank = self.rng.int(1, 4) as usize;
        let mut dims = Vec::with_capacity(rank);
        let mut rest = numel;
        for _ in 1..rank {
            let divs: Vec<usize> = (1..=rest.min(6))
                .filter(|d| rest.is_multiple_of(*d))
                .collect();
            let d = divs[self.below(divs.len())];
            dims.push(d as i64);
            rest /= d;
        }
        dims.push(rest as i64);
        for i in (1..dims.len()).rev() {
            let j = self.below(i + 1);
            dims.swap(i, j);
        }
        if self.chance(0.3) {
            let i = self.below(dims.len());
            dims[i] = -1;
        }
        dims
    }

    /// A unary op for `dtype` (logarithms, roots and reciprocals of floats
    /// see `|x| + 0.5`).
    fn unary(&mut self, dtype: DType) -> &'static str {
        let kinds: &[&str] = if dtype.is_bool() {
            &["logical_not"]
        } else if !dtype.is_float() {
            &["neg", "abs", "sign", "square"]
        } else {
            &[
                "neg",
                "abs",
                "exp",
                "safe_log",
                "safe_sqrt",
                "safe_reciprocal",
                "tanh",
                "sigmoid",
                "relu",
                "sin",
                "floor",
                "round",
                "square",
                "gelu",
            ]
        };
        kinds[self.below(kinds.len())]
    }

    /// A binary op for operands of `dtype`, and whether its second
    /// operand must be non-zero.
    fn binary_kind(&mut self, dtype: DType) -> (&'static str, bool) {
        let kinds: &[&str] = if dtype.is_bool() {
            &[
                "logical_and",
                "logical_or",
                "logical_xor",
                "eq",
                "ne",
                "add",
                "mul",
            ]
        } else if dtype.is_float() {
            &[
                "add", "sub", "mul", "div", "maximum", "minimum", "lt", "eq", "ge", "add", "mul",
            ]
        } else {
            &[
                "add",
                "sub",
                "mul",
                "maximum",
                "minimum",
                "floor_div",
                "remainder",
                "lt",
                "ne",
            ]
        };
        let k = kinds[self.below(kinds.len())];
        (k, matches!(k, "div" | "floor_div" | "remainder"))
    }

    /// A reduction of node `x` over random axes (or all of them).
    fn reduce(&mut self, x: usize) -> Step {
        let t = self.nodes[x].clone();
        let shape = t.shape().to_vec();
        let rank = shape.len();
        let axes: Option<Vec<i64>> = if self.chance(0.2) {
            None
        } else {
            let mut a: Vec<i64> = (0..rank as i64).filter(|_| self.chance(0.4)).collect();
            if a.is_empty() {
                a.push(self.below(rank) as i64);
            }
            if self.chance(0.3) {
                a.iter_mut().for_each(|v| *v -= rank as i64);
            }
            Some(a)
        };
        let keep = self.chance(0.5);
        let reduced: usize = match &axes {
            None => shape.iter().product(),
            Some(a) => a
                .iter()
                .map(|&v| shape[v.rem_euclid(rank as i64) as usize])
                .product(),
        };
        let arg = json!([axes, keep]);
        if t.dtype().is_bool() {
            let op = ["any", "all", "sum"][self.below(3)];
            return step(op, vec![x], arg);
        }
        let float = t.dtype().is_float();
        match self.below(10) {
            2 => step("max", vec![x], arg),
            3 => step("min", vec![x], arg),
            4 => step("mean", vec![x], arg),
            5 if reduced <= 8 => step("prod", vec![x], arg),
            6 | 9 if t.numel() > 0 => {
                let a = if self.chance(0.3) {
                    Value::Null
                } else {
                    json!(self.axis(rank))
                };
                let op = if self.chance(0.5) { "argmax" } else { "argmin" };
                step(op, vec![x], a)
            }
            7 => step("cumsum", vec![x], json!(self.axis(rank))),
            8 if float => step("logsumexp", vec![x], arg),
            _ => step("sum", vec![x], arg),
        }
    }

    /// `x @ y` with `y`: `x` transposed, a node of fitting shape, or a
    /// fresh input.
    fn matmul(&mut self, x: usize) -> Option<Step> {
        let t = self.nodes[x].clone();
        let shape = t.shape().to_vec();
        let k = shape[shape.len() - 1];
        if shape.len() >= 2 && self.chance(0.3) {
            return Some(step("matmul_t", vec![x], Value::Null));
        }
        let fits: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                let s = self.nodes[i].shape();
                self.nodes[i].dtype() == t.dtype()
                    && match s.len() {
                        0 => false,
                        1 => s[0] == k,
                        r => s[r - 2] == k && r <= 2,
                    }
            })
            .collect();
        let y = if !fits.is_empty() && self.chance(0.5) {
            fits[self.below(fits.len())]
        } else {
            let cols = self.rng.int(1, 5) as usize;
            self.fresh(t.dtype(), &[k, cols], Domain::Any)?
        };
        Some(step("matmul", vec![x, y], Value::Null))
    }

    /// Indexing of node `x` by positions held in tensors: gather,
    /// index_select, scatter, scatter_add, or `index` with an integer, a
    /// slice and an index tensor. Positions are in range, except that
    /// gather and index_select sometimes get ones past the end (they read
    /// 0 there).
    fn indexing(&mut self, x: usize) -> Option<Step> {
        let shape = self.nodes[x].shape().to_vec();
        let rank = shape.len();
        let dim = self.below(rank);
        let len = shape[dim] as i64;
        let hi = if len == 0 { 0 } else { len - 1 };
        let neg = if self.chance(0.3) { -len } else { 0 };
        let over = if self.chance(0.1) { 2 } else { 0 };
        match self.below(5) {
            0 => {
                let mut ishape = shape.clone();
                ishape[dim] = self.rng.int(1, 4) as usize;
                for (a, d) in ishape.iter_mut().enumerate() {
                    if a != dim && *d > 1 && self.chance(0.3) {
                        *d -= 1;
                    }
                }
                let i = self.index_input(&ishape, neg, hi + over, None)?;
                Some(step("gather", vec![x, i], json!(dim)))
            }
            1 => {
                let n = self.rng.int(1, 5) as usize;
                let i = self.index_input(&[n], neg, hi + over, None)?;
                Some(step("index_select", vec![x, i], json!(dim)))
            }
            k @ (2 | 3) => {
                let mut ishape = shape.clone();
                ishape[dim] = self.rng.int(1, len.max(1)) as usize;
                // Sum (scatter_add) is not defined for bool tensors.
                let scatter = k == 2 || self.nodes[x].dtype().is_bool();
                let unique = scatter.then_some(dim);
                if len == 0 {
                    return None;
                }
                let i = self.index_input(&ishape, 0, hi, unique)?;
                let dtype = self.nodes[x].dtype();
                let s = self.fresh(dtype, &ishape, Domain::Any)?;
                let op = if scatter { "scatter" } else { "scatter_add" };
                Some(step(op, vec![x, i, s], json!(dim)))
            }
            _ => {
                let mut idx = Vec::new();
                let mut src = vec![x];
                for &dim in shape.iter().take(rank) {
                    let d = dim as i64;
                    idx.push(match self.below(3) {
                        0 if d > 0 => json!({"int": self.rng.int(-d, d - 1)}),
                        1 if d > 0 && src.len() == 1 => {
                            let n = self.rng.int(1, 3) as usize;
                            src.push(self.index_input(&[n], -d, d - 1, None)?);
                            json!({"tensor": 1})
                        }
                        _ => json!({"slice": self.slice()}),
                    });
                }
                Some(step("index", src, json!(idx)))
            }
        }
    }
}
