//! What the table's [`DTypeRule`]s and [`ShapeRule`]s compute: each
//! shape rule is a function of [`crate::shape`], which the `Tensor`
//! method calls too.

use super::spec::{ArgKind, ArgValue, DTypeRule, ShapeRule};
use super::table::OpSpec;
use crate::shape::{self, Dim, Dims, ShapeError};
use crate::ScalarType;
use std::fmt;

/// Why an op cannot take its operands: the words the `Tensor` method's
/// error has (without the caller's location).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpError {
    /// A shape rule failed.
    Shape(ShapeError),
    /// The element type is not one the op takes.
    ElementType {
        /// The op.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// An argument's value is not one the op takes.
    Argument {
        /// The op.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// The arguments do not match the entry's declaration (a caller's
    /// mistake in building them, not the user's).
    Malformed(String),
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpError::Shape(e) => e.fmt(f),
            OpError::ElementType { op, reason } | OpError::Argument { op, reason } => {
                write!(f, "{op}: {reason}")
            }
            OpError::Malformed(what) => write!(f, "malformed op arguments: {what}"),
        }
    }
}

impl std::error::Error for OpError {}

impl From<ShapeError> for OpError {
    fn from(e: ShapeError) -> Self {
        OpError::Shape(e)
    }
}

/// Checks the element types of the index and mask arguments (the
/// `Tensor` methods check them before the shapes).
pub(super) fn argument_types<D: Dim>(spec: &OpSpec, args: &[ArgValue<D>]) -> Result<(), OpError> {
    for (a, v) in spec.args.iter().zip(args) {
        if let ArgValue::Indices(entries, types) = v {
            let tensors = entries.iter().filter_map(|e| match e {
                shape::IndexEntry::Tensor(s) => Some(s),
                _ => None,
            });
            for (s, t) in tensors.zip(types) {
                if !t.is_int() {
                    return Err(wrong_type(spec, "index tensor", *t, s, "an integer type"));
                }
            }
            continue;
        }
        let (role, ok, wanted): (&str, fn(ScalarType) -> bool, &str) = match a.kind {
            ArgKind::Index => ("index tensor", ScalarType::is_int, "an integer type"),
            ArgKind::Labels => ("label tensor", ScalarType::is_int, "an integer type"),
            ArgKind::Mask => ("mask", ScalarType::is_bool, "bool"),
            _ => continue,
        };
        if let ArgValue::Tensor(t, s) = v {
            if !ok(*t) {
                return Err(wrong_type(spec, role, *t, s, wanted));
            }
        }
    }
    Ok(())
}

/// The error of a tensor `role` whose element type `t` is not `wanted`.
fn wrong_type<D: Dim>(spec: &OpSpec, role: &str, t: ScalarType, s: &[D], wanted: &str) -> OpError {
    OpError::ElementType {
        op: spec.error_name().to_string(),
        reason: format!(
            "the {role} {} has dtype {t}, not {wanted}",
            shape::shape_text(s)
        ),
    }
}

