//! The vocabulary of the op table: argument kinds and their values, the
//! element-type and shape rules, and the losses' `Reduction`.

use crate::shape::ReshapeDim;
use crate::ScalarType;

/// PyTorch's `reduction` argument of the losses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reduction {
    /// `"none"`: one loss per element.
    None,
    /// `"mean"` (the default).
    #[default]
    Mean,
    /// `"sum"`.
    Sum,
}

/// How `Tensor::scatter_reduce` combines the values written to one
/// position (PyTorch's `reduce` argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScatterReduce {
    /// `"sum"`.
    Sum,
    /// `"prod"`.
    Prod,
    /// `"mean"` (integers divide with floor).
    Mean,
    /// `"amax"`.
    Amax,
    /// `"amin"`.
    Amin,
}

/// PyTorch's `rounding_mode` of `Tensor::div_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundingMode {
    /// No rounding, PyTorch's `None`: true division (integers divide as
    /// floats).
    None,
    /// Rounds the quotient toward zero (`"trunc"`).
    Trunc,
    /// Rounds the quotient toward negative infinity (`"floor"`).
    Floor,
}

impl RoundingMode {
    /// The old name of [`RoundingMode::None`].
    #[deprecated(note = "use `RoundingMode::None`: it names PyTorch's `rounding_mode=None`")]
    #[allow(non_upper_case_globals)] // the old variant's spelling
    pub const True: RoundingMode = RoundingMode::None;
}

/// What one argument of an op is, and how a DSL body writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// Another tensor of the receiver's element type (`x.matmul(w)`).
    Tensor,
    /// A tensor of the receiver's element type or a number or bool
    /// literal (`x.maximum(0.0)`, `x.add(y)`).
    Operand,
    /// An axis: an integer literal, negative from the end (`-1`).
    Axis,
    /// A list literal of axes (`[0, -1]`).
    Axes,
    /// `true` or `false`.
    Bool,
    /// A number literal (`0.01`, `1`).
    Float,
    /// An integer literal (`-1`, `2`).
    Int,
    /// A non-negative integer literal (`1`).
    Count,
    /// A list literal of non-negative integers (`[2, 1]`).
    Sizes,
    /// A list of dims: literals, `-1`, signature names and `+ - * /` of
    /// them (`[B, -1]`).
    Dims,
    /// An element type name (`f16`, `i32`).
    ElementType,
    /// A tensor of integer positions (`gather`, `index_select`), of any
    /// integer type.
    Index,
    /// A bool tensor (`masked_fill`).
    Mask,
    /// A loss reduction (`Reduction::Mean`).
    Reduction,
    /// A list literal of signed `(before, after)` pairs, one per axis
    /// (`[(1, 1), (0, -2)]`; the padding convention).
    Pads,
    /// A list literal of `(begin, end)` pairs, one per axis (`[(0, 2),
    /// (1, 3)]`).
    Bounds,
    /// A list literal of integers (`[1, -2]`).
    Ints,
    /// An axis or none: `Some(1)` or `None`.
    OptionalAxis,
    /// A tensor of integer class labels (`cross_entropy`).
    Labels,
    /// A tensor of the receiver's element type, or none: `Some(b)` or
    /// `None` (a bias).
    OptionalTensor,
    /// Convolution options: `ConvOptions { stride: (2, 2), padding: (1,
    /// 1), ..Default::default() }`.
    ConvOptions,
    /// Pooling options: `PoolOptions::new((2, 2)).stride((1, 1))` and the
    /// other builder calls.
    PoolOptions,
    /// The options of `conv1d` (`Conv1dOptions { stride: 2,
    /// ..Default::default() }`), `conv3d` (`Conv3dOptions`), and the
    /// transposed convolutions (`ConvTransposeOptions`,
    /// `ConvTranspose3dOptions`): the struct's name is the op's.
    ConvNdOptions,
    /// 3-D pooling options: `Pool3dOptions::new((2, 2, 2))` and the
    /// builder calls.
    Pool3dOptions,
    /// Python slices of the leading axes: `[1..3, .., -2..]`, or
    /// `Slice::all().step(2)` for a step.
    Slices,
    /// An interpolation mode (`InterpolateMode::Bilinear`).
    InterpolateMode,
    /// `IsCloseOptions { rtol: 1e-5, atol: 1e-8, equal_nan: false }` (or
    /// a part of it and `..Default::default()`).
    IsCloseOptions,
    /// `AttentionOptions { is_causal: true, ..Default::default() }` (every
    /// field but `mask`, which a body cannot give).
    AttentionOptions,
    /// A scatter reduction (`ScatterReduce::Sum`).
    ScatterReduce,
    /// A padding mode (`PadMode::Reflect`, `PadMode::Constant(0.5)`).
    PadMode,
    /// A rounding mode (`RoundingMode::Floor`).
    RoundingMode,
    /// A list literal of numbers (`[2.0, 1.5]`).
    Floats,
    /// An optional size per pooled axis: `None`, `Some(8)` (1 axis) or
    /// `Some((8, 8))`.
    OptionalSizes,
    /// The options of the class losses: `&ClassLossOptions { weight:
    /// Some(w), ignore_index: Some(-100), label_smoothing: 0.1, reduction:
    /// Reduction::Sum }` (or a part of it and `..Default::default()`); a
    /// weight is a tensor of the receiver's element type.
    ClassLossOptions,
    /// The target of `cross_entropy_with`: integer class labels or float
    /// class probabilities.
    ClassTarget,
    /// A list literal of tensors of one element type (`[a, b]`): the
    /// operands of a function such as `Tensor::cat`, whose first tensor
    /// is the op's receiver.
    Tensors,
    /// An `einsum` equation, a string literal (`"ij,jk->ik"`).
    Equation,
    /// The entries of `index`, a list literal: `Index::Int(0)`,
    /// `Index::Slice(1..3)`, `Index::NewAxis`, `Index::Ellipsis`,
    /// `Index::Tensor(i)` (an integer tensor; a bool mask's result length
    /// depends on the data, so a body cannot index with one).
    Indices,
}

