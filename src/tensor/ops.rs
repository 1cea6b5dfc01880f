//! The arithmetic operators. They cannot return a `Result`, so a failure
//! (a broadcast mismatch, a bool subtraction, ...) gives a tensor that
//! carries the error (see the module docs of [`super`]).

use super::elementwise::Binary;
use super::{IntoOperand, Tensor};
use morok_core::dtype::Element;
use std::ops::{Add, Div, Mul, Neg, Sub};

macro_rules! tensor_operators {
    ($($trait:ident :: $method:ident => $kind:ident),* $(,)?) => {$(
        impl $trait<&Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                Tensor::lift(Tensor::binary(self.into_operand(), rhs.into_operand(), Binary::$kind))
            }
        }
        impl $trait<Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                Tensor::lift(Tensor::binary(self.into_operand(), rhs.into_operand(), Binary::$kind))
            }
        }
        impl $trait<&Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                Tensor::lift(Tensor::binary(self.into_operand(), rhs.into_operand(), Binary::$kind))
            }
        }
        impl $trait<Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                Tensor::lift(Tensor::binary(self.into_operand(), rhs.into_operand(), Binary::$kind))
            }
        }
        impl<S: Element> $trait<S> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: S) -> Tensor {
                Tensor::lift(Tensor::binary(self.into_operand(), rhs.into_operand(), Binary::$kind))
            }
        }
        impl<S: Element> $trait<S> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: S) -> Tensor {
                Tensor::lift(Tensor::binary(self.into_operand(), rhs.into_operand(), Binary::$kind))
            }
        }
    )*};
}

tensor_operators!(Add::add => Add, Sub::sub => Sub, Mul::mul => Mul, Div::div => Div);

/// `scalar op tensor` for each scalar type (a generic impl would break
/// the orphan rule).
macro_rules! scalar_operators {
    ($($scalar:ty),*) => {$(
        scalar_operators!(@one $scalar, Add::add => Add, Sub::sub => Sub, Mul::mul => Mul, Div::div => Div);
    )*};
    (@one $scalar:ty, $($trait:ident :: $method:ident => $kind:ident),*) => {$(
        impl $trait<&Tensor> for $scalar {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                Tensor::lift(Tensor::binary(self.into_operand(), rhs.into_operand(), Binary::$kind))
            }
        }
        impl $trait<Tensor> for $scalar {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                Tensor::lift(Tensor::binary(self.into_operand(), rhs.into_operand(), Binary::$kind))
            }
        }
    )*};
}

scalar_operators!(
    f32,
    f64,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    half::f16,
    half::bf16
);

impl Neg for &Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        Tensor::lift(Tensor::neg(self))
    }
}

impl Neg for Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        Tensor::lift(Tensor::neg(&self))
    }
}
