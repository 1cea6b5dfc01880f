//! A device implemented outside `morok-backends`: it runs kernel ASTs with
//! the core's reference interpreter (`morok_core::interp`). Registered as
//! `INTERP`, it is selected through the same facade path as the built-in
//! devices (`MOROK_DEVICE=INTERP`), which proves the `Backend` trait is the
//! only door between the runtime and a backend.
//!
//! Registered as `GPUSIM` (`register_gpu_sim`), the same interpreter plays
//! a GPU: the optimizer plans for a GPU target (`LOCAL` axes, the GPU
//! heuristics), lowering maps the output ranges to block and thread
//! indices (`morok_core::lower::gpu_dims`) within deliberately small
//! launch limits (so merged, split and padded dimensions are common), and
//! each kernel runs with launch semantics (`interp::run_launch_exact`: every
//! thread of every block; two threads storing one element, or an access
//! outside a buffer, is an error). The differential suite on it checks the
//! GPU index maps and masks on the CPU.

use morok::core::caps::{Caps, LaunchLimits};
use morok::core::device::{CompiledKernel, DeviceBuffer, DeviceError, DeviceResult};
use morok::core::dtype::DType;
use morok::core::interp::{run_kernel_exact, run_launch_exact};
use morok::core::program::{Program, VarSlot};
use morok::core::render::{RenderError, RenderedKernel, Renderer};
use morok::core::target::{GpuTarget, Target, MMA_M16N8K16};
use morok::core::{bits_of, value_of_bits};
use morok::core::{map_gpu_dims, GpuLaunch, LoweredKernel};
use morok::core::{ConstValue, ScalarType, UOp};
use morok::device::Backend;
use morok::Device;
use std::any::Any;
use std::sync::{Arc, Mutex, Once};

/// Host memory of the interpreter device.
struct InterpBuffer {
    dtype: DType,
    len: usize,
    bytes: Mutex<Vec<u8>>,
}

impl DeviceBuffer for InterpBuffer {
    fn dtype(&self) -> DType {
        self.dtype
    }

    fn len(&self) -> usize {
        self.len
    }

    fn copy_in(&mut self, bytes: &[u8]) -> DeviceResult<()> {
        let mut b = self.bytes.lock().unwrap();
        if bytes.len() != b.len() {
            return Err(DeviceError::BadArgs {
                what: "copy_in".into(),
                reason: format!("{} bytes for a buffer of {}", bytes.len(), b.len()),
            });
        }
        b.copy_from_slice(bytes);
        Ok(())
    }

