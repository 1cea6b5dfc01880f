//! The run-time half of the op table (`morok_core::tensor_ops`): an op
//! node of an embedded graph calls its `Tensor` method with the node's
//! operands and literal arguments. The `match` is exhaustive over
//! [`OpId`], so an entry added to the table without its call here does
//! not compile; the macros' half is `morok-macros/src/infer/methods.rs`.

use super::graph::{dim_value, Lit, Value};
use crate::tensor::Operand;
use crate::{DType, Error, Result, Tensor};
use morok_core::tensor_ops::OpId;

/// The operands and literal arguments of one op node.
struct Args<'a, 'v> {
    operands: &'a [Value<'v>],
    lits: &'a [Lit],
    dims: &'a [usize],
    broken: &'a dyn Fn(String) -> Error,
    id: OpId,
}

impl Args<'_, '_> {
    fn bad(&self, what: &str, k: usize) -> Error {
        (self.broken)(format!("{:?} node: {what} {k} is missing", self.id))
    }
    /// Tensor argument `k` (operand `k + 1`; operand 0 is the receiver).
    fn tensor(&self, k: usize) -> Result<&Tensor> {
        match self.operands.get(k + 1) {
            Some(Value::Tensor(t)) => Ok(t),
            _ => Err(self.bad("tensor argument", k)),
        }
    }
    /// Tensor-or-literal argument `k`.
    fn operand(&self, k: usize) -> Result<Operand> {
        self.operands
            .get(k + 1)
            .map(Value::operand)
            .ok_or_else(|| self.bad("operand", k))
    }
    fn lit(&self, k: usize) -> Result<Lit> {
        self.lits
            .get(k)
            .copied()
            .ok_or_else(|| self.bad("literal", k))
    }
    /// Dims argument `k` with the call's named dims bound.
    fn dims(&self, k: usize) -> Result<Vec<isize>> {
        match self.lit(k)? {
            Lit::Dims(list) => list
                .iter()
                .map(|d| {
                    dim_value(d, self.dims)
                        .ok_or_else(|| (self.broken)(format!("dim {d:?} of a {:?}", self.id)))
                })
                .collect(),
            _ => Err(self.bad("dims", k)),
        }
    }
    /// Optional tensor argument `t` whose presence is literal `k`.
    fn optional_tensor(&self, k: usize, t: usize) -> Result<Option<&Tensor>> {
        match self.lit(k)? {
            Lit::Present(true) => Ok(Some(self.tensor(t)?)),
            Lit::Present(false) => Ok(None),
            _ => Err(self.bad("optional tensor flag", k)),
        }
    }
    fn dtype(&self, k: usize) -> Result<DType> {
        match self.lit(k)? {
            Lit::DType(t) => Ok(DType::scalar(t)),
            _ => Err(self.bad("element type", k)),
        }
    }
}

/// Accessors of the literal arguments: `fn name(&self, k) -> Result<T>`
/// reads literal `k`, which must be `Lit::Variant` (else the node is
/// malformed, and the error says which kind was missing).
macro_rules! literal_accessors {
    ($($name:ident: $variant:ident -> $ty:ty, $what:literal;)*) => {
        impl Args<'_, '_> {
            $(
                fn $name(&self, k: usize) -> Result<$ty> {
                    match self.lit(k)? {
                        Lit::$variant(v) => Ok(v),
                        _ => Err(self.bad($what, k)),
                    }
                }
            )*
        }
    };
}

