//! The CUDA device: one GPU's context and stream, its buffers
//! ([`super::buffer`]), and kernels compiled by NVRTC into cubins for its
//! `sm_XX` (cached on disk; a cubin loads without the driver's PTX JIT),
//! loaded as modules and launched with the grid and block lowering
//! chose.
//!
//! Launches are queued on the device's stream and return at once; a
//! copy out waits for the stream, so a realize synchronizes once, when
//! its result is read. Every launch is checked first
//! ([`crate::launch_check`]): the buffers' count, types, device and
//! sizes against the access ranges lowering proved, the variables
//! against their bounds.
//!
//! Not run on a GPU in this project's CI (none is available there): CI
//! builds it with the feature `cuda`, compiles every kernel with NVRTC
//! and `ptxas`, and checks the launch semantics on the CPU (`GPUSIM`).

use super::buffer::{driver, unified_from_env, BufferCache, CudaBuffer, Memory};
use super::nvrtc::{compile_cached, nvrtc_version, Output};
use super::render::CudaRenderer;
use super::target::{compute_capability, cuda_target};
use crate::launch_check::LaunchChecks;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use morok_core::device::{CompiledKernel, Device, DeviceBuffer, DeviceError, DeviceResult};
use morok_core::program::Program;
use morok_core::render::Renderer;
use morok_core::target::Target;
use morok_core::DType;
use std::path::PathBuf;
use std::sync::Arc;

/// One CUDA GPU as a Morok device.
pub struct CudaDevice {
    /// `CUDA` for GPU 0, `CUDA:N` for GPU `N`.
    name: String,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// The architecture kernels are compiled for (`sm_90`).
    arch: String,
    /// The GPU's name (`NVIDIA H200`).
    gpu: String,
    /// NVRTC's version.
    nvrtc: (i32, i32),
    /// L2 cache bytes (for the optimizer's target).
    l2_bytes: usize,
    /// Freed device memory kept for reuse.
    cache: Arc<BufferCache>,
    /// Buffers in unified memory (`MOROK_CUDA_UNIFIED=1`).
    unified: bool,
    /// The on-disk cache directory (cubins under `cuda/`).
    cache_dir: PathBuf,
}

impl CudaDevice {
    /// Opens GPU `ordinal`: its primary context, a stream of its own, its
    /// architecture, name and L2 size. The caller checked that the driver
    /// and NVRTC libraries exist (`cudarc` panics without them).
    pub fn open(ordinal: usize) -> Result<CudaDevice, String> {
        let fail = |what: &str, e: cudarc::driver::DriverError| {
            format!("CUDA: device {ordinal}: {what}: {e}")
        };
        let count = CudaContext::device_count().map_err(|e| fail("counting devices", e))?;
        if ordinal >= count.max(0) as usize {
            return Err(format!(
                "CUDA: device {ordinal} does not exist ({count} CUDA devices on this machine)"
            ));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| fail("creating a context", e))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| fail("reading the compute capability", e))?;
        let gpu = ctx.name().map_err(|e| fail("reading the name", e))?;
        let l2_bytes = ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
            .map_or(0, |b| b.max(0) as usize);
        let stream = ctx.new_stream().map_err(|e| fail("creating a stream", e))?;
        let nvrtc = nvrtc_version()?;
        Ok(CudaDevice {
            name: match ordinal {
                0 => "CUDA".to_string(),
                n => format!("CUDA:{n}"),
            },
            ctx,
            stream,
            arch: format!("sm_{major}{minor}"),
            gpu,
            nvrtc,
            l2_bytes,
            cache: Arc::new(BufferCache::new(BufferCache::limit_from_env())),
            unified: unified_from_env(),
            cache_dir: crate::cpu::CpuConfig::from_env().cache_dir,
        })
    }

    /// Bytes of freed device memory held for reuse.
    pub fn cached_bytes(&self) -> usize {
        self.cache.bytes()
    }
}

impl Device for CudaDevice {
    fn name(&self) -> &str {
        &self.name
    }

    fn identity(&self) -> String {
        format!(
            "cuda\0{}\0nvrtc {}.{}\0{}",
            self.arch, self.nvrtc.0, self.nvrtc.1, self.gpu
        )
    }

    fn describe(&self) -> String {
        format!(
            "CUDA ({}, {}, NVRTC {}.{})",
            self.gpu, self.arch, self.nvrtc.0, self.nvrtc.1
        )
    }

    fn cache_dir(&self) -> Option<PathBuf> {
        Some(self.cache_dir.clone())
    }

    fn renderer(&self) -> &dyn Renderer {
        &CudaRenderer
    }

