//! The lazy [`Tensor`].
//!
//! A tensor is a handle (an `Arc`) to a node of the tensor-level graph
//! (`docs/ARCHITECTURE.md`, "Levels of the graph") plus handles to the
//! buffers that graph reads. Operations build new nodes and compute
//! nothing; [`Tensor::realize`] runs the compiler pipeline.
//!
//! # Errors
//!
//! Every method returns `Result<_, Error>`, so a bad shape, axis, dtype or
//! argument is reported at the call that asked for it. The arithmetic
//! operators (`+`, `-`, `*`, `/`, unary `-`) cannot return a `Result`:
//! when they fail they produce a tensor that carries the error, every later
//! op on it passes the error on, and the first method called on a result
//! returns it. Errors quote the caller's source location.
//!
//! The movement ops of the book's API carry a `try_` prefix
//! (`reshape`, `transpose`, ...); their siblings follow it.

mod activations;
mod attention;
mod autograd;
mod concat;
mod conv;
mod creation;
mod data;
mod deprecated;
mod einsum;
mod elementwise;
mod indexing;
mod init;
mod interpolate;
mod linalg;
mod losses;
mod math;
mod movement;
mod nn;
mod operand;
mod ops;
mod padding;
mod placement;
mod pooling;
mod random;
mod reduce;
mod scatter;
mod selection;
mod sorting;

pub use attention::AttentionOptions;
pub(crate) use autograd::wants_gradient;
pub use conv::{
    Conv1dOptions, Conv3dOptions, ConvOptions, ConvTranspose3dOptions, ConvTransposeOptions,
};
pub use indexing::Index;
pub use init::{FanMode, KaimingOptions, Nonlinearity};
pub use losses::{ClassLossOptions, Reduction};
pub use math::{IsCloseOptions, RoundingMode};
pub use morok_core::shape::InterpolateMode;
pub use morok_core::shape::PadMode;
pub use morok_core::shape::{Pads, Slice};
pub use morok_core::tensor_ops::ScatterReduce;
pub use operand::{IntoOperand, Operand};
pub use ops::ScalarPow;
pub use pooling::{Pool3dOptions, PoolOptions};
pub use selection::MeshIndexing;

use crate::storage::{self, BufferRef};
use crate::{Error, KernelInfo, KernelRun};
use morok_core::shape::numel;
use morok_core::uop::{Arg, Op, Shape, UOp};
use morok_core::{DType, ScalarType};
use std::sync::Arc;

/// A lazy, immutable, cheaply clonable n-dimensional array.
#[derive(Clone)]
pub struct Tensor {
    inner: Arc<Inner>,
}

struct Inner {
    state: State,
    /// The kernels that produced it (shared by a realize's outputs and a
    /// call-site plan's results).
    kernels: Option<Arc<[KernelRun]>>,
    /// `requires_grad` and the accumulated gradient (`autograd.rs`).
    autograd: autograd::GradSlot,
}

enum State {
    Lazy(Graph),
    Failed(Error),
}

/// The graph of a well-formed tensor.
struct Graph {
    uop: Arc<UOp>,
    shape: Shape,
    dtype: ScalarType,
    /// Every buffer the graph reads, sorted by id, each once.
    buffers: Vec<BufferRef>,
}

impl Tensor {
    /// A tensor for `uop` (of `shape`) that reads `buffers`.
    fn from_parts(uop: Arc<UOp>, shape: Shape, buffers: Vec<BufferRef>) -> Tensor {
        Tensor::with_kernels(uop, shape, buffers, None)
    }

    fn with_kernels(
        uop: Arc<UOp>,
        shape: Shape,
        buffers: Vec<BufferRef>,
        kernels: Option<Arc<[KernelRun]>>,
    ) -> Tensor {
        let dtype = uop.dtype().scalar_type();
        Tensor {
            inner: Arc::new(Inner {
                state: State::Lazy(Graph {
                    uop,
                    shape,
                    dtype,
                    buffers,
                }),
                kernels,
                autograd: Default::default(),
            }),
        }
    }

    /// A tensor that carries `error`.
    fn failed(error: Error) -> Tensor {
        Tensor {
            inner: Arc::new(Inner {
                state: State::Failed(error),
                kernels: None,
                autograd: Default::default(),
            }),
        }
    }

    /// The tensor of `result`, or a tensor carrying its error.
    fn lift(result: Result<Tensor, Error>) -> Tensor {
        result.unwrap_or_else(Tensor::failed)
    }