literal_accessors! {
    axis: Axis -> isize, "axis";
    axes: Axes -> &'static [isize], "axes";
    flag: Bool -> bool, "bool";
    float: Float -> f64, "number";
    int: Int -> i64, "integer";
    count: Count -> usize, "count";
    sizes: Sizes -> &'static [usize], "sizes";
    reduction: Reduction -> crate::Reduction, "reduction";
    pads: Pads -> &'static [(isize, isize)], "pads";
    bounds: Bounds -> &'static [(usize, usize)], "bounds";
    ints: Ints -> &'static [isize], "integers";
    optional_axis: OptionalAxis -> Option<isize>, "optional axis";
    conv: Conv -> crate::ConvOptions, "convolution options";
    pool: Pool -> crate::PoolOptions, "pooling options";
    pool3d: Pool3d -> crate::Pool3dOptions, "3-D pooling options";
    slices: Slices -> &'static [crate::Slice], "slices";
    interpolate_mode: InterpolateMode -> crate::InterpolateMode, "interpolation mode";
    conv1d: Conv1d -> crate::Conv1dOptions, "conv1d options";
    conv3d: Conv3d -> crate::Conv3dOptions, "conv3d options";
    conv_transpose: ConvTranspose -> crate::ConvTransposeOptions, "transposed convolution options";
    conv_transpose3d: ConvTranspose3d -> crate::ConvTranspose3dOptions, "3-D transposed convolution options";
    isclose: IsClose -> crate::IsCloseOptions, "isclose options";
    attention: Attention -> super::graph::AttentionLit, "attention options";
    scatter_reduce: ScatterReduce -> crate::ScatterReduce, "scatter reduction";
    pad_mode: PadMode -> crate::PadMode, "padding mode";
    rounding_mode: RoundingMode -> crate::RoundingMode, "rounding mode";
    floats: Floats -> &'static [f64], "numbers";
    optional_sizes: OptionalSizes -> Option<&'static [usize]>, "optional sizes";
    class_loss_lit: ClassLoss -> super::graph::ClassLossLit, "class loss options";
    equation: Equation -> &'static str, "equation";
    index_lits: Indices -> &'static [super::graph::IndexLit], "index entries";
}

impl Args<'_, '_> {
    /// The class losses' options of literal `k`, their weight (if given)
    /// being tensor argument `t`.
    fn class_loss(&self, k: usize, t: usize) -> Result<crate::ClassLossOptions> {
        let o = self.class_loss_lit(k)?;
        Ok(crate::ClassLossOptions {
            weight: if o.weight {
                Some(self.tensor(t)?.clone())
            } else {
                None
            },
            ignore_index: o.ignore_index,
            label_smoothing: o.label_smoothing,
            reduction: o.reduction,
        })
    }

    /// The entries of `index` in literal `k`, each `Tensor` entry taking
    /// the next tensor argument.
    fn indices(&self, k: usize) -> Result<Vec<crate::Index>> {
        use super::graph::IndexLit as L;
        let mut next = 0;
        self.index_lits(k)?
            .iter()
            .map(|e| {
                Ok(match e {
                    L::Int(i) => crate::Index::Int(*i),
                    L::Slice(s) => crate::Index::Slice(*s),
                    L::NewAxis => crate::Index::NewAxis,
                    L::Ellipsis => crate::Index::Ellipsis,
                    L::Tensor => {
                        next += 1;
                        crate::Index::Tensor(self.tensor(next - 1)?.clone())
                    }
                })
            })
            .collect()
    }

    /// Every operand as a tensor: the list of a function (`Tensor::cat`),
    /// its first tensor being the receiver.
    fn all_tensors(&self) -> Result<Vec<&Tensor>> {
        self.operands
            .iter()
            .map(|v| match v {
                Value::Tensor(t) => Ok(*t),
                _ => Err((self.broken)(format!(
                    "{:?} node: a literal in its list of tensors",
                    self.id
                ))),
            })
            .collect()
    }

    /// Optional sizes of literal `k` as the `N`-tuple a `max_unpool`
    /// takes, by `pick` (a wrong count is a malformed node).
    fn sizes_as<T>(&self, k: usize, pick: impl Fn(&[usize]) -> Option<T>) -> Result<Option<T>> {
        match self.optional_sizes(k)? {
            None => Ok(None),
            Some(v) => pick(v)
                .map(Some)
                .ok_or_else(|| self.bad("output size of the right length", k)),
        }
    }
}

