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
        }
    }

    /// A target with none of them: every transcendental is decomposed
    /// (`Sqrt` included, through Newton iterations).
    pub fn none_native() -> Caps {
        Caps {
            native: OpSet::EMPTY,
            vector_bytes: 0,
            index_i64: false,
        }
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

/// Whether the host CPU has a fused multiply-add instruction, detected
/// when the program runs: FMA3 on x86-64, always on aarch64. The CPU
/// renderers list `MULACC` as native only then, so a host without it gets
/// a plain multiply and add instead of a slow libm `fma` call. On x86-64,
/// a [`host_vector_bytes`] capped to 16 (`MOROK_CPU_VECTOR_BYTES=16`)
/// turns AVX off, and FMA3 with it.
pub fn host_has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        host_vector_bytes() >= 32 && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(target_arch = "aarch64")]
    {
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// The vector width in bytes the CPU devices compile for: the host CPU's
/// widest vector registers, detected when the program runs (never assumed
/// from the build target), or less where `MOROK_CPU_VECTOR_BYTES` caps it
/// (see [`capped_vector_bytes`]). Detected: 64 with AVX-512F, 32 with
/// AVX2 and FMA, 16 otherwise (SSE2 on x86-64, NEON on aarch64, and the
/// conservative default elsewhere). The C and LLVM devices turn the
/// instruction-set extensions above this width off, so a cap makes an
/// AVX-512 machine generate and run the code of an AVX2 or SSE machine.
pub fn host_vector_bytes() -> u16 {
    static WIDTH: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
    *WIDTH.get_or_init(|| {
        let cap = std::env::var("MOROK_CPU_VECTOR_BYTES").ok();
        capped_vector_bytes(detected_vector_bytes(), cap.as_deref())
    })
}

/// The widest vector registers the host CPU has, in bytes (see
/// [`host_vector_bytes`]).
pub fn detected_vector_bytes() -> u16 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return 64;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return 32;
        }
    }
    16
}

/// The x86-64 instruction-set extension a capped [`host_vector_bytes`]
/// turns off, by its name in both GCC's `-mno-NAME` and LLVM's `-NAME`
/// feature syntax: `avx512f` at 32 bytes on an AVX-512 host (its subsets
/// go with it), `avx` at 16 bytes (AVX2, FMA and AVX-512 go with it);
/// none at the host's own width and off x86-64.
pub fn capped_x86_extension() -> Option<&'static str> {
    if !cfg!(target_arch = "x86_64") || host_vector_bytes() >= detected_vector_bytes() {
        return None;
    }
    Some(if host_vector_bytes() == 32 {
        "avx512f"
    } else {
        "avx"
    })
}

/// The vector width for a host whose registers have `detected` bytes
/// under the setting `cap` (`MOROK_CPU_VECTOR_BYTES`): `16`, `32` or `64`
/// lowers the width to at most that; a cap above the host's width, an
/// unset variable and any other value leave `detected` (a machine cannot
/// run instructions it lacks, and an unknown setting is ignored like the
/// other `MOROK_` settings).
pub fn capped_vector_bytes(detected: u16, cap: Option<&str>) -> u16 {
    match cap.map(str::trim).and_then(|c| c.parse::<u16>().ok()) {
        Some(c @ (16 | 32 | 64)) => detected.min(c),
        _ => detected,
    }
}

#[cfg(test)]
mod tests {
    use super::capped_vector_bytes;

    #[test]
    fn a_cap_only_lowers_the_detected_width() {
        assert_eq!(capped_vector_bytes(64, Some("32")), 32);
        assert_eq!(capped_vector_bytes(64, Some(" 16 ")), 16);
        assert_eq!(capped_vector_bytes(32, Some("64")), 32);
        assert_eq!(capped_vector_bytes(64, None), 64);
        assert_eq!(capped_vector_bytes(64, Some("24")), 64);
        assert_eq!(capped_vector_bytes(64, Some("avx2")), 64);
        assert_eq!(capped_vector_bytes(16, Some("32")), 16);
    }
}