impl ArgKind {
    /// How a DSL body writes an argument of this kind (for the docs).
    pub fn literal_form(self) -> &'static str {
        match self {
            ArgKind::Tensor => "tensor",
            ArgKind::Operand => "tensor or literal",
            ArgKind::Axis => "`-1`",
            ArgKind::Axes => "`[0, -1]`",
            ArgKind::Bool => "`true`",
            ArgKind::Float => "`0.5`",
            ArgKind::Int => "`-1`",
            ArgKind::Count => "`1`",
            ArgKind::Sizes => "`[2, 1]`",
            ArgKind::Dims => "`[B, -1]`",
            ArgKind::ElementType => "`f16`",
            ArgKind::Index => "integer tensor",
            ArgKind::Mask => "bool tensor",
            ArgKind::Reduction => "`Reduction::Mean`",
            ArgKind::Pads => "`[(1, 1), (0, -2)]`",
            ArgKind::Bounds => "`[(0, 2), (1, 3)]`",
            ArgKind::Ints => "`[1, -2]`",
            ArgKind::OptionalAxis => "`Some(1)` or `None`",
            ArgKind::Labels => "integer tensor",
            ArgKind::OptionalTensor => "`Some(tensor)` or `None`",
            ArgKind::ConvOptions => "`ConvOptions { stride: (2, 2), ..Default::default() }`",
            ArgKind::PoolOptions => "`PoolOptions::new((2, 2)).stride((1, 1))`",
            ArgKind::Pool3dOptions => "`Pool3dOptions::new((2, 2, 2))`",
            ArgKind::ConvNdOptions => "`Conv1dOptions { stride: 2, ..Default::default() }` (or `Conv3dOptions`, `ConvTransposeOptions`, `ConvTranspose3dOptions`)",
            ArgKind::Slices => "`[1..3, .., Slice::all().step(2)]`",
            ArgKind::InterpolateMode => "`InterpolateMode::Bilinear`",
            ArgKind::IsCloseOptions => "`IsCloseOptions { rtol: 1e-5, ..Default::default() }`",
            ArgKind::AttentionOptions => "`AttentionOptions { is_causal: true, ..Default::default() }`",
            ArgKind::ScatterReduce => "`ScatterReduce::Sum`",
            ArgKind::PadMode => "`PadMode::Reflect`",
            ArgKind::RoundingMode => "`RoundingMode::Floor`",
            ArgKind::Floats => "`[2.0, 1.5]`",
            ArgKind::OptionalSizes => "`Some((8, 8))` or `None`",
            ArgKind::ClassLossOptions => {
                "`&ClassLossOptions { weight: Some(w), ..Default::default() }`"
            }
            ArgKind::ClassTarget => "integer or float tensor",
            ArgKind::Tensors => "`[a, b]`",
            ArgKind::Equation => "`\"ij,jk->ik\"`",
            ArgKind::Indices => "`[Index::Int(0), Index::Slice(1..), Index::Tensor(i)]`",
        }
    }
}

