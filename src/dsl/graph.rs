//! The graph a kernel macro embeds as static data, and the run-time
//! builder that turns it into a lazy [`Tensor`] graph.
//!
//! The macros check a body at compile time and emit it as a `static`
//! [`Graph`]: an array of [`Node`]s in evaluation order, each naming its
//! op (a tensor API operation with its small arguments: axes, dims,
//! element type), the element type the macro inferred, and its operands
//! (earlier nodes or literal constants). Named dims appear in
//! `reshape`/`expand` dims as symbolic entries ([`DimTok::Name`]) that
//! take the call's bound values. [`Graph::build`] walks the array once,
//! calling the tensor API for each node: nothing is parsed or recursed
//! over at run time, and it runs only on cold calls (a warm call finds
//! its plan before any graph is built).

use super::layers::Layer;
use super::rt::Signature;
use crate::tensor::{IntoOperand, Operand};
use crate::{Error, Result, ScalarType, Tensor};
pub use morok_core::tensor_ops::OpId;

/// An operand of a node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Src {
    /// The value of node `i` (an earlier node).
    Node(u32),
    /// A float literal (it takes the tensor operand's element type).
    F64(f64),
    /// An integer literal (it takes the tensor operand's element type).
    I64(i64),
    /// A bool literal.
    Bool(bool),
}

