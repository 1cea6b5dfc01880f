//! The arithmetic operators (`+ - * / %`, with a tensor or a scalar on
//! either side) and [`ScalarPow`]. The operators cannot return a `Result`, so a failure
//! (a broadcast mismatch, a bool subtraction, ...) gives a tensor that
//! carries the error (see the module docs of [`super`]).

use super::elementwise::Binary;
use super::{IntoOperand, Tensor};
use morok_core::dtype::Element;
use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

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

tensor_operators!(
    Add::add => Add,
    Sub::sub => Sub,
    Mul::mul => Mul,
    Div::div => Div,
    Rem::rem => Remainder,
);

/// A scalar raised to the power of each element of a tensor
/// (`2.0f32.pow(&t)`): the reflected form of [`Tensor::pow`], as the
/// operators `2.0 - &t` and `2 % &t` are of `sub` and `remainder`.
///
/// Integers have an inherent `pow`, which method syntax finds first: write
/// `ScalarPow::pow(2, &t)` for them.
pub trait ScalarPow {
    /// `self ^ exponent`, elementwise, in floats (as [`Tensor::pow`]).
    fn pow(self, exponent: &Tensor) -> crate::Result<Tensor>;
}

/// `scalar op tensor` for each scalar type (a generic impl would break
/// the orphan rule).
macro_rules! scalar_operators {
    ($($scalar:ty),*) => {$(
        scalar_operators!(
            @one $scalar,
            Add::add => Add,
            Sub::sub => Sub,
            Mul::mul => Mul,
            Div::div => Div,
            Rem::rem => Remainder
        );
        impl ScalarPow for $scalar {
            #[track_caller]
            fn pow(self, exponent: &Tensor) -> crate::Result<Tensor> {
                Tensor::binary(self.into_operand(), exponent.into_operand(), Binary::Pow)
            }
        }
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
