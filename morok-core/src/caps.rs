//! Target capabilities: what a renderer evaluates natively, which decides
//! the decompositions lowering applies. Lowering reads this module and
//! renderers fill it in, so it sits below both (no `lower` <-> `render`
//! import cycle).

use crate::dtype::ScalarType;
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
    /// optimized accumulations, and the polynomial decompositions use
    /// it); `Where` when the renderer has *vector
    /// masks*: comparisons, `WHERE` with a per-lane condition, bitcasts,
    /// casts, shifts, integer arithmetic and `FLOOR`-like roundings on
    /// vectors, all in vector registers (see [`Caps::vector_masks`]).
    pub native: OpSet,
    /// Bytes of the widest SIMD register the target's renderer fills with
    /// explicit vector types (64 with AVX-512, 32 with AVX2, 16 with SSE
    /// or NEON); 0 when it renders no vectors. Lowering turns upcast
    /// lanes into vectors of up to this many bytes (see
    /// `crate::lower::vectorize`), the heuristics size register tiles by
    /// it.
    pub vector_bytes: u16,
    /// Index arithmetic is always `i64`, even where every index fits
    /// `i32` (see `crate::lower::index_dtype`): for a target whose
    /// addresses are 64-bit and whose compiler would otherwise widen each
    /// `i32` index before it addresses memory (LLVM: sign extensions its
    /// `IndVarSimplify` removes at a third of the optimization time of a
    /// matmul kernel).
    pub index_i64: bool,
    /// Where the target launches a grid of blocks of threads (a GPU), the
    /// limits of its dimensions: lowering then maps the kernel's parallel
    /// ranges to hardware indices (`crate::lower::gpu_dims`). `None` on a
    /// CPU.
    pub launch: Option<LaunchLimits>,
}

/// The largest grid and block a GPU launches, per dimension (`x, y, z`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchLimits {
    /// Most blocks per grid dimension.
    pub grid: [i64; 3],
    /// Most threads per block dimension (their product is further bounded
    /// by `GpuTarget::threads_per_block`, which the optimizer respects).
    pub block: [i64; 3],
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
            vector_bytes: 0,
            index_i64: false,
            launch: None,
        }
    }

    /// A target with none of them: every transcendental is decomposed
    /// (`Sqrt` included, through Newton iterations).
    pub fn none_native() -> Caps {
        Caps {
            native: OpSet::EMPTY,
            vector_bytes: 0,
            index_i64: false,
            launch: None,
        }
    }

    /// The same capabilities for a GPU launching within `limits`.
    pub fn with_launch(mut self, limits: LaunchLimits) -> Caps {
        self.launch = Some(limits);
        self
    }

    /// The same capabilities with vectors of `bytes` bytes.
    pub fn with_vector_bytes(mut self, bytes: u16) -> Caps {
        self.vector_bytes = bytes;
        self
    }

    /// Whether the renderer evaluates the mask and integer ops of vectors
    /// in vector registers (`Where` in [`Caps::native`]). Then lowering
    /// keeps comparisons and selects of vector lanes as vectors, and
    /// vector lanes of a transcendental take its decomposition (see
    /// `crate::lower::vectorize`) instead of one libm call per lane.
    pub fn vector_masks(&self) -> bool {
        self.vector_bytes > 0 && self.native.contains(Op::Where)
    }

    /// The same capabilities with vector masks (see
    /// [`Caps::vector_masks`]).
    pub fn with_vector_masks(mut self) -> Caps {
        self.native = self.native.with(Op::Where);
        self
    }

    /// How many lanes of scalar type `t` one vector register holds (1:
    /// no vectors for `t`). Only types whose values a register holds as
    /// they are stored get lanes: `f32`, `f64` and the 32/64-bit
    /// integers (bools and halves are scalar).
    pub fn vector_lanes(&self, t: ScalarType) -> u16 {
        if !is_vector_element(t) {
            return 1;
        }
        (self.vector_bytes / t.itemsize() as u16).max(1)
    }
}

/// Whether values of scalar type `t` may be vector lanes (see
/// [`Caps::vector_lanes`]).
pub fn is_vector_element(t: ScalarType) -> bool {
    matches!(
        t,
        ScalarType::F32
            | ScalarType::F64
            | ScalarType::I32
            | ScalarType::I64
            | ScalarType::U32
            | ScalarType::U64
    )
}