/// The element type of a result of `spec` under `rule` (its `dtype` or
/// `second`).
pub(super) fn dtype_of<D: Dim>(
    spec: &OpSpec,
    rule: DTypeRule,
    t: ScalarType,
    s: &[D],
    args: &[ArgValue<D>],
) -> Result<ScalarType, OpError> {
    let refuse = |reason: &str| OpError::ElementType {
        op: spec.error_name().to_string(),
        reason: reason.to_string(),
    };
    Ok(match rule {
        DTypeRule::Same => t,
        DTypeRule::NotBool if t.is_bool() => return Err(refuse("not defined for bool tensors")),
        DTypeRule::NotBool => t,
        DTypeRule::NotFloat | DTypeRule::Integer if t.is_float() => {
            return Err(refuse(&format!(
                "needs integer or bool tensors, not {t} ({})",
                shape::shape_text(s)
            )))
        }
        DTypeRule::NotFloat => t,
        DTypeRule::Integer if t.is_bool() => return Err(refuse("not defined for bool tensors")),
        DTypeRule::Integer => t,
        DTypeRule::Float => t.to_float(),
        DTypeRule::Bool => ScalarType::Bool,
        DTypeRule::Index => ScalarType::I64,
        DTypeRule::Sum if t.is_float() => t,
        DTypeRule::Sum => t.sum_accumulator(),
        DTypeRule::Cast(i) => match args.get(i) {
            Some(ArgValue::ElementType(to)) => *to,
            _ => return Err(malformed(spec, i)),
        },
        DTypeRule::OneHot if !t.is_int() => {
            return Err(wrong_type(spec, "index tensor", t, s, "an integer type"))
        }
        DTypeRule::OneHot => ScalarType::I64,
        DTypeRule::ScatterReduce(i) => match args.get(i) {
            Some(ArgValue::ScatterReduce(r))
                if t.is_bool()
                    && !matches!(
                        r,
                        super::spec::ScatterReduce::Amax | super::spec::ScatterReduce::Amin
                    ) =>
            {
                return Err(refuse(&format!(
                    "not defined for bool tensors (reduce {r:?})"
                )))
            }
            Some(ArgValue::ScatterReduce(_)) => t,
            _ => return Err(malformed(spec, i)),
        },
        DTypeRule::Resample(i) => match args.get(i) {
            Some(ArgValue::InterpolateMode(m)) if t.is_bool() && m.linear_rank().is_some() => {
                ScalarType::F32
            }
            Some(ArgValue::InterpolateMode(_)) => t,
            _ => return Err(malformed(spec, i)),
        },
        DTypeRule::Bitcast(i) => match args.get(i) {
            Some(ArgValue::ElementType(to))
                if to.itemsize() != t.itemsize() || to.is_bool() || t.is_bool() =>
            {
                return Err(refuse(&format!("cannot reinterpret {t} as {to}")))
            }
            Some(ArgValue::ElementType(to)) => *to,
            _ => return Err(malformed(spec, i)),
        },
        DTypeRule::DivMode(i) => match args.get(i) {
            Some(ArgValue::RoundingMode(super::spec::RoundingMode::None)) => t.to_float(),
            Some(ArgValue::RoundingMode(_)) if t.is_bool() => {
                return Err(refuse("not defined for bool tensors"))
            }
            Some(ArgValue::RoundingMode(_)) => t,
            _ => return Err(malformed(spec, i)),
        },
        DTypeRule::Branch => match args.iter().find_map(|a| match a {
            ArgValue::Tensor(t, _) => Some(*t),
            _ => None,
        }) {
            Some(t) => t,
            None => {
                return Err(OpError::Argument {
                    op: spec.error_name().to_string(),
                    reason: "give at least one tensor branch".to_string(),
                })
            }
        },
    })
}

fn malformed(spec: &OpSpec, i: usize) -> OpError {
    OpError::Malformed(format!(
        "{}: argument {i} is not a {:?}",
        spec.name,
        spec.args.get(i).map(|a| a.kind)
    ))
}

/// The shapes of the weight (argument `weight`) and the optional bias
/// (argument `bias`, absent or a tensor).
fn weight_and_bias<'a, D: Dim>(
    spec: &OpSpec,
    args: &'a [ArgValue<D>],
    weight: usize,
    bias: usize,
) -> Result<(&'a [D], Option<&'a [D]>), OpError> {
    let w = match args.get(weight) {
        Some(ArgValue::Tensor(_, w)) => w.as_slice(),
        _ => return Err(malformed(spec, weight)),
    };
    let b = match args.get(bias) {
        Some(ArgValue::Tensor(_, b)) => Some(b.as_slice()),
        Some(ArgValue::Absent) => None,
        _ => return Err(malformed(spec, bias)),
    };
    Ok((w, b))
}

