//! The entries of the op table, one line each: the DSL name, the `Tensor`
//! method, the arguments, the element-type rule and the shape rule.

use super::spec::{Arg, ArgKind, DTypeRule, ShapeRule};
use DTypeRule as D;
use ShapeRule as S;

/// One entry of the op table.
#[derive(Clone, Copy, Debug)]
pub struct OpSpec {
    /// The op, as the DSL's embedded graph names it.
    pub id: OpId,
    /// The method name in a DSL body (the `Tensor` method, without a
    /// `try_` prefix).
    pub name: &'static str,
    /// The `Tensor` method it calls.
    pub method: &'static str,
    /// Its arguments after the receiver, in order.
    pub args: &'static [Arg],
    /// The result's element type (of `.0` for an op returning a pair).
    pub dtype: DTypeRule,
    /// For an op returning a pair (`sort`: values and indices), the
    /// element type of `.1`; both have the shape of [`OpSpec::shape`].
    pub second: Option<DTypeRule>,
    /// The result's shape.
    pub shape: ShapeRule,
    /// What it computes, in a few words (the docs' method table).
    pub doc: &'static str,
    /// The op its errors name, where the method reports as another
    /// (`cross_entropy_with` as `cross_entropy`).
    pub reports_as: Option<&'static str>,
}

impl OpSpec {
    /// The entry named `name` in a DSL body.
    pub fn named(name: &str) -> Option<&'static OpSpec> {
        OPS.iter().find(|s| s.name == name)
    }

    /// The op's name in error messages: [`OpSpec::reports_as`], else the
    /// DSL name without a trailing `_` (`where_` reports as `where`).
    pub fn error_name(&self) -> &'static str {
        self.reports_as
            .unwrap_or_else(|| self.name.strip_suffix('_').unwrap_or(self.name))
    }

    /// Whether the op is a function of a list of tensors, written
    /// `Tensor::name([a, b], ..)`, whose first tensor is the receiver.
    pub fn is_function(&self) -> bool {
        self.args.iter().any(|a| a.kind == ArgKind::Tensors)
    }

    /// How a body calls the op: `x.name(..)`, or `Tensor::name(..)` for a
    /// function.
    pub fn call_form(&self) -> String {
        if self.is_function() {
            format!("Tensor::{}", self.name)
        } else {
            self.name.to_string()
        }
    }

    /// The entry of `id`.
    pub fn of(id: OpId) -> &'static OpSpec {
        &OPS[id as usize]
    }
}

/// Declares [`OpId`] and [`OPS`] from one list, in the same order (so
/// `OPS[id as usize].id == id`).
macro_rules! op_table {
    ($(
        #[doc = $doc:literal]
        $id:ident = $name:literal $method:literal $(as $reports:literal)?
            ($($arg:ident: $kind:ident),*)
            -> $dtype:expr, $shape:expr $(, pair $second:expr)?;
    )*) => {
        /// A tensor op of the table, as the DSL's embedded graph names it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum OpId {
            $(
                #[doc = $doc]
                $id,
            )*
        }

        /// The op table: every tensor op a DSL body may call.
        pub static OPS: &[OpSpec] = &[$(
            OpSpec {
                id: OpId::$id,
                name: $name,
                method: $method,
                args: &[$(Arg { name: stringify!($arg), kind: ArgKind::$kind }),*],
                dtype: $dtype,
                second: op_table!(@second $($second)?),
                shape: $shape,
                doc: $doc,
                reports_as: op_table!(@opt $($reports)?),
            },
        )*];
    };
    (@second) => { None };
    (@second $second:expr) => { Some($second) };
    (@opt) => { None };
    (@opt $v:literal) => { Some($v) };
}

