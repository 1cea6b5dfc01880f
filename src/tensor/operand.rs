//! The second operand of binary ops: a tensor or a Rust scalar.
//!
//! A scalar adopts the tensor's dtype, as in PyTorch, unless it is of a
//! higher category: a float scalar with an integer or bool tensor gives
//! `f32`, an integer scalar with a bool tensor gives `i32`.

use super::Tensor;
use morok_core::dtype::Element;
use morok_core::{ConstValue, ScalarType};
use std::any::Any;

/// A tensor or a scalar, as accepted by binary ops ([`IntoOperand`]).
#[derive(Clone, Debug)]
pub struct Operand {
    pub(super) kind: Kind,
}

#[derive(Clone, Debug)]
pub(super) enum Kind {
    Tensor(Tensor),
    Scalar {
        value: ConstValue,
        dtype: ScalarType,
    },
}

/// Types usable as the operand of a binary op: tensors (owned or
/// borrowed) and every element type (`2.0`, `1i32`, `true`, ...).
pub trait IntoOperand {
    /// Wraps the value.
    fn into_operand(self) -> Operand;
}

impl IntoOperand for Tensor {
    fn into_operand(self) -> Operand {
        Operand {
            kind: Kind::Tensor(self),
        }
    }
}

impl IntoOperand for &Tensor {
    fn into_operand(self) -> Operand {
        self.clone().into_operand()
    }
}

impl IntoOperand for Operand {
    fn into_operand(self) -> Operand {
        self
    }
}

impl<T: Element> IntoOperand for T {
    fn into_operand(self) -> Operand {
        Operand {
            kind: Kind::Scalar {
                value: const_value(self),
                dtype: T::SCALAR,
            },
        }
    }
}

/// The exact constant of an element value.
pub(super) fn const_value<T: Element>(x: T) -> ConstValue {
    let any: &dyn Any = &x;
    if let Some(v) = any.downcast_ref::<i64>() {
        ConstValue::Int(*v)
    } else if let Some(v) = any.downcast_ref::<u64>() {
        ConstValue::UInt(*v)
    } else {
        ConstValue::from_f64(x.to_f64(), T::SCALAR)
    }
}

/// The dtype of `tensor op scalar`.
pub(super) fn scalar_result(tensor: ScalarType, scalar: ScalarType) -> ScalarType {
    if scalar.is_float() && !tensor.is_float() {
        ScalarType::F32
    } else if scalar.is_int() && tensor.is_bool() {
        ScalarType::I32
    } else {
        tensor
    }
}