/// The receiver's shape `s` followed by the shapes of the list of
/// argument `i` (a function's operands).
fn with_list<'a, D: Dim>(
    spec: &OpSpec,
    s: &'a [D],
    args: &'a [ArgValue<D>],
    i: usize,
) -> Result<Vec<&'a [D]>, OpError> {
    match args.get(i) {
        Some(ArgValue::Tensors(rest)) => Ok(std::iter::once(s)
            .chain(rest.iter().map(|(_, r)| r.as_slice()))
            .collect()),
        _ => Err(malformed(spec, i)),
    }
}

/// The result's shape under `spec.shape`.
pub(super) fn shape_of<D: Dim>(
    spec: &OpSpec,
    s: &[D],
    args: &[ArgValue<D>],
) -> Result<Dims<D>, OpError> {
    let op = spec.error_name();
    let same = || -> Dims<D> { s.iter().cloned().collect() };
    let axis = |i: usize| match args.get(i) {
        Some(ArgValue::Axis(a)) => Ok(*a),
        _ => Err(malformed(spec, i)),
    };
    let axes = |i: usize| match args.get(i) {
        Some(ArgValue::Axes(a)) => Ok(a.as_slice()),
        _ => Err(malformed(spec, i)),
    };
    let dims = |i: usize| match args.get(i) {
        Some(ArgValue::Dims(d)) => Ok(d.as_slice()),
        _ => Err(malformed(spec, i)),
    };
    Ok(match spec.shape {
        ShapeRule::Same => same(),
        ShapeRule::Broadcast => {
            let mut out = same();
            for a in args {
                if let ArgValue::Tensor(_, other) = a {
                    out = shape::broadcast_shapes(op, &out, other)?;
                }
            }
            out
        }
        ShapeRule::Select => {
            let mut branches: Option<Dims<D>> = None;
            for a in args {
                if let ArgValue::Tensor(_, b) = a {
                    branches = Some(match branches {
                        None => b.iter().cloned().collect(),
                        Some(prev) => shape::broadcast_shapes(op, &prev, b)?,
                    });
                }
            }
            match branches {
                Some(b) => shape::broadcast_shapes(op, s, &b)?,
                None => same(),
            }
        }
        ShapeRule::Axis(i) => {
            shape::normalize_axis(op, s, axis(i)?)?;
            same()
        }
        ShapeRule::Axes(i) => {
            shape::reduce_axes(op, s, Some(axes(i)?))?;
            same()
        }
        ShapeRule::Reduce {
            axes: a,
            keepdim: k,
        } => {
            let keep = match args.get(k) {
                Some(ArgValue::Bool(b)) => *b,
                _ => return Err(malformed(spec, k)),
            };
            let norm = shape::reduce_axes(op, s, Some(axes(a)?))?;
            shape::reduce_shape(s, &norm, keep)
        }
        ShapeRule::ReduceAxis(i) => {
            let a = axis(i)?;
            let n = shape::normalize_axis(op, s, a)?;
            if s.is_empty() {
                return Ok(Dims::new());
            }
            if s[n].as_lit() == Some(0) {
                return Err(OpError::Argument {
                    op: op.to_string(),
                    reason: format!("axis {a} is empty"),
                });
            }
            shape::reduce_shape(s, &[n], false)
        }
        ShapeRule::Matmul => match args.first() {
            Some(ArgValue::Tensor(_, other)) => shape::matmul_shape(s, other)?,
            _ => return Err(malformed(spec, 0)),
        },
        ShapeRule::Reshape(i) => shape::reshape_dims(s, dims(i)?)?,
        ShapeRule::Expand(i) => shape::expand_dims(s, dims(i)?)?,
        ShapeRule::Transpose(a, b) => shape::transpose_shape(s, axis(a)?, axis(b)?)?.1,
        ShapeRule::Permute(i) => shape::permute_shape(s, axes(i)?)?.1,
        ShapeRule::Flip(i) => {
            shape::flip_axes(s, axes(i)?)?;
            same()
        }
        ShapeRule::Squeeze(i) => shape::squeeze_shape(s, axis(i)?)?,
        ShapeRule::SqueezeAll => shape::squeeze_all_shape(s),
        ShapeRule::Unflatten(a, d) => shape::unflatten_shape(s, axis(a)?, dims(d)?)?,
        ShapeRule::Unsqueeze(i) => shape::unsqueeze_shape(s, axis(i)?)?,
        ShapeRule::Flatten(a, b) => shape::flatten_shape(s, axis(a)?, axis(b)?)?,
        ShapeRule::Repeat(i) => match args.get(i) {
            Some(ArgValue::Sizes(r)) => shape::repeat_shape(op, s, r)?,
            _ => return Err(malformed(spec, i)),
        },
        ShapeRule::TopK { k, axis: a } => {
            let k = match args.get(k) {
                Some(ArgValue::Count(k)) => *k,
                _ => return Err(malformed(spec, k)),
            };
            let dim = axis(a)?;
            let d = shape::normalize_axis(op, s, dim)?;
            let mut out = same();
            if let Some(n) = s.get(d) {
                match n.as_lit() {
                    Some(n) if k > n => {
                        return Err(OpError::Argument {
                            op: op.to_string(),
                            reason: format!(
                                "k = {k} is more than the {n} elements of axis {dim} of {}",
                                shape::shape_text(s)
                            ),
                        })
                    }
                    _ => out[d] = D::lit(k),
                }
            } else if k > 1 {
                return Err(OpError::Argument {
                    op: op.to_string(),
                    reason: format!("k = {k} is more than the 1 elements of axis {dim} of []"),
                });
            }
            out
        }
        ShapeRule::Gather { axis: a, index } => match args.get(index) {
            Some(ArgValue::Tensor(_, ix)) => shape::gather_shape(s, ix, axis(a)?)?,
            _ => return Err(malformed(spec, index)),
        },
        ShapeRule::IndexSelect { axis: a, index } => match args.get(index) {
            Some(ArgValue::Tensor(_, ix)) => shape::index_select_shape(s, ix, axis(a)?)?,
            _ => return Err(malformed(spec, index)),
        },
        ShapeRule::Masked(i) => {
            let value = args.iter().skip(i + 1).find_map(|a| match a {
                ArgValue::Tensor(_, v) => Some(v.as_slice()),
                _ => None,
            });
            match args.get(i) {
                Some(ArgValue::Tensor(_, m)) => shape::masked_shape(op, s, m, value)?,
                _ => return Err(malformed(spec, i)),
            }
        }
        ShapeRule::AppendCount(i) => match args.get(i) {
            Some(ArgValue::Count(n)) => {
                let mut out = same();
                out.push(D::lit(*n));
                out
            }
            _ => return Err(malformed(spec, i)),
        },
        ShapeRule::Loss { target, reduction } => match (args.get(target), args.get(reduction)) {
            (Some(ArgValue::Tensor(_, t)), Some(ArgValue::Reduction(r))) => {
                shape::loss_shape(op, s, t, *r == super::spec::Reduction::None)?
            }
            _ => return Err(malformed(spec, target)),
        },
        ShapeRule::Pad(i) => match args.get(i) {
            Some(ArgValue::Pads(p)) => shape::pad_shape(op, s, p)?,
            _ => return Err(malformed(spec, i)),
        },
        ShapeRule::PadMode { pads, mode } => match (args.get(pads), args.get(mode)) {
            (Some(ArgValue::Pads(p)), Some(ArgValue::PadMode(m))) => {
                shape::pad_mode_shape(s, p, *m)?
            }
            _ => return Err(malformed(spec, pads)),
        },
        ShapeRule::Shrink(i) => match args.get(i) {
            Some(ArgValue::Bounds(b)) => shape::shrink_shape(s, b)?,
            _ => return Err(malformed(spec, i)),
        },
        ShapeRule::Roll { shifts, dims } => match args.get(shifts) {
            Some(ArgValue::Ints(k)) => shape::roll_shape(s, k, axes(dims)?)?,
            _ => return Err(malformed(spec, shifts)),
        },
        ShapeRule::Diagonal { offset, dim1, dim2 } => match args.get(offset) {
            Some(ArgValue::Int(k)) => {
                let k = isize::try_from(*k).map_err(|_| malformed(spec, offset))?;
                shape::diagonal_shape(s, k, axis(dim1)?, axis(dim2)?)?
            }
            _ => return Err(malformed(spec, offset)),
        },
        ShapeRule::Unfold {
            axis: a,
            size,
            step,
        } => match (args.get(size), args.get(step)) {
            (Some(ArgValue::Count(n)), Some(ArgValue::Count(k))) => {
                shape::unfold_shape(s, axis(a)?, *n, *k)?
            }
            _ => return Err(malformed(spec, size)),
        },
        ShapeRule::RepeatInterleave { repeats, axis: a } => {
            match (args.get(repeats), args.get(a)) {
                (Some(ArgValue::Count(n)), Some(ArgValue::OptionalAxis(d))) => {
                    shape::repeat_interleave_shape(s, *n, *d)?
                }
                _ => return Err(malformed(spec, repeats)),
            }
        }
        ShapeRule::Scatter {
            axis: a,
            index,
            src,
        } => match (args.get(index), args.get(src)) {
            (Some(ArgValue::Tensor(_, ix)), Some(ArgValue::Tensor(_, v))) => {
                shape::scatter_shape(op, s, ix, v, axis(a)?)?
            }
            _ => return Err(malformed(spec, index)),
        },
        ShapeRule::ScatterValue { axis: a, index } => match args.get(index) {
            Some(ArgValue::Tensor(_, ix)) => shape::scatter_shape(op, s, ix, ix, axis(a)?)?,
            _ => return Err(malformed(spec, index)),
        },
        ShapeRule::CrossEntropy(i) => match args.get(i) {
            Some(ArgValue::Tensor(_, labels)) => shape::cross_entropy_shape(s, labels)?,
            _ => return Err(malformed(spec, i)),
        },
        ShapeRule::Conv2d { weight, bias, opts } => {
            let (w, b) = weight_and_bias(spec, args, weight, bias)?;
            match args.get(opts) {
                Some(ArgValue::Conv(g)) => shape::conv2d_shape(s, w, b, *g)?,
                _ => return Err(malformed(spec, opts)),
            }
        }
        ShapeRule::ConvNd {
            weight,
            bias,
            opts,
            axes: n,
            transpose,
        } => {
            let (w, b) = weight_and_bias(spec, args, weight, bias)?;
            let Some(ArgValue::ConvNd(g)) = args.get(opts) else {
                return Err(malformed(spec, opts));
            };
            let g = if n < g.rank() {
                g.last_axis()
            } else {
                g.clone()
            };
            if transpose {
                shape::conv_transpose_nd_shape(op, s, w, b, &g)?
            } else {
                shape::conv_nd_shape(op, s, w, b, &g)?
            }
        }
        ShapeRule::Linear { weight, bias } => {
            let (w, b) = weight_and_bias(spec, args, weight, bias)?;
            shape::linear_shape(s, w, b)?
        }
        ShapeRule::Diag(i) => match args.get(i) {
            Some(ArgValue::Int(k)) => {
                let k = isize::try_from(*k).map_err(|_| malformed(spec, i))?;
                shape::diag_shape(s, k)?
            }
            _ => return Err(malformed(spec, i)),
        },
        ShapeRule::Attention { key, value, opts } => {
            let (Some(ArgValue::Tensor(_, k)), Some(ArgValue::Tensor(_, v))) =
                (args.get(key), args.get(value))
            else {
                return Err(malformed(spec, key));
            };
            let Some(&ArgValue::Attention {
                enable_gqa,
                dropout_p,
            }) = args.get(opts)
            else {
                return Err(malformed(spec, opts));
            };
            let out = shape::attention_shape(s, k, v, enable_gqa)?;
            if !(0.0..=1.0).contains(&dropout_p) {
                return Err(OpError::Argument {
                    op: op.to_string(),
                    reason: format!(
                        "dropout_p {dropout_p} is not in [0, 1] (query {}, key {})",
                        shape::shape_text(s),
                        shape::shape_text(k)
                    ),
                });
            }
            out
        }
        ShapeRule::BroadcastTo(i) => match args.get(i) {
            Some(ArgValue::Sizes(n)) => {
                let target: Vec<D> = n.iter().map(|&d| D::lit(d)).collect();
                shape::broadcast_to_shape(op, s, &target)?;
                target.into_iter().collect()
            }
            _ => return Err(malformed(spec, i)),
        },
        ShapeRule::WeightedLoss {
            target,
            weight,
            pos_weight,
            reduction,
        } => {
            let (Some(ArgValue::Tensor(_, t)), Some(ArgValue::Reduction(r))) =
                (args.get(target), args.get(reduction))
            else {
                return Err(malformed(spec, target));
            };
            let optional = |i: usize| match args.get(i) {
                Some(ArgValue::Tensor(_, w)) => Ok(Some(w.as_slice())),
                Some(ArgValue::Absent) => Ok(None),
                _ => Err(malformed(spec, i)),
            };
            let mut weights = vec![optional(weight)?];
            if let Some(p) = pos_weight {
                weights.push(optional(p)?);
            }
            let kept = *r == super::spec::Reduction::None;
            shape::weighted_loss_shape(op, s, t, &weights, kept)?
        }
        ShapeRule::SmoothL1 {
            target,
            reduction,
            beta,
        } => match (args.get(target), args.get(reduction), args.get(beta)) {
            (
                Some(ArgValue::Tensor(_, t)),
                Some(ArgValue::Reduction(r)),
                Some(ArgValue::Float(b)),
            ) => {
                let out = shape::loss_shape(op, s, t, *r == super::spec::Reduction::None)?;
                if *b < 0.0 || b.is_nan() {
                    return Err(OpError::Argument {
                        op: op.to_string(),
                        reason: format!("beta {b} is negative"),
                    });
                }
                out
            }
            _ => return Err(malformed(spec, target)),
        },
        ShapeRule::Slice(i) => match args.get(i) {
            Some(ArgValue::Slices(v)) => shape::slice_shape(s, v)?,
            _ => return Err(malformed(spec, i)),
        },
        ShapeRule::Interpolate { size, mode, align } => {
            match (args.get(size), args.get(mode), args.get(align)) {
                (
                    Some(ArgValue::Sizes(n)),
                    Some(ArgValue::InterpolateMode(m)),
                    Some(ArgValue::Bool(a)),
                ) => shape::interpolate_shape(op, s, n, *m, *a)?,
                _ => return Err(malformed(spec, size)),
            }
        }
        ShapeRule::Pool {
            opts,
            axes: n,
            average,
        } => {
            let Some(ArgValue::Pool(g)) = args.get(opts) else {
                return Err(malformed(spec, opts));
            };
            let g = if n == 1 { g.last_axis() } else { g.clone() };
            let out = shape::pool_shape(op, s, &g)?;
            if average && g.divisor_override == Some(0) {
                return Err(OpError::Argument {
                    op: op.to_string(),
                    reason: format!("divisor_override is 0 (input {})", shape::shape_text(s)),
                });
            }
            out
        }
        ShapeRule::InterpolateScale { scale, mode, align } => {
            match (args.get(scale), args.get(mode), args.get(align)) {
                (
                    Some(ArgValue::Floats(f)),
                    Some(ArgValue::InterpolateMode(m)),
                    Some(ArgValue::Bool(a)),
                ) => shape::interpolate_scale_shape(op, s, f, *m, *a)?,
                _ => return Err(malformed(spec, scale)),
            }
        }
        ShapeRule::Unpool {
            indices,
            opts,
            size,
            axes: n,
        } => match (args.get(indices), args.get(opts), args.get(size)) {
            (
                Some(ArgValue::Tensor(_, ix)),
                Some(ArgValue::Pool(g)),
                Some(ArgValue::OptionalSizes(o)),
            ) => {
                let g = if n == 1 { g.last_axis() } else { g.clone() };
                shape::unpool_shape(op, s, ix, &g, o.as_deref())?
            }
            _ => return Err(malformed(spec, indices)),
        },
        ShapeRule::ClassLoss {
            target,
            opts,
            probabilities,
        } => match (args.get(target), args.get(opts)) {
            (
                Some(ArgValue::Tensor(tt, ts)),
                Some(ArgValue::ClassLoss {
                    weight,
                    ignore_index,
                    label_smoothing,
                    reduction,
                }),
            ) => {
                let argument = |reason: String| OpError::Argument {
                    op: op.to_string(),
                    reason,
                };
                if probabilities && !(0.0..=1.0).contains(label_smoothing) {
                    return Err(argument(format!(
                        "label_smoothing {label_smoothing} is not in [0, 1]"
                    )));
                }
                let int_target = !probabilities || !tt.is_float();
                let w = weight.as_ref().map(|(_, w)| w.as_slice());
                let kept = *reduction == super::spec::Reduction::None;
                let out = shape::class_loss_shape(op, s, ts, w, int_target, kept)?;
                if !int_target && ignore_index.is_some() {
                    return Err(argument(
                        "ignore_index needs class-index targets".to_string(),
                    ));
                }
                out
            }
            _ => return Err(malformed(spec, target)),
        },
        ShapeRule::Cat { tensors, axis: a } | ShapeRule::Stack { tensors, axis: a } => {
            let all = with_list(spec, s, args, tensors)?;
            if matches!(spec.shape, ShapeRule::Cat { .. }) {
                shape::cat_shape(op, &all, axis(a)?)?
            } else {
                shape::stack_shape(&all, axis(a)?)?
            }
        }
        ShapeRule::Index(i) => match args.get(i) {
            Some(ArgValue::Indices(entries, _)) => shape::index_shape(s, entries)?,
            _ => return Err(malformed(spec, i)),
        },
        ShapeRule::Einsum { equation, operands } => {
            let all = with_list(spec, s, args, operands)?;
            match args.get(equation) {
                Some(ArgValue::Equation(e)) => shape::einsum_shape(e, &all)?,
                _ => return Err(malformed(spec, equation)),
            }
        }
        ShapeRule::Matrix => {
            if s.len() < 2 {
                return Err(ShapeError::new(op, &[s], "needs at least 2 axes").into());
            }
            same()
        }
    })
}

