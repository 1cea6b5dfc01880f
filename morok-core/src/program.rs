//! A [`Program`]: everything a device needs to compile and launch one
//! kernel, produced by [`crate::pipeline::compile_program`].
//!
//! It carries the rendered code and the facts lowering proved about it
//! (buffer roles and access ranges, which accesses need run-time guards,
//! which loop may be split across CPU threads), so a device never
//! re-derives a safety fact from the source.

use crate::lower::{BufferSlot, LoweredKernel};
use crate::uop::{Arg, AxisType, Op, UOp};
use std::sync::Arc;

/// A scalar variable of the kernel (`DEFINE_VAR`), passed at launch in
/// the order of [`Program::vars`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VarSlot {
    /// The variable's name.
    pub name: String,
    /// Smallest value it may take (the kernel was proven safe for
    /// `min..=max`; a launch outside that range is refused).
    pub min: i64,
    /// Largest value it may take.
    pub max: i64,
}

/// How a program is launched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Trip count of the outermost loop when its iterations are
    /// independent: a CPU host may run disjoint `[start, end)` parts of it
    /// on several threads (the kernel takes the bounds as arguments).
    pub parallel: Option<usize>,
    /// Blocks of the grid (`x, y, z`) for devices that launch a grid of
    /// blocks of threads (GPUs: `LoweredKernel::gpu`); `[1, 1, 1]` on the
    /// CPU.
    pub global: [usize; 3],
    /// Threads per block (`x, y, z`) on GPUs; `None` on the CPU.
    pub local: Option<[usize; 3]>,
    /// Iterations of the kernel's loop nest (`loop_nest_iterations` in
    /// `kernel/work.rs`): a host shares the parallel loop among as many
    /// threads as it is worth ([`crate::threads_for_work`]).
    pub work: u64,
    /// For a parallel loop bounded by a variable, how a host finds its
    /// trip count at launch (`parallel` is then the count at the
    /// variable's largest value).
    pub parallel_var: Option<ParallelVar>,
}

/// The trip count of a parallel loop bounded by a variable: the value of
/// variable [`ParallelVar::var`] times [`ParallelVar::scale`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParallelVar {
    /// The variable's position in [`Program::vars`].
    pub var: usize,
    /// The constant the variable is multiplied by.
    pub scale: usize,
    /// Iterations of the rest of the loop nest per iteration of the
    /// parallel loop (the product of the other constant range sizes),
    /// for the minimum of work per thread
    /// (`crate::kernel::MIN_WORK_PER_THREAD`).
    pub inner: u64,
}

impl ParallelVar {
    /// The parallel loop's trip count for the variables' `values`.
    pub fn trip_count(&self, values: &[i64]) -> Option<usize> {
        let v = usize::try_from(*values.get(self.var)?).ok()?;
        v.checked_mul(self.scale)
    }
}

/// The [`ParallelVar`] of a linear program whose parallel loop is bounded
/// by one of `vars`.
pub fn parallel_var(k: &LoweredKernel, vars: &[VarSlot]) -> Option<ParallelVar> {
    let p = k.parallel.as_ref()?;
    let (name, scale) = p.var.as_ref()?;
    let var = vars.iter().position(|v| &v.name == name)?;
    let inner = k
        .ops
        .iter()
        .filter(|n| n.op() == Op::Range && !Arc::ptr_eq(n, &p.range))
        .filter_map(|n| n.s(0).const_int().and_then(|v| u64::try_from(v).ok()))
        .fold(1u64, |a, s| a.saturating_mul(s.max(1)));
    Some(ParallelVar {
        var,
        scale: *scale,
        inner,
    })
}

/// A kernel ready for a device: source, entry point and calling facts.
#[derive(Clone, Debug)]
pub struct Program {
    /// The kernel's name (also the entry point's).
    pub name: String,
    /// The kernel AST after optimization: what was lowered. Devices that
    /// interpret kernels run it; it also keys caches and debug output.
    pub ast: Arc<UOp>,
    /// The linear program that was rendered (renderers that build code
    /// in memory, such as an LLVM builder, work from it).
    pub lowered: Arc<LoweredKernel>,
    /// The rendered code (C source, LLVM IR text, ...).
    pub source: String,
    /// The exported entry point's name.
    pub entry: String,
    /// Scalar variables, in launch order.
    pub vars: Vec<VarSlot>,
    /// Launch information.
    pub launch: Launch,
}

impl Program {
    /// Buffers by `DEFINE_GLOBAL` slot: element type, read/written, and
    /// the element range the kernel may touch.
    pub fn buffers(&self) -> &[BufferSlot] {
        &self.lowered.buffers
    }

    /// The element range each buffer slot may touch in a launch whose
    /// variables take `values` ([`Program::vars`] order): each slot's
    /// [`BufferSlot::access_form`] evaluated at the values (lowering built
    /// it; nothing is analysed here), or [`BufferSlot::access`], which
    /// holds for every value, where a slot has no form. `None` for a slot
    /// the launch does not touch.
    pub fn access_at(&self, values: &[i64]) -> Vec<Option<(i64, i64)>> {
        let value = |name: &str| {
            let k = self.vars.iter().position(|v| v.name == name)?;
            values.get(k).copied()
        };
        self.buffers()
            .iter()
            .map(|slot| match (&slot.access_form, slot.access) {
                (Some(form), Some(_)) => form.at(&value),
                (_, access) => access,
            })
            .collect()
    }
}

/// The scalar variables (`DEFINE_VAR`) of a linear program, each once, in
/// program order.
pub fn variables(k: &LoweredKernel) -> Vec<VarSlot> {
    let mut vars: Vec<VarSlot> = Vec::new();
    for n in &k.ops {
        if let (Op::DefineVar, Arg::Var { name, min, max }) = (n.op(), n.arg()) {
            if !vars.iter().any(|v| &v.name == name) {
                vars.push(VarSlot {
                    name: name.to_string(),
                    min: *min,
                    max: *max,
                });
            }
        }
    }
    vars
}

/// A readable, stable kernel name: `r` for kernels with a reduction, `E`
/// for elementwise ones, then the extents of the output loops.
pub fn kernel_name(ast: &Arc<UOp>) -> String {
    let nodes = ast.toposort();
    let prefix = if nodes.iter().any(|n| n.op() == Op::Reduce) {
        "r"
    } else {
        "E"
    };
    let mut name = prefix.to_string();
    for n in &nodes {
        if let (
            Op::Range,
            Arg::Range {
                axis_type: AxisType::Loop,
                ..
            },
        ) = (n.op(), n.arg())
        {
            if let Some(end) = n.range_size() {
                name.push_str(&format!("_{end}"));
            }
        }
    }
    name
}