/// One declared argument: its name (as in the `Tensor` method) and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arg {
    /// The parameter's name.
    pub name: &'static str,
    /// What it is.
    pub kind: ArgKind,
}

/// The element type of an op's result, from the receiver's.
///
/// The other tensor operands of an op in a DSL body have the receiver's
/// element type (the DSL does not promote), so the rule reads only the
/// receiver's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DTypeRule {
    /// The receiver's type.
    Same,
    /// The receiver's type; an error for bool.
    NotBool,
    /// The receiver's type; an error for floats (bitwise ops).
    NotFloat,
    /// The receiver's type; an error for floats and bools (shifts).
    Integer,
    /// Floats keep their type; integers and bools become f32
    /// ([`ScalarType::to_float`]).
    Float,
    /// Bool (comparisons, tests such as `isnan`).
    Bool,
    /// The index type of `argmax`/`argmin` (i64, as every index-producing
    /// op).
    Index,
    /// A sum's type: floats keep theirs, integers and bools accumulate in
    /// their [`ScalarType::sum_accumulator`].
    Sum,
    /// The element type given as argument `i`.
    Cast(usize),
    /// i64, from a receiver of integers (`one_hot`).
    OneHot,
    /// The receiver's type, except that a linear mode (argument `i`)
    /// resamples bools into f32 (`interpolate`).
    Resample(usize),
    /// The receiver's type; bools only with the `Amax`/`Amin` reduction of
    /// argument `i` (`scatter_reduce`).
    ScatterReduce(usize),
    /// The element type given as argument `i`, of the receiver's size and
    /// neither being bool (`bitcast`).
    Bitcast(usize),
    /// `div`'s rule with the rounding mode `None` of argument `i`, else
    /// the receiver's type and an error for bool (`div_mode`).
    DivMode(usize),
    /// The element type of the first tensor argument (`where_`, whose
    /// receiver is the condition); an error when every argument is a
    /// literal.
    Branch,
}

impl DTypeRule {
    /// The rule in a few words (the docs' method table).
    pub fn text(self) -> &'static str {
        match self {
            DTypeRule::Same => "same",
            DTypeRule::NotBool => "same; not bool",
            DTypeRule::NotFloat => "same; integers and bool only",
            DTypeRule::Integer => "same; integers only",
            DTypeRule::Float => "same float; integers and bool give f32",
            DTypeRule::Bool => "bool",
            DTypeRule::Index => "i64",
            DTypeRule::Sum => "same float; narrow integers and bool widen to 32 bits",
            DTypeRule::Cast(_) => "the given type",
            DTypeRule::Branch => "the branches' type",
            DTypeRule::OneHot => "i64; integers only",
            DTypeRule::Resample(_) => "same; bool gives f32 in the linear modes",
            DTypeRule::ScatterReduce(_) => "same; bool only with `Amax`/`Amin`",
            DTypeRule::Bitcast(_) => "the given type, of the same size; not bool",
            DTypeRule::DivMode(_) => "`None`: as `div`; else same, not bool",
        }
    }
}

