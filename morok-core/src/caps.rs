//! Target capabilities: what a renderer evaluates natively, which decides
//! the decompositions lowering applies. Lowering reads this module and
//! renderers fill it in, so it sits below both (no `lower` <-> `render`
//! import cycle).

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
    /// quality) implementation on float types; `MulAcc` when the target
    /// renders a fused multiply-add (lowering then may form it in
    /// optimized accumulations).
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
