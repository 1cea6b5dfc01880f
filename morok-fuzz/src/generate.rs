//! The random program generator: program `index` of seed `seed` is built
//! from `Rng::new(seed + index)` alone, so any program of a run is made
//! again from its index (runs split into shards add up).
//!
//! A program starts from one or two inputs (any dtype, some of size 0 or
//! 1 on an axis, in random layouts) and applies random ops to random
//! nodes: movement (reshape, permute, expand, pad, shrink, strided and
//! negative slices, flips, repeat, cat, stack, split), elementwise ops
//! with broadcasting and scalars, casts among all dtypes, reductions over
//! any axes, matmul, softmax, and indexing (gather, index_select, scatter,
//! scatter_add, `index` with integers, slices and index tensors). Nodes
//! get several consumers, inputs are used twice, some intermediates are
//! realized on their own, and several outputs are realized together.

use crate::data::{Domain, Layout, Rng, DTYPES, LAYOUTS};
use crate::program::{build, input_arg, Program, Step};
use morok::{DType, Tensor};
use serde_json::{json, Value};

/// Limits of the programs the generator makes.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most ops (steps that are not inputs) of a program.
    pub max_ops: usize,
    /// Largest number of elements of a node; bigger results are dropped.
    pub max_elements: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_ops: 12,
            max_elements: 360,
        }
    }
}

/// A generated program, with the ops the generator made that the
/// `Tensor` API refused (a generated op is valid by construction, so each
/// is a failure of the API or of the generator).
pub struct Generated {
    /// The program.
    pub program: Program,
    /// `"<op text>: <error>"` for each refused op.
    pub refused: Vec<String>,
}

/// Program `index` of the run seeded `seed`.
pub fn generate(seed: u64, index: u64, limits: Limits) -> Generated {
    let mut g = Gen {
        rng: Rng::new(seed.wrapping_add(index)),
        limits,
        program: Program::default(),
        nodes: Vec::new(),
        refused: Vec::new(),
    };
    g.run();
    Generated {
        program: g.program,
        refused: g.refused,
    }
}

/// The broadcast shape of `a` and `b` (NumPy rules), if they broadcast.
pub fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let r = a.len().max(b.len());
    let at = |s: &[usize], i: usize| {
        if i + s.len() >= r {
            s[i + s.len() - r]
        } else {
            1
        }
    };
    (0..r)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y || y == 1 => Some(x),
            (1, y) => Some(y),
            _ => None,
        })
        .collect()
}

/// The builder of one random program.
struct Gen {
    rng: Rng,
    limits: Limits,
    program: Program,
    nodes: Vec<Tensor>,
    refused: Vec<String>,
}

fn step(op: &str, src: Vec<usize>, arg: Value) -> Step {
    Step {
        op: op.into(),
        src,
        arg,
    }
}

impl Gen {
    fn chance(&mut self, p: f64) -> bool {
        self.rng.uniform(0.0, 1.0) < p
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng.int(0, n as i64 - 1) as usize
    }

    fn ops(&self) -> usize {
        (0..self.nodes.len())
            .filter(|&i| !self.program.is_input(i))
            .count()
    }

    /// Builds `s` and adds it as a node; `None` (and a recorded refusal)
    /// when the API refuses it, `None` too when it is too large.
    fn push(&mut self, s: Step) -> Option<usize> {
        match build(&s, &self.nodes) {
            Ok(t) if t.numel() <= self.limits.max_elements => {
                self.program.steps.push(s);
                self.nodes.push(t);
                Some(self.nodes.len() - 1)
            }
            Ok(_) => None,
            Err(e) => {
                let src: Vec<String> = s.src.iter().map(|j| format!("t{j}")).collect();
                let what = format!("{}({}) {}", s.op, src.join(", "), s.arg);
                self.refused.push(format!("building {what}: {e}"));
                None
            }
        }
    }

    /// A fresh input of `shape` in a random layout.
    fn fresh(&mut self, dtype: DType, shape: &[usize], domain: Domain) -> Option<usize> {
        let layout = if shape.is_empty() {
            Layout::Contiguous
        } else {
            LAYOUTS[self.below(LAYOUTS.len())]
        };
        let seed = self.rng.next_u64();
        self.push(step(
            "input",
            vec![],
            input_arg(dtype, shape, layout, domain, seed),
        ))
    }

    /// An index tensor of `shape` with positions in `lo..=hi`.
    fn index_input(
        &mut self,
        shape: &[usize],
        lo: i64,
        hi: i64,
        unique: Option<usize>,
    ) -> Option<usize> {
        let dtype = if self.chance(0.5) {
            DType::I64
        } else {
            DType::I32
        };
        let seed = self.rng.next_u64();
        let arg = json!({"shape": shape, "dtype": dtype.to_string(), "lo": lo, "hi": hi,
                         "seed": seed, "unique_along": unique});
        self.push(step("index_input", vec![], arg))
    }

    fn random_dtype(&mut self) -> DType {
        match self.below(25) {
            0..=14 => DType::F32,
            15..=17 => DType::I32,
            18..=19 => DType::BOOL,
            _ => DTYPES[self.below(DTYPES.len())],
        }
    }