/// The shape of an op's result; the numbers are argument positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeRule {
    /// The receiver's shape.
    Same,
    /// The broadcast of the receiver and every tensor argument.
    Broadcast,
    /// The broadcast of the tensor arguments, then of that and the
    /// receiver (`where_`: the branches, then the condition).
    Select,
    /// The receiver's shape; argument `i` is an axis of it.
    Axis(usize),
    /// The receiver's shape; argument `i` lists distinct axes of it.
    Axes(usize),
    /// Reduces the axes of argument `axes`, keeping them as size 1 when
    /// argument `keepdim` is true.
    Reduce {
        /// The axes' argument.
        axes: usize,
        /// The keepdim flag's argument.
        keepdim: usize,
    },
    /// Removes the axis of argument `i` (`argmax`); an empty axis is an
    /// error.
    ReduceAxis(usize),
    /// `matmul` of the receiver and argument 0.
    Matmul,
    /// `reshape` to the dims of argument `i`.
    Reshape(usize),
    /// `expand` to the dims of argument `i`.
    Expand(usize),
    /// Swaps the axes of arguments `a` and `b`.
    Transpose(usize, usize),
    /// Permutes the axes by argument `i`.
    Permute(usize),
    /// The receiver's shape; argument `i` lists distinct axes (`flip`).
    Flip(usize),
    /// Removes the size-1 axis of argument `i`.
    Squeeze(usize),
    /// Removes every size-1 axis.
    SqueezeAll,
    /// Splits the axis of argument `axis` into the dims of argument `dims`.
    Unflatten(usize, usize),
    /// Inserts a size-1 axis at argument `i`.
    Unsqueeze(usize),
    /// Merges the axes from argument `a` to argument `b`.
    Flatten(usize, usize),
    /// Tiles by the sizes of argument `i`.
    Repeat(usize),
    /// The receiver's shape, which has at least 2 axes (`tril`).
    Matrix,
    /// The receiver's shape with the axis of argument `axis` cut to the
    /// count of argument `k` (`topk`), which must not exceed it.
    TopK {
        /// The count's argument.
        k: usize,
        /// The axis' argument.
        axis: usize,
    },
    /// `gather` along the axis of argument `axis` with the index of
    /// argument `index`: the index's shape.
    Gather {
        /// The axis' argument.
        axis: usize,
        /// The index's argument.
        index: usize,
    },
    /// `index_select` along the axis of argument `axis` with the 0-d or
    /// 1-D index of argument `index`.
    IndexSelect {
        /// The axis' argument.
        axis: usize,
        /// The index's argument.
        index: usize,
    },
    /// The receiver's shape; the mask of argument `i` and a value tensor
    /// after it broadcast to it.
    Masked(usize),
    /// The receiver's shape with a last axis of the count of argument `i`
    /// (`one_hot`).
    AppendCount(usize),
    /// A loss of the receiver against the target of argument `target`
    /// (one shape), reduced by argument `reduction`.
    Loss {
        /// The target's argument.
        target: usize,
        /// The reduction's argument.
        reduction: usize,
    },
    /// Padded by the pairs of argument `i` ([`crate::shape::pad_shape`]).
    Pad(usize),
    /// Padded by the pairs of argument `pads` in the mode of argument
    /// `mode` ([`crate::shape::pad_mode_shape`]).
    PadMode {
        /// The pairs' argument.
        pads: usize,
        /// The mode's argument.
        mode: usize,
    },
    /// Cut to the bounds of argument `i`.
    Shrink(usize),
    /// The receiver's shape, rolled by argument `shifts` along the axes of
    /// argument `dims`.
    Roll {
        /// The shifts' argument.
        shifts: usize,
        /// The axes' argument.
        dims: usize,
    },
    /// The two axes of arguments `dim1` and `dim2` removed and the length
    /// of diagonal `offset` appended.
    Diagonal {
        /// The offset's argument.
        offset: usize,
        /// The first axis' argument.
        dim1: usize,
        /// The second axis' argument.
        dim2: usize,
    },
    /// Windows of argument `size`, argument `step` apart, along the axis
    /// of argument `axis`.
    Unfold {
        /// The axis' argument.
        axis: usize,
        /// The window size's argument.
        size: usize,
        /// The step's argument.
        step: usize,
    },
    /// The axis of argument `axis` (the flattened tensor for `None`) times
    /// the count of argument `repeats`.
    RepeatInterleave {
        /// The count's argument.
        repeats: usize,
        /// The optional axis' argument.
        axis: usize,
    },
    /// The receiver's shape; the index of argument `index` and the values
    /// of argument `src` fit it ([`crate::shape::scatter_shape`]).
    Scatter {
        /// The axis' argument.
        axis: usize,
        /// The index's argument.
        index: usize,
        /// The values' argument.
        src: usize,
    },
    /// The receiver's shape; the index of argument `index` fits it except
    /// on the axis of argument `axis` (`scatter_value`: the values are the
    /// index's shape).
    ScatterValue {
        /// The axis' argument.
        axis: usize,
        /// The index's argument.
        index: usize,
    },
    /// `[]`: the mean loss of class scores against the labels of argument
    /// `i` (the scores' shape without the class axis 1).
    CrossEntropy(usize),
    /// A 2-D convolution by the weight of argument `weight`, the optional
    /// bias of argument `bias` and the options of argument `opts`.
    Conv2d {
        /// The weight's argument.
        weight: usize,
        /// The optional bias' argument.
        bias: usize,
        /// The options' argument.
        opts: usize,
    },
    /// Sliced by the Python slices of argument `i`.
    Slice(usize),
    /// Broadcast to the sizes of argument `i`.
    BroadcastTo(usize),
    /// Attention of the receiver (queries) over the key of argument `key`
    /// and the value of argument `value` with the options of argument
    /// `opts` ([`crate::shape::attention_shape`]; the dropout probability
    /// is in `[0, 1]`).
    Attention {
        /// The key's argument.
        key: usize,
        /// The value's argument.
        value: usize,
        /// The options' argument.
        opts: usize,
    },
    /// A convolution (or, with `transpose`, a transposed one) over the
    /// last `axes` axes by the weight of argument `weight`, the optional
    /// bias of argument `bias` and the options of argument `opts` (1
    /// axis of 2-D transposed options: their second components).
    ConvNd {
        /// The weight's argument.
        weight: usize,
        /// The optional bias' argument.
        bias: usize,
        /// The options' argument.
        opts: usize,
        /// The number of spatial axes.
        axes: usize,
        /// Whether it is a transposed convolution.
        transpose: bool,
    },
    /// A loss against the target of argument `target` whose optional
    /// weights (arguments `weight` and, if any, `pos_weight`) broadcast to
    /// the input, reduced by argument `reduction`.
    WeightedLoss {
        /// The target's argument.
        target: usize,
        /// The optional weight's argument.
        weight: usize,
        /// The optional positive-class weight's argument.
        pos_weight: Option<usize>,
        /// The reduction's argument.
        reduction: usize,
    },
    /// `smooth_l1_loss`: a [`ShapeRule::Loss`] whose `beta` argument must
    /// not be negative.
    SmoothL1 {
        /// The target's argument.
        target: usize,
        /// The reduction's argument.
        reduction: usize,
        /// The `beta` argument.
        beta: usize,
    },
    /// `linear` by the weight of argument `weight` and the optional bias
    /// of argument `bias` ([`crate::shape::linear_shape`]).
    Linear {
        /// The weight's argument.
        weight: usize,
        /// The optional bias' argument.
        bias: usize,
    },
    /// `diag` with the offset of argument `i`: a 1-D input becomes a
    /// square matrix, a 2-D input gives its diagonal.
    Diag(usize),
    /// `[N, C, *size]` for the sizes of argument `size`, the mode of
    /// argument `mode` and the flag of argument `align`.
    Interpolate {
        /// The sizes' argument.
        size: usize,
        /// The mode's argument.
        mode: usize,
        /// The `align_corners` argument.
        align: usize,
    },
    /// `[N, C, *floor(spatial · scale)]` for the factors of argument
    /// `scale`, the mode of argument `mode` and the flag of argument
    /// `align` ([`crate::shape::interpolate_scale_shape`]).
    InterpolateScale {
        /// The factors' argument.
        scale: usize,
        /// The mode's argument.
        mode: usize,
        /// The `align_corners` argument.
        align: usize,
    },
    /// `max_unpool` of the last `axes` axes (1, 2 or 3) with the indices
    /// of argument `indices`, the pooling options of argument `opts` (the
    /// 1-D op takes their second components) and the optional sizes of
    /// argument `size` ([`crate::shape::unpool_shape`]).
    Unpool {
        /// The indices' argument.
        indices: usize,
        /// The options' argument.
        opts: usize,
        /// The optional output sizes' argument.
        size: usize,
        /// The number of unpooled axes.
        axes: usize,
    },
    /// A class loss (`nll_loss`, `cross_entropy_with`) of scores `[N, C,
    /// ...]` (or `[C]`) against the target of argument `target` with the
    /// options of argument `opts` ([`crate::shape::class_loss_shape`]);
    /// with `probabilities`, a float target holds class probabilities and
    /// the label smoothing is checked.
    ClassLoss {
        /// The target's argument.
        target: usize,
        /// The options' argument.
        opts: usize,
        /// Whether float targets are probabilities (`cross_entropy_with`).
        probabilities: bool,
    },
    /// The receiver and the tensors of argument `tensors` joined along the
    /// axis of argument `axis` ([`crate::shape::cat_shape`]).
    Cat {
        /// The list's argument.
        tensors: usize,
        /// The axis' argument.
        axis: usize,
    },
    /// The receiver and the tensors of argument `tensors` stacked along a
    /// new axis of argument `axis` ([`crate::shape::stack_shape`]).
    Stack {
        /// The list's argument.
        tensors: usize,
        /// The axis' argument.
        axis: usize,
    },
    /// `einsum` of the equation of argument `equation` over the receiver
    /// and the tensors of argument `operands`
    /// ([`crate::shape::einsum_shape`]).
    Einsum {
        /// The equation's argument.
        equation: usize,
        /// The list's argument.
        operands: usize,
    },
    /// `index` by the entries of argument `i`
    /// ([`crate::shape::index_shape`]).
    Index(usize),
    /// Pooling of the last `axes` axes (1, 2 or 3) by the options of
    /// argument `opts` (the 1-D pools use their second components); an
    /// average pool checks its divisor.
    Pool {
        /// The options' argument.
        opts: usize,
        /// The number of pooled axes.
        axes: usize,
        /// Whether it averages (`divisor_override` must not be 0).
        average: bool,
    },
}