    fn graph(&self) -> Result<&Graph, Error> {
        match &self.inner.state {
            State::Lazy(g) => Ok(g),
            State::Failed(e) => Err(e.clone()),
        }
    }

    /// A new tensor for `uop` that reads the same buffers as `self`.
    fn derive(&self, uop: Arc<UOp>, shape: Shape) -> Result<Tensor, Error> {
        Ok(Tensor::from_parts(
            uop,
            shape,
            self.graph()?.buffers.clone(),
        ))
    }

    /// The union of the buffers read by `tensors` (sorted, each once).
    fn merged_buffers(tensors: &[&Tensor]) -> Result<Vec<BufferRef>, Error> {
        let mut all: Vec<BufferRef> = Vec::new();
        for t in tensors {
            all.extend(t.graph()?.buffers.iter().cloned());
        }
        all.sort_by_key(BufferRef::id);
        all.dedup_by_key(|b| b.id());
        Ok(all)
    }

    /// The tensor's shape (empty for a scalar, and for a tensor that
    /// carries an error).
    pub fn shape(&self) -> &[usize] {
        match &self.inner.state {
            State::Lazy(g) => &g.shape,
            State::Failed(_) => &[],
        }
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        numel(self.shape())
    }

    /// The element type (`void` for a tensor that carries an error).
    pub fn dtype(&self) -> DType {
        match &self.inner.state {
            State::Lazy(g) => DType::scalar(g.dtype),
            State::Failed(_) => DType::VOID,
        }
    }

    /// The error this tensor carries, if an operator that built it failed.
    pub fn error(&self) -> Option<&Error> {
        match &self.inner.state {
            State::Lazy(_) => None,
            State::Failed(e) => Some(e),
        }
    }

    /// The root of the tensor's graph. A tensor that carries an error has
    /// no graph: its root is an empty `SINK`.
    pub fn uop(&self) -> Arc<UOp> {
        match &self.inner.state {
            State::Lazy(g) => g.uop.clone(),
            State::Failed(_) => UOp::sink(morok_core::uop::Srcs::new()),
        }
    }

    /// The kernels that ran to produce this tensor (empty unless it was
    /// returned by [`Tensor::realize`] or by a `#[morok::kernel]` call).
    pub fn kernels(&self) -> Vec<KernelInfo> {
        self.inner
            .kernels
            .as_deref()
            .map_or_else(Vec::new, |runs| runs.iter().map(KernelRun::info).collect())
    }

    /// The records behind [`Tensor::kernels`] (for tests of how they are
    /// kept).
    #[cfg(test)]
    pub(crate) fn inner_kernels(&self) -> Arc<[KernelRun]> {
        self.inner.kernels.clone().unwrap_or_else(|| Arc::new([]))
    }

    /// This tensor, listing `kernels` as the ones that produced it.
    pub(crate) fn with_kernel_list(&self, kernels: Arc<[KernelRun]>) -> Tensor {
        Tensor {
            inner: Arc::new(Inner {
                state: match &self.inner.state {
                    State::Lazy(g) => State::Lazy(Graph {
                        uop: g.uop.clone(),
                        shape: g.shape.clone(),
                        dtype: g.dtype,
                        buffers: g.buffers.clone(),
                    }),
                    State::Failed(e) => State::Failed(e.clone()),
                },
                kernels: Some(kernels),
                autograd: Default::default(),
            }),
        }
    }

    /// The buffer this tensor views in full, if it is a plain buffer view
    /// (a realized tensor or one built from host data).
    fn buffer_view(&self) -> Option<u64> {
        self.whole_buffer_id()
            .filter(|id| storage::device_of(*id).is_some())
    }

    /// The id of the buffer this tensor views in full (a realized tensor
    /// or one built from host data), without reading the registry: the
    /// DSL's warm path binds it as a kernel argument.
    pub(crate) fn whole_buffer_id(&self) -> Option<u64> {
        let g = self.graph().ok()?;
        let buf = match g.uop.op() {
            Op::Reshape => g.uop.src().first()?,
            _ => &g.uop,
        };
        match buf.arg() {
            Arg::Buffer { id, size } if buf.op() == Op::Buffer && *size == numel(&g.shape) => {
                Some(*id)
            }
            _ => None,
        }
    }

