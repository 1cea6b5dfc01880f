//! The op table (`morok_core::tensor_ops`) and the `Tensor` API cannot
//! drift apart: for every entry, on a grid of receiver element types and
//! shapes and of arguments of each declared kind, the table's rules
//! (`OpSpec::infer`) and the `Tensor` method (called as a DSL node calls
//! it) agree: the same element type and shape, or both an error with the
//! same words.

use morok::dsl::graph::{call_op, AttentionLit, ClassLossLit, Lit, Value};
use morok::{
    Conv1dOptions, Conv3dOptions, ConvOptions, ConvTranspose3dOptions, ConvTransposeOptions, DType,
    InterpolateMode, IsCloseOptions, PadMode, Pads, Pool3dOptions, PoolOptions, RoundingMode,
    ScalarType, ScatterReduce, Slice, Tensor,
};
use morok_core::shape::ReshapeDim;
use morok_core::tensor_ops::{
    ArgKind, ArgValue, OpSpec, Reduction, NOT_IN_THE_DSL, NOT_YET_IN_THE_DSL, OPS,
};

mod common;

use common::Rng;

/// A uniform pick of the sampled grid (it is sampled, not exhausted).
trait Pick {
    fn below(&mut self, n: usize) -> usize;
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T;
}

impl Pick for Rng {
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

const DTYPES: [ScalarType; 5] = [
    ScalarType::F32,
    ScalarType::F16,
    ScalarType::I32,
    ScalarType::U8,
    ScalarType::Bool,
];
const SHAPES: [&[usize]; 8] = [
    &[],
    &[3],
    &[1],
    &[2, 3],
    &[3, 2],
    &[2, 1, 3],
    &[0, 3],
    &[4, 2, 3],
];
const INDEX_SHAPES: [&[usize]; 7] = [&[], &[2], &[1, 3], &[2, 2], &[2, 3], &[3, 1], &[1, 1, 2]];
const AXES: [&[isize]; 7] = [&[], &[0], &[-1], &[0, 1], &[1, 1], &[3], &[1, -3]];
const SIZES: [&[usize]; 5] = [&[], &[2], &[1, 2], &[2, 1, 3], &[3, 1, 1, 2]];
const DIMS: [&[isize]; 7] = [
    &[-1],
    &[3, -1],
    &[6],
    &[2, 3],
    &[1, -1, 3],
    &[4, 2, 3],
    &[-2, 3],
];

const PADS: [&[(isize, isize)]; 6] = [
    &[],
    &[(1, 0)],
    &[(0, 1), (1, 1)],
    &[(-1, 2), (0, 0)],
    &[(1, 1), (0, -1), (2, 0)],
    &[(-3, 0)],
];
const BOUNDS: [&[(usize, usize)]; 6] = [
    &[],
    &[(0, 1)],
    &[(0, 2), (1, 3)],
    &[(1, 1), (0, 2)],
    &[(0, 1), (0, 1), (0, 2)],
    &[(2, 1)],
];
const INTS: [&[isize]; 4] = [&[], &[1], &[-1, 2], &[3, 0, 1]];
const SLICES: [&[Slice]; 6] = [
    &[],
    &[Slice::range(0, 2)],
    &[Slice::all(), Slice::from(-2)],
    &[Slice::all().step(-2), Slice::to(1)],
    &[Slice::all().step(0)],
    &[Slice::all(), Slice::all(), Slice::all(), Slice::all()],
];

/// Sampled shapes.
type Shapes = &'static [&'static [usize]];

/// The inputs and weights of the convolutions, by op.
fn conv_shapes(op: &str) -> Option<(Shapes, Shapes)> {
    Some(match op {
        "conv2d" => (
            &[&[1, 2, 5, 5], &[2, 4, 4, 3], &[1, 2, 2, 2]],
            &[&[3, 2, 3, 3], &[4, 1, 2, 2], &[2, 4, 1, 1], &[3, 2, 3]],
        ),
        "conv1d" => (
            &[&[1, 2, 7], &[2, 4, 5], &[1, 2, 2]],
            &[&[3, 2, 3], &[4, 1, 2], &[2, 4, 1], &[3, 2, 3, 3]],
        ),
        "conv3d" => (
            &[&[1, 2, 4, 4, 4], &[1, 4, 3, 3, 3]],
            &[&[3, 2, 2, 2, 2], &[4, 1, 1, 1, 1], &[2, 4, 3, 3, 3]],
        ),
        "conv_transpose1d" => (
            &[&[1, 2, 5], &[2, 4, 3]],
            &[&[2, 3, 3], &[4, 1, 2], &[2, 2, 1, 1]],
        ),
        "conv_transpose2d" => (
            &[&[1, 2, 3, 3], &[1, 4, 2, 2]],
            &[&[2, 3, 2, 2], &[4, 1, 3, 3], &[2, 3, 2]],
        ),
        "conv_transpose3d" => (&[&[1, 2, 2, 2, 2]], &[&[2, 3, 2, 2, 2], &[2, 1, 1, 1, 1]]),
        "scaled_dot_product_attention" => (
            &[&[2, 4, 3], &[1, 2, 4, 3], &[4, 3], &[1, 4, 4, 3]],
            &[
                &[2, 5, 3],
                &[1, 1, 5, 3],
                &[5, 3],
                &[2, 5, 6],
                &[1, 2, 5, 3],
            ],
        ),
        _ => return None,
    })
}