impl OpSpec {
    /// The result's element type and shape for a receiver of `dtype` and
    /// `shape` and the arguments `args` (one per declared argument, of its
    /// kind), or the error the `Tensor` method reports for them.
    pub fn infer<D: Dim>(
        &self,
        dtype: ScalarType,
        shape: &[D],
        args: &[ArgValue<D>],
    ) -> Result<(ScalarType, Dims<D>), OpError> {
        self.infer_output(dtype, shape, args, 0)
    }

    /// [`OpSpec::infer`] of result `output` of an op returning a pair
    /// (`0` or `1`; `0` of any other op).
    pub fn infer_output<D: Dim>(
        &self,
        dtype: ScalarType,
        shape: &[D],
        args: &[ArgValue<D>],
        output: usize,
    ) -> Result<(ScalarType, Dims<D>), OpError> {
        argument_types(self, args)?;
        let out_shape = shape_of(self, shape, args)?;
        let rule = match (output, self.second) {
            (0, _) => self.dtype,
            (1, Some(second)) => second,
            _ => {
                return Err(OpError::Malformed(format!(
                    "{} has no result {output}",
                    self.name
                )))
            }
        };
        let out_dtype = dtype_of(self, rule, dtype, shape, args)?;
        Ok((out_dtype, out_shape))
    }
}