impl ShapeRule {
    /// The rule in a few words (the docs' method table).
    pub fn text(self) -> &'static str {
        match self {
            ShapeRule::Same | ShapeRule::Axis(_) | ShapeRule::Axes(_) | ShapeRule::Flip(_) => {
                "same"
            }
            ShapeRule::Broadcast => "broadcast",
            ShapeRule::Select => "broadcast of all three",
            ShapeRule::Reduce { .. } => "axes reduced (kept as 1 with keepdim)",
            ShapeRule::ReduceAxis(_) => "axis removed",
            ShapeRule::Matmul => "NumPy matmul",
            ShapeRule::Reshape(_) => "the dims",
            ShapeRule::Expand(_) => "the dims (`-1` keeps an axis)",
            ShapeRule::Transpose(..) => "two axes swapped",
            ShapeRule::Permute(_) => "axes permuted",
            ShapeRule::Squeeze(_) => "axis removed",
            ShapeRule::SqueezeAll => "size-1 axes removed",
            ShapeRule::Unflatten(..) => "axis split into the dims",
            ShapeRule::Unsqueeze(_) => "size-1 axis inserted",
            ShapeRule::Flatten(..) => "axes merged",
            ShapeRule::Repeat(_) => "each axis times its count",
            ShapeRule::Matrix => "same (at least 2 axes)",
            ShapeRule::TopK { .. } => "the axis cut to `k`",
            ShapeRule::Gather { .. } => "the index's",
            ShapeRule::IndexSelect { .. } => "the axis takes the index's length",
            ShapeRule::Masked(_) => "same",
            ShapeRule::AppendCount(_) => "a last axis of the count added",
            ShapeRule::Loss { .. } => "`[]`, or the input's with `Reduction::None`",
            ShapeRule::Pad(_) | ShapeRule::PadMode { .. } => "each axis padded (or cropped)",
            ShapeRule::Shrink(_) => "each axis cut to its bounds",
            ShapeRule::Roll { .. } => "same",
            ShapeRule::Diagonal { .. } => "two axes replaced by the diagonal's length",
            ShapeRule::Unfold { .. } => "the axis counts windows; a last axis of `size`",
            ShapeRule::RepeatInterleave { .. } => {
                "the axis times the count (`None`: flattened first)"
            }
            ShapeRule::Scatter { .. } | ShapeRule::ScatterValue { .. } => "same",
            ShapeRule::CrossEntropy(_) => "`[]`",
            ShapeRule::Conv2d { .. } => "`[N, C_out, OH, OW]`",
            ShapeRule::Pool { .. } => "the pooled axes count windows",
            ShapeRule::Slice(_) => "each sliced axis counts its picked elements",
            ShapeRule::BroadcastTo(_) => "the sizes",
            ShapeRule::Attention { .. } => "`[.., Hq, L, Ev]`",
            ShapeRule::ConvNd {
                transpose: false, ..
            } => "`[N, C_out, windows..]`",
            ShapeRule::ConvNd {
                transpose: true, ..
            } => "`[N, C_out, (i - 1)·s + d·(k - 1) + output_padding + 1 - padding..]`",
            ShapeRule::SmoothL1 { .. } | ShapeRule::WeightedLoss { .. } => {
                "`[]`, or the input's with `Reduction::None`"
            }
            ShapeRule::Linear { .. } => "the last axis becomes `out_features`",
            ShapeRule::Diag(_) => "1-D: a square matrix; 2-D: its diagonal",
            ShapeRule::Interpolate { .. } => "`[N, C, *size]`",
            ShapeRule::InterpolateScale { .. } => "`[N, C, *floor(spatial · scale)]`",
            ShapeRule::Unpool { .. } => "the unpooled axes take the output size",
            ShapeRule::Cat { .. } => "the axis adds up; the others match",
            ShapeRule::Stack { .. } => "a new axis of the list's length",
            ShapeRule::Einsum { .. } => "the output labels' sizes",
            ShapeRule::Index(_) => "PyTorch's `t[...]`",
            ShapeRule::ClassLoss { .. } => {
                "`[]`, or the input's without the class axis with `Reduction::None`"
            }
        }
    }
}

