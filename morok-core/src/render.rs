//! The renderer interface: a [`LoweredKernel`] becomes source code for a
//! target (C, LLVM IR, CUDA C, ...). Renderers live in `morok-backends`;
//! the core only defines what they promise and what they can do
//! ([`Caps`]), which decides the decompositions lowering applies.

use crate::lower::LoweredKernel;
use crate::uop::Op;

/// A set of ops (a bit per [`Op`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpSet(u128);

const _: () = assert!(Op::COUNT <= 128, "OpSet holds at most 128 ops");

impl OpSet {
    /// The empty set.
    pub const EMPTY: OpSet = OpSet(0);

    /// The set of the given ops.
    pub fn of(ops: &[Op]) -> OpSet {
        ops.iter().fold(OpSet::EMPTY, |s, op| s.with(*op))
    }

    /// This set plus `op`.
    pub const fn with(self, op: Op) -> OpSet {
        OpSet(self.0 | 1u128 << op as u8)
    }

    /// This set without `op`.
    pub const fn without(self, op: Op) -> OpSet {
        OpSet(self.0 & !(1u128 << op as u8))
    }

    /// True if `op` is in the set.
    pub const fn contains(self, op: Op) -> bool {
        self.0 & (1u128 << op as u8) != 0
    }
}

/// What a target can evaluate natively. Lowering decomposes every
/// transcendental op that is not in `native` (see
/// `crate::lower::transcendental`); ops no target has (threefry, int pow,
/// ...) are always decomposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Caps {
    /// Transcendental ops with a native (correctly rounded or libm
    /// quality) implementation on float types.
    pub native: OpSet,
}

impl Caps {
    /// The ops lowering can decompose when a target lacks them.
    pub const DECOMPOSABLE: [Op; 12] = [
        Op::Exp,
        Op::Exp2,
        Op::Log,
        Op::Log2,
        Op::Sin,
        Op::Cos,
        Op::Tan,
        Op::Tanh,
        Op::Erf,
        Op::Pow,
        Op::Sqrt,
        Op::Rsqrt,
    ];

    /// A target with every decomposable op built in (C with libm).
    pub fn all_native() -> Caps {
        Caps {
            native: OpSet::of(&Caps::DECOMPOSABLE),
        }
    }

    /// A target with none of them: every transcendental is decomposed
    /// (`Sqrt` included, through Newton iterations).
    pub fn none_native() -> Caps {
        Caps {
            native: OpSet::EMPTY,
        }
    }
}

/// A rendered kernel: its source and the symbol to call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderedKernel {
    /// Complete source of one translation unit / module.
    pub source: String,
    /// The exported entry point's name.
    pub entry: String,
}

/// A linear program the renderer cannot express.
#[derive(Debug, thiserror::Error)]
#[error("{renderer} renderer cannot render {node}: {what}")]
pub struct RenderError {
    /// The renderer's name.
    pub renderer: String,
    /// The offending node, printed.
    pub node: String,
    /// Why.
    pub what: String,
}

/// Turns linear programs into source code for one target.
pub trait Renderer: Send + Sync {
    /// Short name (`"c"`, `"llvm"`, ...), used in cache keys and errors.
    fn name(&self) -> &str;

    /// What the target evaluates natively.
    fn caps(&self) -> Caps;

    /// Renders a lowered kernel. The entry point takes the kernel's buffers
    /// in slot order; its calling convention is the renderer's and the
    /// matching device's business.
    fn render(&self, kernel: &LoweredKernel) -> Result<RenderedKernel, RenderError>;
}
