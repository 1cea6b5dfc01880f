//! Helpers shared by the schedule tests: build tensor-level graphs by hand,
//! schedule them and run the kernels with the interpreter.

use morok_core::interp::run_schedule;
use morok_core::uop::tensor_shape;
use morok_core::{new_buffer_id, Arg, ConstValue, DType, Op, ReduceOp, UOp};
use morok_core::{schedule, Schedule};
use smallvec::{smallvec, SmallVec};
use std::collections::HashMap;
use std::sync::Arc;

pub type T = Arc<UOp>;

/// Input buffers of a test graph and their contents.
#[derive(Default)]
pub struct Inputs {
    pub data: HashMap<u64, Vec<f64>>,
}

impl Inputs {
    /// A new f32 input of `shape` holding `data` (row-major).
    pub fn f32(&mut self, shape: &[usize], data: Vec<f64>) -> T {
        self.typed(DType::F32, shape, data)
    }

    /// A new input of `dtype` and `shape` holding `data`.
    pub fn typed(&mut self, dtype: DType, shape: &[usize], data: Vec<f64>) -> T {
        assert_eq!(data.len(), shape.iter().product::<usize>());
        let id = new_buffer_id();
        let buf = UOp::new(
            Op::Buffer,
            dtype,
            SmallVec::new(),
            Arg::Buffer {
                id,
                size: data.len(),
            },
        );
        self.data.insert(id, data);
        reshape(&buf, shape)
    }

    /// Schedules `roots`, runs the schedule, returns it and each root's values.
    pub fn run(&self, roots: &[T]) -> (Schedule, Vec<Vec<f64>>) {
        let s = schedule(roots).unwrap_or_else(|e| panic!("schedule failed: {e}"));
        let vals = self.run_schedule(&s);
        (s, vals)
    }

    /// The reference evaluator's values of `root` on these inputs.
    pub fn reference(&self, root: &T) -> Vec<f64> {
        let lookup = |id: u64| self.data.get(&id).cloned();
        morok_core::reference::evaluate(root, &lookup)
            .unwrap_or_else(|e| panic!("reference failed: {e}"))
            .data
    }

    /// Schedules and runs `roots` and checks each against the reference
    /// evaluator; returns the schedule.
    #[track_caller]
    pub fn run_checked(&self, roots: &[T]) -> Schedule {
        let (s, vals) = self.run(roots);
        for (root, got) in roots.iter().zip(&vals) {
            assert_close(got, &self.reference(root));
        }
        s
    }

    /// Runs an existing schedule; returns each root's values.
    pub fn run_schedule(&self, s: &Schedule) -> Vec<Vec<f64>> {
        let out = run_schedule(s, &self.data).unwrap_or_else(|e| panic!("interpreter failed: {e}"));
        s.outputs
            .iter()
            .map(|o| out[&buffer_id(o)].clone())
            .collect()
    }
}

/// The id of the BUFFER under a tensor-level output node.
pub fn buffer_id(o: &T) -> u64 {
    o.toposort()
        .iter()
        .find_map(|n| match n.arg() {
            Arg::Buffer { id, .. } => Some(*id),
            _ => None,
        })
        .expect("output has a buffer")
}

pub fn shape(x: &T) -> Vec<usize> {
    tensor_shape(x).expect("well-shaped").to_vec()
}

fn mv(op: Op, x: &T, arg: Arg) -> T {
    UOp::new(op, x.dtype(), smallvec![x.clone()], arg)
}

pub fn reshape(x: &T, s: &[usize]) -> T {
    mv(Op::Reshape, x, Arg::Shape(s.into()))
}
pub fn permute(x: &T, p: &[usize]) -> T {
    mv(Op::Permute, x, Arg::Axes(p.into()))
}
pub fn expand(x: &T, s: &[usize]) -> T {
    mv(Op::Expand, x, Arg::Shape(s.into()))
}
pub fn pad(x: &T, p: &[(i64, i64)]) -> T {
    mv(Op::Pad, x, Arg::Pairs(p.into()))
}
pub fn shrink(x: &T, p: &[(i64, i64)]) -> T {
    mv(Op::Shrink, x, Arg::Pairs(p.into()))
}
pub fn flip(x: &T, a: &[usize]) -> T {
    mv(Op::Flip, x, Arg::Axes(a.into()))
}
pub fn contiguous(x: &T) -> T {
    UOp::new(Op::Contiguous, x.dtype(), smallvec![x.clone()], Arg::None)
}
pub fn reduce(x: &T, op: ReduceOp, axes: &[usize]) -> T {
    mv(Op::ReduceAxis, x, Arg::ReduceAxis(op, axes.into()))
}
pub fn sum(x: &T, axes: &[usize]) -> T {
    reduce(x, ReduceOp::Add, axes)
}
pub fn max(x: &T, axes: &[usize]) -> T {
    reduce(x, ReduceOp::Max, axes)
}

