//! Moving data in and out: host slices, vectors and `ndarray` arrays.

use super::Tensor;
use crate::error::{Error, Result};
use crate::storage::{self, codec};
use morok_core::dtype::Element;
use morok_core::shape::ShapeError;
use morok_core::uop::{Arg, Op, Srcs, UOp};
use morok_core::{DType, ScalarType};

impl Tensor {
    /// A 1-D tensor holding a copy of `data`.
    #[track_caller]
    pub fn from_slice<T: Element>(data: &[T]) -> Tensor {
        Tensor::lift(Tensor::upload(data, &[data.len()]))
    }

    /// A tensor of `shape` holding `data` in row-major order.
    #[track_caller]
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        if super::checked_numel("from_vec", shape)? != data.len() {
            return Err(Error::shape(ShapeError::new(
                "from_vec",
                &[shape],
                format!("{} elements cannot fill the shape", data.len()),
            )));
        }
        Tensor::upload(&data, shape)
    }

    /// A tensor holding a copy of an `ndarray` array (any layout).
    #[track_caller]
    pub fn from_ndarray<T, S, D>(array: &ndarray::ArrayBase<S, D>) -> Tensor
    where
        T: Element,
        S: ndarray::Data<Elem = T>,
        D: ndarray::Dimension,
    {
        let data: Vec<T> = array.iter().copied().collect();
        Tensor::lift(Tensor::upload(&data, array.shape()))
    }

    /// Registers `data` in storage and views it as `shape`.
    #[track_caller]
    fn upload<T: Element>(data: &[T], shape: &[usize]) -> Result<Tensor> {
        let handle = storage::upload(T::SCALAR, data.len(), codec::encode(data))?;
        Tensor::view_buffer(handle, T::SCALAR, data.len(), shape)
    }

    /// A tensor of `shape` viewing the `len` elements of the registered
    /// buffer `handle`.
    #[track_caller]
    pub(super) fn view_buffer(
        handle: storage::BufferRef,
        dtype: ScalarType,
        len: usize,
        shape: &[usize],
    ) -> Result<Tensor> {
        let buffer = UOp::new(
            Op::Buffer,
            DType::scalar(dtype),
            Srcs::new(),
            Arg::Buffer {
                id: handle.id(),
                size: len,
            },
        );
        let t = Tensor::from_parts(buffer, [len].as_slice().into(), vec![handle]);
        t.reshape_to(shape)
    }

    /// The elements in row-major order, realizing the tensor first if
    /// needed. `T` must be the tensor's element type.
    #[track_caller]
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.read_as("to_vec")
    }

    /// The elements in row-major order, with errors naming `op`.
    #[track_caller]
    fn read_as<T: Element>(&self, op: &str) -> Result<Vec<T>> {
        let dtype = self.graph()?.dtype;
        if dtype != T::SCALAR {
            return Err(Error::dtype(
                op,
                format!("the tensor holds {dtype} elements, not {}", T::SCALAR),
            ));
        }
        crate::call_cache::touch(&self.uop());
        let realized = self.realize()?;
        let Some(id) = realized.buffer_view() else {
            return Err(Error::runtime(
                op,
                "the realized tensor is not a buffer view",
            ));
        };
        let Some(buffer) = storage::read(id) else {
            return Err(Error::runtime(op, format!("buffer {id} is not in storage")));
        };
        Ok(codec::decode(&buffer.bytes))
    }

    /// The elements as an `ndarray` array of the tensor's shape.
    #[track_caller]
    pub fn to_ndarray<T: Element>(&self) -> Result<ndarray::ArrayD<T>> {
        let data = self.read_as::<T>("to_ndarray")?;
        match ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(self.shape()), data) {
            Ok(a) => Ok(a),
            Err(e) => Err(Error::runtime("to_ndarray", e.to_string())),
        }
    }
}