/// A literal argument of an op node, in the order the op table declares
/// its non-tensor arguments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lit {
    /// An axis.
    Axis(isize),
    /// A list of axes.
    Axes(&'static [isize]),
    /// A bool.
    Bool(bool),
    /// A number.
    Float(f64),
    /// An integer.
    Int(i64),
    /// A non-negative integer.
    Count(usize),
    /// A list of sizes.
    Sizes(&'static [usize]),
    /// A list of dims, each in postfix form.
    Dims(&'static [&'static [DimTok]]),
    /// An element type.
    DType(ScalarType),
    /// A loss reduction.
    Reduction(crate::Reduction),
    /// Signed `(before, after)` pairs.
    Pads(&'static [(isize, isize)]),
    /// `(begin, end)` pairs.
    Bounds(&'static [(usize, usize)]),
    /// A list of integers.
    Ints(&'static [isize]),
    /// An axis or none.
    OptionalAxis(Option<isize>),
    /// Whether an optional tensor argument is given (its tensor is the
    /// next tensor operand).
    Present(bool),
    /// Convolution options.
    Conv(crate::ConvOptions),
    /// Pooling options.
    Pool(crate::PoolOptions),
    /// 3-D pooling options.
    Pool3d(crate::Pool3dOptions),
    /// `isclose` tolerances.
    IsClose(crate::IsCloseOptions),
    /// Attention options (no mask).
    Attention(AttentionLit),
    /// A scatter reduction.
    ScatterReduce(crate::ScatterReduce),
    /// A padding mode.
    PadMode(crate::PadMode),
    /// `conv1d` options.
    Conv1d(crate::Conv1dOptions),
    /// `conv3d` options.
    Conv3d(crate::Conv3dOptions),
    /// Transposed convolution options (2-D; the 1-D op takes their second
    /// components).
    ConvTranspose(crate::ConvTransposeOptions),
    /// 3-D transposed convolution options.
    ConvTranspose3d(crate::ConvTranspose3dOptions),
    /// Python slices.
    Slices(&'static [crate::Slice]),
    /// An interpolation mode.
    InterpolateMode(crate::InterpolateMode),
    /// A rounding mode.
    RoundingMode(crate::RoundingMode),
    /// A list of numbers.
    Floats(&'static [f64]),
    /// Optional sizes, one per axis.
    OptionalSizes(Option<&'static [usize]>),
    /// The class losses' options (the weight, if any, is the next tensor
    /// operand).
    ClassLoss(ClassLossLit),
    /// An `einsum` equation.
    Equation(&'static str),
    /// The entries of `index` (each `Tensor` entry takes the next tensor
    /// operand).
    Indices(&'static [IndexLit]),
}

/// One entry of `index` as a body writes it: [`crate::Index`] with its
/// tensor as an operand of the node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IndexLit {
    /// `Index::Int`.
    Int(isize),
    /// `Index::Slice`.
    Slice(crate::Slice),
    /// `Index::NewAxis`.
    NewAxis,
    /// `Index::Ellipsis`.
    Ellipsis,
    /// `Index::Tensor`: the next tensor operand.
    Tensor,
}

/// The options of `nll_loss` and `cross_entropy_with` as a body writes
/// them: [`crate::ClassLossOptions`] with the weight as a tensor operand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClassLossLit {
    /// Whether a weight is given (the next tensor operand).
    pub weight: bool,
    /// `ignore_index`.
    pub ignore_index: Option<i64>,
    /// `label_smoothing`.
    pub label_smoothing: f64,
    /// The reduction.
    pub reduction: crate::Reduction,
}

/// The options of `scaled_dot_product_attention` a body can write (every
/// field of [`crate::AttentionOptions`] but its mask).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttentionLit {
    /// `is_causal`.
    pub is_causal: bool,
    /// `scale`.
    pub scale: Option<f64>,
    /// `enable_gqa`.
    pub enable_gqa: bool,
    /// `dropout_p`.
    pub dropout_p: f64,
    /// `dropout_seed`.
    pub dropout_seed: u64,
}

impl AttentionLit {
    /// The API's options.
    pub fn options(self) -> crate::AttentionOptions {
        crate::AttentionOptions {
            mask: None,
            is_causal: self.is_causal,
            scale: self.scale,
            enable_gqa: self.enable_gqa,
            dropout_p: self.dropout_p,
            dropout_seed: self.dropout_seed,
        }
    }
}

/// One entry of a dim written in a body (`reshape([B * 2, -1])`), in
/// postfix order: literals and names push a value, operators combine the
/// two topmost values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimTok {
    /// A literal (`-1` infers the dim in `reshape`).
    Lit(i64),
    /// The signature's dim name number `i`, bound by the call.
    Name(u32),
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b`, rounding down (`b` is a positive literal).
    Div,
}

/// What a node computes; the operands are the node's [`Node::src`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NodeOp {
    /// The kernel's parameter number `i`.
    Arg(u32),
    /// The model's raw parameter (`Param[..]` field) number `i`.
    Field(u32),
    /// The model's layer number `i` applied to the operand.
    Layer(u32),
    /// An op of the table with its literal arguments; the operands are
    /// the receiver and the tensor arguments.
    Op(OpId, &'static [Lit]),
    /// Result `k` (`.0` or `.1`) of an op of the table returning a pair.
    Pair(OpId, &'static [Lit], u8),
}

/// One node of an embedded graph.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Node {
    /// What it computes.
    pub op: NodeOp,
    /// The element type the macro inferred for its value.
    pub dtype: ScalarType,
    /// Its operands.
    pub src: &'static [Src],
}

/// A kernel body as static data: nodes in evaluation order and the node
/// holding the result.
#[derive(Debug, PartialEq)]
pub struct Graph {
    /// The nodes; each refers to earlier ones only.
    pub nodes: &'static [Node],
    /// The result's node.
    pub result: u32,
}

/// A node's value: a tensor, or a literal operand.
pub enum Value<'a> {
    /// A tensor.
    Tensor(&'a Tensor),
    /// A float literal.
    F64(f64),
    /// An integer literal.
    I64(i64),
    /// A bool literal.
    Bool(bool),
}

/// Calls the `Tensor` method of op `id` as an embedded graph's node does:
/// `operands` are the receiver and the tensor arguments, `lits` the
/// literal ones (dims may not name signature dims); `output` picks `.0`
/// or `.1` of an op returning a pair. The op table's test compares it
/// with the table's rules.
#[track_caller]
pub fn call_op(id: OpId, operands: &[Value<'_>], lits: &[Lit], output: usize) -> Result<Tensor> {
    let broken = |what: String| Error::runtime("op table", what);
    super::ops::call(id, operands, lits, &[], &broken, output)
}

/// The value of a dim in postfix form, with the call's dim values.
pub(super) fn dim_value(toks: &[DimTok], dims: &[usize]) -> Option<isize> {
    let mut stack: Vec<isize> = Vec::with_capacity(4);
    for t in toks {
        let v = match *t {
            DimTok::Lit(n) => isize::try_from(n).ok()?,
            DimTok::Name(i) => isize::try_from(*dims.get(i as usize)?).ok()?,
            op => {
                let (b, a) = (stack.pop()?, stack.pop()?);
                match op {
                    DimTok::Add => a.checked_add(b)?,
                    DimTok::Sub => a.checked_sub(b)?,
                    DimTok::Mul => a.checked_mul(b)?,
                    _ if b > 0 => a.div_euclid(b),
                    _ => return None,
                }
            }
        };
        stack.push(v);
    }
    match stack.as_slice() {
        [v] => Some(*v),
        _ => None,
    }
}

impl Graph {
    /// Checks `args` against `sig` and builds the lazy result: one pass
    /// over the nodes, each calling the tensor API. `layers` and `fields`
    /// are a model's layers and raw parameters (empty for kernels).
    #[track_caller]
    pub fn build(
        &self,
        sig: &Signature,
        args: &[&Tensor],
        layers: &[&dyn Layer],
        fields: &[&Tensor],
    ) -> Result<Tensor> {
        let dims = sig.bind(args)?;
        let broken = |what: String| Error::runtime(sig.kernel, format!("embedded graph: {what}"));
        let mut values: Vec<Tensor> = Vec::with_capacity(self.nodes.len());
        for (at, node) in self.nodes.iter().enumerate() {
            let src = |k: usize| -> Result<Value<'_>> {
                Ok(match node.src.get(k) {
                    Some(Src::Node(i)) if (*i as usize) < at => Value::Tensor(&values[*i as usize]),
                    Some(Src::F64(v)) => Value::F64(*v),
                    Some(Src::I64(v)) => Value::I64(*v),
                    Some(Src::Bool(v)) => Value::Bool(*v),
                    _ => return Err(broken(format!("node {at} lacks operand {k}"))),
                })
            };
            let tensor = |k: usize| -> Result<&Tensor> {
                match src(k)? {
                    Value::Tensor(t) => Ok(t),
                    _ => Err(broken(format!("operand {k} of node {at} is no tensor"))),
                }
            };
            let t = match node.op {
                NodeOp::Arg(i) => args
                    .get(i as usize)
                    .map(|t| (*t).clone())
                    .ok_or_else(|| broken(format!("no argument {i}")))?,
                NodeOp::Field(i) => fields
                    .get(i as usize)
                    .map(|t| (*t).clone())
                    .ok_or_else(|| broken(format!("no field {i}")))?,
                NodeOp::Layer(i) => layers
                    .get(i as usize)
                    .ok_or_else(|| broken(format!("no layer {i}")))?
                    .apply(tensor(0)?)?,
                NodeOp::Op(id, lits) | NodeOp::Pair(id, lits, _) => {
                    let operands = (0..node.src.len()).map(&src).collect::<Result<Vec<_>>>()?;
                    let output = match node.op {
                        NodeOp::Pair(.., k) => usize::from(k),
                        _ => 0,
                    };
                    super::ops::call(id, &operands, lits, &dims, &broken, output)?
                }
            };
            if t.dtype().scalar_type() != node.dtype {
                return Err(broken(format!(
                    "node {at} ({:?}) gives {} but the macro inferred {}",
                    node.op,
                    t.dtype().scalar_type(),
                    node.dtype
                )));
            }
            values.push(t);
        }
        values
            .get(self.result as usize)
            .cloned()
            .ok_or_else(|| broken(format!("no result node {}", self.result)))
    }
}

impl Value<'_> {
    /// The value as a tensor API operand (a literal keeps its Rust type,
    /// so it adopts the tensor's element type as in the tensor API).
    pub(super) fn operand(&self) -> Operand {
        match *self {
            Value::Tensor(t) => t.into_operand(),
            Value::F64(v) => v.into_operand(),
            Value::I64(v) => v.into_operand(),
            Value::Bool(v) => v.into_operand(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postfix_dims_take_the_bound_values() {
        use DimTok::*;
        assert_eq!(dim_value(&[Name(0), Lit(2), Mul], &[3]), Some(6));
        assert_eq!(
            dim_value(&[Name(1), Lit(3), Add, Lit(2), Div], &[0, 4]),
            Some(3)
        );
        assert_eq!(dim_value(&[Lit(-1)], &[]), Some(-1));
        assert_eq!(dim_value(&[Name(0), Sub], &[1]), None);
        assert_eq!(dim_value(&[Name(3)], &[1]), None);
    }
}