/// Broadcasts `x` (same rank, size-1 axes) to `s`.
pub fn bcast(x: &T, s: &[usize]) -> T {
    if shape(x) == s {
        x.clone()
    } else {
        expand(x, s)
    }
}

/// A scalar constant broadcast to `s` the tensor way: CONST → RESHAPE → EXPAND.
pub fn full(v: f64, dtype: DType, s: &[usize]) -> T {
    let c = UOp::const_(dtype, ConstValue::Float(v));
    let ones: Vec<usize> = vec![1; s.len()];
    bcast(&reshape(&c, &ones), s)
}

pub fn bin(op: Op, a: &T, b: &T) -> T {
    a.bin(op, b)
}
pub fn add(a: &T, b: &T) -> T {
    a.add(b)
}
pub fn mul(a: &T, b: &T) -> T {
    a.mul(b)
}
pub fn sub(a: &T, b: &T) -> T {
    a.bin(Op::Sub, b)
}
pub fn div(a: &T, b: &T) -> T {
    a.bin(Op::Fdiv, b)
}

/// `a @ b` for 2-D operands: expand to [m, k, n], multiply, sum axis 1, reshape.
pub fn matmul(a: &T, b: &T) -> T {
    let (sa, sb) = (shape(a), shape(b));
    let (m, k, n) = (sa[0], sa[1], sb[1]);
    let a3 = expand(&reshape(a, &[m, k, 1]), &[m, k, n]);
    let b3 = expand(&reshape(b, &[1, k, n]), &[m, k, n]);
    reshape(&sum(&mul(&a3, &b3), &[1]), &[m, n])
}

/// Softmax over the last axis of a 2-D tensor.
pub fn softmax(x: &T) -> T {
    let s = shape(x);
    let m = bcast(&max(x, &[1]), &s);
    let e = sub(x, &m).un(Op::Exp);
    let z = bcast(&sum(&e, &[1]), &s);
    div(&e, &z)
}

/// The softmax of each length-`cols` row of `d`, in f64.
pub fn softmax_rows(d: &[f64], cols: usize) -> Vec<f64> {
    let mut want = Vec::new();
    for row in d.chunks(cols) {
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = row.iter().map(|v| (v - m).exp()).sum();
        want.extend(row.iter().map(|v| (v - m).exp() / z));
    }
    want
}

/// Inclusive cumulative sum of a 1-D tensor the way tinygrad builds it:
/// pad `n-1` zeros in front, take all length-`n` windows with the
/// repeat/reshape/shrink trick (an EXPAND of the padded row), sum each window.
pub fn cumsum(x: &T) -> T {
    let n = shape(x)[0];
    let l = 2 * n - 1;
    let padded = pad(x, &[(n as i64 - 1, 0)]);
    let rows = expand(&reshape(&padded, &[1, l]), &[n + 1, l]);
    let flat = reshape(&rows, &[(n + 1) * l]);
    let win = shrink(&flat, &[(0, (n * (l + 1)) as i64)]);
    let win = shrink(&reshape(&win, &[n, l + 1]), &[(0, n as i64), (0, n as i64)]);
    // win[k, o] = padded[k + o]; sum over k gives cumsum[o].
    reshape(&sum(&win, &[0]), &[n])
}

/// `arange(n)` as a float tensor: cumsum of ones, minus one.
pub fn arange(n: usize, dtype: DType) -> T {
    add(&cumsum(&full(1.0, dtype, &[n])), &full(-1.0, dtype, &[n]))
}

/// Counts AST nodes of `op` in every kernel of a schedule.
pub fn count_ops(s: &Schedule, op: Op) -> usize {
    s.items
        .iter()
        .map(|i| i.ast.toposort().iter().filter(|n| n.op() == op).count())
        .sum()
}

/// Asserts two float vectors are close.
#[track_caller]
pub fn assert_close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "length: got {got:?}, want {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-5 * w.abs().max(1.0);
        assert!(
            (g - w).abs() <= tol,
            "element {i}: got {g}, want {w}\ngot  {got:?}\nwant {want:?}"
        );
    }
}

/// Deterministic pseudo-random test data in [-2, 2).
pub fn data(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = ((s >> 40) as f64 / (1u64 << 24) as f64) * 4.0 - 2.0;
            (v as f32) as f64
        })
        .collect()
}