    fn copy_out(&self, bytes: &mut [u8]) -> DeviceResult<()> {
        let b = self.bytes.lock().unwrap();
        if bytes.len() != b.len() {
            return Err(DeviceError::BadArgs {
                what: "copy_out".into(),
                reason: format!("{} bytes for a buffer of {}", bytes.len(), b.len()),
            });
        }
        bytes.copy_from_slice(&b);
        Ok(())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The launch limits of `GPUSIM`: small, so that kernels of the
/// differential suite merge, split and pad their dimensions.
const GPU_SIM_LIMITS: LaunchLimits = LaunchLimits {
    grid: [16, 3, 65535],
    block: [8, 4, 4],
};

/// The threads per block `GPUSIM`'s optimizer may use (the product of
/// the block limits).
const GPU_SIM_THREADS: usize = 128;

/// "Renders" the linear program as a listing (the interpreter runs the
/// kernel AST the program carries, not this text); `launch`: a GPU's
/// limits (`GPUSIM`).
struct Listing {
    launch: Option<LaunchLimits>,
}

impl Renderer for Listing {
    fn name(&self) -> &str {
        "listing"
    }

    /// The interpreter evaluates every op on f64 directly; as a GPU it
    /// launches within [`GPU_SIM_LIMITS`].
    fn caps(&self) -> Caps {
        match self.launch {
            Some(limits) => Caps::all_native().with_launch(limits),
            None => Caps::all_native(),
        }
    }

    fn render(&self, kernel: &LoweredKernel) -> Result<RenderedKernel, RenderError> {
        let source = kernel.ops.iter().map(|n| format!("{n:?}\n")).collect();
        Ok(RenderedKernel {
            source,
            entry: kernel.name.clone(),
        })
    }
}

/// A program's kernel AST, run by the interpreter.
struct InterpKernel {
    name: String,
    source: String,
    /// The kernel AST (on `GPUSIM`: mapped to block and thread indices).
    ast: Arc<UOp>,
    vars: Vec<VarSlot>,
    /// On `GPUSIM`: the grid and block it runs as.
    launch: Option<GpuLaunch>,
}

impl InterpKernel {
    /// The AST with each `DEFINE_VAR` replaced by its launch value.
    fn bind(&self, values: &[i64]) -> Arc<UOp> {
        let mut map = std::collections::HashMap::new();
        for n in self.ast.toposort() {
            if let morok::core::Arg::Var { name, .. } = n.arg() {
                let slot = self.vars.iter().position(|v| &v.name == name);
                if let Some(&v) = slot.and_then(|k| values.get(k)) {
                    map.insert(n.id(), UOp::index(v));
                }
            }
        }
        self.ast.substitute(&map)
    }
}

impl CompiledKernel for InterpKernel {
    fn name(&self) -> &str {
        &self.name
    }

    fn source(&self) -> &str {
        &self.source
    }

    fn run(&self, buffers: &[&dyn DeviceBuffer], vars: &[i64]) -> DeviceResult<()> {
        let bad = |reason: String| DeviceError::BadArgs {
            what: format!("kernel `{}`", self.name),
            reason,
        };
        if vars.len() != self.vars.len() {
            return Err(bad(format!(
                "{} variable values given, the kernel takes {}",
                vars.len(),
                self.vars.len()
            )));
        }
        let ast = self.bind(vars);
        let mut hosts = Vec::with_capacity(buffers.len());
        for b in buffers {
            let b = b
                .as_any()
                .downcast_ref::<InterpBuffer>()
                .ok_or_else(|| bad("not an interpreter buffer".into()))?;
            hosts.push(b);
        }
        let mut values: Vec<Vec<ConstValue>> = hosts
            .iter()
            .map(|b| decode(b.dtype.scalar_type(), &b.bytes.lock().unwrap()))
            .collect();
        match &self.launch {
            Some(launch) => run_launch_exact(&ast, &mut values, launch),
            None => run_kernel_exact(&ast, &mut values),
        }
        .map_err(|e| bad(e.to_string()))?;
        for (b, v) in hosts.iter().zip(&values) {
            *b.bytes.lock().unwrap() = encode(b.dtype.scalar_type(), v);
        }
        Ok(())
    }
}

/// The elements of `bytes` (native layout of `t`) as exact values.
fn decode(t: ScalarType, bytes: &[u8]) -> Vec<ConstValue> {
    let size = t.itemsize();
    bytes
        .chunks_exact(size)
        .map(|c| {
            let mut word = [0u8; 8];
            word[..size].copy_from_slice(c);
            value_of_bits(u64::from_ne_bytes(word), t)
        })
        .collect()
}

/// The native bytes of values of type `t`.
fn encode(t: ScalarType, values: &[ConstValue]) -> Vec<u8> {
    let size = t.itemsize();
    values
        .iter()
        .flat_map(|v| bits_of(*v, t).unwrap_or(0).to_ne_bytes()[..size].to_vec())
        .collect()
}

/// Checks a program before the interpreter runs it (`CUDACHECK`: NVRTC
/// and `ptxas` build its CUDA C).
type ProgramCheck = fn(&Program) -> DeviceResult<()>;

/// The interpreter device (`INTERP`, as a GPU `GPUSIM`, or with the CUDA
/// renderer `CUDACHECK`).
struct InterpDevice {
    name: &'static str,
    renderer: Box<dyn Renderer>,
    /// The launch limits of a GPU (`None`: kernels run as loops).
    launch: Option<LaunchLimits>,
    target: Target,
    check: Option<ProgramCheck>,
}

impl Backend for InterpDevice {
    fn name(&self) -> &str {
        self.name
    }

    fn identity(&self) -> String {
        self.name.to_ascii_lowercase()
    }

    fn renderer(&self) -> &dyn Renderer {
        self.renderer.as_ref()
    }

    fn target(&self) -> Target {
        self.target
    }

    fn allocate(&self, dtype: DType, count: usize) -> DeviceResult<Box<dyn DeviceBuffer>> {
        Ok(Box::new(InterpBuffer {
            dtype,
            len: count,
            bytes: Mutex::new(vec![0; count * dtype.itemsize()]),
        }))
    }

    fn compile(&self, program: &Program) -> DeviceResult<Arc<dyn CompiledKernel>> {
        if let Some(check) = self.check {
            check(program)?;
        }
        let (ast, launch) = match &self.launch {
            Some(limits) => {
                let (ast, launch) =
                    map_gpu_dims(&program.ast, limits).map_err(|e| DeviceError::BadArgs {
                        what: format!("kernel `{}`", program.name),
                        reason: e.to_string(),
                    })?;
                (ast, Some(launch))
            }
            None => (program.ast.clone(), None),
        };
        Ok(Arc::new(InterpKernel {
            name: program.name.clone(),
            source: program.source.clone(),
            ast,
            vars: program.vars.clone(),
            launch,
        }))
    }
}

/// `INTERP`: a one-threaded CPU with the listing's vectors (none) and an
/// L2 of unknown size.
fn interp() -> InterpDevice {
    let renderer = Listing { launch: None };
    InterpDevice {
        name: "INTERP",
        target: Target::cpu(renderer.caps().vector_bytes, 0, 1),
        renderer: Box::new(renderer),
        launch: None,
        check: None,
    }
}

/// `GPUSIM`: a GPU of [`GPU_SIM_THREADS`] threads per block with the
/// tensor cores of [`MMA_M16N8K16`], launching within [`GPU_SIM_LIMITS`].
fn gpu_sim() -> InterpDevice {
    InterpDevice {
        name: "GPUSIM",
        target: Target {
            gpu: Some(GpuTarget {
                threads_per_block: GPU_SIM_THREADS,
                shared_bytes: 48 * 1024,
                warp_size: 32,
                tensor_cores: MMA_M16N8K16,
            }),
            ..Target::cpu(0, 0, 1)
        },
        renderer: Box::new(Listing {
            launch: Some(GPU_SIM_LIMITS),
        }),
        launch: Some(GPU_SIM_LIMITS),
        check: None,
    }
}

/// Registers the interpreter device as `INTERP` (once per process).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        Device::register("INTERP", || Ok(Arc::new(interp()) as Arc<dyn Backend>))
            .expect("registering INTERP");
    });
}