/// The receiver: operand 0, or for a literal left operand of a binary
/// operator (`2.0 - x`), that literal filled in the first tensor
/// operand's element type and shape.
fn receiver(operands: &[Value<'_>], broken: &dyn Fn(String) -> Error) -> Result<Tensor> {
    let like = || {
        operands
            .iter()
            .find_map(|v| match v {
                Value::Tensor(t) => Some(*t),
                _ => None,
            })
            .ok_or_else(|| broken("an op node without a tensor operand".into()))
    };
    match operands.first() {
        Some(Value::Tensor(t)) => Ok((*t).clone()),
        Some(Value::F64(v)) => like()?.full_like(*v),
        Some(Value::I64(v)) => like()?.full_like(*v),
        Some(Value::Bool(v)) => like()?.full_like(*v),
        None => Err(broken("an op node without operands".into())),
    }
}

/// Result `output` of a method returning a pair.
fn pick(pair: Result<(Tensor, Tensor)>, output: usize) -> Result<Tensor> {
    let (first, second) = pair?;
    Ok(if output == 1 { second } else { first })
}

/// Calls the `Tensor` method of `id`: `operands` are the receiver and the
/// tensor arguments, `lits` the literal ones, `dims` the call's bound
/// dim names; `output` picks `.0` or `.1` of a method returning a pair.
#[track_caller]
pub(super) fn call(
    id: OpId,
    operands: &[Value<'_>],
    lits: &[Lit],
    dims: &[usize],
    broken: &dyn Fn(String) -> Error,
    output: usize,
) -> Result<Tensor> {
    let x = &receiver(operands, broken)?;
    let a = Args {
        operands,
        lits,
        dims,
        broken,
        id,
    };
    use OpId::*;
    match id {
        Neg => x.neg(),
        Relu => x.relu(),
        Abs => x.abs(),
        Sign => x.sign(),
        Floor => x.floor(),
        Ceil => x.ceil(),
        Round => x.round(),
        Trunc => x.trunc(),
        Exp => x.exp(),
        Exp2 => x.exp2(),
        Expm1 => x.expm1(),
        Log => x.log(),
        Log2 => x.log2(),
        Log10 => x.log10(),
        Log1p => x.log1p(),
        Sqrt => x.sqrt(),
        Rsqrt => x.rsqrt(),
        Reciprocal => x.reciprocal(),
        Sin => x.sin(),
        Cos => x.cos(),
        Tan => x.tan(),
        Asin => x.asin(),
        Acos => x.acos(),
        Atan => x.atan(),
        Sinh => x.sinh(),
        Cosh => x.cosh(),
        Tanh => x.tanh(),
        Asinh => x.asinh(),
        Acosh => x.acosh(),
        Atanh => x.atanh(),
        Erf => x.erf(),
        Sigmoid => x.sigmoid(),
        Logsigmoid => x.logsigmoid(),
        Gelu => x.gelu(),
        GeluTanh => x.gelu_tanh(),
        QuickGelu => x.quick_gelu(),
        Silu => x.silu(),
        Mish => x.mish(),
        Selu => x.selu(),
        Softsign => x.softsign(),
        Hardsigmoid => x.hardsigmoid(),
        Hardswish => x.hardswish(),
        Relu6 => x.relu6(),
        LeakyRelu => x.leaky_relu(a.float(0)?),
        Elu => x.elu(a.float(0)?),
        Celu => x.celu(a.float(0)?),
        Softplus => x.softplus(a.float(0)?, a.float(1)?),
        Hardtanh => x.hardtanh(a.float(0)?, a.float(1)?),
        Isnan => x.isnan(),
        Isinf => x.isinf(),
        Isfinite => x.isfinite(),
        Isposinf => x.isposinf(),
        Isneginf => x.isneginf(),
        LogicalNot => x.logical_not(),
        BitwiseNot => x.bitwise_not(),
        Add => x.add(a.operand(0)?),
        Sub => x.sub(a.operand(0)?),
        Mul => x.mul(a.operand(0)?),
        Div => x.div(a.operand(0)?),
        FloorDiv => x.floor_div(a.operand(0)?),
        Remainder => x.remainder(a.operand(0)?),
        Fmod => x.fmod(a.operand(0)?),
        Pow => x.pow(a.operand(0)?),
        Maximum => x.maximum(a.operand(0)?),
        Minimum => x.minimum(a.operand(0)?),
        Atan2 => x.atan2(a.operand(0)?),
        Copysign => x.copysign(a.operand(0)?),
        Logaddexp => x.logaddexp(a.operand(0)?),
        Eq => x.eq(a.operand(0)?),
        Ne => x.ne(a.operand(0)?),
        Lt => x.lt(a.operand(0)?),
        Le => x.le(a.operand(0)?),
        Gt => x.gt(a.operand(0)?),
        Ge => x.ge(a.operand(0)?),
        LogicalAnd => x.logical_and(a.operand(0)?),
        LogicalOr => x.logical_or(a.operand(0)?),
        LogicalXor => x.logical_xor(a.operand(0)?),
        BitwiseAnd => x.bitwise_and(a.operand(0)?),
        BitwiseOr => x.bitwise_or(a.operand(0)?),
        BitwiseXor => x.bitwise_xor(a.operand(0)?),
        Clamp => x.clamp(a.operand(0)?, a.operand(1)?),
        Where => x.where_(a.operand(0)?, a.operand(1)?),
        Cast => x.cast(a.dtype(0)?),
        Sum => x.sum(Some(a.axes(0)?), a.flag(1)?),
        Prod => x.prod(Some(a.axes(0)?), a.flag(1)?),
        Mean => x.mean(Some(a.axes(0)?), a.flag(1)?),
        Max => x.max(Some(a.axes(0)?), a.flag(1)?),
        Min => x.min(Some(a.axes(0)?), a.flag(1)?),
        Any => x.any(Some(a.axes(0)?), a.flag(1)?),
        All => x.all(Some(a.axes(0)?), a.flag(1)?),
        Logsumexp => x.logsumexp(Some(a.axes(0)?), a.flag(1)?),
        Var => x.var(Some(a.axes(0)?), a.count(1)?, a.flag(2)?),
        Std => x.std(Some(a.axes(0)?), a.count(1)?, a.flag(2)?),
        Argmax => x.argmax(Some(a.axis(0)?)),
        Argmin => x.argmin(Some(a.axis(0)?)),
        Softmax => x.softmax(a.axis(0)?),
        LogSoftmax => x.log_softmax(a.axis(0)?),
        Softmin => x.softmin(a.axis(0)?),
        Cumsum => x.cumsum(a.axis(0)?),
        Cumprod => x.cumprod(a.axis(0)?),
        Logcumsumexp => x.logcumsumexp(a.axis(0)?),
        Gather => x.gather(a.axis(0)?, a.tensor(0)?),
        IndexSelect => x.index_select(a.axis(0)?, a.tensor(0)?),
        MaskedFill => x.masked_fill(a.tensor(0)?, a.operand(1)?),
        OneHot => x.one_hot(a.count(0)?),
        MseLoss => x.mse_loss(a.tensor(0)?, a.reduction(0)?),
        L1Loss => x.l1_loss(a.tensor(0)?, a.reduction(0)?),
        Sort => pick(x.sort(a.axis(0)?, a.flag(1)?), output),
        Argsort => x.argsort(a.axis(0)?, a.flag(1)?),
        Topk => pick(x.topk(a.count(0)?, a.axis(1)?, a.flag(2)?), output),
        Cummax => pick(x.cummax(a.axis(0)?), output),
        Cummin => pick(x.cummin(a.axis(0)?), output),
        VarMean => pick(
            x.var_mean(Some(a.axes(0)?), a.count(1)?, a.flag(2)?),
            output,
        ),
        StdMean => pick(
            x.std_mean(Some(a.axes(0)?), a.count(1)?, a.flag(2)?),
            output,
        ),
        Normalize => x.normalize(a.float(0)?, a.axis(1)?, a.float(2)?),
        Layernorm => x.layernorm(a.axes(0)?, None, None, a.float(1)?),
        Tril => x.tril(a.int(0)? as isize),
        Triu => x.triu(a.int(0)? as isize),
        Matmul => x.matmul(a.tensor(0)?),
        Dot => x.dot(a.tensor(0)?),
        Reshape => x.reshape(&a.dims(0)?),
        Expand => x.expand(&a.dims(0)?),
        Transpose => x.transpose(a.axis(0)?, a.axis(1)?),
        Permute => x.permute(a.axes(0)?),
        Flip => x.flip(a.axes(0)?),
        Squeeze => x.squeeze(a.axis(0)?),
        SqueezeAll => x.squeeze_all(),
        Unflatten => x.unflatten(a.axis(0)?, &a.dims(1)?),
        Unsqueeze => x.unsqueeze(a.axis(0)?),
        Flatten => x.flatten(a.axis(0)?, a.axis(1)?),
        Repeat => x.repeat(a.sizes(0)?),
        Pad => x.pad(a.pads(0)?, a.float(1)?),
        Shrink => x.shrink(a.bounds(0)?),
        PadMode => x.pad_mode(a.pads(0)?, a.pad_mode(1)?),
        Roll => x.roll(a.ints(0)?, a.axes(1)?),
        Diagonal => x.diagonal(a.int(0)? as isize, a.axis(1)?, a.axis(2)?),
        Unfold => x.unfold(a.axis(0)?, a.count(1)?, a.count(2)?),
        RepeatInterleave => x.repeat_interleave(a.count(0)?, a.optional_axis(1)?),
        Scatter => x.scatter(a.axis(0)?, a.tensor(0)?, a.tensor(1)?),
        ScatterValue => x.scatter_value(a.axis(0)?, a.tensor(0)?, a.float(1)?),
        Lerp => x.lerp(a.tensor(0)?, a.operand(1)?),
        ScatterAdd => x.scatter_add(a.axis(0)?, a.tensor(0)?, a.tensor(1)?),
        CrossEntropy => x.cross_entropy(a.tensor(0)?),
        Conv2d => x.conv2d(a.tensor(0)?, a.optional_tensor(0, 1)?, a.conv(1)?),
        MaxPool2d => x.max_pool2d(a.pool(0)?),
        AvgPool2d => x.avg_pool2d(a.pool(0)?),
        MaxPool1d => x.max_pool1d(a.pool(0)?),
        AvgPool1d => x.avg_pool1d(a.pool(0)?),
        Slice => x.slice(a.slices(0)?),
        Conv1d => x.conv1d(a.tensor(0)?, a.optional_tensor(0, 1)?, a.conv1d(1)?),
        Conv3d => x.conv3d(a.tensor(0)?, a.optional_tensor(0, 1)?, a.conv3d(1)?),
        ConvTranspose1d | ConvTranspose2d => {
            let opts = a.conv_transpose(1)?;
            let (w, b) = (a.tensor(0)?, a.optional_tensor(0, 1)?);
            if id == ConvTranspose1d {
                x.conv_transpose1d(w, b, opts)
            } else {
                x.conv_transpose2d(w, b, opts)
            }
        }
        ConvTranspose3d => x.conv_transpose3d(
            a.tensor(0)?,
            a.optional_tensor(0, 1)?,
            a.conv_transpose3d(1)?,
        ),
        Isclose => x.isclose(a.operand(0)?, a.isclose(0)?),
        ScaledDotProductAttention => {
            x.scaled_dot_product_attention(a.tensor(0)?, a.tensor(1)?, &a.attention(0)?.options())
        }
        ScatterReduce => x.scatter_reduce(
            a.axis(0)?,
            a.tensor(0)?,
            a.tensor(1)?,
            a.scatter_reduce(1)?,
            a.flag(2)?,
        ),
        MaxPool3d => x.max_pool3d(a.pool3d(0)?),
        AvgPool3d => x.avg_pool3d(a.pool3d(0)?),
        MaxPool1dWithIndices => pick(x.max_pool1d_with_indices(a.pool(0)?), output),
        MaxPool2dWithIndices => pick(x.max_pool2d_with_indices(a.pool(0)?), output),
        MaxPool3dWithIndices => pick(x.max_pool3d_with_indices(a.pool3d(0)?), output),
        BroadcastTo => x.broadcast_to(a.sizes(0)?),
        BinaryCrossEntropy => {
            x.binary_cross_entropy(a.tensor(0)?, a.optional_tensor(0, 1)?, a.reduction(1)?)
        }
        BinaryCrossEntropyWithLogits => {
            // The weights' tensors follow the target's, each present one
            // taking the next operand.
            let weight = a.optional_tensor(0, 1)?;
            let next = 1 + usize::from(weight.is_some());
            x.binary_cross_entropy_with_logits(
                a.tensor(0)?,
                weight,
                a.optional_tensor(1, next)?,
                a.reduction(2)?,
            )
        }
        SmoothL1Loss => x.smooth_l1_loss(a.tensor(0)?, a.reduction(0)?, a.float(1)?),
        BitwiseLeftShift => x.bitwise_left_shift(a.operand(0)?),
        BitwiseRightShift => x.bitwise_right_shift(a.operand(0)?),
        FullLike => x.full_like(a.float(0)?),
        ZerosLike => x.zeros_like(),
        OnesLike => x.ones_like(),
        Contiguous => x.contiguous(),
        SumDtype => x.sum_dtype(Some(a.axes(0)?), a.flag(1)?, a.dtype(2)?),
        ProdDtype => x.prod_dtype(Some(a.axes(0)?), a.flag(1)?, a.dtype(2)?),
        Linear => x.linear(a.tensor(0)?, a.optional_tensor(0, 1)?),
        Diag => x.diag(a.int(0)? as isize),
        Interpolate => x.interpolate(a.sizes(0)?, a.interpolate_mode(1)?, a.flag(2)?),
        Bitcast => x.bitcast(a.dtype(0)?),
        DivMode => x.div_mode(a.operand(0)?, a.rounding_mode(0)?),
        InterpolateScale => x.interpolate_scale(a.floats(0)?, a.interpolate_mode(1)?, a.flag(2)?),
        MaxUnpool1d => x.max_unpool1d(
            a.tensor(0)?,
            a.pool(0)?,
            a.sizes_as(1, |v| match v {
                [l] => Some(*l),
                _ => None,
            })?,
        ),
        MaxUnpool2d => x.max_unpool2d(
            a.tensor(0)?,
            a.pool(0)?,
            a.sizes_as(1, |v| match v {
                [h, w] => Some((*h, *w)),
                _ => None,
            })?,
        ),
        MaxUnpool3d => x.max_unpool3d(
            a.tensor(0)?,
            a.pool3d(0)?,
            a.sizes_as(1, |v| match v {
                [d, h, w] => Some((*d, *h, *w)),
                _ => None,
            })?,
        ),
        NllLoss => x.nll_loss(a.tensor(0)?, &a.class_loss(0, 1)?),
        CrossEntropyWith => x.cross_entropy_with(a.tensor(0)?, &a.class_loss(0, 1)?),
        Index => x.index(&a.indices(0)?),
        Cat => Tensor::cat(&a.all_tensors()?, a.axis(0)?),
        Stack => Tensor::stack(&a.all_tensors()?, a.axis(0)?),
        Einsum => Tensor::einsum(a.equation(0)?, &a.all_tensors()?),
    }
}
