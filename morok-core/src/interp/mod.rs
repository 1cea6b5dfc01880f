//! A reference interpreter for kernel ASTs (a test oracle for scheduling).
//!
//! [`run_kernel`] executes one kernel AST (the contract of
//! `docs/ARCHITECTURE.md`, "Kernel AST") on host buffers of `f64`, one per
//! DEFINE_GLOBAL slot; [`run_schedule`] runs a whole [`Schedule`], storage
//! sharing included, so a wrong liveness plan shows up as wrong values;
//! [`run_launch_exact`] runs a GPU-lowered kernel AST (its output ranges
//! replaced by `SPECIAL` block and thread indices, `crate::lower::gpu_dims`)
//! as a GPU launches it: every thread of every block, and fails where two
//! threads store into the same element (a wrong index map), a thread
//! accesses memory outside a buffer (a missing mask) or reads an element
//! of shared memory no thread of its block wrote before the barrier (a
//! wrong reduction through shared memory, `crate::lower::group_reduce`).
//!
//! Semantics, op by op:
//!
//! - ALU ops have the one semantics of `symbolic::eval` (the oracle mode,
//!   `Undefined::Define`): integers (and `index`) wrap to their type's
//!   width; `Idiv` truncates toward zero, `Mod` takes the dividend's sign,
//!   and both give 0 for a zero divisor; shifts are arithmetic for signed
//!   types;
//! - floats are computed in `f64` and rounded to their type after every op;
//!   `Max`/`Min` propagate NaN; `Erf` is libm's;
//! - `CAST` rounds to the target (float → int truncates toward zero and
//!   saturates, NaN gives 0: `eval::cast_with`, the semantics the CPU
//!   backends render), `BITCAST` reinterprets the bits (equal widths);
//! - a gated `LOAD` reads 0 where its gate is false and never touches
//!   memory there; a gated `STORE` is skipped; any other access outside a
//!   buffer is an error;
//! - both arms of a `WHERE` are evaluated, so an unguarded out-of-bounds
//!   load is reported even when its value is not selected;
//! - `Threefry(x, key)` is `random::threefry2x32`;
//! - `SHUFFLE_XOR(x, o)` (in a launch only) is `x` as the thread of lane
//!   `lane ^ o` of the same warp computes it;
//! - `WMMA` (in a launch only) is the warp's tensor-core product: the
//!   interpreter gathers the fragments of all 32 lanes of the thread's
//!   warp by the instruction's own layout ([`wmma`]), multiplies exactly
//!   and rounds to `f32` once.
//!
//! Values live in `f64` buffers, so 64-bit integers beyond 2^53 lose
//! precision in memory (not while computing).

use crate::dtype::{DType, ScalarType};
use crate::lower::GpuLaunch;
use crate::schedule::{BufferKind, Schedule};
use crate::symbolic::eval::{bits_of, cast_with, exec_alu_with, value_of_bits, Undefined};
use crate::uop::{Arg, ConstValue, Op, OpGroup, ReduceOp, UOp};
use smallvec::SmallVec;
use std::collections::HashMap;
use std::sync::Arc;

mod wmma;

/// Why a kernel could not be executed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpError {
    /// A load or store outside its buffer.
    #[error("{access} of element {index} in slot {slot} (buffer of {len} elements)")]
    OutOfBounds {
        /// `load` or `store`.
        access: &'static str,
        /// The DEFINE_GLOBAL slot.
        slot: usize,
        /// The element offset.
        index: i128,
        /// The buffer's length.
        len: usize,
    },
    /// A node the interpreter does not execute, or a malformed one.
    #[error("cannot execute {op}: {reason}")]
    Unsupported {
        /// The op's dump name.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// Two threads of a launch stored into the same element.
    #[error("threads {first} and {second} both store element {index} of slot {slot}")]
    Race {
        /// The DEFINE_GLOBAL slot.
        slot: usize,
        /// The element offset.
        index: i128,
        /// The first writer (linear thread number in the launch).
        first: u64,
        /// The second writer.
        second: u64,
    },
    /// A read of an element of shared memory that no thread of the block
    /// stored before the barrier.
    #[error("read of element {index} of shared buffer {local}, which no thread stored before the barrier")]
    Unwritten {
        /// The `DEFINE_LOCAL` number.
        local: i64,
        /// The element offset.
        index: i128,
    },
    /// A buffer of the schedule was not provided or has the wrong size.
    #[error("buffer {id}: {reason}")]
    Buffer {
        /// The buffer id.
        id: u64,
        /// What is wrong.
        reason: String,
    },
}

