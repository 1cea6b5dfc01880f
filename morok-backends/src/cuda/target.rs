//! The machine description the optimizer plans CUDA kernels for.

use morok_core::target::{GpuTarget, Target};

/// Bytes of shared memory a block may use without opting in to more
/// (every architecture since sm_30).
pub const SHARED_BYTES: usize = 48 * 1024;

/// The [`Target`] of an NVIDIA GPU with `l2_bytes` of L2 cache (0:
/// unknown): 1024 threads per block, 48 KiB of shared memory, warps of
/// 32, no vector registers (each lane a scalar register), upcasts up to
/// 16, no tensor-core opts yet (their lowering does not exist).
pub fn cuda_target(l2_bytes: usize) -> Target {
    Target {
        vector_bytes: 0,
        vector_registers: 0,
        l2_bytes,
        threads: 1,
        max_upcast: 16,
        gpu: Some(GpuTarget {
            threads_per_block: 1024,
            shared_bytes: SHARED_BYTES,
            warp_size: 32,
            tensor_cores: &[],
        }),
    }
}
