//! A device implemented outside `morok-backends`: it runs kernel ASTs with
//! the core's reference interpreter (`morok_core::interp`). Registered as
//! `INTERP`, it is selected through the same facade path as the built-in
//! devices (`MOROK_DEVICE=INTERP`), which proves the `Backend` trait is the
//! only door between the runtime and a backend.

use morok::core::caps::Caps;
use morok::core::device::{CompiledKernel, DeviceBuffer, DeviceError, DeviceResult};
use morok::core::dtype::DType;
use morok::core::interp::run_kernel_exact;
use morok::core::program::{Program, VarSlot};
use morok::core::render::{RenderError, RenderedKernel, Renderer};
use morok::core::target::Target;
use morok::core::LoweredKernel;
use morok::core::{bits_of, value_of_bits};
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

/// "Renders" the linear program as a listing (the interpreter runs the
/// kernel AST the program carries, not this text).
struct Listing;

impl Renderer for Listing {
    fn name(&self) -> &str {
        "listing"
    }

    /// The interpreter evaluates every op on f64 directly.
    fn caps(&self) -> Caps {
        Caps::all_native()
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
    ast: Arc<UOp>,
    vars: Vec<VarSlot>,
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
        run_kernel_exact(&ast, &mut values).map_err(|e| bad(e.to_string()))?;
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

/// The interpreter device.
struct InterpDevice {
    renderer: Listing,
}

impl Backend for InterpDevice {
    fn name(&self) -> &str {
        "INTERP"
    }

    fn identity(&self) -> String {
        "interp".into()
    }

    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }

    /// A one-threaded CPU with the listing's vectors (none) and an L2 of
    /// unknown size.
    fn target(&self) -> Target {
        Target::cpu(self.renderer.caps().vector_bytes, 0, 1)
    }

    fn allocate(&self, dtype: DType, count: usize) -> DeviceResult<Box<dyn DeviceBuffer>> {
        Ok(Box::new(InterpBuffer {
            dtype,
            len: count,
            bytes: Mutex::new(vec![0; count * dtype.itemsize()]),
        }))
    }

    fn compile(&self, program: &Program) -> DeviceResult<Arc<dyn CompiledKernel>> {
        Ok(Arc::new(InterpKernel {
            name: program.name.clone(),
            source: program.source.clone(),
            ast: program.ast.clone(),
            vars: program.vars.clone(),
        }))
    }
}

/// Registers the interpreter device as `INTERP` (once per process).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        Device::register("INTERP", || {
            Ok(Arc::new(InterpDevice { renderer: Listing }) as Arc<dyn Backend>)
        })
        .expect("registering INTERP");
    });
}