fn unsupported(n: &UOp, reason: impl Into<String>) -> InterpError {
    InterpError::Unsupported {
        op: n.op().dump_name(),
        reason: reason.into(),
    }
}

/// A value while computing: exact integer (bool, ints, index) or float.
#[derive(Clone, Copy, Debug, PartialEq)]
enum V {
    I(i128),
    F(f64),
}

impl V {
    fn f(self) -> f64 {
        match self {
            V::I(i) => i as f64,
            V::F(f) => f,
        }
    }

    fn i(self) -> i128 {
        match self {
            V::I(i) => i,
            V::F(f) if f.is_nan() => 0,
            V::F(f) => f.trunc() as i128,
        }
    }

    /// The value as a constant of type `t` (integers wrapped to it).
    fn to_const(self, t: ScalarType) -> ConstValue {
        match (self, t.is_float()) {
            (V::F(f), _) => ConstValue::Float(f),
            (V::I(i), true) => ConstValue::Float(i as f64),
            (V::I(i), false) => ConstValue::from_i128(i, t),
        }
    }

    fn of_const(c: ConstValue) -> V {
        match c {
            ConstValue::Float(f) => V::F(f),
            c => V::I(c.as_i128().unwrap_or(0)),
        }
    }
}

/// Converts a value to `dt` (the one cast semantics, `eval::cast_with`:
/// float → integer truncates and saturates, NaN gives 0; integers wrap).
fn convert(v: V, dt: DType) -> V {
    let c = match v {
        V::F(f) => ConstValue::Float(f),
        V::I(i) => match i64::try_from(i) {
            Ok(i) => ConstValue::Int(i),
            Err(_) => ConstValue::UInt(i as u64),
        },
    };
    cast_with(c, dt, Undefined::Define).map_or(V::I(0), V::of_const)
}

/// The bits of `v` stored as `t` (the one bit layout, `eval::bits_of`).
fn to_bits(v: V, t: ScalarType) -> u64 {
    bits_of(v.to_const(t), t).unwrap_or(0)
}

/// The value of type `t` with bits `bits` (`eval::value_of_bits`).
fn from_bits(bits: u64, t: ScalarType) -> V {
    V::of_const(value_of_bits(bits, t))
}

/// Applies an ALU op; `arg_dt` is the type it computes in (the first
/// operand's, the branches' for `WHERE`), `dt` the result's. The
/// semantics are [`exec_alu_with`]'s with [`Undefined::Define`] (floats in
/// f64, rounded to the type; the undefined cases given fixed values).
fn alu(op: Op, dt: DType, arg_dt: DType, a: &[V]) -> Option<V> {
    let t = arg_dt.scalar_type();
    let args: SmallVec<[ConstValue; 3]> = a.iter().map(|v| v.to_const(t)).collect();
    let r = exec_alu_with(op, arg_dt, &args, Undefined::Define)?;
    Some(convert(V::of_const(r), dt))
}

/// Executes one kernel AST; `buffers[k]` backs DEFINE_GLOBAL slot `k`.
/// Elements are held as `f64` (64-bit integers beyond 2^53 round; see
/// [`run_kernel_exact`] for exact elements).
pub fn run_kernel(ast: &Arc<UOp>, buffers: &mut [Vec<f64>]) -> Result<(), InterpError> {
    let mut exact: Vec<Vec<ConstValue>> = buffers
        .iter()
        .map(|b| b.iter().map(|v| ConstValue::Float(*v)).collect())
        .collect();
    run_kernel_exact(ast, &mut exact)?;
    for (b, e) in buffers.iter_mut().zip(&exact) {
        for (v, c) in b.iter_mut().zip(e) {
            *v = V::of_const(*c).f();
        }
    }
    Ok(())
}

/// Executes one kernel AST on buffers of exact elements (each held as the
/// [`ConstValue`] of its slot's type: 64-bit integers stay exact). A load
/// converts the element to the slot's type, a store writes the converted
/// value.
pub fn run_kernel_exact(
    ast: &Arc<UOp>,
    buffers: &mut [Vec<ConstValue>],
) -> Result<(), InterpError> {
    Machine {
        buffers,
        locals: HashMap::new(),
        env: HashMap::new(),
        order: HashMap::new(),
        writers: None,
        lanes: None,
    }
    .exec(ast)
}