/// Sampled options of convolution `op`: what the rules see, and the
/// literal.
fn conv_nd_options(op: &str, rng: &mut Rng) -> (ArgValue<usize>, Lit) {
    let pads1 = |a: isize, b: isize| Pads([(a, b)]);
    match op {
        "conv1d" => {
            let o = *rng.pick(&[
                Conv1dOptions::default(),
                Conv1dOptions {
                    stride: 2,
                    padding: pads1(1, 0),
                    ..Conv1dOptions::default()
                },
                Conv1dOptions {
                    dilation: 2,
                    groups: 2,
                    ..Conv1dOptions::default()
                },
                Conv1dOptions {
                    padding: pads1(-3, -3),
                    ..Conv1dOptions::default()
                },
            ]);
            (ArgValue::ConvNd(o.geometry()), Lit::Conv1d(o))
        }
        "conv3d" => {
            let o = *rng.pick(&[
                Conv3dOptions::default(),
                Conv3dOptions {
                    stride: (2, 1, 2),
                    padding: (1, 0, 1).into(),
                    ..Conv3dOptions::default()
                },
                Conv3dOptions {
                    groups: 2,
                    ..Conv3dOptions::default()
                },
            ]);
            (ArgValue::ConvNd(o.geometry()), Lit::Conv3d(o))
        }
        "conv_transpose3d" => {
            let o = *rng.pick(&[
                ConvTranspose3dOptions::default(),
                ConvTranspose3dOptions {
                    stride: (2, 2, 1),
                    output_padding: (1, 0, 0),
                    ..ConvTranspose3dOptions::default()
                },
            ]);
            (ArgValue::ConvNd(o.geometry()), Lit::ConvTranspose3d(o))
        }
        _ => {
            let o = *rng.pick(&[
                ConvTransposeOptions::default(),
                ConvTransposeOptions {
                    stride: (2, 2),
                    padding: Pads([(1, 0), (0, 1)]),
                    output_padding: (1, 1),
                    ..ConvTransposeOptions::default()
                },
                ConvTransposeOptions {
                    groups: 2,
                    dilation: (1, 2),
                    ..ConvTransposeOptions::default()
                },
                ConvTransposeOptions {
                    padding: (3, 3).into(),
                    ..ConvTransposeOptions::default()
                },
                ConvTransposeOptions {
                    output_padding: (2, 2),
                    ..ConvTransposeOptions::default()
                },
            ]);
            (ArgValue::ConvNd(o.geometry()), Lit::ConvTranspose(o))
        }
    }
}

fn conv_options(rng: &mut Rng) -> ConvOptions {
    *rng.pick(&[
        ConvOptions::default(),
        ConvOptions {
            stride: (2, 1),
            padding: (1, 1).into(),
            ..ConvOptions::default()
        },
        ConvOptions {
            dilation: (2, 1),
            groups: 2,
            ..ConvOptions::default()
        },
        ConvOptions {
            padding: Pads([(1, 0), (-1, 2)]),
            ..ConvOptions::default()
        },
    ])
}

fn pool_options(rng: &mut Rng) -> PoolOptions {
    *rng.pick(&[
        PoolOptions::new((2, 2)),
        PoolOptions::new((3, 1)).stride((1, 1)).padding((1, 0)),
        PoolOptions::new((2, 2)).ceil_mode(true),
        PoolOptions::new((1, 2))
            .padding(Pads([(0, 0), (-1, 1)]))
            .count_include_pad(false),
        PoolOptions::new((2, 3)).divisor_override(0),
    ])
}

