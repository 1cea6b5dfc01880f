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
use crate::{DType, Error, Result, ScalarType, Tensor};

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

/// A one-operand elementwise op (the tensor API method of that name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Unary {
    Neg,
    Relu,
    Abs,
    Gelu,
    Silu,
    Sigmoid,
    Tanh,
    Exp,
    Log,
    Sqrt,
    Rsqrt,
}

/// A two-operand elementwise op (the tensor API method of that name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Maximum,
    Minimum,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// A reduction over a list of axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Reduce {
    Sum,
    Mean,
    Max,
    Min,
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
    /// An elementwise op of one tensor.
    Unary(Unary),
    /// An elementwise op of two operands (at least one a tensor).
    Binary(Binary),
    /// `a.dot(b)`.
    Dot,
    /// `a.matmul(b)`.
    Matmul,
    /// `softmax(axis)`.
    Softmax(isize),
    /// `log_softmax(axis)`.
    LogSoftmax(isize),
    /// `sum/mean/max/min(axes, keepdim)`.
    Reduce(Reduce, &'static [isize], bool),
    /// `argmax(axis)`.
    Argmax(isize),
    /// `layernorm(axes, eps)` without an affine transform.
    LayerNorm(&'static [isize], f64),
    /// `reshape([dims])`, each dim in postfix form.
    Reshape(&'static [&'static [DimTok]]),
    /// `expand([dims])`, each dim in postfix form.
    Expand(&'static [&'static [DimTok]]),
    /// `transpose(a, b)`.
    Transpose(isize, isize),
    /// `permute([axes])`.
    Permute(&'static [isize]),
    /// `cast(dtype)`.
    Cast(ScalarType),
    /// `cond.where_(a, b)`: the operands are the condition and both values.
    Where,
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
enum Value<'a> {
    Tensor(&'a Tensor),
    F64(f64),
    I64(i64),
    Bool(bool),
}

/// The value of a dim in postfix form, with the call's dim values.
fn dim_value(toks: &[DimTok], dims: &[usize]) -> Option<isize> {
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
            let dim_list = |list: &[&[DimTok]]| -> Result<Vec<isize>> {
                list.iter()
                    .map(|d| {
                        dim_value(d, &dims).ok_or_else(|| broken(format!("dim {d:?} of node {at}")))
                    })
                    .collect()
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
                NodeOp::Unary(u) => unary(tensor(0)?, u)?,
                NodeOp::Binary(b) => binary(src(0)?, src(1)?, b)
                    .unwrap_or_else(|| Err(broken(format!("node {at} has no tensor operand"))))?,
                NodeOp::Dot => tensor(0)?.dot(tensor(1)?)?,
                NodeOp::Matmul => tensor(0)?.matmul(tensor(1)?)?,
                NodeOp::Softmax(a) => tensor(0)?.softmax(a)?,
                NodeOp::LogSoftmax(a) => tensor(0)?.log_softmax(a)?,
                NodeOp::Reduce(r, axes, keep) => {
                    let x = tensor(0)?;
                    match r {
                        Reduce::Sum => x.sum(Some(axes), keep)?,
                        Reduce::Mean => x.mean(Some(axes), keep)?,
                        Reduce::Max => x.max(Some(axes), keep)?,
                        Reduce::Min => x.min(Some(axes), keep)?,
                    }
                }
                NodeOp::Argmax(a) => tensor(0)?.argmax(Some(a))?,
                NodeOp::LayerNorm(axes, eps) => tensor(0)?.layernorm(axes, None, None, eps)?,
                NodeOp::Reshape(list) => tensor(0)?.try_reshape(&dim_list(list)?)?,
                NodeOp::Expand(list) => tensor(0)?.try_expand(&dim_list(list)?)?,
                NodeOp::Transpose(a, b) => tensor(0)?.try_transpose(a, b)?,
                NodeOp::Permute(p) => tensor(0)?.try_permute(p)?,
                NodeOp::Cast(to) => tensor(0)?.cast(DType::scalar(to))?,
                NodeOp::Where => tensor(0)?.where_(src(1)?.operand(), src(2)?.operand())?,
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

/// `x.op()` for a [`Unary`].
#[track_caller]
fn unary(x: &Tensor, u: Unary) -> Result<Tensor> {
    match u {
        Unary::Neg => x.neg(),
        Unary::Relu => x.relu(),
        Unary::Abs => x.abs(),
        Unary::Gelu => x.gelu(),
        Unary::Silu => x.silu(),
        Unary::Sigmoid => x.sigmoid(),
        Unary::Tanh => x.tanh(),
        Unary::Exp => x.exp(),
        Unary::Log => x.log(),
        Unary::Sqrt => x.sqrt(),
        Unary::Rsqrt => x.rsqrt(),
    }
}

/// `x.op(other)` for a [`Binary`], `other` a tensor or a literal.
#[track_caller]
fn binary_with(x: &Tensor, other: Operand, b: Binary) -> Result<Tensor> {
    match b {
        Binary::Add => x.add(other),
        Binary::Sub => x.sub(other),
        Binary::Mul => x.mul(other),
        Binary::Div => x.div(other),
        Binary::Maximum => x.maximum(other),
        Binary::Minimum => x.minimum(other),
        Binary::Lt => x.lt(other),
        Binary::Le => x.le(other),
        Binary::Gt => x.gt(other),
        Binary::Ge => x.ge(other),
        Binary::Eq => x.eq(other),
        Binary::Ne => x.ne(other),
    }
}

impl Value<'_> {
    /// The value as a tensor API operand (a literal keeps its Rust type,
    /// so it adopts the tensor's element type as in the tensor API).
    fn operand(&self) -> Operand {
        match *self {
            Value::Tensor(t) => t.into_operand(),
            Value::F64(v) => v.into_operand(),
            Value::I64(v) => v.into_operand(),
            Value::Bool(v) => v.into_operand(),
        }
    }
}

/// A binary op of two operands; `None` when neither is a tensor. A
/// literal left operand becomes the tensor API's `full_like` of the
/// right one.
#[track_caller]
fn binary(l: Value<'_>, r: Value<'_>, b: Binary) -> Option<Result<Tensor>> {
    Some(match (&l, &r) {
        (Value::Tensor(x), _) => binary_with(x, r.operand(), b),
        (Value::F64(v), Value::Tensor(y)) => y
            .full_like(*v)
            .and_then(|x| binary_with(&x, r.operand(), b)),
        (Value::I64(v), Value::Tensor(y)) => y
            .full_like(*v)
            .and_then(|x| binary_with(&x, r.operand(), b)),
        (Value::Bool(v), Value::Tensor(y)) => y
            .full_like(*v)
            .and_then(|x| binary_with(&x, r.operand(), b)),
        _ => return None,
    })
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