/// Executes a GPU-lowered kernel AST ([`crate::lower::gpu_dims`]) with the
/// semantics of its launch: the whole kernel once per thread, every thread
/// of `launch`'s block in every block of its grid, each `SPECIAL` index
/// (`gidx0..2`: block, `lidx0..2`: thread in the block, `x, y, z`) at the
/// thread's coordinates. A store into an element another thread stored
/// is an [`InterpError::Race`].
///
/// Barriers are phase boundaries: in each block, every thread first runs
/// the shared-memory store under the first `BARRIER`, then under the
/// next (in dependency order), and last the kernel itself, in which a
/// barrier is passed and its store not run again. This is the launch's
/// semantics where each barrier is reached once by every thread, which
/// is how lowering places them (`crate::lower::group_reduce`). Shared
/// memory starts unwritten in every block; reading an unwritten element
/// is an [`InterpError::Unwritten`].
pub fn run_launch_exact(
    ast: &Arc<UOp>,
    buffers: &mut [Vec<ConstValue>],
    launch: &GpuLaunch,
) -> Result<(), InterpError> {
    let specials: Vec<(u64, usize, bool)> = ast
        .toposort()
        .iter()
        .filter(|n| n.op() == Op::Special)
        .map(|n| {
            let Arg::Str(name) = n.arg() else {
                return Err(unsupported(n, "SPECIAL without a name"));
            };
            let (kind, dim) = name.split_at(name.len().saturating_sub(1));
            let dim: usize = dim
                .parse()
                .ok()
                .filter(|d| *d < 3)
                .ok_or_else(|| unsupported(n, "SPECIAL dimension beyond z"))?;
            match kind {
                "gidx" => Ok((n.id(), dim, true)),
                "lidx" => Ok((n.id(), dim, false)),
                _ => Err(unsupported(n, "unknown SPECIAL")),
            }
        })
        .collect::<Result<_, _>>()?;
    let barriers: Vec<Arc<UOp>> = ast
        .toposort()
        .into_iter()
        .filter(|n| n.op() == Op::Barrier)
        .collect();
    let mut m = Machine {
        buffers,
        locals: HashMap::new(),
        env: HashMap::new(),
        order: HashMap::new(),
        writers: Some((HashMap::new(), 0)),
        lanes: Some(wmma::Lanes {
            block: launch.block,
            thread: 0,
            lidx: specials
                .iter()
                .filter(|(_, _, is_block)| !is_block)
                .map(|&(id, dim, _)| (id, dim))
                .collect(),
        }),
    };
    let points = |dims: [usize; 3]| {
        (0..dims[2])
            .flat_map(move |z| (0..dims[1]).flat_map(move |y| (0..dims[0]).map(move |x| [x, y, z])))
    };
    let mut first_thread = 0u64;
    for block in points(launch.grid) {
        m.locals.clear();
        let phases = barriers.iter().map(|b| b.s(0)).chain(std::iter::once(ast));
        for phase in phases {
            for (thread, local) in (first_thread..).zip(points(launch.block)) {
                for &(id, dim, is_block) in &specials {
                    let at = if is_block { block[dim] } else { local[dim] };
                    m.env.insert(id, at as i128);
                }
                if let Some((_, t)) = &mut m.writers {
                    *t = thread;
                }
                if let Some(lanes) = &mut m.lanes {
                    lanes.thread =
                        local[0] + launch.block[0] * (local[1] + launch.block[1] * local[2]);
                }
                m.exec(phase)?;
            }
        }
        first_thread += launch.block.iter().product::<usize>() as u64;
    }
    Ok(())
}

/// Where an `INDEX` points: a buffer slot, or a shared-memory buffer of
/// the block (its number and element count).
#[derive(Clone, Copy)]
enum Memory {
    Global(usize),
    Shared(i64, usize),
}

struct Machine<'a> {
    buffers: &'a mut [Vec<ConstValue>],
    /// The block's shared memory, by `DEFINE_LOCAL` number (`None`: not
    /// written yet).
    locals: HashMap<i64, Vec<Option<ConstValue>>>,
    /// Current value of each open RANGE (by node id) and of each `SPECIAL`
    /// index of the thread running.
    env: HashMap<u64, i128>,
    /// The evaluation order of each expression evaluated so far (by id).
    order: HashMap<u64, Arc<[Arc<UOp>]>>,
    /// In a launch: the thread that stored each element so far, and the
    /// thread running.
    writers: Option<(Writers, u64)>,
    /// In a launch: the block's shape and thread indices, for the warp
    /// instructions ([`wmma`]).
    lanes: Option<wmma::Lanes>,
}

