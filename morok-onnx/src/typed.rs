//! Tensors whose element type and shape are part of their Rust type, for
//! the `forward` methods that [`crate::onnx!`] generates: a dim the model
//! fixes is a [`Fixed`] (so passing a tensor typed with another size is a
//! compile error), a symbolic dim is [`Named`] (any size, bound
//! consistently across inputs by [`crate::Model::run`]).
//!
//! ```no_run
//! use morok::{DType, Tensor};
//! use morok_onnx::{Fixed, Named, Typed};
//! let x = Tensor::zeros(&[8, 4], DType::F32);
//! let x: Typed<f32, (Named, Fixed<4>)> = Typed::new(x)?; // checked here, at run time
//! # Ok::<(), morok_onnx::Error>(())
//! ```

use crate::error::{Error, Result};
use morok::{DType, Element, Tensor};
use std::marker::PhantomData;

/// A dim fixed to `N`.
pub struct Fixed<const N: usize>;

/// A symbolic (or undeclared) dim: any size.
pub struct Named;

/// A dim of a typed shape.
pub trait DimSpec {
    /// Whether `size` fits.
    fn accepts(size: usize) -> bool;
    /// How messages write it.
    fn describe() -> String;
}

impl<const N: usize> DimSpec for Fixed<N> {
    fn accepts(size: usize) -> bool {
        size == N
    }
    fn describe() -> String {
        N.to_string()
    }
}

impl DimSpec for Named {
    fn accepts(_: usize) -> bool {
        true
    }
    fn describe() -> String {
        "_".into()
    }
}

/// A typed shape: a tuple of [`DimSpec`]s (`()` for a scalar).
pub trait ShapeSpec {
    /// Whether `shape` fits.
    fn accepts(shape: &[usize]) -> bool;
    /// How messages write it (`[_, 4]`).
    fn describe() -> String;
}

/// Implements [`ShapeSpec`] for a tuple of dims.
macro_rules! shape_spec {
    ($($d:ident),*) => {
        impl<$($d: DimSpec),*> ShapeSpec for ($($d,)*) {
            fn accepts(shape: &[usize]) -> bool {
                let mut sizes = shape.iter();
                shape.len() == <[&str]>::len(&[$(stringify!($d)),*])
                    $(&& sizes.next().is_some_and(|&s| $d::accepts(s)))*
                    && sizes.next().is_none()
            }
            fn describe() -> String {
                let dims: Vec<String> = vec![$($d::describe()),*];
                format!("[{}]", dims.join(", "))
            }
        }
    };
}
shape_spec!();
shape_spec!(A);
shape_spec!(A, B);
shape_spec!(A, B, C);
shape_spec!(A, B, C, D);
shape_spec!(A, B, C, D, E);
shape_spec!(A, B, C, D, E, F);
shape_spec!(A, B, C, D, E, F, G);
shape_spec!(A, B, C, D, E, F, G, H);

/// A tensor of element type `T` whose shape fits `S`.
pub struct Typed<T: Element, S: ShapeSpec> {
    tensor: Tensor,
    marker: PhantomData<fn() -> (T, S)>,
}

impl<T: Element, S: ShapeSpec> Clone for Typed<T, S> {
    fn clone(&self) -> Self {
        Typed {
            tensor: self.tensor.clone(),
            marker: PhantomData,
        }
    }
}

impl<T: Element, S: ShapeSpec> Typed<T, S> {
    /// `tensor` typed, or an [`Error::Input`] naming what does not fit.
    #[track_caller]
    pub fn new(tensor: Tensor) -> Result<Self> {
        let location = std::panic::Location::caller();
        if tensor.dtype() != DType::scalar(T::SCALAR) || !S::accepts(tensor.shape()) {
            return Err(Error::Input {
                name: format!("typed tensor at {location}"),
                message: format!(
                    "expected {:?} {}, got {:?} {:?}",
                    DType::scalar(T::SCALAR),
                    S::describe(),
                    tensor.dtype(),
                    tensor.shape()
                ),
            });
        }
        Ok(Typed {
            tensor,
            marker: PhantomData,
        })
    }

    /// The tensor.
    pub fn tensor(&self) -> &Tensor {
        &self.tensor
    }

    /// The tensor, untyped.
    pub fn into_tensor(self) -> Tensor {
        self.tensor
    }
}
