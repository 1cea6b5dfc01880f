//! What lowering takes and produces: its options, its errors and the
//! lowered kernel (the linear program plus the facts lowering proved).

use super::AccessForm;
use crate::caps::Caps;
use crate::dtype::DType;
use crate::rewrite::RewriteError;
use crate::uop::UOp;
use std::collections::HashSet;
use std::sync::Arc;

/// Knobs of the lowering pipeline. The core reads no environment: the
/// root crate fills this from `MOROK_NOOPT` and the device's [`Caps`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LowerOptions {
    /// Skip optional optimizations (today: the symbolic pass). Mandatory
    /// rewrites still run.
    pub noopt: bool,
    /// What the target evaluates natively; everything else is decomposed.
    pub caps: Caps,
    /// The kernel's name in the rendered source (a C identifier).
    pub name: String,
    /// Accumulate float sums of products with `MULACC` (a fused
    /// multiply-add): set when the optimizer changed the kernel and the
    /// target renders `MULACC` (`caps.native`); off, every result is
    /// rounded exactly as the unoptimized kernel rounds it.
    pub fma: bool,
}

impl LowerOptions {
    /// Options for a target with the given capabilities.
    pub fn new(caps: Caps) -> Self {
        LowerOptions {
            noopt: false,
            caps,
            name: "kernel".to_string(),
            fma: false,
        }
    }

    /// The same options with another kernel name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
}

/// Why a kernel AST could not be lowered.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    /// The AST breaks the kernel AST contract.
    #[error("malformed kernel AST: {what}\n  at node {node}")]
    Malformed {
        /// What is wrong.
        what: String,
        /// The offending node (`[id] OP : dtype`, with its provenance).
        node: String,
    },
    /// A rewrite pass did not converge.
    #[error("lowering pass failed: {0}")]
    Rewrite(#[from] RewriteError),
}

impl LowerError {
    /// A [`LowerError::Malformed`] that quotes `node` and where it was built.
    pub fn malformed(what: impl Into<String>, node: &Arc<UOp>) -> Self {
        LowerError::Malformed {
            what: what.into(),
            node: format!("{node:?} (built at {})", node.location()),
        }
    }
}

/// The launch a GPU-lowered kernel needs: grid (blocks) and block
/// (threads) sizes, `x, y, z`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuLaunch {
    /// Blocks in each dimension.
    pub grid: [usize; 3],
    /// Threads per block in each dimension.
    pub block: [usize; 3],
}

/// One kernel argument buffer (a `DEFINE_GLOBAL` slot).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferSlot {
    /// Element type (not a pointer).
    pub dtype: DType,
    /// True if the kernel stores into this buffer.
    pub written: bool,
    /// True if the kernel loads from this buffer.
    pub read: bool,
    /// Inclusive range of element indices the kernel may touch through
    /// index expressions of ranges and constants, `None` when there are
    /// none. A buffer must hold at least `max + 1` elements and `min` must
    /// not be negative for a run to be safe. Data-dependent accesses are
    /// not included: lowering marks them in [`LoweredKernel::guarded`] and
    /// renderers check them at run time.
    pub access: Option<(i64, i64)>,
    /// For a kernel with variables (`DEFINE_VAR`): [`BufferSlot::access`]
    /// as expressions of the variables, which a launch evaluates at its
    /// values (its buffers are sized for those). `None` when the kernel
    /// has no variables, the slot's accesses do not depend on them in a
    /// way lowering can express, or none is counted in `access`; a launch
    /// then checks against `access`.
    pub access_form: Option<AccessForm>,
}

/// The loop a host may split across threads.
#[derive(Clone, Debug)]
pub struct ParallelLoop {
    /// The `RANGE` node (its iterations are independent: every global store
    /// inside it is indexed by it, and nothing else is written).
    pub range: Arc<UOp>,
    /// Its trip count (for a loop bounded by a variable, the count at the
    /// variable's largest value).
    pub size: usize,
    /// For a loop bounded by a variable (`DEFINE_VAR`, or a variable times
    /// a constant): the variable's name and that constant. Its trip count
    /// is then known at launch only: the variable's value times the
    /// constant.
    pub var: Option<(String, usize)>,
}

/// The output of lowering: a linear program and what a runtime needs to
/// call it.
///
/// `ops` lists every operation to execute, operands before users. Loops
/// are `RANGE` … `END(range)` (the `END` has the range as its only
/// operand), conditional stores are `IF(gate)` … `ENDIF(if)`. Registers are
/// `DEFINE_REG(slot)` of a `Reg` pointer type, accessed through
/// `INDEX(reg, 0)`. Operands may be `AFTER(x, deps...)` nodes, which are
/// not listed: they only order the program and stand for `x`.
#[derive(Clone, Debug)]
pub struct LoweredKernel {
    /// The entry point's name.
    pub name: String,
    /// The linear program.
    pub ops: Vec<Arc<UOp>>,
    /// Buffers by `DEFINE_GLOBAL` slot (slots are `0..buffers.len()`).
    pub buffers: Vec<BufferSlot>,
    /// The outermost loop, when its iterations may run in parallel. A
    /// renderer takes its bounds from the host (`[start, end)`).
    pub parallel: Option<ParallelLoop>,
    /// The concrete type index arithmetic was lowered to (i32 or i64).
    pub index_dtype: DType,
    /// Ids of integer nodes whose every value is proven to fit their type
    /// (the lowered index arithmetic): a renderer may use arithmetic that
    /// assumes no overflow for them, and must wrap for all others.
    pub no_overflow: HashSet<u64>,
    /// Ids of the `INDEX` nodes into global buffers whose offset depends
    /// on loaded data, so [`BufferSlot::access`] cannot cover them: a
    /// renderer must check each against its buffer's element count when it
    /// executes (an out-of-range load reads 0, an out-of-range store is
    /// dropped). Every other access is proven in bounds before the call.
    pub guarded: HashSet<u64>,
    /// On a GPU target ([`Caps::launch`]): the grid and block the kernel
    /// is launched with (its parallel ranges became hardware indices,
    /// see `crate::lower::gpu_dims`); `None` on a CPU.
    pub gpu: Option<GpuLaunch>,
}