/// The thread (linear number in the launch) that stored each element, by
/// slot and offset.
type Writers = HashMap<(usize, i128), u64>;

impl Machine<'_> {
    fn exec(&mut self, n: &Arc<UOp>) -> Result<(), InterpError> {
        match n.op() {
            Op::Sink => n.src().iter().try_for_each(|s| self.exec(s)),
            Op::End => self.loops(&n.src()[1..], &mut |m| m.exec(n.s(0))),
            Op::Store => {
                let (memory, index, open) = self.address(n.s(0))?;
                if !open {
                    // In a launch, the value is computed as the generated
                    // code computes it (before the store's gate): a padded
                    // thread's loads must stay inside their buffers too.
                    if self.writers.is_some() {
                        self.eval(n.s(1))?;
                    }
                    return Ok(());
                }
                let pointee = n.s(0).dtype().pointee();
                let v = convert(self.eval(n.s(1))?, pointee).to_const(pointee.scalar_type());
                let slot = match memory {
                    Memory::Global(slot) => slot,
                    Memory::Shared(local, len) => {
                        let cells = self.locals.entry(local).or_insert_with(|| vec![None; len]);
                        let cell = usize::try_from(index).ok().and_then(|i| cells.get_mut(i));
                        *cell.ok_or(InterpError::OutOfBounds {
                            access: "shared store",
                            slot: local as usize,
                            index,
                            len,
                        })? = Some(v);
                        return Ok(());
                    }
                };
                let buf = self
                    .buffers
                    .get_mut(slot)
                    .ok_or_else(|| unsupported(n, "no buffer for the slot"))?;
                let len = buf.len();
                if let Some((writers, thread)) = &mut self.writers {
                    match writers.insert((slot, index), *thread) {
                        Some(first) if first != *thread => {
                            return Err(InterpError::Race {
                                slot,
                                index,
                                first,
                                second: *thread,
                            })
                        }
                        _ => {}
                    }
                }
                let cell = usize::try_from(index).ok().and_then(|i| buf.get_mut(i));
                *cell.ok_or(InterpError::OutOfBounds {
                    access: "store",
                    slot,
                    index,
                    len,
                })? = v;
                Ok(())
            }
            _ => Err(unsupported(n, "not a statement (SINK, END or STORE)")),
        }
    }

    /// Runs `body` for every point of the ranges (first range outermost).
    fn loops(
        &mut self,
        ranges: &[Arc<UOp>],
        body: &mut dyn FnMut(&mut Self) -> Result<(), InterpError>,
    ) -> Result<(), InterpError> {
        let Some((r, rest)) = ranges.split_first() else {
            return body(self);
        };
        if r.op() != Op::Range {
            return Err(unsupported(r, "expected a RANGE"));
        }
        let end = self.eval(r.s(0))?.i();
        for i in 0..end {
            self.env.insert(r.id(), i);
            self.loops(rest, body)?;
        }
        self.env.remove(&r.id());
        Ok(())
    }

    /// Memory, element offset and gate of `INDEX(buffer, idx [, gate])`.
    fn address(&mut self, n: &Arc<UOp>) -> Result<(Memory, i128, bool), InterpError> {
        let slot = memory_of(n)?;
        let index = self.eval(n.s(1))?.i();
        let open = match n.src().get(2) {
            Some(g) => self.eval(g)?.i() != 0,
            None => true,
        };
        Ok((slot, index, open))
    }

    /// The value of an expression at the current loop point. Iterative:
    /// the nodes are evaluated operands first (each once), so deep
    /// expressions do not recurse; a REDUCE is evaluated by running its
    /// loops over its body (nesting as deep as the reduces, not the graph).
    /// What a `BARRIER` waits for ran in an earlier phase of the launch
    /// ([`run_launch_exact`]), so evaluation stops there.
    fn eval(&mut self, root: &Arc<UOp>) -> Result<V, InterpError> {
        let order = match self.order.get(&root.id()) {
            Some(o) => o.clone(),
            None => {
                let o: Arc<[Arc<UOp>]> = root
                    .toposort_until(|n| matches!(n.op(), Op::Reduce | Op::Barrier))
                    .into();
                self.order.insert(root.id(), o.clone());
                o
            }
        };
        let mut vals: HashMap<u64, V> = HashMap::with_capacity(order.len());
        for n in order.iter() {
            let v = self.eval_node(n, &vals)?;
            vals.insert(n.id(), v);
        }
        Ok(vals[&root.id()])
    }

    /// One node, its operands' values in `vals` (a REDUCE runs its loops).
    /// Buffer addresses (`DEFINE_GLOBAL`, `DEFINE_LOCAL`, `AFTER` of one,
    /// pointer `INDEX`) and `BARRIER`s are not values: they get a
    /// placeholder, and the LOAD above an address reads it.
    fn eval_node(&mut self, n: &Arc<UOp>, vals: &HashMap<u64, V>) -> Result<V, InterpError> {
        let dt = n.dtype();
        let operand = |i: usize| vals[&n.s(i).id()];
        Ok(match n.op() {
            Op::DefineGlobal | Op::DefineLocal | Op::Barrier => V::I(0),
            Op::After if n.dtype().addr_space().is_some() => V::I(0),
            Op::Index if n.dtype().addr_space().is_some() => V::I(0),
            Op::Const => V::of_const(
                n.const_value()
                    .ok_or_else(|| unsupported(n, "CONST without a value"))?,
            ),
            Op::Range | Op::Special => V::I(
                *self
                    .env
                    .get(&n.id())
                    .ok_or_else(|| unsupported(n, "RANGE used outside its loop"))?,
            ),
            Op::Load => {
                // The address's operands are among the evaluated nodes.
                let addr = n.s(0);
                let memory = memory_of(addr)?;
                let index = vals[&addr.s(1).id()].i();
                let open = match addr.src().get(2) {
                    Some(g) => vals[&g.id()].i() != 0,
                    None => true,
                };
                if !open {
                    return Ok(convert(V::I(0), dt));
                }
                let slot = match memory {
                    Memory::Global(slot) => slot,
                    Memory::Shared(local, len) => {
                        let cells = self.locals.get(&local);
                        let cell = usize::try_from(index).ok().filter(|&i| i < len).ok_or(
                            InterpError::OutOfBounds {
                                access: "shared load",
                                slot: local as usize,
                                index,
                                len,
                            },
                        )?;
                        let v = cells
                            .and_then(|c| c.get(cell).copied().flatten())
                            .ok_or(InterpError::Unwritten { local, index })?;
                        return Ok(convert(V::of_const(v), dt));
                    }
                };
                let buf = self
                    .buffers
                    .get(slot)
                    .ok_or_else(|| unsupported(n, "no buffer for the slot"))?;
                let cell = usize::try_from(index).ok().and_then(|i| buf.get(i));
                let len = buf.len();
                let raw = *cell.ok_or(InterpError::OutOfBounds {
                    access: "load",
                    slot,
                    index,
                    len,
                })?;
                convert(V::of_const(raw), dt)
            }
            Op::Reduce => {
                let Arg::Reduce(op) = n.arg() else {
                    return Err(unsupported(n, "REDUCE without a reduce op"));
                };
                let mut acc = V::of_const(op.identity(dt.scalar_type()));
                let alu_op = ReduceOp::alu(*op);
                self.loops(&n.src()[1..], &mut |m| {
                    let v = m.eval(n.s(0))?;
                    acc = alu(alu_op, dt, dt, &[acc, v])
                        .ok_or_else(|| unsupported(n, "bad reduce"))?;
                    Ok(())
                })?;
                acc
            }
            Op::ShuffleXor => self.shuffle_xor(n, operand(1).i())?,
            Op::Wmma => {
                let element = usize::try_from(operand(12).i())
                    .ok()
                    .filter(|e| *e < 4)
                    .ok_or_else(|| unsupported(n, "WMMA element beyond 4"))?;
                convert(V::F(self.wmma(n, element)?), dt)
            }
            Op::Cast => convert(operand(0), dt),
            Op::Bitcast => {
                let from = n.s(0).dtype();
                if from.itemsize() != dt.itemsize() {
                    return Err(unsupported(
                        n,
                        format!("bitcast {from} to {dt} changes the width"),
                    ));
                }
                from_bits(to_bits(operand(0), from.scalar_type()), dt.scalar_type())
            }
            op if matches!(
                op.group(),
                OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary
            ) =>
            {
                let args: Vec<V> = (0..n.src().len()).map(operand).collect();
                let domain = if op == Op::Where {
                    n.s(1).dtype()
                } else {
                    n.s(0).dtype()
                };
                alu(op, dt, domain, &args).ok_or_else(|| unsupported(n, "unsupported ALU op"))?
            }
            _ => return Err(unsupported(n, "not a value")),
        })
    }
}