/// One sampled argument: what the rules see, and how the node passes it.
enum Sample {
    Tensor(Tensor),
    Optional(Option<Tensor>),
    Literal(ArgValue<usize>, Lit),
    Scalar(ArgValue<usize>, f64, bool),
    /// Options holding an optional tensor (the class losses' weight).
    Options(Option<Tensor>, ArgValue<usize>, Lit),
    /// The rest of a function's list of tensors.
    List(Vec<Tensor>),
    /// Literal arguments holding tensors (the entries of `index`).
    Holding(ArgValue<usize>, Vec<Tensor>, Lit),
}

/// A sampled entry list of `index`: the literal, the rules' entries and
/// the index tensors' element types, and the tensors.
fn index_entries(rng: &mut Rng) -> Sample {
    use morok::dsl::graph::IndexLit as L;
    use morok_core::shape::IndexEntry as E;
    #[derive(Clone, Copy)]
    enum Pick {
        Lit(L),
        Tensor(ScalarType, &'static [usize]),
    }
    let lists: [&[Pick]; 14] = [
        &[Pick::Lit(L::Int(0))],
        &[Pick::Lit(L::Int(-1)), Pick::Lit(L::Slice(Slice::all()))],
        &[
            Pick::Lit(L::NewAxis),
            Pick::Lit(L::Ellipsis),
            Pick::Lit(L::Int(1)),
        ],
        &[Pick::Tensor(ScalarType::I64, &[2])],
        &[
            Pick::Lit(L::Slice(Slice::range(0, 1))),
            Pick::Tensor(ScalarType::I64, &[2, 1]),
        ],
        &[
            Pick::Tensor(ScalarType::I64, &[]),
            Pick::Tensor(ScalarType::I32, &[3]),
        ],
        &[Pick::Lit(L::Ellipsis), Pick::Lit(L::Ellipsis)],
        &[Pick::Tensor(ScalarType::F32, &[2])],
        &[Pick::Lit(L::Int(5))],
        &[Pick::Lit(L::Slice(Slice::all().step(0)))],
        &[
            Pick::Tensor(ScalarType::I64, &[2]),
            Pick::Lit(L::Slice(Slice::all())),
            Pick::Tensor(ScalarType::I64, &[2]),
        ],
        &[Pick::Lit(L::Ellipsis), Pick::Tensor(ScalarType::I64, &[3])],
        &[
            Pick::Tensor(ScalarType::I64, &[2]),
            Pick::Tensor(ScalarType::I64, &[3]),
        ],
        &[
            Pick::Lit(L::Slice(Slice::from(-2).step(-1))),
            Pick::Lit(L::NewAxis),
        ],
    ];
    let list = *rng.pick(&lists);
    let (mut entries, mut types, mut tensors, mut lits) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for p in list {
        match *p {
            Pick::Lit(l) => {
                entries.push(match l {
                    L::Int(i) => E::Int(i),
                    L::Slice(s) => E::Slice(s),
                    L::NewAxis => E::NewAxis,
                    _ => E::Ellipsis,
                });
                lits.push(l);
            }
            Pick::Tensor(t, s) => {
                entries.push(E::Tensor(s.to_vec()));
                types.push(t);
                tensors.push(Tensor::zeros(s, DType::scalar(t)));
                lits.push(L::Tensor);
            }
        }
    }
    let lits: &'static [L] = Box::leak(lits.into_boxed_slice());
    Sample::Holding(
        ArgValue::Indices(entries, types),
        tensors,
        Lit::Indices(lits),
    )
}

fn sample(kind: ArgKind, dtype: ScalarType, op: &str, rng: &mut Rng) -> Sample {
    let leak_isize = |v: &[isize]| -> &'static [isize] { Box::leak(v.to_vec().into_boxed_slice()) };
    match kind {
        ArgKind::Tensor if conv_shapes(op).is_some() => {
            let weights = conv_shapes(op).map_or(&[][..], |(_, w)| w);
            let shape: &[usize] = weights[rng.below(weights.len())];
            Sample::Tensor(Tensor::zeros(shape, DType::scalar(dtype)))
        }
        ArgKind::IsCloseOptions => {
            let o = IsCloseOptions {
                rtol: 0.1,
                ..IsCloseOptions::default()
            };
            Sample::Literal(ArgValue::Opaque, Lit::IsClose(o))
        }
        ArgKind::AttentionOptions => {
            let base = AttentionLit {
                is_causal: false,
                scale: None,
                enable_gqa: false,
                dropout_p: 0.0,
                dropout_seed: 0,
            };
            let o = *rng.pick(&[
                base,
                AttentionLit {
                    is_causal: true,
                    ..base
                },
                AttentionLit {
                    enable_gqa: true,
                    scale: Some(0.5),
                    ..base
                },
                AttentionLit {
                    dropout_p: 1.5,
                    ..base
                },
            ]);
            let value = ArgValue::Attention {
                enable_gqa: o.enable_gqa,
                dropout_p: o.dropout_p,
            };
            Sample::Literal(value, Lit::Attention(o))
        }
        ArgKind::PadMode => {
            let m = *rng.pick(&[
                PadMode::Reflect,
                PadMode::Replicate,
                PadMode::Circular,
                PadMode::Constant(1.5),
            ]);
            Sample::Literal(ArgValue::PadMode(m), Lit::PadMode(m))
        }
        ArgKind::ScatterReduce => {
            let r = *rng.pick(&[
                ScatterReduce::Sum,
                ScatterReduce::Prod,
                ScatterReduce::Mean,
                ScatterReduce::Amax,
                ScatterReduce::Amin,
            ]);
            Sample::Literal(ArgValue::ScatterReduce(r), Lit::ScatterReduce(r))
        }
        ArgKind::ConvNdOptions => {
            let (value, lit) = conv_nd_options(op, rng);
            Sample::Literal(value, lit)
        }
        ArgKind::Tensor => {
            let shape: &[usize] = SHAPES[rng.below(SHAPES.len())];
            Sample::Tensor(Tensor::zeros(shape, DType::scalar(dtype)))
        }
        ArgKind::Operand if rng.below(3) == 0 => {
            // A literal that fits the element type (the DSL's rule).
            match dtype {
                t if t.is_float() => Sample::Scalar(ArgValue::Float(0.5), 0.5, false),
                ScalarType::Bool => Sample::Scalar(ArgValue::Bool(true), 1.0, true),
                _ => Sample::Scalar(ArgValue::Int(2), 2.0, false),
            }
        }
        ArgKind::Operand => {
            let shape = *rng.pick(&[&[][..], &[3], &[1, 3], &[4], &[2, 1]]);
            Sample::Tensor(Tensor::zeros(shape, DType::scalar(dtype)))
        }
        ArgKind::Axis => {
            let a = *rng.pick(&[0isize, 1, -1, 2, 3, -4]);
            Sample::Literal(ArgValue::Axis(a), Lit::Axis(a))
        }
        ArgKind::Axes => {
            let a = *rng.pick(&AXES);
            Sample::Literal(ArgValue::Axes(a.to_vec()), Lit::Axes(leak_isize(a)))
        }
        ArgKind::Bool => {
            let b = rng.below(2) == 0;
            Sample::Literal(ArgValue::Bool(b), Lit::Bool(b))
        }
        ArgKind::Float => {
            let v = *rng.pick(&[0.5, 2.0, -1.0]);
            Sample::Literal(ArgValue::Float(v), Lit::Float(v))
        }
        ArgKind::Int => {
            let v = *rng.pick(&[-1i64, 0, 1]);
            Sample::Literal(ArgValue::Int(v), Lit::Int(v))
        }
        ArgKind::Count => {
            let v = rng.below(2);
            Sample::Literal(ArgValue::Count(v), Lit::Count(v))
        }
        ArgKind::Sizes => {
            let v = *rng.pick(&SIZES);
            let leaked: &'static [usize] = Box::leak(v.to_vec().into_boxed_slice());
            Sample::Literal(ArgValue::Sizes(v.to_vec()), Lit::Sizes(leaked))
        }
        ArgKind::Dims => {
            let v = *rng.pick(&DIMS);
            let rules = v.iter().map(|&d| ReshapeDim::from_signed(d)).collect();
            let toks: Vec<&'static [morok::dsl::graph::DimTok]> = v
                .iter()
                .map(|&d| -> &'static [morok::dsl::graph::DimTok] {
                    Box::leak(Box::new([morok::dsl::graph::DimTok::Lit(d as i64)]))
                })
                .collect();
            Sample::Literal(
                ArgValue::Dims(rules),
                Lit::Dims(Box::leak(toks.into_boxed_slice())),
            )
        }
        ArgKind::Index => {
            let dtype = *rng.pick(&[ScalarType::I64, ScalarType::I32, ScalarType::F32]);
            let shape: &[usize] = INDEX_SHAPES[rng.below(INDEX_SHAPES.len())];
            Sample::Tensor(Tensor::zeros(shape, DType::scalar(dtype)))
        }
        ArgKind::Mask => {
            let dtype = *rng.pick(&[ScalarType::Bool, ScalarType::Bool, ScalarType::I32]);
            let shape: &[usize] = INDEX_SHAPES[rng.below(INDEX_SHAPES.len())];
            Sample::Tensor(Tensor::zeros(shape, DType::scalar(dtype)))
        }
        ArgKind::Reduction => {
            let r = *rng.pick(&[Reduction::None, Reduction::Mean, Reduction::Sum]);
            Sample::Literal(ArgValue::Reduction(r), Lit::Reduction(r))
        }
        ArgKind::ElementType => {
            let t = *rng.pick(&[ScalarType::F32, ScalarType::I32, ScalarType::Bool]);
            Sample::Literal(ArgValue::ElementType(t), Lit::DType(t))
        }
        ArgKind::Pads => {
            let v = *rng.pick(&PADS);
            Sample::Literal(ArgValue::Pads(v.to_vec()), Lit::Pads(v))
        }
        ArgKind::Bounds => {
            let v = *rng.pick(&BOUNDS);
            Sample::Literal(ArgValue::Bounds(v.to_vec()), Lit::Bounds(v))
        }
        ArgKind::Ints => {
            let v = *rng.pick(&INTS);
            Sample::Literal(ArgValue::Ints(v.to_vec()), Lit::Ints(v))
        }
        ArgKind::OptionalAxis => {
            let d = *rng.pick(&[None, Some(0isize), Some(-1), Some(2)]);
            Sample::Literal(ArgValue::OptionalAxis(d), Lit::OptionalAxis(d))
        }
        ArgKind::OptionalTensor => {
            let shapes: [&[usize]; 4] = [&[3], &[4], &[2], &[]];
            let shape = shapes[rng.below(shapes.len())];
            Sample::Optional(
                (rng.below(2) == 0).then(|| Tensor::zeros(shape, DType::scalar(dtype))),
            )
        }
        ArgKind::ConvOptions => {
            let o = conv_options(rng);
            Sample::Literal(ArgValue::Conv(o), Lit::Conv(o))
        }
        ArgKind::Pool3dOptions => {
            let o = *rng.pick(&[
                Pool3dOptions::new((1, 2, 2)),
                Pool3dOptions::new((2, 1, 1))
                    .padding((1, 0, 0))
                    .ceil_mode(true),
                Pool3dOptions::new((3, 3, 3)),
            ]);
            Sample::Literal(ArgValue::Pool(o.geometry()), Lit::Pool3d(o))
        }
        ArgKind::PoolOptions => {
            let o = pool_options(rng);
            Sample::Literal(ArgValue::Pool(o.geometry()), Lit::Pool(o))
        }
        ArgKind::Slices => {
            let v: &'static [Slice] = SLICES[rng.below(SLICES.len())];
            Sample::Literal(ArgValue::Slices(v.to_vec()), Lit::Slices(v))
        }
        ArgKind::InterpolateMode => {
            let m = *rng.pick(&[
                InterpolateMode::Nearest,
                InterpolateMode::NearestExact,
                InterpolateMode::Linear,
                InterpolateMode::Bilinear,
            ]);
            Sample::Literal(ArgValue::InterpolateMode(m), Lit::InterpolateMode(m))
        }
        ArgKind::RoundingMode => {
            let m = *rng.pick(&[RoundingMode::None, RoundingMode::Trunc, RoundingMode::Floor]);
            Sample::Literal(ArgValue::RoundingMode(m), Lit::RoundingMode(m))
        }
        ArgKind::Floats => {
            let lists: [&'static [f64]; 6] = [
                &[],
                &[2.0],
                &[0.5, 2.0],
                &[1.5, 1.0, 2.0],
                &[-1.0],
                &[1.0, 3.0],
            ];
            let v = lists[rng.below(lists.len())];
            Sample::Literal(ArgValue::Floats(v.to_vec()), Lit::Floats(v))
        }
        ArgKind::OptionalSizes => {
            // The typed API takes as many sizes as the op's axes.
            let some: &'static [usize] = match op {
                "max_unpool1d" => &[4],
                "max_unpool2d" => &[3, 4],
                _ => &[2, 3, 4],
            };
            let v = *rng.pick(&[None, Some(some)]);
            Sample::Literal(
                ArgValue::OptionalSizes(v.map(<[usize]>::to_vec)),
                Lit::OptionalSizes(v),
            )
        }
        ArgKind::ClassLossOptions => {
            let shapes: [&[usize]; 3] = [&[3], &[2], &[4]];
            let weight = (rng.below(2) == 0)
                .then(|| Tensor::zeros(shapes[rng.below(shapes.len())], DType::scalar(dtype)));
            let lit = ClassLossLit {
                weight: weight.is_some(),
                ignore_index: *rng.pick(&[None, Some(-100), Some(0)]),
                label_smoothing: *rng.pick(&[0.0, 0.1, 1.5]),
                reduction: *rng.pick(&[Reduction::None, Reduction::Mean, Reduction::Sum]),
            };
            let value = ArgValue::ClassLoss {
                weight: weight
                    .as_ref()
                    .map(|w| (w.dtype().scalar_type(), w.shape().to_vec())),
                ignore_index: lit.ignore_index,
                label_smoothing: lit.label_smoothing,
                reduction: lit.reduction,
            };
            Sample::Options(weight, value, Lit::ClassLoss(lit))
        }
        ArgKind::ClassTarget => {
            let dtype = *rng.pick(&[ScalarType::I64, ScalarType::F32, ScalarType::Bool]);
            let shapes: [&[usize]; 6] = [&[][..], &[2], &[3], &[2, 3], &[4, 3], &[2, 1]];
            Sample::Tensor(Tensor::zeros(
                shapes[rng.below(shapes.len())],
                DType::scalar(dtype),
            ))
        }
        ArgKind::Tensors => {
            let shapes: [&[usize]; 6] = [&[3], &[2, 3], &[3, 2], &[3, 3], &[4, 2, 3], &[]];
            let n = rng.below(3);
            Sample::List(
                (0..n)
                    .map(|_| Tensor::zeros(shapes[rng.below(shapes.len())], DType::scalar(dtype)))
                    .collect(),
            )
        }
        ArgKind::Indices => index_entries(rng),
        ArgKind::Equation => {
            let e = *rng.pick(&[
                "ij,jk->ik",
                "ij->ji",
                "ii->i",
                "...i->...",
                "i,i->",
                "ij",
                "bij,bjk->bik",
                "ab,bc",
                "i->j",
                "ij->ii",
                "i,j->ij",
                "a-b",
            ]);
            Sample::Literal(ArgValue::Equation(e.to_string()), Lit::Equation(e))
        }
        ArgKind::Labels => {
            let dtype = *rng.pick(&[ScalarType::I64, ScalarType::I32, ScalarType::F32]);
            let shapes: [&[usize]; 5] = [&[][..], &[2], &[3], &[2, 3], &[4, 3]];
            let shape = shapes[rng.below(shapes.len())];
            Sample::Tensor(Tensor::zeros(shape, DType::scalar(dtype)))
        }
    }
}

