//! The tensor op table: each `Tensor` operation a DSL body may call,
//! declared once with its name, its arguments and their literal forms, its
//! element-type rule and its shape rule.
//!
//! The table drives three things: the macros (`#[morok::kernel]`,
//! `kernel!`, `model!`) parse a method call by its entry's arguments and
//! infer its element type and shape with [`OpSpec::infer`] over symbolic
//! dims; the DSL's embedded graph names the op by its [`OpId`], and the
//! run-time builder dispatches on it (an exhaustive `match`, so an entry
//! without a `Tensor` call does not compile); and a test walks [`OPS`]
//! and checks that [`OpSpec::infer`] over `usize` dims agrees with the
//! `Tensor` method, result and error, on a grid of shapes, element types
//! and arguments. The shape rules are the functions of [`crate::shape`],
//! which the `Tensor` methods call too, so the texts of their errors agree.
//!
//! Operations whose result shape depends on data (`nonzero`,
//! `masked_select`) or that take several tensors of one list (`cat`,
//! `stack`) are not in the table: a DSL body cannot give them a static
//! shape; [`NOT_IN_THE_DSL`] lists them with the reason.

mod rules;
mod spec;
mod table;

pub use rules::OpError;
pub use spec::{
    Arg, ArgKind, ArgValue, DTypeRule, Reduction, RoundingMode, ScatterReduce, ShapeRule,
};
pub use table::{OpId, OpSpec, NOT_IN_THE_DSL, NOT_YET_IN_THE_DSL, OPS};