    fn target(&self) -> Target {
        cuda_target(self.l2_bytes, compute_capability(&self.arch))
    }

    /// Waits for the device's stream (every queued launch and copy).
    fn synchronize(&self) -> DeviceResult<()> {
        self.stream
            .synchronize()
            .map_err(driver("waiting for the stream"))
    }

    fn allocate(&self, dtype: DType, count: usize) -> DeviceResult<Box<dyn DeviceBuffer>> {
        Ok(Box::new(CudaBuffer::allocate(
            &self.stream,
            &self.cache,
            self.unified,
            dtype,
            count,
        )?))
    }

    fn compile(&self, program: &Program) -> DeviceResult<Arc<dyn CompiledKernel>> {
        let Some(block) = program.launch.local else {
            return Err(DeviceError::BadArgs {
                what: format!("kernel `{}`", program.name),
                reason: "it was not lowered for a GPU (no block size)".to_string(),
            });
        };
        let dims = |d: [usize; 3], what: &str| -> DeviceResult<(u32, u32, u32)> {
            let c = |v: usize| {
                u32::try_from(v).map_err(|_| DeviceError::BadArgs {
                    what: format!("kernel `{}`", program.name),
                    reason: format!("{what} {d:?} exceeds the launch limits"),
                })
            };
            Ok((c(d[0])?, c(d[1])?, c(d[2])?))
        };
        let config = LaunchConfig {
            grid_dim: dims(program.launch.global, "grid")?,
            block_dim: dims(block, "block")?,
            shared_mem_bytes: 0,
        };
        let cubin = morok_core::profile::timed(morok_core::profile::Stage::Compile, || {
            compile_cached(
                &program.source,
                &program.name,
                &self.arch,
                Output::Cubin,
                &self.cache_dir.join("cuda"),
            )
        })?;
        let module = morok_core::profile::timed(morok_core::profile::Stage::Load, || {
            self.ctx.load_module(cudarc::nvrtc::Ptx::from_binary(cubin))
        })
        .map_err(|e| DeviceError::Load {
            kernel: program.name.clone(),
            path: "cubin".to_string(),
            reason: e.to_string(),
        })?;
        let func = module
            .load_function(&program.entry)
            .map_err(|e| DeviceError::Load {
                kernel: program.name.clone(),
                path: "cubin".to_string(),
                reason: format!("no entry `{}`: {e}", program.entry),
            })?;
        Ok(Arc::new(CudaKernel {
            checks: LaunchChecks::new(program),
            source: program.source.clone(),
            ctx: self.ctx.clone(),
            stream: self.stream.clone(),
            func,
            config,
        }))
    }
}

/// A kernel loaded on one CUDA device.
pub struct CudaKernel {
    checks: LaunchChecks,
    source: String,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    func: CudaFunction,
    config: LaunchConfig,
}

impl CompiledKernel for CudaKernel {
    fn name(&self) -> &str {
        self.checks.name()
    }

    fn source(&self) -> &str {
        &self.source
    }

    /// Checks the launch, then queues it on the device's stream: the
    /// buffers' device pointers, their element counts and the variables,
    /// in the order the renderer declares them.
    fn run(&self, buffers: &[&dyn DeviceBuffer], vars: &[i64]) -> DeviceResult<()> {
        self.checks.check_vars(vars)?;
        let access = self.checks.access(vars);
        let cuda: Vec<&CudaBuffer> = self.checks.check(buffers, access.as_deref(), "CUDA")?;
        if let Some(i) = cuda
            .iter()
            .position(|b| !Arc::ptr_eq(b.context(), &self.ctx))
        {
            return Err(self
                .checks
                .bad(format!("buffer {i} lives on another CUDA device")));
        }
        let sizes: Vec<i64> = cuda.iter().map(|b| b.len() as i64).collect();
        let mut launch = self.stream.launch_builder(&self.func);
        for b in &cuda {
            match b.memory() {
                Memory::Device(s) => launch.arg(s),
                Memory::Unified(s) => launch.arg(s),
            };
        }
        for s in &sizes {
            launch.arg(s);
        }
        for v in vars {
            launch.arg(v);
        }
        // SAFETY: the arguments are the renderer's signature (a pointer
        // per slot, then each slot's count, then the variables, all
        // 64-bit), each buffer holds every element the kernel can touch
        // at `vars` (checked above), and a written buffer is in no other
        // slot; launches on one stream run in order.
        unsafe { launch.launch(self.config) }.map_err(driver("launching a kernel"))?;
        Ok(())
    }

    /// Waits for the device's stream (every queued launch).
    fn finish(&self) -> DeviceResult<()> {
        self.stream
            .synchronize()
            .map_err(driver("waiting for the stream"))
    }
}