/// Registers the interpreter device as a GPU, `GPUSIM` (once per process).
pub fn register_gpu_sim() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        Device::register("GPUSIM", || Ok(Arc::new(gpu_sim()) as Arc<dyn Backend>))
            .expect("registering GPUSIM");
    });
}

/// Registers `CUDACHECK` (once per process): the CUDA device's optimizer
/// target (`sm_80`, tensor cores), lowering and CUDA C, every kernel
/// compiled by NVRTC and assembled by `ptxas` for sm_80 and sm_90 before
/// the interpreter runs its AST with launch semantics in CUDA's launch
/// limits. So the differential suite on it proves that every kernel it
/// produces builds for the GPU, and computes what the reference does as
/// a GPU launches it.
#[cfg(feature = "cuda")]
pub fn register_cuda_check() {
    use morok::backends::cuda::{self, nvrtc, CudaRenderer, CUDA_LAUNCH_LIMITS};
    fn build(p: &Program) -> DeviceResult<()> {
        let ptxas = nvrtc::find_ptxas();
        for arch in ["sm_80", "sm_90"] {
            let ptx = nvrtc::compile_ptx(&p.source, &p.name, arch)?;
            if let Some(ptxas) = &ptxas {
                nvrtc::assemble(ptxas, &ptx, &p.name, arch)?;
            }
        }
        Ok(())
    }
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        Device::register("CUDACHECK", || {
            Ok(Arc::new(InterpDevice {
                name: "CUDACHECK",
                renderer: Box::new(CudaRenderer),
                launch: Some(CUDA_LAUNCH_LIMITS),
                target: cuda::cuda_target(0, 80),
                check: Some(build),
            }) as Arc<dyn Backend>)
        })
        .expect("registering CUDACHECK");
    });
}