op_table! {
    /// `-x` (not for bools).
    Neg = "neg" "neg" () -> D::NotBool, S::Same;
    /// `max(x, 0)`.
    Relu = "relu" "relu" () -> D::Same, S::Same;
    /// Absolute value.
    Abs = "abs" "abs" () -> D::Same, S::Same;
    /// -1, 0 or 1 by sign.
    Sign = "sign" "sign" () -> D::Same, S::Same;
    /// Rounds down.
    Floor = "floor" "floor" () -> D::Same, S::Same;
    /// Rounds up.
    Ceil = "ceil" "ceil" () -> D::Same, S::Same;
    /// Rounds half to even.
    Round = "round" "round" () -> D::Same, S::Same;
    /// Rounds toward zero.
    Trunc = "trunc" "trunc" () -> D::Same, S::Same;
    /// `e^x`.
    Exp = "exp" "exp" () -> D::Float, S::Same;
    /// `2^x`.
    Exp2 = "exp2" "exp2" () -> D::Float, S::Same;
    /// `e^x - 1`.
    Expm1 = "expm1" "expm1" () -> D::Float, S::Same;
    /// Natural logarithm.
    Log = "log" "log" () -> D::Float, S::Same;
    /// Base-2 logarithm.
    Log2 = "log2" "log2" () -> D::Float, S::Same;
    /// Base-10 logarithm.
    Log10 = "log10" "log10" () -> D::Float, S::Same;
    /// `ln(1 + x)`.
    Log1p = "log1p" "log1p" () -> D::Float, S::Same;
    /// Square root.
    Sqrt = "sqrt" "sqrt" () -> D::Float, S::Same;
    /// `1 / sqrt(x)`.
    Rsqrt = "rsqrt" "rsqrt" () -> D::Float, S::Same;
    /// `1 / x`.
    Reciprocal = "reciprocal" "reciprocal" () -> D::Float, S::Same;
    /// Sine.
    Sin = "sin" "sin" () -> D::Float, S::Same;
    /// Cosine.
    Cos = "cos" "cos" () -> D::Float, S::Same;
    /// Tangent.
    Tan = "tan" "tan" () -> D::Float, S::Same;
    /// Arcsine.
    Asin = "asin" "asin" () -> D::Float, S::Same;
    /// Arccosine.
    Acos = "acos" "acos" () -> D::Float, S::Same;
    /// Arctangent.
    Atan = "atan" "atan" () -> D::Float, S::Same;
    /// Hyperbolic sine.
    Sinh = "sinh" "sinh" () -> D::Float, S::Same;
    /// Hyperbolic cosine.
    Cosh = "cosh" "cosh" () -> D::Float, S::Same;
    /// Hyperbolic tangent.
    Tanh = "tanh" "tanh" () -> D::Float, S::Same;
    /// Inverse hyperbolic sine.
    Asinh = "asinh" "asinh" () -> D::Float, S::Same;
    /// Inverse hyperbolic cosine.
    Acosh = "acosh" "acosh" () -> D::Float, S::Same;
    /// Inverse hyperbolic tangent.
    Atanh = "atanh" "atanh" () -> D::Float, S::Same;
    /// The error function.
    Erf = "erf" "erf" () -> D::Float, S::Same;
    /// `1 / (1 + e^-x)`.
    Sigmoid = "sigmoid" "sigmoid" () -> D::Float, S::Same;
    /// `ln(sigmoid(x))`.
    Logsigmoid = "logsigmoid" "logsigmoid" () -> D::Float, S::Same;
    /// GELU with the error function.
    Gelu = "gelu" "gelu" () -> D::Float, S::Same;
    /// GELU's tanh approximation.
    GeluTanh = "gelu_tanh" "gelu_tanh" () -> D::Float, S::Same;
    /// `x * sigmoid(1.702 x)`.
    QuickGelu = "quick_gelu" "quick_gelu" () -> D::Float, S::Same;
    /// `x * sigmoid(x)`.
    Silu = "silu" "silu" () -> D::Float, S::Same;
    /// `x * tanh(softplus(x))`.
    Mish = "mish" "mish" () -> D::Float, S::Same;
    /// Scaled ELU.
    Selu = "selu" "selu" () -> D::Float, S::Same;
    /// `x / (1 + abs(x))`.
    Softsign = "softsign" "softsign" () -> D::Float, S::Same;
    /// `clamp(x / 6 + 0.5, 0, 1)`.
    Hardsigmoid = "hardsigmoid" "hardsigmoid" () -> D::Float, S::Same;
    /// `x * hardsigmoid(x)`.
    Hardswish = "hardswish" "hardswish" () -> D::Float, S::Same;
    /// `clamp(x, 0, 6)`.
    Relu6 = "relu6" "relu6" () -> D::Float, S::Same;
    /// `x` where positive, `slope * x` elsewhere.
    LeakyRelu = "leaky_relu" "leaky_relu" (slope: Float) -> D::Float, S::Same;
    /// `x` where positive, `alpha * (e^x - 1)` elsewhere.
    Elu = "elu" "elu" (alpha: Float) -> D::Float, S::Same;
    /// Continuously differentiable ELU.
    Celu = "celu" "celu" (alpha: Float) -> D::Float, S::Same;
    /// `ln(1 + e^(beta x)) / beta`, linear above `threshold`.
    Softplus = "softplus" "softplus" (beta: Float, threshold: Float) -> D::Float, S::Same;
    /// `clamp(x, min, max)` in floats.
    Hardtanh = "hardtanh" "hardtanh" (min: Float, max: Float) -> D::Float, S::Same;
    /// Whether each element is NaN.
    Isnan = "isnan" "isnan" () -> D::Bool, S::Same;
    /// Whether each element is infinite.
    Isinf = "isinf" "isinf" () -> D::Bool, S::Same;
    /// Whether each element is finite.
    Isfinite = "isfinite" "isfinite" () -> D::Bool, S::Same;
    /// Whether each element is `+inf`.
    Isposinf = "isposinf" "isposinf" () -> D::Bool, S::Same;
    /// Whether each element is `-inf`.
    Isneginf = "isneginf" "isneginf" () -> D::Bool, S::Same;
    /// Logical NOT of the truth values.
    LogicalNot = "logical_not" "logical_not" () -> D::Bool, S::Same;
    /// Bitwise NOT (integers and bools).
    BitwiseNot = "bitwise_not" "bitwise_not" () -> D::NotFloat, S::Same;
    /// `x + other` (`+` in a body).
    Add = "add" "add" (other: Operand) -> D::Same, S::Broadcast;
    /// `x - other` (`-` in a body).
    Sub = "sub" "sub" (other: Operand) -> D::NotBool, S::Broadcast;
    /// `x * other` (`*` in a body).
    Mul = "mul" "mul" (other: Operand) -> D::Same, S::Broadcast;
    /// True division (`/` in a body).
    Div = "div" "div" (other: Operand) -> D::Float, S::Broadcast;
    /// `floor(x / other)`.
    FloorDiv = "floor_div" "floor_div" (other: Operand) -> D::NotBool, S::Broadcast;
    /// Remainder with the divisor's sign.
    Remainder = "remainder" "remainder" (other: Operand) -> D::NotBool, S::Broadcast;
    /// Remainder with the dividend's sign.
    Fmod = "fmod" "fmod" (other: Operand) -> D::NotBool, S::Broadcast;
    /// `x ^ other` in floats.
    Pow = "pow" "pow" (other: Operand) -> D::Float, S::Broadcast;
    /// Elementwise maximum.
    Maximum = "maximum" "maximum" (other: Operand) -> D::Same, S::Broadcast;
    /// Elementwise minimum.
    Minimum = "minimum" "minimum" (other: Operand) -> D::Same, S::Broadcast;
    /// `atan(x / other)` by quadrant.
    Atan2 = "atan2" "atan2" (other: Operand) -> D::Float, S::Broadcast;
    /// Absolute value.with the sign of `other`.
    Copysign = "copysign" "copysign" (other: Operand) -> D::Float, S::Broadcast;
    /// `ln(e^x + e^other)`.
    Logaddexp = "logaddexp" "logaddexp" (other: Operand) -> D::Float, S::Broadcast;
    /// `x == other`.
    Eq = "eq" "eq" (other: Operand) -> D::Bool, S::Broadcast;
    /// `x != other`.
    Ne = "ne" "ne" (other: Operand) -> D::Bool, S::Broadcast;
    /// `x < other` (`<` in a body).
    Lt = "lt" "lt" (other: Operand) -> D::Bool, S::Broadcast;
    /// `x <= other` (`<=` in a body).
    Le = "le" "le" (other: Operand) -> D::Bool, S::Broadcast;
    /// `x > other` (`>` in a body).
    Gt = "gt" "gt" (other: Operand) -> D::Bool, S::Broadcast;
    /// `x >= other` (`>=` in a body).
    Ge = "ge" "ge" (other: Operand) -> D::Bool, S::Broadcast;
    /// Logical AND of the truth values.
    LogicalAnd = "logical_and" "logical_and" (other: Operand) -> D::Bool, S::Broadcast;
    /// Logical OR of the truth values.
    LogicalOr = "logical_or" "logical_or" (other: Operand) -> D::Bool, S::Broadcast;
    /// Logical XOR of the truth values.
    LogicalXor = "logical_xor" "logical_xor" (other: Operand) -> D::Bool, S::Broadcast;
    /// Bitwise AND (integers and bools).
    BitwiseAnd = "bitwise_and" "bitwise_and" (other: Operand) -> D::NotFloat, S::Broadcast;
    /// Bitwise OR (integers and bools).
    BitwiseOr = "bitwise_or" "bitwise_or" (other: Operand) -> D::NotFloat, S::Broadcast;
    /// Bitwise XOR (integers and bools).
    BitwiseXor = "bitwise_xor" "bitwise_xor" (other: Operand) -> D::NotFloat, S::Broadcast;
    /// `clamp(x, min, max)`.
    Clamp = "clamp" "clamp" (min: Operand, max: Operand) -> D::Same, S::Broadcast;
    /// `cond.where_(a, b)`: `a` where the receiver is true, else `b`.
    Where = "where_" "where_" (a: Operand, b: Operand) -> D::Branch, S::Select;
    /// Converts the element type.
    Cast = "cast" "cast" (dtype: ElementType) -> D::Cast(0), S::Same;
    /// Sum over axes.
    Sum = "sum" "sum" (axes: Axes, keepdim: Bool) -> D::Sum, S::Reduce { axes: 0, keepdim: 1 };
    /// Product over axes.
    Prod = "prod" "prod" (axes: Axes, keepdim: Bool) -> D::Sum, S::Reduce { axes: 0, keepdim: 1 };
    /// Mean over axes.
    Mean = "mean" "mean" (axes: Axes, keepdim: Bool) -> D::Float, S::Reduce { axes: 0, keepdim: 1 };
    /// Maximum over axes.
    Max = "max" "max" (axes: Axes, keepdim: Bool) -> D::Same, S::Reduce { axes: 0, keepdim: 1 };
    /// Minimum over axes.
    Min = "min" "min" (axes: Axes, keepdim: Bool) -> D::Same, S::Reduce { axes: 0, keepdim: 1 };
    /// Whether any element over axes is true.
    Any = "any" "any" (axes: Axes, keepdim: Bool) -> D::Bool, S::Reduce { axes: 0, keepdim: 1 };
    /// Whether every element over axes is true.
    All = "all" "all" (axes: Axes, keepdim: Bool) -> D::Bool, S::Reduce { axes: 0, keepdim: 1 };
    /// `ln(sum(e^x))` over axes.
    Logsumexp = "logsumexp" "logsumexp" (axes: Axes, keepdim: Bool) -> D::Float, S::Reduce { axes: 0, keepdim: 1 };
    /// Variance over axes, dividing by `n - correction`.
    Var = "var" "var" (axes: Axes, correction: Count, keepdim: Bool) -> D::Float, S::Reduce { axes: 0, keepdim: 2 };
    /// Standard deviation over axes, dividing by `n - correction`.
    Std = "std" "std" (axes: Axes, correction: Count, keepdim: Bool) -> D::Float, S::Reduce { axes: 0, keepdim: 2 };
    /// Index of the first maximum along an axis.
    Argmax = "argmax" "argmax" (axis: Axis) -> D::Index, S::ReduceAxis(0);
    /// Index of the first minimum along an axis.
    Argmin = "argmin" "argmin" (axis: Axis) -> D::Index, S::ReduceAxis(0);
    /// Softmax along an axis.
    Softmax = "softmax" "softmax" (axis: Axis) -> D::Float, S::Axis(0);
    /// Log of the softmax along an axis.
    LogSoftmax = "log_softmax" "log_softmax" (axis: Axis) -> D::Float, S::Axis(0);
    /// Softmax of `-x` along an axis.
    Softmin = "softmin" "softmin" (axis: Axis) -> D::Float, S::Axis(0);
    /// Running sum along an axis.
    Cumsum = "cumsum" "cumsum" (axis: Axis) -> D::Sum, S::Axis(0);
    /// Running product along an axis.
    Cumprod = "cumprod" "cumprod" (axis: Axis) -> D::Sum, S::Axis(0);
    /// Running `logsumexp` along an axis.
    Logcumsumexp = "logcumsumexp" "logcumsumexp" (axis: Axis) -> D::Float, S::Axis(0);
    /// The values sorted along an axis (`.0`) and their i64 indices (`.1`).
    Sort = "sort" "sort" (dim: Axis, descending: Bool) -> D::Same, S::Axis(0), pair D::Index;
    /// The i64 indices that sort an axis.
    Argsort = "argsort" "argsort" (dim: Axis, descending: Bool) -> D::Index, S::Axis(0);
    /// The `k` largest (or smallest) values along an axis (`.0`) and their indices (`.1`).
    Topk = "topk" "topk" (k: Count, dim: Axis, largest: Bool) -> D::Same, S::TopK { k: 0, axis: 1 }, pair D::Index;
    /// The running maximum along an axis (`.0`) and its index (`.1`).
    Cummax = "cummax" "cummax" (axis: Axis) -> D::Same, S::Axis(0), pair D::Index;
    /// The running minimum along an axis (`.0`) and its index (`.1`).
    Cummin = "cummin" "cummin" (axis: Axis) -> D::Same, S::Axis(0), pair D::Index;
    /// The variance (`.0`) and the mean (`.1`) over axes.
    VarMean = "var_mean" "var_mean" (axes: Axes, correction: Count, keepdim: Bool) -> D::Float, S::Reduce { axes: 0, keepdim: 2 }, pair D::Float;
    /// The standard deviation (`.0`) and the mean (`.1`) over axes.
    StdMean = "std_mean" "std_mean" (axes: Axes, correction: Count, keepdim: Bool) -> D::Float, S::Reduce { axes: 0, keepdim: 2 }, pair D::Float;
    /// Divides by the `p`-norm along an axis (at least `eps`).
    Normalize = "normalize" "normalize" (p: Float, axis: Axis, eps: Float) -> D::Float, S::Axis(1);
    /// `x[index[i][j]][j]` along an axis (PyTorch's `gather`).
    Gather = "gather" "gather" (dim: Axis, index: Index) -> D::Same, S::Gather { axis: 0, index: 1 };
    /// The entries at the positions of a 0-d or 1-D index along an axis.
    IndexSelect = "index_select" "index_select" (dim: Axis, index: Index) -> D::Same, S::IndexSelect { axis: 0, index: 1 };
    /// `value` where the mask is true.
    MaskedFill = "masked_fill" "masked_fill" (mask: Mask, value: Operand) -> D::Same, S::Masked(0);
    /// One-hot rows (i64) of integer class indices.
    OneHot = "one_hot" "one_hot" (num_classes: Count) -> D::OneHot, S::AppendCount(0);
    /// Mean squared error against a target of the same shape.
    MseLoss = "mse_loss" "mse_loss" (target: Tensor, reduction: Reduction) -> D::Float, S::Loss { target: 0, reduction: 1 };
    /// Mean absolute error against a target of the same shape.
    L1Loss = "l1_loss" "l1_loss" (target: Tensor, reduction: Reduction) -> D::Float, S::Loss { target: 0, reduction: 1 };
    /// Layer normalization over axes, without an affine transform.
    Layernorm = "layernorm" "layernorm" (axes: Axes, eps: Float) -> D::Float, S::Axes(0);
    /// Zeroes above diagonal `diagonal` of the last two axes.
    Tril = "tril" "tril" (diagonal: Int) -> D::Same, S::Matrix;
    /// Zeroes below diagonal `diagonal` of the last two axes.
    Triu = "triu" "triu" (diagonal: Int) -> D::Same, S::Matrix;
    /// Matrix product (batched, broadcast).
    Matmul = "matmul" "matmul" (other: Tensor) -> D::Sum, S::Matmul;
    /// Matrix product (as `matmul`).
    Dot = "dot" "dot" (other: Tensor) -> D::Sum, S::Matmul;
    /// A view with new dims (one may be `-1`).
    Reshape = "reshape" "reshape" (dims: Dims) -> D::Same, S::Reshape(0);
    /// Broadcasts size-1 axes to new dims (`-1` keeps one).
    Expand = "expand" "expand" (dims: Dims) -> D::Same, S::Expand(0);
    /// Swaps two axes.
    Transpose = "transpose" "transpose" (a: Axis, b: Axis) -> D::Same, S::Transpose(0, 1);
    /// Reorders the axes.
    Permute = "permute" "permute" (axes: Axes) -> D::Same, S::Permute(0);
    /// Reverses the order along axes.
    Flip = "flip" "flip" (axes: Axes) -> D::Same, S::Flip(0);
    /// Removes a size-1 axis.
    Squeeze = "squeeze" "squeeze" (axis: Axis) -> D::Same, S::Squeeze(0);
    /// Removes every size-1 axis.
    SqueezeAll = "squeeze_all" "squeeze_all" () -> D::Same, S::SqueezeAll;
    /// Splits an axis into several (one size may be `-1`).
    Unflatten = "unflatten" "unflatten" (axis: Axis, sizes: Dims) -> D::Same, S::Unflatten(0, 1);
    /// Inserts a size-1 axis.
    Unsqueeze = "unsqueeze" "unsqueeze" (axis: Axis) -> D::Same, S::Unsqueeze(0);
    /// Merges the axes `start..=end`.
    Flatten = "flatten" "flatten" (start: Axis, end: Axis) -> D::Same, S::Flatten(0, 1);
    /// Tiles the tensor.
    Repeat = "repeat" "repeat" (repeats: Sizes) -> D::Same, S::Repeat(0);
    /// Pads (or crops, negative) each axis by `(before, after)` elements of `value`.
    Pad = "pad" "pad" (pads: Pads, value: Float) -> D::Same, S::Pad(0);
    /// Pads (or crops) each axis by `(before, after)` in a mode (PyTorch's `F.pad`).
    PadMode = "pad_mode" "pad_mode" (pads: Pads, mode: PadMode) -> D::Same, S::PadMode { pads: 0, mode: 1 };
    /// Keeps `[begin, end)` of each axis.
    Shrink = "shrink" "shrink" (bounds: Bounds) -> D::Same, S::Shrink(0);
    /// Shifts the elements along axes, wrapping around.
    Roll = "roll" "roll" (shifts: Ints, dims: Axes) -> D::Same, S::Roll { shifts: 0, dims: 1 };
    /// The diagonal `offset` of two axes, as a last axis.
    Diagonal = "diagonal" "diagonal" (offset: Int, dim1: Axis, dim2: Axis) -> D::Same, S::Diagonal { offset: 0, dim1: 1, dim2: 2 };
    /// Windows of `size` elements, `step` apart, along an axis.
    Unfold = "unfold" "unfold" (dimension: Axis, size: Count, step: Count) -> D::Same, S::Unfold { axis: 0, size: 1, step: 2 };
    /// Each element repeated in place along an axis (`None`: flattened).
    RepeatInterleave = "repeat_interleave" "repeat_interleave" (repeats: Count, dim: OptionalAxis) -> D::Same, S::RepeatInterleave { repeats: 0, axis: 1 };
    /// A copy with `src` written at the positions of `index` along an axis.
    Scatter = "scatter" "scatter" (dim: Axis, index: Index, src: Tensor) -> D::Same, S::Scatter { axis: 0, index: 1, src: 2 };
    /// A copy with `value` written at the positions of `index` along an axis.
    ScatterValue = "scatter_value" "scatter_value" (dim: Axis, index: Index, value: Float) -> D::Same, S::ScatterValue { axis: 0, index: 1 };
    /// `x + weight · (end - x)` in floats.
    Lerp = "lerp" "lerp" (end: Tensor, weight: Operand) -> D::Float, S::Broadcast;
    /// A copy plus the `src` values summed at the positions of `index`.
    ScatterAdd = "scatter_add" "scatter_add" (dim: Axis, index: Index, src: Tensor) -> D::NotBool, S::Scatter { axis: 0, index: 1, src: 2 };
    /// Mean cross-entropy of class scores (axis 1) against integer labels.
    CrossEntropy = "cross_entropy" "cross_entropy" (labels: Labels) -> D::Float, S::CrossEntropy(0);
    /// 2-D convolution of `[N, C, H, W]` by `[O, C/groups, KH, KW]` weights and an optional `[O]` bias.
    Conv2d = "conv2d" "conv2d" (weight: Tensor, bias: OptionalTensor, opts: ConvOptions) -> D::Sum, S::Conv2d { weight: 0, bias: 1, opts: 2 };
    /// Max pooling over the last two axes.
    MaxPool2d = "max_pool2d" "max_pool2d" (opts: PoolOptions) -> D::Same, S::Pool { opts: 0, axes: 2, average: false };
    /// Average pooling over the last two axes.
    AvgPool2d = "avg_pool2d" "avg_pool2d" (opts: PoolOptions) -> D::Float, S::Pool { opts: 0, axes: 2, average: true };
    /// Max pooling over the last axis (the options' second components).
    MaxPool1d = "max_pool1d" "max_pool1d" (opts: PoolOptions) -> D::Same, S::Pool { opts: 0, axes: 1, average: false };
    /// Shifts the bits left (integers only).
    BitwiseLeftShift = "bitwise_left_shift" "bitwise_left_shift" (other: Operand) -> D::Integer, S::Broadcast;
    /// Shifts the bits right, arithmetic for signed integers.
    BitwiseRightShift = "bitwise_right_shift" "bitwise_right_shift" (other: Operand) -> D::Integer, S::Broadcast;
    /// A tensor of the receiver's shape and type filled with `value`.
    FullLike = "full_like" "full_like" (value: Float) -> D::Same, S::Same;
    /// Zeros of the receiver's shape and type.
    ZerosLike = "zeros_like" "zeros_like" () -> D::Same, S::Same;
    /// Ones of the receiver's shape and type.
    OnesLike = "ones_like" "ones_like" () -> D::Same, S::Same;
    /// The same values realized in a buffer of their own.
    Contiguous = "contiguous" "contiguous" () -> D::Same, S::Same;
    /// Sum over axes, accumulated and returned in the given type.
    SumDtype = "sum_dtype" "sum_dtype" (axes: Axes, keepdim: Bool, dtype: ElementType) -> D::Cast(2), S::Reduce { axes: 0, keepdim: 1 };
    /// Product over axes in the given type.
    ProdDtype = "prod_dtype" "prod_dtype" (axes: Axes, keepdim: Bool, dtype: ElementType) -> D::Cast(2), S::Reduce { axes: 0, keepdim: 1 };
    /// `x @ weight.T + bias` with PyTorch's `[out, in]` weight.
    Linear = "linear" "linear" (weight: Tensor, bias: OptionalTensor) -> D::Sum, S::Linear { weight: 0, bias: 1 };
    /// A 1-D input on diagonal `diagonal` of a square matrix, or a 2-D input's diagonal.
    Diag = "diag" "diag" (diagonal: Int) -> D::Same, S::Diag(0);
    /// 1-D convolution of `[N, C, L]` by `[O, C/groups, K]` weights and an optional `[O]` bias.
    Conv1d = "conv1d" "conv1d" (weight: Tensor, bias: OptionalTensor, opts: ConvNdOptions) -> D::Sum, S::ConvNd { weight: 0, bias: 1, opts: 2, axes: 1, transpose: false };
    /// 3-D convolution of `[N, C, D, H, W]`.
    Conv3d = "conv3d" "conv3d" (weight: Tensor, bias: OptionalTensor, opts: ConvNdOptions) -> D::Sum, S::ConvNd { weight: 0, bias: 1, opts: 2, axes: 3, transpose: false };
    /// Transposed 1-D convolution by `[Cin, Cout/groups, K]` weights (the options' second components).
    ConvTranspose1d = "conv_transpose1d" "conv_transpose1d" (weight: Tensor, bias: OptionalTensor, opts: ConvNdOptions) -> D::Sum, S::ConvNd { weight: 0, bias: 1, opts: 2, axes: 1, transpose: true };
    /// Transposed 2-D convolution by `[Cin, Cout/groups, KH, KW]` weights.
    ConvTranspose2d = "conv_transpose2d" "conv_transpose2d" (weight: Tensor, bias: OptionalTensor, opts: ConvNdOptions) -> D::Sum, S::ConvNd { weight: 0, bias: 1, opts: 2, axes: 2, transpose: true };
    /// Transposed 3-D convolution.
    ConvTranspose3d = "conv_transpose3d" "conv_transpose3d" (weight: Tensor, bias: OptionalTensor, opts: ConvNdOptions) -> D::Sum, S::ConvNd { weight: 0, bias: 1, opts: 2, axes: 3, transpose: true };
    /// Max pooling over the last three axes.
    MaxPool3d = "max_pool3d" "max_pool3d" (opts: Pool3dOptions) -> D::Same, S::Pool { opts: 0, axes: 3, average: false };
    /// Average pooling over the last three axes.
    AvgPool3d = "avg_pool3d" "avg_pool3d" (opts: Pool3dOptions) -> D::Float, S::Pool { opts: 0, axes: 3, average: true };
    /// Max pooling over the last axis: the maxima (`.0`) and their i64 positions (`.1`).
    MaxPool1dWithIndices = "max_pool1d_with_indices" "max_pool1d_with_indices" (opts: PoolOptions) -> D::Same, S::Pool { opts: 0, axes: 1, average: false }, pair D::Index;
    /// Max pooling over the last two axes: the maxima (`.0`) and their i64 plane positions (`.1`).
    MaxPool2dWithIndices = "max_pool2d_with_indices" "max_pool2d_with_indices" (opts: PoolOptions) -> D::Same, S::Pool { opts: 0, axes: 2, average: false }, pair D::Index;
    /// Max pooling over the last three axes with the i64 positions (`.1`).
    MaxPool3dWithIndices = "max_pool3d_with_indices" "max_pool3d_with_indices" (opts: Pool3dOptions) -> D::Same, S::Pool { opts: 0, axes: 3, average: false }, pair D::Index;
    /// Whether each element is close to `other` (`|a - b| <= atol + rtol·|b|`, finite).
    Isclose = "isclose" "isclose" (other: Operand, opts: IsCloseOptions) -> D::Bool, S::Broadcast;
    /// `softmax(q @ k^T · scale (+ causal mask)) @ v` of the receiver as queries.
    ScaledDotProductAttention = "scaled_dot_product_attention" "scaled_dot_product_attention" (key: Tensor, value: Tensor, opts: AttentionOptions) -> D::Float, S::Attention { key: 0, value: 1, opts: 2 };
    /// A copy with the `src` values written at `index` combined by `reduce`.
    ScatterReduce = "scatter_reduce" "scatter_reduce" (dim: Axis, index: Index, src: Tensor, reduce: ScatterReduce, include_self: Bool) -> D::ScatterReduce(3), S::Scatter { axis: 0, index: 1, src: 2 };
    /// Broadcasts to the given sizes (NumPy rules).
    BroadcastTo = "broadcast_to" "broadcast_to" (shape: Sizes) -> D::Same, S::BroadcastTo(0);
    /// Binary cross-entropy of probabilities, optionally weighted.
    BinaryCrossEntropy = "binary_cross_entropy" "binary_cross_entropy" (target: Tensor, weight: OptionalTensor, reduction: Reduction) -> D::Float, S::WeightedLoss { target: 0, weight: 1, pos_weight: None, reduction: 2 };
    /// Binary cross-entropy of logits, optionally weighted (and positive-class weighted).
    BinaryCrossEntropyWithLogits = "binary_cross_entropy_with_logits" "binary_cross_entropy_with_logits" (target: Tensor, weight: OptionalTensor, pos_weight: OptionalTensor, reduction: Reduction) -> D::Float, S::WeightedLoss { target: 0, weight: 1, pos_weight: Some(2), reduction: 3 };
    /// Huber-like loss: quadratic below `beta`, linear above.
    SmoothL1Loss = "smooth_l1_loss" "smooth_l1_loss" (target: Tensor, reduction: Reduction, beta: Float) -> D::Float, S::SmoothL1 { target: 0, reduction: 1, beta: 2 };
    /// Python slicing of the leading axes (`x.slice([1..3, ..])`).
    Slice = "slice" "slice" (slices: Slices) -> D::Same, S::Slice(0);
    /// Resamples the spatial axes of `[N, C, *spatial]` to `size`.
    Interpolate = "interpolate" "interpolate" (size: Sizes, mode: InterpolateMode, align_corners: Bool) -> D::Resample(1), S::Interpolate { size: 0, mode: 1, align: 2 };
    /// Average pooling over the last axis (the options' second components).
    AvgPool1d = "avg_pool1d" "avg_pool1d" (opts: PoolOptions) -> D::Float, S::Pool { opts: 0, axes: 1, average: true };
    /// Reinterprets the bits as another element type of the same size.
    Bitcast = "bitcast" "bitcast" (dtype: ElementType) -> D::Bitcast(0), S::Same;
    /// Division with a rounding mode (`RoundingMode::None`, `Trunc`, `Floor`).
    DivMode = "div_mode" "div_mode" (other: Operand, mode: RoundingMode) -> D::DivMode(1), S::Broadcast;
    /// Resamples the spatial axes of `[N, C, *spatial]` by scale factors.
    InterpolateScale = "interpolate_scale" "interpolate_scale" as "interpolate" (scale_factor: Floats, mode: InterpolateMode, align_corners: Bool) -> D::Resample(1), S::InterpolateScale { scale: 0, mode: 1, align: 2 };
    /// Inverse of `max_pool1d_with_indices` (zeros elsewhere).
    MaxUnpool1d = "max_unpool1d" "max_unpool1d" (indices: Index, opts: PoolOptions, output_size: OptionalSizes) -> D::Same, S::Unpool { indices: 0, opts: 1, size: 2, axes: 1 };
    /// Inverse of `max_pool2d_with_indices` (zeros elsewhere).
    MaxUnpool2d = "max_unpool2d" "max_unpool2d" (indices: Index, opts: PoolOptions, output_size: OptionalSizes) -> D::Same, S::Unpool { indices: 0, opts: 1, size: 2, axes: 2 };
    /// Inverse of `max_pool3d_with_indices` (zeros elsewhere).
    MaxUnpool3d = "max_unpool3d" "max_unpool3d" (indices: Index, opts: Pool3dOptions, output_size: OptionalSizes) -> D::Same, S::Unpool { indices: 0, opts: 1, size: 2, axes: 3 };
    /// Negative log-likelihood of log-probabilities at class labels, with options.
    NllLoss = "nll_loss" "nll_loss" (target: Labels, opts: ClassLossOptions) -> D::Float, S::ClassLoss { target: 0, opts: 1, probabilities: false };
    /// Joins tensors along an axis (`Tensor::cat([a, b], 0)`); the others match.
    Cat = "cat" "cat" (tensors: Tensors, dim: Axis) -> D::Same, S::Cat { tensors: 0, axis: 1 };
    /// Stacks equally shaped tensors along a new axis (`Tensor::stack([a, b], 0)`).
    Stack = "stack" "stack" (tensors: Tensors, dim: Axis) -> D::Same, S::Stack { tensors: 0, axis: 1 };
    /// Einstein summation (`Tensor::einsum("ij,jk->ik", [a, b])`).
    Einsum = "einsum" "einsum" (equation: Equation, operands: Tensors) -> D::Same, S::Einsum { equation: 0, operands: 1 };
    /// PyTorch's `t[...]`: integers, slices, new axes, an ellipsis and integer index tensors.
    Index = "index" "index" (indices: Indices) -> D::Same, S::Index(0);
    /// Cross-entropy against class labels or probabilities, with options.
    CrossEntropyWith = "cross_entropy_with" "cross_entropy_with" as "cross_entropy" (target: ClassTarget, opts: ClassLossOptions) -> D::Float, S::ClassLoss { target: 0, opts: 1, probabilities: true };
}