impl Machine<'_> {
    /// `SHUFFLE_XOR(x, offset)`: `x` evaluated as the thread of the warp
    /// whose lane is this one's XOR `offset` (at its thread index, the
    /// loops and the block the same) evaluates it.
    fn shuffle_xor(&mut self, n: &Arc<UOp>, offset: i128) -> Result<V, InterpError> {
        let (lanes, warp) = self.warp_of(n)?;
        let lane = usize::try_from(offset)
            .ok()
            .filter(|o| *o < wmma::WARP)
            .map(|o| (lanes.thread % wmma::WARP) ^ o)
            .ok_or_else(|| unsupported(n, "SHUFFLE_XOR offset beyond the warp"))?;
        let saved = self.lanes_state(&lanes);
        let base = lanes.thread - lanes.thread % wmma::WARP;
        self.become_thread(&lanes, &warp[lane], base + lane);
        let v = self.eval(n.s(0));
        self.restore_lanes(saved);
        v
    }

    /// The launch's lanes and the thread indices of the running thread's
    /// warp, for warp instruction `n`.
    fn warp_of(&self, n: &UOp) -> Result<(wmma::Lanes, Vec<[usize; 3]>), InterpError> {
        let lanes = self
            .lanes
            .clone()
            .ok_or_else(|| unsupported(n, "a warp instruction outside a GPU launch"))?;
        let warp = lanes.warp().ok_or_else(|| {
            unsupported(n, "a warp instruction in a block that is not whole warps")
        })?;
        Ok((lanes, warp))
    }

    /// The thread-index values and running thread a warp instruction
    /// changes while it evaluates other lanes.
    fn lanes_state(&self, lanes: &wmma::Lanes) -> (Vec<(u64, Option<i128>)>, usize) {
        let env = lanes
            .lidx
            .iter()
            .map(|&(id, _)| (id, self.env.get(&id).copied()))
            .collect();
        (env, lanes.thread)
    }

    /// Evaluates as thread `thread` (block position `at`) from now on.
    fn become_thread(&mut self, lanes: &wmma::Lanes, at: &[usize; 3], thread: usize) {
        for &(id, dim) in &lanes.lidx {
            self.env.insert(id, at[dim] as i128);
        }
        if let Some(l) = &mut self.lanes {
            l.thread = thread;
        }
    }

    /// Puts back what [`Machine::lanes_state`] saved.
    fn restore_lanes(&mut self, (env, thread): (Vec<(u64, Option<i128>)>, usize)) {
        for (id, v) in env {
            match v {
                Some(v) => self.env.insert(id, v),
                None => self.env.remove(&id),
            };
        }
        if let Some(l) = &mut self.lanes {
            l.thread = thread;
        }
    }

    /// Element `element` of the running thread's `D` fragment of `WMMA`
    /// node `n`: every lane's operands evaluated at its own thread index
    /// (the loops and the block the same), multiplied as the warp's
    /// instruction does ([`wmma::product`]).
    fn wmma(&mut self, n: &Arc<UOp>, element: usize) -> Result<f64, InterpError> {
        let (lanes, warp) = self.warp_of(n)?;
        let saved = self.lanes_state(&lanes);
        let base = lanes.thread - lanes.thread % wmma::WARP;
        let mut fragments = vec![[0f64; 12]; wmma::WARP];
        let mut result = Ok(());
        for (l, (at, f)) in warp.iter().zip(fragments.iter_mut()).enumerate() {
            self.become_thread(&lanes, at, base + l);
            result = f.iter_mut().enumerate().try_for_each(|(i, v)| {
                *v = self.eval(n.s(i))?.f();
                Ok(())
            });
            if result.is_err() {
                break;
            }
        }
        self.restore_lanes(saved);
        result?;
        Ok(wmma::product(
            &fragments,
            lanes.thread % wmma::WARP,
            element,
        ))
    }
}