    fn random_shape(&mut self) -> Vec<usize> {
        loop {
            let rank = self.rng.int(1, 4) as usize;
            let shape: Vec<usize> = (0..rank)
                .map(|_| {
                    if self.chance(0.03) {
                        0
                    } else {
                        self.rng.int(1, 6) as usize
                    }
                })
                .collect();
            if shape.iter().product::<usize>() <= 120 {
                return shape;
            }
        }
    }

    /// The node the next op applies to: usually the newest, often an
    /// older one (which then gets several consumers).
    fn pick(&mut self) -> usize {
        if self.chance(0.55) {
            self.nodes.len() - 1
        } else {
            self.below(self.nodes.len())
        }
    }

    /// Some node (other than `x` when possible) whose shape broadcasts
    /// with `x`'s to a result that is not too large.
    fn compatible(&mut self, x: usize, dtype: Option<DType>) -> Option<usize> {
        let shape = self.nodes[x].shape().to_vec();
        let max = self.limits.max_elements;
        let fits: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| dtype.is_none_or(|d| self.nodes[i].dtype() == d))
            .filter(|&i| {
                broadcast(&shape, self.nodes[i].shape())
                    .is_some_and(|s| s.iter().product::<usize>() <= max)
            })
            .collect();
        let others: Vec<usize> = fits.iter().copied().filter(|&i| i != x).collect();
        if !others.is_empty() && self.chance(0.85) {
            Some(others[self.below(others.len())])
        } else if fits.is_empty() {
            None
        } else {
            Some(fits[self.below(fits.len())])
        }
    }

    /// A shape that broadcasts against `shape`: a suffix of it with some
    /// axes set to 1.
    fn broadcastable(&mut self, shape: &[usize]) -> Vec<usize> {
        let keep = self.rng.int(0, shape.len() as i64) as usize;
        shape[shape.len() - keep..]
            .iter()
            .map(|&d| if self.chance(0.3) { 1 } else { d })
            .collect()
    }

    /// A scalar of the category of `dtype` as JSON.
    fn scalar(&mut self, dtype: DType, nonzero: bool) -> Value {
        if dtype.is_bool() {
            json!(self.rng.int(0, 1))
        } else if dtype.is_float() {
            let mut v = self.rng.int(-6, 6) as f64 * 0.5;
            if nonzero && v == 0.0 {
                v = 1.5;
            }
            json!(v)
        } else {
            let mut v = self.rng.int(-4, 4);
            if nonzero && v == 0 {
                v = 3;
            }
            json!(v)
        }
    }

    /// The second operand of a binary op on `x`: another node, a fresh
    /// input of a broadcastable shape, `x` itself (as node indices), or a
    /// scalar (as the JSON argument).
    fn other(&mut self, x: usize, nonzero: bool) -> (Option<usize>, Value) {
        let dtype = self.nodes[x].dtype();
        let choice = self.below(10);
        if nonzero || choice < 3 {
            if choice < 6 && !(nonzero && dtype.is_bool()) {
                let dom = if nonzero {
                    Domain::NonZero
                } else {
                    Domain::Any
                };
                let own: Vec<usize> = self.nodes[x].shape().to_vec();
                let shape = self.broadcastable(&own);
                if let Some(y) = self.fresh(dtype, &shape, dom) {
                    return (Some(y), Value::Null);
                }
            }
            return (None, self.scalar(dtype, nonzero));
        }
        if choice == 3 {
            return (Some(x), Value::Null);
        }
        let want = if self.chance(0.8) { Some(dtype) } else { None };
        match self.compatible(x, want) {
            Some(y) => (Some(y), Value::Null),
            None => (None, self.scalar(dtype, false)),
        }
    }

    fn axis(&mut self, rank: usize) -> i64 {
        let a = self.below(rank) as i64;
        if self.chance(0.3) {
            a - rank as i64
        } else {
            a
        }
    }

    /// Builds a program of 3 to `max_ops` ops on 1 or 2 inputs.
    fn run(&mut self) {
        for _ in 0..self.rng.int(1, 2) {
            let dtype = self.random_dtype();
            let shape = self.random_shape();
            self.fresh(dtype, &shape, Domain::Any);
        }
        if self.nodes.is_empty() {
            return;
        }
        let target = self.rng.int(3, self.limits.max_ops.max(3) as i64) as usize;
        let mut attempts = 0;
        while self.ops() < target && attempts < 200 {
            attempts += 1;
            if self.chance(0.04) {
                let x = self.pick();
                if !self.program.is_input(x) {
                    self.push(step("realize", vec![x], Value::Null));
                }
                continue;
            }
            if let Some(s) = self.op() {
                self.push(s);
            }
        }
        let last = self.nodes.len() - 1;
        let mut outs = vec![last];
        if self.chance(0.35) {
            for _ in 0..self.rng.int(1, 2) {
                let i = self.below(self.nodes.len());
                if !self.program.is_input(i) && !outs.contains(&i) {
                    outs.push(i);
                }
            }
        }
        self.program.outputs = outs;
        self.program.gradient = true;
    }
}

mod ops;
