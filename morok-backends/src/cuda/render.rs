//! The CUDA renderer: a GPU-lowered [`LoweredKernel`] becomes one CUDA C++
//! kernel for NVRTC.
//!
//! The statements are the C renderer's ([`crate::cpu::c::render`] in its
//! CUDA dialect: the same expression for every op, so the same
//! semantics: IEEE floats without contraction, wrapping integers,
//! saturating float-to-int casts, halves as `uint16_t` bits computed in
//! `float` and rounded after every op (converted by the GPU's `cvt`
//! instructions); vectors as structs of lanes,
//! computed lane by lane; tensor cores as inline PTX); this file adds the
//! frame:
//!
//! ```c
//! extern "C" __global__ void __launch_bounds__(THREADS)
//! NAME(T0 *__restrict__ data0, const T1 *__restrict__ data1, ...,
//!      int64_t size0, int64_t size1, ..., int64_t var0, ...);
//! ```
//!
//! one pointer per buffer slot (`const` where the kernel only reads it),
//! then every slot's element count (read by the bounds guards of
//! data-dependent accesses), then the scalar variables in launch order;
//! launched with `LoweredKernel::gpu`'s grid and block. NVRTC compiles it
//! with `--device-as-default-execution-space`, so the C renderer's helper
//! functions are device functions as they are.

use crate::cpu::c::render::{render_body, Dialect};
use crate::cpu::c::types::storage_type;
use morok_core::caps::LaunchLimits;
use morok_core::render::{Caps, RenderError, RenderedKernel, Renderer};
use morok_core::uop::Op;
use morok_core::LoweredKernel;
use std::fmt::Write;

/// The grid and block limits of every NVIDIA GPU since compute
/// capability 3.0.
pub const CUDA_LAUNCH_LIMITS: LaunchLimits = LaunchLimits {
    grid: [2_147_483_647, 65_535, 65_535],
    block: [1024, 1024, 64],
};

/// The widest vector a CUDA kernel uses: 16 bytes, the widest load or
/// store one thread issues (`ld.global.v4.f32`).
pub const VECTOR_BYTES: u16 = 16;

/// What a CUDA source starts with: NVRTC has no C library headers, so the
/// fixed-width integer types and the float specials the C renderer names
/// are defined here (`memcpy` and the math functions are built in).
const CUDA_PRELUDE: &str = "typedef signed char int8_t;\n\
     typedef short int16_t;\n\
     typedef int int32_t;\n\
     typedef long long int64_t;\n\
     typedef unsigned char uint8_t;\n\
     typedef unsigned short uint16_t;\n\
     typedef unsigned int uint32_t;\n\
     typedef unsigned long long uint64_t;\n\
     #define INFINITY (__int_as_float(0x7f800000))\n\
     #define NAN (__int_as_float(0x7fffffff))\n";

/// Renders GPU-lowered programs as CUDA C++ (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct CudaRenderer;

impl Renderer for CudaRenderer {
    fn name(&self) -> &str {
        "cuda"
    }

    /// CUDA's math library has every transcendental and `fma`/`fmaf`
    /// (one instruction); vectors of up to 16 bytes (`float4`-sized:
    /// structs of lanes, loaded and stored whole, computed lane by lane);
    /// kernels launch as grids of blocks within [`CUDA_LAUNCH_LIMITS`].
    fn caps(&self) -> Caps {
        let mut caps = Caps::all_native()
            .with_launch(CUDA_LAUNCH_LIMITS)
            .with_vector_bytes(VECTOR_BYTES);
        caps.native = caps.native.with(Op::MulAcc);
        caps
    }

    fn render(&self, kernel: &LoweredKernel) -> Result<RenderedKernel, RenderError> {
        crate::cpu::codegen::check_entry_name(kernel, "CUDA")?;
        let fail = |what: &str| RenderError {
            renderer: "CUDA".to_string(),
            node: kernel.name.clone(),
            what: what.to_string(),
        };
        let Some(launch) = kernel.gpu else {
            return Err(fail("the kernel was not lowered for a GPU (no launch)"));
        };
        let body = render_body(kernel, Dialect::Cuda)?;
        let mut params = Vec::new();
        for (slot, b) in kernel.buffers.iter().enumerate() {
            let ty = storage_type(b.dtype.scalar_type())
                .ok_or_else(|| fail("a buffer of a type without a C type"))?;
            let cq = if b.written { "" } else { "const " };
            params.push(format!("{cq}{ty} *__restrict__ data{slot}"));
        }
        params.extend((0..kernel.buffers.len()).map(|slot| format!("int64_t size{slot}")));
        params.extend((0..body.vars).map(|k| format!("int64_t var{k}")));
        let threads: usize = launch.block.iter().product();
        let mut src = String::from(CUDA_PRELUDE);
        src.push_str(&crate::cpu::c::prelude::cuda_scalar_helpers());
        src.push_str(&crate::cpu::c::prelude::cuda_vector_prelude(kernel));
        let _ = writeln!(
            src,
            "\nextern \"C\" __global__ void __launch_bounds__({threads}) {}({}) {{",
            kernel.name,
            params.join(", ")
        );
        for slot in 0..kernel.buffers.len() {
            let _ = writeln!(src, "  (void)size{slot};");
        }
        src.push_str(&body.code);
        src.push_str("}\n");
        Ok(RenderedKernel {
            source: src,
            entry: kernel.name.clone(),
        })
    }
}