/// Tensor methods a DSL body cannot call, and why (`tests/op_table.rs`
/// checks every public `Tensor` method is in [`OPS`], here or in
/// [`NOT_YET_IN_THE_DSL`]).
pub static NOT_IN_THE_DSL: &[(&str, &str)] = &[
    ("nonzero", "the result's length depends on the data"),
    ("masked_select", "the result's length depends on the data"),
    (
        "repeat_interleave_counts",
        "the result's length depends on the data",
    ),
    ("split", "returns a list of tensors"),
    ("split_every", "returns a list of tensors"),
    ("chunk", "returns a list of tensors"),
    ("shape", "reads the tensor, not an op"),
    ("dtype", "reads the tensor, not an op"),
    ("ndim", "reads the tensor, not an op"),
    ("numel", "reads the tensor, not an op"),
    ("device", "reads the tensor, not an op"),
    ("uop", "reads the tensor, not an op"),
    ("error", "reads the tensor, not an op"),
    ("inputs", "reads the tensor, not an op"),
    ("kernels", "reads the tensor, not an op"),
    ("realized_buffer", "reads the tensor, not an op"),
    ("realize", "runs the graph; a body builds one"),
    ("reference", "runs the graph; a body builds one"),
    ("to_vec", "runs the graph; a body builds one"),
    ("to_ndarray", "runs the graph; a body builds one"),
    ("to_device", "moves data; a body builds one graph"),
    ("assign", "writes a buffer; a body builds one graph"),
    ("allclose", "runs the graph and returns a `bool`"),
    (
        "backward",
        "differentiates a result; call it on the kernel's result",
    ),
    (
        "backward_seeded",
        "differentiates a result; call it on the kernel's result",
    ),
    (
        "gradient",
        "differentiates a result; call it on the kernel's result",
    ),
    (
        "gradient_seeded",
        "differentiates a result; call it on the kernel's result",
    ),
    ("grad", "reads a parameter's gradient"),
    ("zero_grad", "clears a parameter's gradient"),
    ("requires_grad", "marks a parameter"),
    ("needs_grad", "reads a parameter's mark"),
    (
        "detach",
        "cuts a gradient; a body's parameters are its arguments",
    ),
    ("try_broadcast_to", "deprecated alias of `broadcast_to`"),
    ("try_chunk", "deprecated alias of `chunk`"),
    ("try_expand", "deprecated alias of `expand`"),
    ("try_flatten", "deprecated alias of `flatten`"),
    ("try_flip", "deprecated alias of `flip`"),
    ("try_pad", "deprecated alias of `pad`"),
    ("try_permute", "deprecated alias of `permute`"),
    ("try_repeat", "deprecated alias of `repeat`"),
    ("try_reshape", "deprecated alias of `reshape`"),
    ("try_shrink", "deprecated alias of `shrink`"),
    ("try_slice", "deprecated alias of `slice`"),
    ("try_split", "deprecated alias of `split`"),
    ("try_squeeze", "deprecated alias of `squeeze`"),
    ("try_transpose", "deprecated alias of `transpose`"),
    ("try_unsqueeze", "deprecated alias of `unsqueeze`"),
];

/// Tensor methods whose shape follows from their arguments but which the
/// op table does not declare yet: a DSL body cannot call them (yet).
pub static NOT_YET_IN_THE_DSL: &[&str] = &[];