    /// A tensor of `shape` over a fresh BUFFER node that no storage backs:
    /// a graph built from it can be scheduled (the DSL's probe graphs)
    /// but not realized.
    pub(crate) fn placeholder(dtype: ScalarType, shape: &[usize]) -> Result<Tensor, Error> {
        let len = checked_numel("placeholder", shape)?;
        let buffer = UOp::new(
            Op::Buffer,
            DType::scalar(dtype),
            morok_core::uop::Srcs::new(),
            Arg::Buffer {
                id: morok_core::new_buffer_id(),
                size: len,
            },
        );
        Tensor::from_parts(buffer, [len].as_slice().into(), Vec::new()).reshape_to(shape)
    }

    /// A tensor of `shape` viewing the registered buffer `handle` of `len`
    /// elements (a kernel's output on the DSL's warm path).
    #[track_caller]
    pub(crate) fn from_registered(
        handle: storage::BufferRef,
        dtype: ScalarType,
        len: usize,
        shape: &[usize],
    ) -> Result<Tensor, Error> {
        Tensor::view_buffer(handle, dtype, len, shape)
    }

    /// Compiles and runs the graph; the result views a buffer that holds
    /// the values. A tensor that already views a whole buffer is returned
    /// as it is.
    #[track_caller]
    pub fn realize(&self) -> Result<Tensor, Error> {
        self.graph()?;
        if self.buffer_view().is_some() {
            return Ok(self.clone());
        }
        Ok(Tensor::realize_all(&[self])?.remove(0))
    }

    /// Realizes several tensors together (shared subgraphs are computed
    /// once).
    #[track_caller]
    pub fn realize_all(tensors: &[&Tensor]) -> Result<Vec<Tensor>, Error> {
        let mut roots = Vec::with_capacity(tensors.len());
        for t in tensors {
            let uop = t.graph()?.uop.clone();
            crate::call_cache::touch(&uop);
            roots.push(uop);
        }
        let done = crate::realize::realize_graph(&roots)?;
        if done.outputs.len() != tensors.len() {
            return Err(Error::runtime(
                "realize",
                format!(
                    "{} outputs for {} tensors",
                    done.outputs.len(),
                    tensors.len()
                ),
            ));
        }
        let kernels: Option<Arc<[KernelRun]>> =
            (!done.kernels.is_empty()).then(|| done.kernels.into());
        let mut out = Vec::with_capacity(tensors.len());
        for (t, uop) in tensors.iter().zip(done.outputs) {
            let id = uop.toposort().iter().find_map(|n| match n.arg() {
                Arg::Buffer { id, .. } if n.op() == Op::Buffer => Some(*id),
                _ => None,
            });
            let Some(id) = id else {
                return Err(Error::runtime("realize", "an output reads no buffer"));
            };
            let Some(handle) = storage::handle(id) else {
                return Err(Error::runtime(
                    "realize",
                    format!("output buffer {id} is not in storage"),
                ));
            };
            let shape = t.graph()?.shape.clone();
            out.push(Tensor::with_kernels(
                uop,
                shape,
                vec![handle],
                kernels.clone(),
            ));
        }
        Ok(out)
    }

    /// Evaluates the graph with the reference evaluator (f64, no
    /// compilation): the oracle the compiled result is tested against.
    #[track_caller]
    pub fn reference(&self) -> Result<ndarray::ArrayD<f64>, Error> {
        let g = self.graph()?;
        crate::call_cache::touch(&g.uop);
        let lookup =
            |id: u64| storage::read(id).map(|b| storage::codec::decode_f64(b.dtype, &b.bytes));
        let r = match morok_core::reference::evaluate(&g.uop, &lookup) {
            Ok(r) => r,
            Err(e) => return Err(Error::runtime("reference", e.to_string())),
        };
        match ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&r.shape), r.data) {
            Ok(a) => Ok(a),
            Err(e) => Err(Error::runtime("reference", e.to_string())),
        }
    }
}

/// The element count of a user-given shape, or an error when it does not
/// fit in memory addresses: the product of its non-zero sizes must be at
/// most `isize::MAX` (as in NumPy), so that a zero-size axis cannot hide
/// sizes whose products overflow.
#[track_caller]
fn checked_numel(op: &str, shape: &[usize]) -> Result<usize, Error> {
    let nonzero = shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= isize::MAX as usize);
    match nonzero {
        Some(_) if shape.contains(&0) => Ok(0),
        Some(n) => Ok(n),
        None => Err(Error::argument(
            op,
            format!("shape {shape:?} has too many elements"),
        )),
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner.state {
            State::Lazy(g) => write!(f, "Tensor({:?}, {})", g.shape.as_slice(), g.dtype),
            State::Failed(e) => write!(f, "Tensor(error: {e})"),
        }
    }
}