/// An error's words without the caller's location.
fn words(e: &morok::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[test]
fn every_entry_agrees_with_its_tensor_method() {
    let mut rng = Rng::new(2026);
    let mut cases = 0;
    let mut disagreements = Vec::new();
    // Ops none of whose sampled calls succeeded: their success path would
    // go unchecked.
    let mut never_ok: Vec<&str> = Vec::new();
    for spec in OPS {
        let mut ok = false;
        for _ in 0..48 {
            let dtype = *rng.pick(&DTYPES);
            let shape = match conv_shapes(spec.name) {
                Some((inputs, _)) => inputs[rng.below(inputs.len())],
                None => *rng.pick(&SHAPES),
            };
            let x = Tensor::zeros(shape, DType::scalar(dtype));
            // `where_`'s branches take their own type; its receiver is the
            // condition.
            let branch = *rng.pick(&DTYPES);
            let operand_type = if spec.name == "where_" { branch } else { dtype };
            let mut samples: Vec<Sample> = spec
                .args
                .iter()
                .map(|a| sample(a.kind, operand_type, spec.name, &mut rng))
                .collect();
            // Unpooling needs indices of the input's shape to get past its
            // first check.
            if spec.name.starts_with("max_unpool") && rng.below(2) == 0 {
                samples[0] = Sample::Tensor(Tensor::zeros(shape, DType::I64));
            }
            // Scattering needs an index and values that fit the receiver.
            if matches!(spec.name, "scatter" | "scatter_add" | "scatter_reduce")
                && rng.below(2) == 0
            {
                samples[1] = Sample::Tensor(Tensor::zeros(shape, DType::I64));
                samples[2] = Sample::Tensor(Tensor::zeros(shape, DType::scalar(operand_type)));
            }
            if spec.name == "interpolate" && rng.below(2) == 0 && shape.len() == 3 {
                samples[0] = Sample::Literal(ArgValue::Sizes(vec![5]), Lit::Sizes(&[5]));
            }
            // Class losses need targets of the scores' shape without the
            // class axis.
            if matches!(spec.name, "nll_loss" | "cross_entropy_with")
                && !shape.is_empty()
                && rng.below(2) == 0
            {
                let mut t = shape.to_vec();
                t.remove(usize::from(shape.len() >= 2));
                samples[0] = Sample::Tensor(Tensor::zeros(&t, DType::I64));
            }
            // An equation of one term fits any receiver alone.
            if spec.name == "einsum" && rng.below(3) == 0 {
                let e = "...->...";
                samples[0] = Sample::Literal(ArgValue::Equation(e.into()), Lit::Equation(e));
                samples[1] = Sample::List(Vec::new());
            }
            // Joining needs parts of the receiver's shape.
            if matches!(spec.name, "cat" | "stack") && rng.below(2) == 0 {
                let n = 1 + rng.below(2);
                let parts = (0..n)
                    .map(|_| Tensor::zeros(shape, DType::scalar(operand_type)))
                    .collect();
                samples[0] = Sample::List(parts);
            }
            let mut values = Vec::new();
            let mut operands = vec![Value::Tensor(&x)];
            let mut lits = Vec::new();
            for s in &samples {
                match s {
                    Sample::Tensor(t) => {
                        let t_shape = t.shape().to_vec();
                        values.push(ArgValue::Tensor(t.dtype().scalar_type(), t_shape));
                        operands.push(Value::Tensor(t));
                    }
                    Sample::Optional(Some(t)) => {
                        let t_shape = t.shape().to_vec();
                        values.push(ArgValue::Tensor(t.dtype().scalar_type(), t_shape));
                        operands.push(Value::Tensor(t));
                        lits.push(Lit::Present(true));
                    }
                    Sample::Optional(None) => {
                        values.push(ArgValue::Absent);
                        lits.push(Lit::Present(false));
                    }
                    Sample::Literal(v, l) => {
                        values.push(v.clone());
                        lits.push(*l);
                    }
                    Sample::List(list) => {
                        values.push(ArgValue::Tensors(
                            list.iter()
                                .map(|t| (t.dtype().scalar_type(), t.shape().to_vec()))
                                .collect(),
                        ));
                        operands.extend(list.iter().map(Value::Tensor));
                    }
                    Sample::Holding(v, tensors, l) => {
                        values.push(v.clone());
                        operands.extend(tensors.iter().map(Value::Tensor));
                        lits.push(*l);
                    }
                    Sample::Options(t, v, l) => {
                        values.push(v.clone());
                        if let Some(t) = t {
                            operands.push(Value::Tensor(t));
                        }
                        lits.push(*l);
                    }
                    Sample::Scalar(v, f, is_bool) => {
                        values.push(v.clone());
                        operands.push(match v {
                            ArgValue::Float(_) => Value::F64(*f),
                            _ if *is_bool => Value::Bool(true),
                            _ => Value::I64(*f as i64),
                        });
                    }
                }
            }
            if spec.name == "where_" && !values.iter().any(|v| matches!(v, ArgValue::Tensor(..))) {
                continue;
            }
            let outputs = if spec.second.is_some() { 2 } else { 1 };
            for output in 0..outputs {
                let table =
                    OpSpec::of(spec.id).infer_output::<usize>(dtype, shape, &values, output);
                let api = call_op(spec.id, &operands, &lits, output);
                cases += 1;
                let agree = match (&table, &api) {
                    (Ok((t, s)), Ok(y)) => {
                        ok = true;
                        *t == y.dtype().scalar_type() && s.as_slice() == y.shape()
                    }
                    (Err(a), Err(b)) => a.to_string() == words(b),
                    _ => false,
                };
                if !agree {
                    disagreements.push(format!(
                        "{}.{output}: x = {dtype}{shape:?}, args {values:?}: table {:?}, tensor API {:?}",
                        spec.name,
                        table.map(|(t, s)| (t, s.to_vec())).map_err(|e| e.to_string()),
                        api.map(|y| (y.dtype().scalar_type(), y.shape().to_vec()))
                            .map_err(|e| words(&e)),
                    ));
                }
            }
        }
        if !ok {
            never_ok.push(spec.name);
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {cases} cases disagree:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    assert!(
        never_ok.is_empty(),
        "no sampled call of {never_ok:?} succeeded: sample arguments that fit"
    );
}

#[test]
fn ids_index_the_table_and_names_are_unique() {
    for (i, spec) in OPS.iter().enumerate() {
        assert_eq!(spec.id as usize, i, "{}", spec.name);
        assert_eq!(OpSpec::named(spec.name).map(|s| s.id), Some(spec.id));
    }
}

/// The method table of `docs/DSL.md`, rendered from the op table.
fn method_table() -> String {
    let mut out = String::from(
        "| method | arguments | element type | shape | what it computes |\n|---|---|---|---|---|\n",
    );
    for spec in OPS {
        let args: Vec<String> = spec
            .args
            .iter()
            .map(|a| format!("{}: {}", a.name, a.kind.literal_form()))
            .collect();
        let args = if args.is_empty() {
            "—".to_string()
        } else {
            args.join(", ")
        };
        let dtype = match spec.second {
            Some(second) => format!("`.0`: {}; `.1`: {}", spec.dtype.text(), second.text()),
            None => spec.dtype.text().to_string(),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            spec.call_form(),
            args,
            dtype,
            spec.shape.text(),
            spec.doc.trim()
        ));
    }
    out.push_str("\nNot available in a body:\n\n");
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, why) in NOT_IN_THE_DSL {
        match reasons.iter_mut().find(|(w, _)| w == why) {
            Some((_, names)) => names.push(name),
            None => reasons.push((why, vec![name])),
        }
    }
    for (why, names) in reasons {
        let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        out.push_str(&format!("- {}: {why}.\n", names.join(", ")));
    }
    let pending: Vec<String> = NOT_YET_IN_THE_DSL
        .iter()
        .map(|n| format!("`{n}`"))
        .collect();
    if !pending.is_empty() {
        out.push_str(&format!(
            "\nNot declared in the op table yet (see \"Not yet done\"): {}.\n",
            pending.join(", ")
        ));
    }
    out
}

#[test]
fn the_docs_method_table_is_the_op_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/DSL.md");
    let doc = std::fs::read_to_string(path).expect("docs/DSL.md exists");
    let (start, end) = ("<!-- op-table:start -->\n", "<!-- op-table:end -->");
    let a = doc
        .find(start)
        .expect("docs/DSL.md has the op-table start marker")
        + start.len();
    let b = doc
        .find(end)
        .expect("docs/DSL.md has the op-table end marker");
    let want = method_table();
    if doc[a..b] == want {
        return;
    }
    if std::env::var("MOROK_BLESS").is_ok_and(|v| v == "1") {
        let fresh = format!("{}{want}{}", &doc[..a], &doc[b..]);
        std::fs::write(path, fresh).expect("docs/DSL.md is writable");
        return;
    }
    panic!("docs/DSL.md's method table is stale: run `MOROK_BLESS=1 cargo test --test op_table`");
}