/// The memory of `INDEX(DEFINE_GLOBAL(slot), idx [, gate])` or of
/// `INDEX(DEFINE_LOCAL(size) [behind AFTER], idx [, gate])`.
fn memory_of(n: &Arc<UOp>) -> Result<Memory, InterpError> {
    let mut base = n
        .src()
        .first()
        .ok_or_else(|| unsupported(n, "no operands"))?;
    while base.op() == Op::After {
        base = base.s(0);
    }
    match (n.op(), base.op(), base.arg(), n.src().len()) {
        (Op::Index, Op::DefineGlobal, Arg::Int(s), 2 | 3) => Ok(Memory::Global(*s as usize)),
        (Op::Index, Op::DefineLocal, Arg::Int(k), 2 | 3) => {
            let len = base
                .src()
                .first()
                .and_then(|s| s.const_value())
                .and_then(|c| c.as_i64())
                .and_then(|l| usize::try_from(l).ok())
                .ok_or_else(|| unsupported(base, "DEFINE_LOCAL without a constant size"))?;
            Ok(Memory::Shared(*k, len))
        }
        _ => Err(unsupported(
            n,
            "expected INDEX(DEFINE_GLOBAL or DEFINE_LOCAL, idx [, gate])",
        )),
    }
}

/// Runs every item of a schedule in order. `inputs` holds the contents of
/// the input buffers (by id); returns the contents of the input and output
/// buffers. Intermediates live in their planned storage, shared as the
/// memory plan says.
pub fn run_schedule(
    schedule: &Schedule,
    inputs: &HashMap<u64, Vec<f64>>,
) -> Result<HashMap<u64, Vec<f64>>, InterpError> {
    let mut storage: HashMap<u64, Vec<f64>> = HashMap::new();
    for b in &schedule.buffers {
        if b.kind == BufferKind::Input {
            let data = inputs.get(&b.id).ok_or(InterpError::Buffer {
                id: b.id,
                reason: "input not provided".into(),
            })?;
            if data.len() != b.size {
                return Err(InterpError::Buffer {
                    id: b.id,
                    reason: format!("{} elements provided, {} expected", data.len(), b.size),
                });
            }
            storage.insert(b.storage, data.clone());
        } else {
            let s = storage.entry(b.storage).or_default();
            if s.len() < b.size {
                s.resize(b.size, 0.0);
            }
        }
    }
    let storage_of: HashMap<u64, u64> =
        schedule.buffers.iter().map(|b| (b.id, b.storage)).collect();
    for item in &schedule.items {
        let ids: Vec<u64> = item
            .buffers
            .iter()
            .map(|id| {
                storage_of.get(id).copied().ok_or(InterpError::Buffer {
                    id: *id,
                    reason: "not in the buffer table".into(),
                })
            })
            .collect::<Result<_, _>>()?;
        let mut bufs = Vec::with_capacity(ids.len());
        for (k, s) in ids.iter().enumerate() {
            if ids[..k].contains(s) {
                return Err(InterpError::Buffer {
                    id: item.buffers[k],
                    reason: "shares storage with another buffer of the same kernel".into(),
                });
            }
            bufs.push(storage.remove(s).unwrap_or_default());
        }
        let result = run_kernel(&item.ast, &mut bufs);
        for (s, b) in ids.iter().zip(bufs) {
            storage.insert(*s, b);
        }
        result?;
    }
    Ok(schedule
        .buffers
        .iter()
        .filter(|b| b.kind != BufferKind::Intermediate)
        .map(|b| (b.id, storage[&b.storage][..b.size].to_vec()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::AddrSpace;

    fn fold_i(op: Op, dt: DType, a: i64, b: i64) -> Option<i64> {
        alu(op, dt, dt, &[V::I(a as i128), V::I(b as i128)]).map(|v| v.i() as i64)
    }

    #[test]
    fn integer_division_truncates_and_tolerates_zero() {
        assert_eq!(fold_i(Op::Idiv, DType::I32, -7, 2), Some(-3));
        assert_eq!(fold_i(Op::Mod, DType::I32, -7, 2), Some(-1));
        assert_eq!(fold_i(Op::Mod, DType::I32, 7, -2), Some(1));
        assert_eq!(fold_i(Op::Idiv, DType::I32, 7, 0), Some(0));
        assert_eq!(fold_i(Op::Mod, DType::I32, 7, 0), Some(0));
        assert_eq!(fold_i(Op::Add, DType::I8, 127, 1), Some(-128));
        assert_eq!(fold_i(Op::Shr, DType::I32, -8, 1), Some(-4));
    }

    #[test]
    fn casts_round_and_bitcasts_reinterpret() {
        assert_eq!(convert(V::F(-2.7), DType::I32).i(), -2);
        // Floats saturate (as compiled code and Rust's `as`), integers wrap.
        assert_eq!(convert(V::F(300.0), DType::U8).i(), 255);
        assert_eq!(convert(V::F(f64::NAN), DType::I32).i(), 0);
        assert_eq!(convert(V::F(-1e10), DType::I32).i(), i32::MIN as i128);
        assert_eq!(convert(V::I(300), DType::U8).i(), 44);
        let one = to_bits(V::F(1.0), ScalarType::F32);
        assert_eq!(from_bits(one, ScalarType::U32).i(), 0x3f80_0000);
        let third = alu(Op::Fdiv, DType::F32, DType::F32, &[V::F(1.0), V::F(3.0)]);
        assert_eq!(third.map(|v| v.f()), Some((1.0f32 / 3.0) as f64));
        let erf = |x: f64| alu(Op::Erf, DType::F64, DType::F64, &[V::F(x)]).map(|v| v.f());
        assert!((erf(0.5).unwrap() - 0.520_499_877_813_046_5).abs() < 1e-12);
        assert!((erf(-3.5).unwrap() + 0.999_999_256_901_627_7).abs() < 1e-9);
        assert_eq!(erf(0.5), Some(crate::symbolic::eval::erf_f64(0.5)));
    }

    #[test]
    fn threefry_is_the_shared_generator() {
        let ty = DType::U64;
        let r = alu(Op::Threefry, ty, ty, &[V::I(5), V::I(9)]).map(|v| v.i());
        assert_eq!(r, Some(crate::random::threefry2x32(5, 9) as i128));
    }

    /// out[i] = gated load of in[i - 1] for i in 0..4 (reads 0 at i = 0).
    #[test]
    fn deep_expressions_evaluate_without_recursion() {
        // out[r] = in[r] + 1 + 1 + ... (100,000 additions), in a loop and
        // inside a reduce: a recursive evaluator overflows the stack here.
        let r = UOp::range(&UOp::index(2), 0, crate::AxisType::Loop);
        let k = UOp::range(&UOp::index(3), 1, crate::AxisType::Reduce);
        let (out, inp) = (
            UOp::define_global(0, DType::F32),
            UOp::define_global(1, DType::F32),
        );
        let mut v = inp.index_into(&r, None).load();
        for _ in 0..100_000 {
            v = v.add(&UOp::const_(DType::F32, ConstValue::Float(1.0)));
        }
        let total = v.reduce(ReduceOp::Add, std::slice::from_ref(&k));
        let ast = UOp::sink(smallvec::smallvec![out
            .index_into(&r, None)
            .store(&total)
            .end(std::slice::from_ref(&r))]);
        let mut bufs = vec![vec![0.0; 2], vec![0.5, 2.0]];
        run_kernel(&ast, &mut bufs).unwrap();
        assert_eq!(bufs[0], vec![3.0 * 100_000.5, 3.0 * 100_002.0]);
    }

    #[test]
    fn gated_loads_read_zero_and_stray_accesses_fail() {
        let r = UOp::range(&UOp::index(4), 0, crate::AxisType::Loop);
        let out = UOp::define_global(0, DType::F32);
        let inp = UOp::define_global(1, DType::F32);
        let gate = UOp::index(0).bin(Op::CmpLt, &r);
        let shifted = r.add(&UOp::index(-1));
        let load = inp.index_into(&shifted, Some(&gate)).load();
        let ast = UOp::sink(smallvec::smallvec![out
            .index_into(&r, None)
            .store(&load)
            .end(std::slice::from_ref(&r))]);
        let mut bufs = vec![vec![0.0; 4], vec![1.0, 2.0, 3.0, 4.0]];
        run_kernel(&ast, &mut bufs).unwrap();
        assert_eq!(bufs[0], vec![0.0, 1.0, 2.0, 3.0]);
        assert_eq!(inp.dtype(), DType::F32.ptr(AddrSpace::Global));

        let ungated = inp.index_into(&shifted, None).load();
        let bad = UOp::sink(smallvec::smallvec![out
            .index_into(&r, None)
            .store(&ungated)
            .end(&[r])]);
        let err = run_kernel(&bad, &mut bufs).unwrap_err();
        assert_eq!(
            err,
            InterpError::OutOfBounds {
                access: "load",
                slot: 1,
                index: -1,
                len: 4
            }
        );
    }
}
