//! The machine description the optimizer plans CUDA kernels for.

use morok_core::target::{GpuTarget, Target, MMA_M16N8K16};

/// Bytes of shared memory a block may use without opting in to more
/// (every architecture since sm_30).
pub const SHARED_BYTES: usize = 48 * 1024;

/// The [`Target`] of an NVIDIA GPU of compute capability `sm` (`80` for
/// `sm_80`) with `l2_bytes` of L2 cache (0: unknown): 1024 threads per
/// block, 48 KiB of shared memory, warps of 32, no vector registers (each
/// lane a scalar register), upcasts up to 16, and from `sm_80` on the
/// tensor cores of [`MMA_M16N8K16`] (`mma.sync` with `f16` or `bf16`
/// operands and `f32` sums).
pub fn cuda_target(l2_bytes: usize, sm: u32) -> Target {
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
            tensor_cores: if sm >= 80 { MMA_M16N8K16 } else { &[] },
        }),
    }
}

/// The compute capability of an `sm_XY` architecture name (`sm_90a` is
/// 90), 0 when it is not one.
pub fn compute_capability(arch: &str) -> u32 {
    let digits: String = arch
        .trim_start_matches("sm_")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or(0)
}
