//! The description of a machine that kernels are optimized for. A backend
//! builds it (the CPU backend probes the host: `morok_backends::host`);
//! the optimizer is a pure function of a kernel and a [`Target`]
//! (`crate::opt::optimize`), so the same kernel and target always give
//! the same opts, on any machine.

use crate::dtype::ScalarType;

/// What the optimizer knows of the machine a kernel will run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// Bytes of the vector registers the renderer fills (0: no vectors):
    /// the heuristics upcast by whole vectors and size register tiles by
    /// it.
    pub vector_bytes: u16,
    /// Vector registers the register allocator has (16 with AVX2, 32 with
    /// AVX-512 or NEON): a register tile's accumulators must fit them.
    pub vector_registers: u16,
    /// Bytes of one core's L2 cache (0: unknown, taken as 1 MiB): the
    /// heuristics order a register tile's loops so a matmul's strided
    /// operand stays in it.
    pub l2_bytes: usize,
    /// Most threads a `THREAD` axis may use (1: none).
    pub threads: usize,
    /// Largest `UPCAST` amount.
    pub max_upcast: i64,
    /// The GPU side of the machine (`None` on a CPU): workgroups with
    /// shared memory, which `LOCAL`, `GROUP`, `GROUPTOP` and `TC` need.
    pub gpu: Option<GpuTarget>,
}

/// The limits of a GPU's workgroups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuTarget {
    /// Most threads in one block (the product of the `LOCAL` axes).
    pub threads_per_block: usize,
    /// Bytes of shared memory per block (the budget of `GROUP`).
    pub shared_bytes: usize,
    /// Threads that run in lockstep (32 on NVIDIA GPUs): the GPU
    /// heuristics size local axes in multiples of it.
    pub warp_size: usize,
    /// The tensor-core instructions (`TC`); empty where there are none.
    pub tensor_cores: &'static [TensorCoreShape],
}

/// One tensor-core instruction: `C[m×n] += A[m×k] · B[k×n]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorCoreShape {
    /// Rows of `A` and `C`.
    pub m: usize,
    /// Columns of `B` and `C`.
    pub n: usize,
    /// The reduced dimension.
    pub k: usize,
    /// The element type of `A` and `B`.
    pub input: ScalarType,
    /// The element type of the accumulator `C`.
    pub accumulator: ScalarType,
}

/// The tensor-core shapes the optimizer's `TC` lowers (the warp
/// instruction `mma.m16n8k16` of NVIDIA GPUs from `sm_80`): `f16` or
/// `bf16` operands, `f32` sums.
pub const MMA_M16N8K16: &[TensorCoreShape] = &[
    TensorCoreShape {
        m: 16,
        n: 8,
        k: 16,
        input: ScalarType::F16,
        accumulator: ScalarType::F32,
    },
    TensorCoreShape {
        m: 16,
        n: 8,
        k: 16,
        input: ScalarType::BF16,
        accumulator: ScalarType::F32,
    },
];

impl Target {
    /// A CPU with `vector_bytes`-byte vector registers (0: none), an L2
    /// cache of `l2_bytes` (0: unknown) and `threads` cores. Upcasts may
    /// span four vectors of 4-byte lanes and never less than 16; the
    /// register file has 32 vector registers with 64-byte vectors (AVX-512)
    /// and 16 otherwise (override [`Target::vector_registers`] for other
    /// ISAs).
    pub fn cpu(vector_bytes: u16, l2_bytes: usize, threads: usize) -> Target {
        Target {
            vector_bytes,
            vector_registers: if vector_bytes >= 64 { 32 } else { 16 },
            l2_bytes,
            threads: threads.max(1),
            max_upcast: i64::from(vector_bytes).max(16),
            gpu: None,
        }
    }

    /// This target with at most `threads` threads for a `THREAD` axis
    /// (0 counts as 1).
    pub fn with_threads(mut self, threads: usize) -> Target {
        self.threads = threads.max(1);
        self
    }

    /// This target with `bytes`-byte vectors (and the upcast and register
    /// counts [`Target::cpu`] gives them).
    pub fn with_vector_bytes(self, bytes: u16) -> Target {
        Target {
            gpu: self.gpu,
            ..Target::cpu(bytes, self.l2_bytes, self.threads)
        }
    }

    /// Whether workgroups with shared memory exist (`LOCAL`, `GROUP`).
    pub fn has_local(&self) -> bool {
        self.gpu.is_some()
    }
}