/// The public `Tensor` methods (`pub fn name(&self` or `(\n &self` in
/// `src/tensor/`).
fn tensor_methods() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/tensor");
    let mut names = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("src/tensor is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a readable source file");
        for (at, _) in text.match_indices("pub fn ") {
            let rest = &text[at + 7..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let after = &rest[name.len()..];
            let args = after.trim_start_matches(|c: char| c != '(');
            let receiver = args[1..].trim_start();
            if !name.is_empty() && receiver.starts_with("&self") && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

#[test]
fn every_tensor_method_is_in_the_table_or_says_why_not() {
    let methods = tensor_methods();
    assert!(methods.len() > 150, "found only {} methods", methods.len());
    let unaccounted: Vec<&String> = methods
        .iter()
        .filter(|m| {
            !OPS.iter().any(|s| s.method == m.as_str())
                && !NOT_IN_THE_DSL.iter().any(|(n, _)| n == m)
                && !NOT_YET_IN_THE_DSL.contains(&m.as_str())
        })
        .collect();
    assert!(
        unaccounted.is_empty(),
        "Tensor methods neither in the op table nor listed in NOT_IN_THE_DSL or \
         NOT_YET_IN_THE_DSL (morok-core/src/tensor_ops/table.rs): {unaccounted:?}"
    );
    let stale: Vec<&str> = NOT_YET_IN_THE_DSL
        .iter()
        .copied()
        .filter(|n| !methods.iter().any(|m| m == n) || OPS.iter().any(|s| s.method == *n))
        .collect();
    assert!(
        stale.is_empty(),
        "NOT_YET_IN_THE_DSL lists {stale:?}, which are not pending methods"
    );
}