/// The value of one argument of a call, as the shape and element-type
/// rules see it: a tensor's type and shape, or a literal.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue<D> {
    /// A tensor operand: its element type and shape.
    Tensor(ScalarType, Vec<D>),
    /// An axis.
    Axis(isize),
    /// A list of axes.
    Axes(Vec<isize>),
    /// A bool literal.
    Bool(bool),
    /// A number literal.
    Float(f64),
    /// An integer literal.
    Int(i64),
    /// A non-negative integer literal.
    Count(usize),
    /// A list of sizes.
    Sizes(Vec<usize>),
    /// A list of dims.
    Dims(Vec<ReshapeDim<D>>),
    /// An element type.
    ElementType(ScalarType),
    /// A loss reduction.
    Reduction(Reduction),
    /// Signed `(before, after)` pairs.
    Pads(Vec<(isize, isize)>),
    /// `(begin, end)` pairs.
    Bounds(Vec<(usize, usize)>),
    /// A list of integers.
    Ints(Vec<isize>),
    /// An axis or none.
    OptionalAxis(Option<isize>),
    /// An optional tensor that is absent (`None`).
    Absent,
    /// Convolution options.
    Conv(crate::shape::ConvGeometry),
    /// Pooling options over two axes (the 1-D pools take the second
    /// components).
    Pool(crate::shape::PoolGeometry),
    /// Python slices.
    Slices(Vec<crate::shape::Slice>),
    /// Convolution options over any number of axes.
    ConvNd(crate::shape::ConvNd),
    /// Options the rules do not read (`IsCloseOptions`).
    Opaque,
    /// Attention options: `enable_gqa` and the dropout probability.
    Attention {
        /// Grouped-query attention.
        enable_gqa: bool,
        /// The dropout probability.
        dropout_p: f64,
    },
    /// A scatter reduction.
    ScatterReduce(ScatterReduce),
    /// A padding mode.
    PadMode(crate::shape::PadMode),
    /// An interpolation mode.
    InterpolateMode(crate::shape::InterpolateMode),
    /// A rounding mode.
    RoundingMode(RoundingMode),
    /// A list of numbers.
    Floats(Vec<f64>),
    /// Optional output sizes.
    OptionalSizes(Option<Vec<usize>>),
    /// A list of tensors (the rest of a function's list after its
    /// receiver): their element types and shapes.
    Tensors(Vec<(ScalarType, Vec<D>)>),
    /// An `einsum` equation.
    Equation(String),
    /// The entries of `index`, and the element types of its index
    /// tensors (of the `IndexEntry::Tensor` entries, in order).
    Indices(Vec<crate::shape::IndexEntry<D>>, Vec<ScalarType>),
    /// The class losses' options: the weight tensor's type and shape if
    /// given, and the literal fields.
    ClassLoss {
        /// The weight's element type and shape.
        weight: Option<(ScalarType, Vec<D>)>,
        /// `ignore_index`.
        ignore_index: Option<i64>,
        /// `label_smoothing`.
        label_smoothing: f64,
        /// The reduction.
        reduction: Reduction,
    },
}
