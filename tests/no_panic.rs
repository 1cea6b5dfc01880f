//! No public `Tensor` call panics, whatever its arguments.
//!
//! A seeded generator makes several hundred calls with hostile arguments:
//! axes out of range, empty and zero-size shapes, mismatched operands, bad
//! reshape targets, reversed or oversized ranges, zero or negative steps,
//! windows larger than their input, zero strides and groups, casts between
//! widths, wrong element types, shapes whose element count overflows. Each
//! call runs under `catch_unwind`. A call that returns tensors has them
//! realized and read back (those whose graph is small); a call that returns
//! an error must name an op the call stands for and the line of the call
//! in this file. The test lists every call that panicked.

mod common;

use common::{compiled, tensor, with_element, Rng};
use morok::core::uop::shape_of;
use morok::core::AddrSpace;
use morok::{
    AttentionOptions, ClassLossOptions, Conv1dOptions, Conv3dOptions, ConvOptions,
    ConvTranspose3dOptions, ConvTransposeOptions, DType, Error, FanMode, Index, InterpolateMode,
    IntoOperand, IsCloseOptions, KaimingOptions, MeshIndexing, Nonlinearity, Operand, PadMode,
    Pads, Pool3dOptions, PoolOptions, Reduction as LossReduction, Result, RoundingMode, ScalarType,
    ScatterReduce, Slice, Tensor,
};
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::time::Instant;

/// Number of generated calls.
const CALLS: usize = 480;
/// Number of further calls of the ops of issue 10 alone.
const SURFACE_CALLS: usize = 240;
/// Seed of the generator.
const SEED: u64 = 0x6e6f_5f70_616e_6963;
/// Largest element count of any node in a graph that gets realized.
const REALIZE_LIMIT: u128 = 1024;
/// Largest number of nodes in a graph that gets realized.
const REALIZE_NODES: usize = 400;

const DTYPES: [ScalarType; 13] = ScalarType::ALL_DATA;

/// Shapes of the ordinary operands: scalars, empty and zero-size tensors,
/// size-1 axes and small images.
const SHAPES: [&[usize]; 15] = [
    &[],
    &[0],
    &[1],
    &[4],
    &[2, 3],
    &[3, 1],
    &[1, 3],
    &[0, 2],
    &[2, 0, 3],
    &[2, 2, 2],
    &[1, 1, 3, 3],
    &[1, 2, 4, 4],
    &[2, 2, 3, 3],
    &[2, 4, 2, 2],
    &[1, 1, 1, 1],
];

/// Sizes no real tensor has: their products overflow.
const HUGE: [usize; 5] = [
    usize::MAX,
    isize::MAX as usize,
    1 << 62,
    1 << 40,
    (1 << 32) + 1,
];

const AXES: [isize; 13] = [
    -5,
    -4,
    -3,
    -2,
    -1,
    0,
    1,
    2,
    3,
    4,
    isize::MIN,
    isize::MAX,
    -1,
];

const SIGNED: [isize; 14] = [
    -1,
    -1,
    -2,
    -7,
    0,
    1,
    2,
    3,
    4,
    6,
    isize::MAX,
    isize::MIN,
    1 << 40,
    isize::MAX / 2 + 1,
];

type Unary = fn(&Tensor) -> Result<Tensor>;
type Binary = fn(&Tensor, Operand) -> Result<Tensor>;
type Reduction = fn(&Tensor, Option<&[isize]>, bool) -> Result<Tensor>;
type Operator = fn(&Tensor, &Tensor) -> Tensor;

const UNARY: [(&str, Unary); 33] = [
    ("exp", |t| t.exp()),
    ("exp2", |t| t.exp2()),
    ("log", |t| t.log()),
    ("log2", |t| t.log2()),
    ("sqrt", |t| t.sqrt()),
    ("rsqrt", |t| t.rsqrt()),
    ("reciprocal", |t| t.reciprocal()),
    ("sin", |t| t.sin()),
    ("cos", |t| t.cos()),
    ("tan", |t| t.tan()),
    ("tanh", |t| t.tanh()),
    ("erf", |t| t.erf()),
    ("floor", |t| t.floor()),
    ("ceil", |t| t.ceil()),
    ("round", |t| t.round()),
    ("trunc", |t| t.trunc()),
    ("neg", |t| t.neg()),
    ("abs", |t| t.abs()),
    ("sign", |t| t.sign()),
    ("isnan", |t| t.isnan()),
    ("isinf", |t| t.isinf()),
    ("logical_not", |t| t.logical_not()),
    ("relu", |t| t.relu()),
    ("leaky_relu", |t| t.leaky_relu(0.1)),
    ("sigmoid", |t| t.sigmoid()),
    ("gelu", |t| t.gelu()),
    ("silu", |t| t.silu()),
    ("zeros_like", |t| t.zeros_like()),
    ("ones_like", |t| t.ones_like()),
    ("full_like", |t| t.full_like(2.5f32)),
    ("realize", |t| t.realize()),
    ("-", |t| checked(-t)),
    ("reference", |t| t.reference().map(|_| t.clone())),
];

const BINARY: [(&str, Binary); 18] = [
    ("add", |a, b| a.add(b)),
    ("sub", |a, b| a.sub(b)),
    ("mul", |a, b| a.mul(b)),
    ("div", |a, b| a.div(b)),
    ("floor_div", |a, b| a.floor_div(b)),
    ("remainder", |a, b| a.remainder(b)),
    ("pow", |a, b| a.pow(b)),
    ("maximum", |a, b| a.maximum(b)),
    ("minimum", |a, b| a.minimum(b)),
    ("eq", |a, b| a.eq(b)),
    ("ne", |a, b| a.ne(b)),
    ("lt", |a, b| a.lt(b)),
    ("le", |a, b| a.le(b)),
    ("gt", |a, b| a.gt(b)),
    ("ge", |a, b| a.ge(b)),
    ("logical_and", |a, b| a.logical_and(b)),
    ("logical_or", |a, b| a.logical_or(b)),
    ("logical_xor", |a, b| a.logical_xor(b)),
];

const REDUCTIONS: [(&str, Reduction); 8] = [
    ("sum", |t, a, k| t.sum(a, k)),
    ("prod", |t, a, k| t.prod(a, k)),
    ("max", |t, a, k| t.max(a, k)),
    ("min", |t, a, k| t.min(a, k)),
    ("mean", |t, a, k| t.mean(a, k)),
    ("any", |t, a, k| t.any(a, k)),
    ("all", |t, a, k| t.all(a, k)),
    ("logsumexp", |t, a, k| t.logsumexp(a, k)),
];

const OPERATORS: [(&str, Operator); 4] = [
    ("add", |a, b| a + b),
    ("sub", |a, b| a - b),
    ("mul", |a, b| a * b),
    ("div", |a, b| a / b),
];

/// The tensors (or the error) a call produced.
type Outcome = Result<Vec<Tensor>>;

/// One generated call: records `op` in `ops` and pairs the call's text
/// with the closure that makes it (`text` is formatted before `body`'s
/// captures move into the closure).
macro_rules! call {
    ($ops:ident, $op:expr, $text:expr, $body:expr) => {{
        $ops.push($op);
        let text: String = $text;
        let run: Box<dyn FnOnce() -> Outcome> = Box::new(move || $body);
        (text, run)
    }};
}

/// One generated call.
struct Call {
    /// The call as text, with its arguments.
    text: String,
    /// The ops an error of this call may name.
    ops: Vec<String>,
    /// Makes the call.
    run: Box<dyn FnOnce() -> Outcome>,
}

/// A generated operand: its description and the tensor.
#[derive(Clone)]
struct Arg {
    text: String,
    t: Tensor,
}

/// A tensor built by an operator or constructor, which carries its error.
fn checked(t: Tensor) -> Result<Tensor> {
    match t.error() {
        Some(e) => Err(e.clone()),
        None => Ok(t),
    }
}

/// The outcome of a constructor that carries its error in the tensor.
fn carried(t: Tensor) -> Outcome {
    Ok(vec![checked(t)?])
}

struct Gen {
    rng: Rng,
    /// The ops named by the errors that the operands of the call being
    /// built carry (a call passes them on).
    carried: Vec<String>,
}

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.rng.next_u64() % 100 < percent
    }

    fn axis(&mut self) -> isize {
        self.pick(&AXES)
    }

    fn axes(&mut self) -> Vec<isize> {
        (0..self.below(4)).map(|_| self.axis()).collect()
    }

    fn dim(&mut self) -> usize {
        if self.chance(15) {
            self.pick(&HUGE)
        } else {
            self.below(5)
        }
    }

    fn shape(&mut self) -> Vec<usize> {
        (0..self.below(5)).map(|_| self.dim()).collect()
    }

    fn signed(&mut self) -> isize {
        self.pick(&SIGNED)
    }

    fn signed_shape(&mut self) -> Vec<isize> {
        (0..self.below(5)).map(|_| self.signed()).collect()
    }

    fn dtype(&mut self) -> ScalarType {
        self.pick(&DTYPES)
    }

    /// Any dtype, including the ones no tensor can hold.
    fn any_dtype(&mut self) -> DType {
        match self.below(10) {
            0 => DType::scalar(self.dtype()).vec(4),
            1 => DType::scalar(self.dtype()).ptr(AddrSpace::Global),
            2 => DType::VOID,
            3 => DType::INDEX,
            _ => DType::scalar(self.dtype()),
        }
    }

    /// A tensor of `dtype` and `shape`: small ones hold data, larger ones
    /// are constants (which may carry a size error).
    fn tensor_of(&mut self, dtype: ScalarType, shape: &[usize]) -> Tensor {
        let nonzero = shape
            .iter()
            .filter(|&&d| d != 0)
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .unwrap_or(usize::MAX);
        if nonzero > 256 {
            return Tensor::zeros(shape, DType::scalar(dtype));
        }
        let n = shape.iter().product();
        let data: Vec<f64> = (0..n)
            .map(|_| match dtype {
                ScalarType::Bool => self.below(2) as f64,
                t if t.is_unsigned() => self.below(6) as f64,
                _ => self.below(7) as f64 - 3.0,
            })
            .collect();
        tensor(dtype, shape, &data)
    }

    /// An operand: usually a small tensor (sometimes a transposed or
    /// flipped view), sometimes a huge lazy one, one with a zero-size axis
    /// beside a huge one, or one that carries an error.
    fn operand(&mut self) -> Arg {
        let a = self.new_operand();
        if let Some(e) = a.t.error() {
            self.carried.push(e.op().to_string());
        }
        a
    }

    fn new_operand(&mut self) -> Arg {
        let dtype = self.dtype();
        match self.below(20) {
            0 => {
                let shape = [self.pick(&HUGE), self.below(3)];
                Arg {
                    text: format!("zeros({shape:?}, {dtype})"),
                    t: Tensor::zeros(&shape, DType::scalar(dtype)),
                }
            }
            1 => {
                let shape = [0, self.pick(&HUGE), self.pick(&HUGE)];
                Arg {
                    text: format!("zeros({shape:?}, {dtype})"),
                    t: Tensor::zeros(&shape, DType::scalar(dtype)),
                }
            }
            2 => {
                let a = self.tensor_of(dtype, &[2, 3]);
                let b = self.tensor_of(dtype, &[2]);
                Arg {
                    text: format!("({dtype}[2, 3] + {dtype}[2])"),
                    t: &a + &b,
                }
            }
            _ => {
                let shape = self.pick(&SHAPES);
                let t = self.tensor_of(dtype, shape);
                if shape.len() >= 2 && self.chance(20) {
                    Arg {
                        text: format!("{dtype}{shape:?}.T"),
                        t: t.transpose(0, -1).unwrap_or(t),
                    }
                } else if !shape.is_empty() && self.chance(10) {
                    Arg {
                        text: format!("{dtype}{shape:?}.flip"),
                        t: t.flip(&[0]).unwrap_or(t),
                    }
                } else {
                    Arg {
                        text: format!("{dtype}{shape:?}"),
                        t,
                    }
                }
            }
        }
    }

    /// A tensor with the given shape, or a random operand.
    fn shaped_or_random(&mut self, shape: Vec<usize>) -> Arg {
        if self.chance(30) {
            return self.operand();
        }
        let dtype = self.dtype();
        let t = self.tensor_of(dtype, &shape);
        if let Some(e) = t.error() {
            self.carried.push(e.op().to_string());
        }
        Arg {
            text: format!("{dtype}{shape:?}"),
            t,
        }
    }

    /// A scalar or tensor second operand.
    fn second(&mut self) -> (String, Operand) {
        match self.below(8) {
            0 => ("2.5f32".into(), 2.5f32.into_operand()),
            1 => ("-3i32".into(), (-3i32).into_operand()),
            2 => ("true".into(), true.into_operand()),
            3 => ("u64::MAX".into(), u64::MAX.into_operand()),
            4 => ("f64::NAN".into(), f64::NAN.into_operand()),
            _ => {
                let a = self.operand();
                (a.text, a.t.into_operand())
            }
        }
    }

    fn slice(&mut self) -> Slice {
        let bound = |g: &mut Gen| match g.below(6) {
            0 => None,
            1 => Some(isize::MIN),
            2 => Some(isize::MAX),
            _ => Some(g.below(15) as isize - 7),
        };
        let start = bound(self);
        let end = bound(self);
        let step = self.pick(&[1, 1, 2, 3, -1, -2, 0, isize::MIN, isize::MAX]);
        Slice { start, end, step }
    }

    fn four_d(&mut self) -> Vec<usize> {
        (0..4)
            .map(|_| {
                if self.chance(8) {
                    self.pick(&HUGE)
                } else {
                    self.below(5)
                }
            })
            .collect()
    }

    /// An index tensor: usually small integers (some negative or out of
    /// range), sometimes floats or another random operand.
    fn index_tensor(&mut self) -> Arg {
        if self.chance(20) {
            return self.operand();
        }
        let dtype = self.pick(&[
            ScalarType::I64,
            ScalarType::I32,
            ScalarType::U8,
            ScalarType::F32,
            ScalarType::Bool,
        ]);
        let shape = self.pick(&SHAPES).to_vec();
        self.shaped(dtype, shape)
    }

    /// A small tensor of `dtype` and `shape`.
    fn shaped(&mut self, dtype: ScalarType, shape: Vec<usize>) -> Arg {
        let t = self.tensor_of(dtype, &shape);
        Arg {
            text: format!("{dtype}{shape:?}"),
            t,
        }
    }

    /// A call of one of the indexing, math and nn ops of issue 10.
    fn new_op_call(
        &mut self,
        x: Arg,
        ops: &mut Vec<&'static str>,
    ) -> (String, Box<dyn FnOnce() -> Outcome>) {
        let d = self.axis();
        match self.below(27) {
            24 | 25 => self.ordering_call(x, d, ops),
            26 => self.creation_call(ops),
            0 => {
                let i = self.index_tensor();
                call!(
                    ops,
                    "gather",
                    format!("{}.gather({d}, {})", x.text, i.text),
                    Ok(vec![x.t.gather(d, &i.t)?])
                )
            }
            1 => {
                let i = self.index_tensor();
                call!(
                    ops,
                    "index_select",
                    format!("{}.index_select({d}, {})", x.text, i.text),
                    Ok(vec![x.t.index_select(d, &i.t)?])
                )
            }
            2 => {
                let n = self.below(5);
                let mut idx = Vec::new();
                let mut text = Vec::new();
                for _ in 0..n {
                    let (e, t) = match self.below(6) {
                        0 => (Index::Int(self.axis()), "int".to_string()),
                        1 => {
                            let s = self.slice();
                            (Index::Slice(s), format!("{s:?}"))
                        }
                        2 => (Index::NewAxis, "None".to_string()),
                        3 => (Index::Ellipsis, "...".to_string()),
                        _ => {
                            let i = self.index_tensor();
                            (Index::Tensor(i.t), i.text)
                        }
                    };
                    idx.push(e);
                    text.push(t);
                }
                // A bool mask realizes its `nonzero` coordinates.
                ops.push("nonzero");
                call!(
                    ops,
                    "index",
                    format!("{}.index({text:?})", x.text),
                    Ok(vec![x.t.index(&idx)?])
                )
            }
            3 | 4 => {
                let i = self.index_tensor();
                let src = self.operand();
                let which = self.below(4);
                let red = self.pick(&[
                    ScatterReduce::Sum,
                    ScatterReduce::Prod,
                    ScatterReduce::Mean,
                    ScatterReduce::Amax,
                    ScatterReduce::Amin,
                ]);
                let inc = self.chance(50);
                let name = ["scatter", "scatter_add", "scatter_reduce", "scatter_reduce"][which];
                call!(
                    ops,
                    name,
                    format!(
                        "{}.{name}({d}, {}, {}, {red:?}, {inc})",
                        x.text, i.text, src.text
                    ),
                    {
                        Ok(vec![match which {
                            0 => x.t.scatter(d, &i.t, &src.t)?,
                            1 => x.t.scatter_add(d, &i.t, &src.t)?,
                            _ => x.t.scatter_reduce(d, &i.t, &src.t, red, inc)?,
                        }])
                    }
                )
            }
            5 => {
                let m = self.operand();
                call!(
                    ops,
                    "masked_fill",
                    format!("{}.masked_fill({}, 1.5)", x.text, m.text),
                    Ok(vec![x.t.masked_fill(&m.t, 1.5)?])
                )
            }
            6 => {
                let m = self.operand();
                call!(
                    ops,
                    "masked_select",
                    format!("{}.masked_select({})", x.text, m.text),
                    {
                        if small(&x.t) && small(&m.t) {
                            Ok(vec![x.t.masked_select(&m.t)?])
                        } else {
                            Ok(Vec::new())
                        }
                    }
                )
            }
            7 => call!(ops, "nonzero", format!("{}.nonzero()", x.text), {
                if small(&x.t) {
                    Ok(vec![x.t.nonzero()?])
                } else {
                    Ok(Vec::new())
                }
            }),
            8 => {
                let n = self.dim();
                call!(
                    ops,
                    "one_hot",
                    format!("{}.one_hot({n})", x.text),
                    Ok(vec![x.t.one_hot(n)?])
                )
            }
            9 => {
                let k = self.signed();
                let upper = self.chance(50);
                let name = if upper { "triu" } else { "tril" };
                call!(
                    ops,
                    name,
                    format!("{}.{name}({k})", x.text),
                    Ok(vec![if upper { x.t.triu(k)? } else { x.t.tril(k)? }])
                )
            }
            10 => {
                let (k, e) = (self.signed(), self.axis());
                call!(
                    ops,
                    "diagonal",
                    format!("{}.diagonal({k}, {d}, {e})", x.text),
                    Ok(vec![x.t.diagonal(k, d, e)?])
                )
            }
            11 => {
                let k = self.signed();
                call!(
                    ops,
                    "diag",
                    format!("{}.diag({k})", x.text),
                    Ok(vec![x.t.diag(k)?])
                )
            }
            12 => {
                let shifts = self.signed_shape();
                let dims = self.axes();
                call!(
                    ops,
                    "roll",
                    format!("{}.roll({shifts:?}, {dims:?})", x.text),
                    Ok(vec![x.t.roll(&shifts, &dims)?])
                )
            }
            13 => {
                let y = self.operand();
                let xy = self.chance(50);
                let how = if xy {
                    MeshIndexing::Xy
                } else {
                    MeshIndexing::Ij
                };
                call!(
                    ops,
                    "meshgrid",
                    format!("Tensor::meshgrid(&[{}, {}], {how:?})", x.text, y.text),
                    Tensor::meshgrid(&[&x.t, &y.t], how)
                )
            }
            14 if self.chance(40) => {
                let r = self.index_tensor();
                let dim = if self.chance(30) { None } else { Some(d) };
                call!(
                    ops,
                    "repeat_interleave",
                    format!("{}.repeat_interleave_counts({}, {dim:?})", x.text, r.text),
                    Ok(vec![x.t.repeat_interleave_counts(&r.t, dim)?])
                )
            }
            14 => {
                let r = self.dim();
                let dim = if self.chance(30) { None } else { Some(d) };
                call!(
                    ops,
                    "repeat_interleave",
                    format!("{}.repeat_interleave({r}, {dim:?})", x.text),
                    Ok(vec![x.t.repeat_interleave(r, dim)?])
                )
            }
            15 | 16 => self.math_call(x, ops),
            17 => {
                let n = self.below(4);
                let letters = [
                    "ij,jk->ik",
                    "ii",
                    "...ij->...ji",
                    "ij->k",
                    "i,i",
                    "ab...,b->",
                    "ij->ii",
                    "",
                    "->",
                    "i2",
                ];
                let eq = letters[self.below(letters.len())].to_string();
                let ys: Vec<Arg> = (0..n).map(|_| self.operand()).collect();
                let text = format!(
                    "Tensor::einsum({eq:?}, [{}, {}])",
                    x.text,
                    ys.iter()
                        .map(|y| y.text.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                call!(ops, "einsum", text, {
                    let mut all = vec![&x.t];
                    all.extend(ys.iter().map(|y| &y.t));
                    Ok(vec![Tensor::einsum(&eq, &all)?])
                })
            }
            18 => {
                let (k, v) = (self.operand(), self.operand());
                let opts = AttentionOptions {
                    is_causal: self.chance(50),
                    enable_gqa: self.chance(50),
                    mask: if self.chance(30) {
                        Some(self.operand().t)
                    } else {
                        None
                    },
                    scale: None,
                    dropout_p: self.pick(&[0.0, 0.0, 0.5, 1.0, -0.1, f64::NAN, 2.0]),
                    dropout_seed: self.below(100) as u64,
                };
                call!(
                    ops,
                    "scaled_dot_product_attention",
                    format!(
                        "{}.scaled_dot_product_attention({}, {}, {opts:?})",
                        x.text, k.text, v.text
                    ),
                    Ok(vec![x.t.scaled_dot_product_attention(&k.t, &v.t, &opts)?])
                )
            }
            19 => {
                let t = self.index_tensor();
                let opts = ClassLossOptions {
                    ignore_index: if self.chance(30) { Some(1) } else { None },
                    label_smoothing: self.pick(&[0.0, 0.1, 2.0, -1.0]),
                    weight: if self.chance(30) {
                        Some(self.operand().t)
                    } else {
                        None
                    },
                    reduction: self.pick(&[
                        LossReduction::None,
                        LossReduction::Mean,
                        LossReduction::Sum,
                    ]),
                };
                let nll = self.chance(30);
                let name = if nll { "nll_loss" } else { "cross_entropy" };
                call!(
                    ops,
                    name,
                    format!("{}.{name}({}, {opts:?})", x.text, t.text),
                    Ok(vec![if nll {
                        x.t.nll_loss(&t.t, &opts)?
                    } else {
                        x.t.cross_entropy_with(&t.t, &opts)?
                    }])
                )
            }
            _ => {
                let (size, step) = (self.dim(), self.dim());
                call!(
                    ops,
                    "unfold",
                    format!("{}.unfold({d}, {size}, {step})", x.text),
                    Ok(vec![x.t.unfold(d, size, step)?])
                )
            }
        }
    }

    /// A call of one of the math ops, activations or elementwise losses.
    fn math_call(
        &mut self,
        x: Arg,
        ops: &mut Vec<&'static str>,
    ) -> (String, Box<dyn FnOnce() -> Outcome>) {
        let (yt, y) = self.second();
        let z = self.operand();
        let which = self.below(14);
        let names = [
            "atan2",
            "copysign",
            "fmod",
            "div",
            "logaddexp",
            "isclose",
            "bitwise_and",
            "bitwise_or",
            "bitwise_xor",
            "bitwise_left_shift",
            "bitwise_right_shift",
            "mse_loss",
            "sum_dtype",
            "unary",
        ];
        let name = names[which];
        let unary = self.below(12);
        let dt = self.any_dtype();
        call!(
            ops,
            name,
            format!("{}.{name}({yt}) #{unary} {dt} {}", x.text, z.text),
            {
                let t = match which {
                    0 => x.t.atan2(y)?,
                    1 => x.t.copysign(y)?,
                    2 => x.t.fmod(y)?,
                    3 => x.t.div_mode(y, RoundingMode::Trunc)?,
                    4 => x.t.logaddexp(y)?,
                    5 => x.t.isclose(
                        y,
                        IsCloseOptions {
                            equal_nan: true,
                            ..Default::default()
                        },
                    )?,
                    6 => x.t.bitwise_and(y)?,
                    7 => x.t.bitwise_or(y)?,
                    8 => x.t.bitwise_xor(y)?,
                    9 => x.t.bitwise_left_shift(y)?,
                    10 => x.t.bitwise_right_shift(y)?,
                    11 => x.t.mse_loss(&z.t, LossReduction::Mean)?,
                    12 => x.t.sum_dtype(None, false, dt)?,
                    _ => match unary {
                        0 => x.t.sinh()?,
                        1 => x.t.acosh()?,
                        2 => x.t.asin()?,
                        3 => x.t.log1p()?,
                        4 => x.t.expm1()?,
                        5 => x.t.isfinite()?,
                        6 => x.t.bitwise_not()?,
                        7 => x.t.elu(1.0)?,
                        8 => x.t.softplus(1.0, 20.0)?,
                        9 => x.t.softmin(-1)?,
                        10 => x.t.mish()?,
                        _ => x.t.gelu_tanh()?,
                    },
                };
                Ok(vec![t])
            }
        )
    }

    /// A call of a running reduction, sort, pad mode, `normalize` or
    /// `conv1d`.
    fn ordering_call(
        &mut self,
        x: Arg,
        d: isize,
        ops: &mut Vec<&'static str>,
    ) -> (String, Box<dyn FnOnce() -> Outcome>) {
        let which = self.below(11);
        let k = self.dim();
        let flag = self.chance(50);
        let sizes: Vec<usize> = (0..self.below(6)).map(|_| self.dim()).collect();
        let pads: Vec<(isize, isize)> = (0..self.below(6))
            .map(|_| (self.signed(), self.signed()))
            .collect();
        let mode = self.pick(&[
            PadMode::Reflect,
            PadMode::Replicate,
            PadMode::Circular,
            PadMode::Constant(2.0),
        ]);
        let w = self.operand();
        let opts = Conv1dOptions {
            stride: self.dim(),
            padding: Pads::from(self.dim()),
            dilation: self.dim(),
            groups: self.dim(),
        };
        let names = [
            "cumprod",
            "cummax",
            "cummin",
            "logcumsumexp",
            "sort",
            "argsort",
            "topk",
            "pad",
            "normalize",
            "conv1d",
            "interpolate",
        ];
        let imode = self.pick(&[
            InterpolateMode::Nearest,
            InterpolateMode::NearestExact,
            InterpolateMode::Linear,
            InterpolateMode::Bilinear,
            InterpolateMode::Trilinear,
        ]);
        let name = names[which];
        if which == 9 {
            ops.extend([
                "conv_transpose1d",
                "conv_transpose2d",
                "conv3d",
                "conv_transpose3d",
            ]);
        }
        call!(
            ops,
            name,
            format!(
                "{}.{name}(d={d}, k={k}, {flag}, {pads:?}, {mode:?}, {}, {opts:?})",
                x.text, w.text
            ),
            {
                Ok(match which {
                    0 => vec![x.t.cumprod(d)?],
                    1 => {
                        let (a, b) = x.t.cummax(d)?;
                        vec![a, b]
                    }
                    2 => {
                        let (a, b) = x.t.cummin(d)?;
                        vec![a, b]
                    }
                    3 => vec![x.t.logcumsumexp(d)?],
                    4 => {
                        let (a, b) = x.t.sort(d, flag)?;
                        vec![a, b]
                    }
                    5 => vec![x.t.argsort(d, flag)?],
                    6 => {
                        let (a, b) = x.t.topk(k, d, flag)?;
                        vec![a, b]
                    }
                    7 => vec![x.t.pad_mode(&pads, mode)?],
                    8 => vec![x.t.normalize(2.0, d, 1e-12)?],
                    9 if flag && k.is_multiple_of(3) => {
                        let t = |v: usize| (v, v / 2 + 1, v % 3);
                        let o3 = Conv3dOptions {
                            stride: t(opts.stride),
                            padding: Pads::from(t(opts.padding.0[0].0.unsigned_abs())),
                            dilation: t(opts.dilation),
                            groups: opts.groups,
                        };
                        vec![x.t.conv3d(&w.t, None, o3)?]
                    }
                    9 if k.is_multiple_of(3) => {
                        let t = |v: usize| (v, v / 2 + 1, v % 3);
                        let o3 = ConvTranspose3dOptions {
                            stride: t(opts.stride),
                            padding: Pads::from(t(opts.padding.0[0].0.unsigned_abs())),
                            output_padding: t(k / 3),
                            dilation: t(opts.dilation),
                            groups: opts.groups,
                        };
                        vec![x.t.conv_transpose3d(&w.t, None, o3)?]
                    }
                    9 if flag => vec![x.t.conv1d(&w.t, None, opts)?],
                    9 => {
                        let t = ConvTransposeOptions {
                            stride: (opts.stride, opts.dilation),
                            padding: Pads([opts.padding.0[0]; 2]),
                            output_padding: (k, 0),
                            dilation: (opts.dilation, opts.stride),
                            groups: opts.groups,
                        };
                        vec![if k.is_multiple_of(2) {
                            x.t.conv_transpose2d(&w.t, None, t)?
                        } else {
                            x.t.conv_transpose1d(&w.t, None, t)?
                        }]
                    }
                    _ if k.is_multiple_of(2) => {
                        let factors: Vec<f64> = sizes
                            .iter()
                            .map(|&p| [0.5, 1.7, 2.0, 0.0, -1.0, f64::INFINITY, 1e30][p % 7])
                            .collect();
                        vec![x.t.interpolate_scale(&factors, imode, flag)?]
                    }
                    _ => vec![x.t.interpolate(&sizes, imode, flag)?],
                })
            }
        )
    }

    /// Hostile pooling options.
    fn pool_options(&mut self) -> PoolOptions {
        let o = |g: &mut Gen| g.pick(&[0, 1, 2, 2, 3, 5, usize::MAX]);
        let opts = PoolOptions::new((o(self), o(self)))
            .stride((o(self), o(self)))
            .padding((o(self) % 4, o(self)))
            .dilation((1 + o(self) % 3, 1 + o(self) % 2))
            .ceil_mode(self.chance(40))
            .count_include_pad(self.chance(60));
        if self.chance(20) {
            opts.divisor_override(self.pick(&[0, 1, 3]))
        } else {
            opts
        }
    }

    /// One call of the ops of issue 10 only (the second pass, which
    /// reaches each of them more often than the mixed calls do); a third
    /// of the operands are small volumes `[N, C, D, H, W]`.
    fn surface_call(&mut self) -> Call {
        self.carried.clear();
        let x = if self.chance(30) {
            let shape = vec![1, 2, 1 + self.below(3), 3, 2 + self.below(2)];
            self.shaped(ScalarType::F32, shape)
        } else {
            self.operand()
        };
        let mut ops: Vec<&str> = Vec::new();
        let (text, run) = if self.chance(40) {
            let opts = self.pool_options();
            self.pool_extra_call(x, opts, &mut ops)
        } else {
            self.new_op_call(x, &mut ops)
        };
        let mut ops: Vec<String> = ops.into_iter().map(String::from).collect();
        ops.append(&mut self.carried);
        Call { text, ops, run }
    }

    /// A call of a 3-D pool, a pool with indices or an unpool.
    fn pool_extra_call(
        &mut self,
        x: Arg,
        opts: PoolOptions,
        ops: &mut Vec<&'static str>,
    ) -> (String, Box<dyn FnOnce() -> Outcome>) {
        let o3 = Pool3dOptions {
            kernel: (opts.kernel.0, opts.kernel.1, opts.kernel.1),
            stride: (opts.stride.1, opts.stride.0, opts.stride.1),
            padding: Pads([opts.padding.0[0], opts.padding.0[1], opts.padding.0[0]]),
            dilation: (opts.dilation.1, opts.dilation.0, 1),
            ..Pool3dOptions::new((1, 1, 1))
        };
        let o3 = o3
            .ceil_mode(opts.ceil_mode)
            .count_include_pad(opts.count_include_pad);
        let size = (self.dim(), self.dim());
        let idx = self.index_tensor();
        let which = self.below(6);
        let name = [
            "max_pool3d",
            "avg_pool3d",
            "max_pool2d_with_indices",
            "max_pool1d_with_indices",
            "max_pool3d_with_indices",
            "max_unpool2d",
        ][which];
        // Unpooling writes with `scatter`.
        ops.extend(["scatter", "max_unpool1d", "max_unpool2d", "max_unpool3d"]);
        call!(
            ops,
            name,
            format!(
                "{}.{name}({opts:?}, {o3:?}, {size:?}, {})",
                x.text, idx.text
            ),
            Ok(match which {
                0 => vec![x.t.max_pool3d(o3)?],
                1 => vec![x.t.avg_pool3d(o3)?],
                2 => {
                    let (v, i) = x.t.max_pool2d_with_indices(opts)?;
                    vec![v.clone(), i.clone(), v.max_unpool2d(&i, opts, None)?]
                }
                3 => {
                    let (v, i) = x.t.max_pool1d_with_indices(opts)?;
                    vec![
                        v.clone(),
                        i.clone(),
                        v.max_unpool1d(&i, opts, Some(size.0))?,
                    ]
                }
                4 => {
                    let (v, i) = x.t.max_pool3d_with_indices(o3)?;
                    vec![v.clone(), i.clone(), v.max_unpool3d(&i, o3, None)?]
                }
                _ => vec![x.t.max_unpool2d(&idx.t, opts, Some(size))?],
            })
        )
    }

    /// A call of a creation function with a dtype, or an initializer.
    fn creation_call(
        &mut self,
        ops: &mut Vec<&'static str>,
    ) -> (String, Box<dyn FnOnce() -> Outcome>) {
        let which = self.below(9);
        let shape = self.shape();
        let kaiming = KaimingOptions {
            mode: if self.chance(50) {
                FanMode::FanIn
            } else {
                FanMode::FanOut
            },
            nonlinearity: self.pick(&[
                Nonlinearity::Linear,
                Nonlinearity::Sigmoid,
                Nonlinearity::Tanh,
                Nonlinearity::Relu,
                Nonlinearity::LeakyRelu(0.2),
                Nonlinearity::LeakyRelu(f64::NAN),
                Nonlinearity::Selu,
            ]),
        };
        let dt = self.any_dtype();
        let (a, b) = (self.signed() as f64, self.signed() as f64);
        let (n, m) = (self.dim(), self.dim());
        let names = [
            "arange",
            "linspace",
            "eye",
            "kaiming_uniform",
            "kaiming_normal",
            "xavier_uniform",
            "xavier_normal",
            "kaiming_uniform",
            "kaiming_normal",
        ];
        let name = names[which];
        call!(
            ops,
            name,
            format!("{name}({shape:?}, {dt}, {a}, {b}, {n}, {m}, {kaiming:?})"),
            {
                Ok(vec![match which {
                    0 => Tensor::arange_dtype(a, b, 0.5 * b, dt)?,
                    1 => Tensor::linspace_dtype(a, b, n, dt)?,
                    2 => Tensor::eye_rect(n, m, dt)?,
                    3 => Tensor::kaiming_uniform(&shape, dt, 0.0, 1)?,
                    4 => Tensor::kaiming_normal(&shape, dt, 0.0, 1)?,
                    5 => Tensor::xavier_uniform(&shape, dt, 1.0, 1)?,
                    6 => Tensor::xavier_normal(&shape, dt, 1.0, 1)?,
                    7 => Tensor::kaiming_uniform_with(&shape, dt, kaiming, 1)?,
                    _ => Tensor::kaiming_normal_with(&shape, dt, kaiming, 1)?,
                }])
            }
        )
    }

    /// One random call.
    fn call(&mut self) -> Call {
        self.carried.clear();
        let x = self.operand();
        let mut ops: Vec<&str> = Vec::new();
        let (text, run): (String, Box<dyn FnOnce() -> Outcome>) = match self.below(48) {
            39..=46 => self.new_op_call(x, &mut ops),
            0 => {
                let s = self.signed_shape();
                call!(
                    ops,
                    "reshape",
                    format!("{}.reshape({s:?})", x.text),
                    Ok(vec![x.t.reshape(&s)?])
                )
            }
            1 => {
                let p = self.axes();
                call!(
                    ops,
                    "permute",
                    format!("{}.permute({p:?})", x.text),
                    Ok(vec![x.t.permute(&p)?])
                )
            }
            2 => {
                let (a, b) = (self.axis(), self.axis());
                call!(
                    ops,
                    "transpose",
                    format!("{}.transpose({a}, {b})", x.text),
                    Ok(vec![x.t.transpose(a, b)?])
                )
            }
            3 => {
                let s = self.shape();
                call!(
                    ops,
                    "broadcast_to",
                    format!("{}.broadcast_to({s:?})", x.text),
                    Ok(vec![x.t.broadcast_to(&s)?])
                )
            }
            4 => {
                let s = self.signed_shape();
                call!(
                    ops,
                    "expand",
                    format!("{}.expand({s:?})", x.text),
                    Ok(vec![x.t.expand(&s)?])
                )
            }
            5 => {
                let n = if self.chance(80) {
                    x.t.ndim()
                } else {
                    self.below(5)
                };
                let pads: Vec<(isize, isize)> = (0..n)
                    .map(|_| {
                        let p = |g: &mut Gen| {
                            if g.chance(15) {
                                g.pick(&[isize::MIN, isize::MAX, -(1 << 40), 1 << 40])
                            } else {
                                g.below(9) as isize - 4
                            }
                        };
                        (p(self), p(self))
                    })
                    .collect();
                ops.push("pad");
                match self.below(3) {
                    0 => (
                        format!("{}.pad({pads:?}, 1.5f32)", x.text),
                        Box::new(move || Ok(vec![x.t.pad(&pads, 1.5f32)?])),
                    ),
                    1 => (
                        format!("{}.pad({pads:?}, true)", x.text),
                        Box::new(move || Ok(vec![x.t.pad(&pads, true)?])),
                    ),
                    _ => (
                        format!("{}.pad({pads:?}, -7i64)", x.text),
                        Box::new(move || Ok(vec![x.t.pad(&pads, -7i64)?])),
                    ),
                }
            }
            6 => {
                let n = if self.chance(80) {
                    x.t.ndim()
                } else {
                    self.below(5)
                };
                let bounds: Vec<(usize, usize)> = (0..n)
                    .map(|_| {
                        let b = |g: &mut Gen| {
                            if g.chance(10) {
                                usize::MAX
                            } else {
                                g.below(6)
                            }
                        };
                        (b(self), b(self))
                    })
                    .collect();
                call!(
                    ops,
                    "shrink",
                    format!("{}.shrink({bounds:?})", x.text),
                    Ok(vec![x.t.shrink(&bounds)?])
                )
            }
            7 => {
                let slices: Vec<Slice> = (0..self.below(5)).map(|_| self.slice()).collect();
                call!(
                    ops,
                    "slice",
                    format!("{}.slice({slices:?})", x.text),
                    Ok(vec![x.t.slice(&slices)?])
                )
            }
            8 => {
                let a = self.axes();
                call!(
                    ops,
                    "flip",
                    format!("{}.flip({a:?})", x.text),
                    Ok(vec![x.t.flip(&a)?])
                )
            }
            9 => {
                let a = self.axis();
                if self.chance(50) {
                    call!(
                        ops,
                        "squeeze",
                        format!("{}.squeeze({a})", x.text),
                        Ok(vec![x.t.squeeze(a)?])
                    )
                } else {
                    call!(
                        ops,
                        "unsqueeze",
                        format!("{}.unsqueeze({a})", x.text),
                        Ok(vec![x.t.unsqueeze(a)?])
                    )
                }
            }
            10 => {
                let (a, b) = (self.axis(), self.axis());
                call!(
                    ops,
                    "flatten",
                    format!("{}.flatten({a}, {b})", x.text),
                    Ok(vec![x.t.flatten(a, b)?])
                )
            }
            11 => {
                let reps = self.shape();
                call!(
                    ops,
                    "repeat",
                    format!("{}.repeat({reps:?})", x.text),
                    Ok(vec![x.t.repeat(&reps)?])
                )
            }
            12 | 13 => {
                let mut parts = vec![x];
                for _ in 0..self.below(4) {
                    let p = if self.chance(50) {
                        let mut s = parts[0].t.shape().to_vec();
                        if let Some(d) = s.first_mut() {
                            *d = self.dim();
                        }
                        self.shaped_or_random(s)
                    } else {
                        parts[0].clone()
                    };
                    parts.push(p);
                }
                if self.chance(10) {
                    parts.clear();
                }
                let dim = self.axis();
                let names: Vec<&str> = parts.iter().map(|p| p.text.as_str()).collect();
                let names = names.join(", ");
                let ts: Vec<Tensor> = parts.into_iter().map(|p| p.t).collect();
                if self.chance(50) {
                    call!(ops, "cat", format!("Tensor::cat(&[{names}], {dim})"), {
                        let refs: Vec<&Tensor> = ts.iter().collect();
                        Ok(vec![Tensor::cat(&refs, dim)?])
                    })
                } else {
                    call!(ops, "stack", format!("Tensor::stack(&[{names}], {dim})"), {
                        let refs: Vec<&Tensor> = ts.iter().collect();
                        Ok(vec![Tensor::stack(&refs, dim)?])
                    })
                }
            }
            14 => {
                let sizes: Vec<usize> = (0..self.below(4))
                    .map(|_| {
                        if self.chance(15) {
                            self.pick(&HUGE)
                        } else {
                            self.below(4)
                        }
                    })
                    .collect();
                let dim = self.axis();
                call!(
                    ops,
                    "split",
                    format!("{}.split({sizes:?}, {dim})", x.text),
                    x.t.split(&sizes, dim)
                )
            }
            15 => {
                let n = self.pick(&[0, 1, 2, 3, 7, usize::MAX]);
                let dim = self.axis();
                call!(
                    ops,
                    "chunk",
                    format!("{}.chunk({n}, {dim})", x.text),
                    x.t.chunk(n, dim)
                )
            }
            16 => {
                let (name, f) = self.pick(&OPERATORS);
                ops.push(name);
                match self.below(3) {
                    0 => (
                        format!("2.5f64 {name} {}", x.text),
                        Box::new(move || {
                            let t = match name {
                                "add" => 2.5f64 + &x.t,
                                "sub" => 2.5f64 - &x.t,
                                "mul" => 2.5f64 * &x.t,
                                _ => 2.5f64 / &x.t,
                            };
                            Ok(vec![checked(t)?])
                        }),
                    ),
                    1 => (
                        format!("{} {name} -2i8", x.text),
                        Box::new(move || {
                            let t = match name {
                                "add" => &x.t + -2i8,
                                "sub" => &x.t - -2i8,
                                "mul" => &x.t * -2i8,
                                _ => &x.t / -2i8,
                            };
                            Ok(vec![checked(t)?])
                        }),
                    ),
                    _ => {
                        let y = self.operand();
                        (
                            format!("{} {name} {}", x.text, y.text),
                            Box::new(move || Ok(vec![checked(f(&x.t, &y.t))?])),
                        )
                    }
                }
            }
            17..=19 => {
                let (name, f) = self.pick(&BINARY);
                let (rhs_text, rhs) = self.second();
                call!(
                    ops,
                    name,
                    format!("{}.{name}({rhs_text})", x.text),
                    Ok(vec![f(&x.t, rhs)?])
                )
            }
            20 | 21 => {
                let (name, f) = self.pick(&UNARY);
                ops.push(name);
                if name == "-" {
                    ops.push("neg");
                }
                (
                    format!("{}.{name}()", x.text),
                    Box::new(move || Ok(vec![f(&x.t)?])),
                )
            }
            22 => {
                let (a_text, a) = self.second();
                let (b_text, b) = self.second();
                if self.chance(50) {
                    call!(
                        ops,
                        "where",
                        format!("{}.where_({a_text}, {b_text})", x.text),
                        Ok(vec![x.t.where_(a, b)?])
                    )
                } else {
                    call!(
                        ops,
                        "clamp",
                        format!("{}.clamp({a_text}, {b_text})", x.text),
                        Ok(vec![x.t.clamp(a, b)?])
                    )
                }
            }
            23 => {
                let d = self.any_dtype();
                if self.chance(50) {
                    call!(
                        ops,
                        "cast",
                        format!("{}.cast({d})", x.text),
                        Ok(vec![x.t.cast(d)?])
                    )
                } else {
                    call!(
                        ops,
                        "bitcast",
                        format!("{}.bitcast({d})", x.text),
                        Ok(vec![x.t.bitcast(d)?])
                    )
                }
            }
            24 | 25 => {
                let (name, f) = self.pick(&REDUCTIONS);
                let axes = if self.chance(25) {
                    None
                } else {
                    Some(self.axes())
                };
                let keep = self.chance(50);
                call!(
                    ops,
                    name,
                    format!("{}.{name}({axes:?}, {keep})", x.text),
                    Ok(vec![f(&x.t, axes.as_deref(), keep)?])
                )
            }
            26 => {
                let axes = if self.chance(25) {
                    None
                } else {
                    Some(self.axes())
                };
                let corr = self.pick(&[0, 1, 2, usize::MAX]);
                let keep = self.chance(50);
                if self.chance(50) {
                    call!(
                        ops,
                        "var",
                        format!("{}.var({axes:?}, {corr}, {keep})", x.text),
                        Ok(vec![x.t.var(axes.as_deref(), corr, keep)?])
                    )
                } else {
                    call!(
                        ops,
                        "std",
                        format!("{}.std({axes:?}, {corr}, {keep})", x.text),
                        Ok(vec![x.t.std(axes.as_deref(), corr, keep)?])
                    )
                }
            }
            27 => {
                let axis = if self.chance(20) {
                    None
                } else {
                    Some(self.axis())
                };
                if self.chance(50) {
                    call!(
                        ops,
                        "argmax",
                        format!("{}.argmax({axis:?})", x.text),
                        Ok(vec![x.t.argmax(axis)?])
                    )
                } else {
                    call!(
                        ops,
                        "argmin",
                        format!("{}.argmin({axis:?})", x.text),
                        Ok(vec![x.t.argmin(axis)?])
                    )
                }
            }
            28 => {
                let axis = self.axis();
                match self.below(3) {
                    0 => {
                        call!(
                            ops,
                            "cumsum",
                            format!("{}.cumsum({axis})", x.text),
                            Ok(vec![x.t.cumsum(axis)?])
                        )
                    }
                    1 => {
                        call!(
                            ops,
                            "softmax",
                            format!("{}.softmax({axis})", x.text),
                            Ok(vec![x.t.softmax(axis)?])
                        )
                    }
                    _ => {
                        call!(
                            ops,
                            "log_softmax",
                            format!("{}.log_softmax({axis})", x.text),
                            Ok(vec![x.t.log_softmax(axis)?])
                        )
                    }
                }
            }
            29 => {
                let mut s = x.t.shape().to_vec();
                s.reverse();
                if self.chance(30) {
                    if let Some(d) = s.last_mut() {
                        *d = self.dim();
                    }
                }
                let w = self.shaped_or_random(s);
                match self.below(3) {
                    0 => {
                        call!(
                            ops,
                            "matmul",
                            format!("{}.matmul({})", x.text, w.text),
                            Ok(vec![x.t.matmul(&w.t)?])
                        )
                    }
                    1 => {
                        ops.extend(["matmul", "dot"]);
                        (
                            format!("{}.dot({})", x.text, w.text),
                            Box::new(move || Ok(vec![x.t.dot(&w.t)?])),
                        )
                    }
                    _ => {
                        let b = if self.chance(50) {
                            Some(self.operand())
                        } else {
                            None
                        };
                        ops.push("linear");
                        let bt = b.as_ref().map(|b| b.text.clone());
                        (
                            format!("{}.linear({}, {bt:?})", x.text, w.text),
                            Box::new(move || {
                                Ok(vec![x.t.linear(&w.t, b.as_ref().map(|b| &b.t))?])
                            }),
                        )
                    }
                }
            }
            30 => {
                let axes = self.axes();
                let w = if self.chance(40) {
                    Some(self.operand())
                } else {
                    None
                };
                let b = if self.chance(40) {
                    Some(self.operand())
                } else {
                    None
                };
                let eps = self.pick(&[1e-5, 0.0, -1.0, f64::NAN]);
                ops.push("layernorm");
                let (wt, bt) = (
                    w.as_ref().map(|a| a.text.clone()),
                    b.as_ref().map(|a| a.text.clone()),
                );
                (
                    format!("{}.layernorm({axes:?}, {wt:?}, {bt:?}, {eps})", x.text),
                    Box::new(move || {
                        Ok(vec![x.t.layernorm(
                            &axes,
                            w.as_ref().map(|a| &a.t),
                            b.as_ref().map(|a| &a.t),
                            eps,
                        )?])
                    }),
                )
            }
            31 | 32 => {
                let xs = self.four_d();
                let img = self.shaped_or_random(xs);
                let ws = self.four_d();
                let w = self.shaped_or_random(ws);
                let bias = if self.chance(30) {
                    Some(self.operand())
                } else {
                    None
                };
                let o = |g: &mut Gen| g.pick(&[0, 1, 1, 2, 3, usize::MAX]);
                let opts = ConvOptions {
                    stride: (o(self), o(self)),
                    padding: (o(self) % 3, o(self)).into(),
                    dilation: (o(self), o(self)),
                    groups: o(self),
                };
                ops.push("conv2d");
                let bt = bias.as_ref().map(|a| a.text.clone());
                (
                    format!("{}.conv2d({}, {bt:?}, {opts:?})", img.text, w.text),
                    Box::new(move || {
                        Ok(vec![img.t.conv2d(
                            &w.t,
                            bias.as_ref().map(|a| &a.t),
                            opts,
                        )?])
                    }),
                )
            }
            33 => {
                let opts = self.pool_options();
                if self.chance(25) {
                    self.pool_extra_call(x, opts, &mut ops)
                } else if self.chance(15) {
                    let max = self.chance(50);
                    let name = if max { "max_pool1d" } else { "avg_pool1d" };
                    call!(
                        ops,
                        name,
                        format!("{}.{name}({opts:?})", x.text),
                        Ok(vec![if max {
                            x.t.max_pool1d(opts)?
                        } else {
                            x.t.avg_pool1d(opts)?
                        }])
                    )
                } else if self.chance(50) {
                    call!(
                        ops,
                        "max_pool2d",
                        format!("{}.max_pool2d({opts:?})", x.text),
                        Ok(vec![x.t.max_pool2d(opts)?])
                    )
                } else {
                    call!(
                        ops,
                        "avg_pool2d",
                        format!("{}.avg_pool2d({opts:?})", x.text),
                        Ok(vec![x.t.avg_pool2d(opts)?])
                    )
                }
            }
            34 => {
                let mut s = x.t.shape().to_vec();
                s.pop();
                let labels = if self.chance(70) {
                    let dtype = self.pick(&[ScalarType::I32, ScalarType::U8, ScalarType::I64]);
                    Arg {
                        text: format!("{dtype}{s:?}"),
                        t: self.tensor_of(dtype, &s),
                    }
                } else {
                    self.operand()
                };
                call!(
                    ops,
                    "cross_entropy",
                    format!("{}.cross_entropy({})", x.text, labels.text),
                    Ok(vec![x.t.cross_entropy(&labels.t)?])
                )
            }
            35 => self.constructor(&mut ops),
            36 => {
                let d = self.dtype();
                let right = self.chance(30);
                let d = if right { x.t.dtype().scalar_type() } else { d };
                let nd = self.chance(50);
                call!(
                    ops,
                    if nd { "to_ndarray" } else { "to_vec" },
                    format!(
                        "{}.{}::<{d}>()",
                        x.text,
                        if nd { "to_ndarray" } else { "to_vec" }
                    ),
                    read_as(&x.t, d, nd).map(|_| Vec::new())
                )
            }
            37 => {
                let n = self.below(8);
                let shape = self.shape();
                let d = self.dtype();
                call!(
                    ops,
                    "from_vec",
                    format!("Tensor::from_vec(<{n} x {d}>, {shape:?})"),
                    {
                        let data = vec![1.0; n];
                        Ok(vec![from_vec_as(d, &data, &shape)?])
                    }
                )
            }
            38 => {
                let shape = [1usize << 25, 1 << 25];
                call!(
                    ops,
                    "realize",
                    format!("Tensor::ones({shape:?}, f32).realize()"),
                    {
                        Tensor::ones(&shape, DType::F32).realize()?;
                        Ok(Vec::new())
                    }
                )
            }
            _ => {
                let y = self.operand();
                let y_text = y.text.clone();
                call!(
                    ops,
                    "realize",
                    format!("Tensor::realize_all(&[{}, {y_text}])", x.text),
                    {
                        if small(&x.t) && small(&y.t) {
                            Tensor::realize_all(&[&x.t, &y.t])
                        } else {
                            Ok(Vec::new())
                        }
                    }
                )
            }
        };
        let mut ops: Vec<String> = ops.into_iter().map(String::from).collect();
        ops.append(&mut self.carried);
        Call { text, ops, run }
    }

    /// A call of a constructor with hostile sizes, dtypes or bounds.
    fn constructor(
        &mut self,
        ops: &mut Vec<&'static str>,
    ) -> (String, Box<dyn FnOnce() -> Outcome>) {
        let shape = self.shape();
        let d = self.any_dtype();
        match self.below(11) {
            0 => {
                call!(
                    ops,
                    "zeros",
                    format!("Tensor::zeros({shape:?}, {d})"),
                    carried(Tensor::zeros(&shape, d))
                )
            }
            1 => {
                call!(
                    ops,
                    "ones",
                    format!("Tensor::ones({shape:?}, {d})"),
                    carried(Tensor::ones(&shape, d))
                )
            }
            2 => {
                call!(
                    ops,
                    "full",
                    format!("Tensor::full({shape:?}, 7u16)"),
                    carried(Tensor::full(&shape, 7u16))
                )
            }
            3 => {
                let n = self.pick(&[0, 1, 3, usize::MAX, 1 << 32, 1 << 31]);
                call!(
                    ops,
                    "eye",
                    format!("Tensor::eye({n}, {d})"),
                    carried(Tensor::eye(n, d))
                )
            }
            4 => {
                let seed = self.rng.next_u64();
                match self.below(4) {
                    0 => {
                        call!(
                            ops,
                            "rand",
                            format!("Tensor::rand({shape:?}, {d})"),
                            carried(Tensor::rand(&shape, d))
                        )
                    }
                    1 => {
                        call!(
                            ops,
                            "randn",
                            format!("Tensor::randn({shape:?}, {d})"),
                            carried(Tensor::randn(&shape, d))
                        )
                    }
                    2 => {
                        call!(
                            ops,
                            "rand",
                            format!("Tensor::rand_seeded({shape:?}, {d}, {seed})"),
                            carried(Tensor::rand_seeded(&shape, d, seed))
                        )
                    }
                    _ => {
                        call!(
                            ops,
                            "randn",
                            format!("Tensor::randn_seeded({shape:?}, {d}, {seed})"),
                            carried(Tensor::randn_seeded(&shape, d, seed))
                        )
                    }
                }
            }
            5 => {
                let v = [-3.0f32, 0.0, 2.5, 1e30, f32::INFINITY, f32::NAN, 0.5];
                let (a, b, s) = (self.pick(&v), self.pick(&v), self.pick(&v));
                call!(
                    ops,
                    "arange",
                    format!("Tensor::arange({a}f32, {b}, {s})"),
                    Ok(vec![Tensor::arange(a, b, s)?])
                )
            }
            6 => {
                let v = [i32::MIN, -3, 0, 1, 5, i32::MAX];
                let (a, b, s) = (self.pick(&v), self.pick(&v), self.pick(&v));
                call!(
                    ops,
                    "arange",
                    format!("Tensor::arange({a}i32, {b}, {s})"),
                    Ok(vec![Tensor::arange(a, b, s)?])
                )
            }
            7 => {
                let v = [0u8, 1, 5, 255];
                let (a, b, s) = (self.pick(&v), self.pick(&v), self.pick(&v));
                call!(
                    ops,
                    "arange",
                    format!("Tensor::arange({a}u8, {b}, {s})"),
                    Ok(vec![Tensor::arange(a, b, s)?])
                )
            }
            8 => {
                let v = [i64::MIN, -1, 0, 3, i64::MAX];
                let (a, b, s) = (self.pick(&v), self.pick(&v), self.pick(&v));
                call!(
                    ops,
                    "arange",
                    format!("Tensor::arange({a}i64, {b}, {s})"),
                    Ok(vec![Tensor::arange(a, b, s)?])
                )
            }
            9 => {
                let v = [0u8, 3, 255];
                let (a, b) = (self.pick(&v), self.pick(&v));
                let n = self.pick(&[0, 1, 4, 1000, usize::MAX]);
                call!(
                    ops,
                    "linspace",
                    format!("Tensor::linspace({a}u8, {b}, {n})"),
                    Ok(vec![Tensor::linspace(a, b, n)?])
                )
            }
            _ => {
                let v = [-1e300, 0.0, 1.0, f64::INFINITY];
                let (a, b) = (self.pick(&v), self.pick(&v));
                let n = self.pick(&[0, 1, 2, 5, usize::MAX, 1 << 31]);
                call!(
                    ops,
                    "linspace",
                    format!("Tensor::linspace({a}f64, {b}, {n})"),
                    Ok(vec![Tensor::linspace(a, b, n)?])
                )
            }
        }
    }
}

/// `data` as a tensor of `dtype` and `shape` through `from_vec`.
fn from_vec_as(dtype: ScalarType, data: &[f64], shape: &[usize]) -> Result<Tensor> {
    fn make<T: morok::Element>(data: &[f64], shape: &[usize]) -> Result<Tensor> {
        Tensor::from_vec(
            data.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>(),
            shape,
        )
    }
    match dtype {
        ScalarType::Bool => make::<bool>(data, shape),
        ScalarType::I8 => make::<i8>(data, shape),
        ScalarType::U16 => make::<u16>(data, shape),
        ScalarType::I64 => make::<i64>(data, shape),
        ScalarType::F16 => make::<half::f16>(data, shape),
        ScalarType::F64 => make::<f64>(data, shape),
        _ => make::<f32>(data, shape),
    }
}

/// Reads `t` as elements of `dtype` (`to_ndarray` when `nd`).
fn read_as(t: &Tensor, dtype: ScalarType, nd: bool) -> Result<usize> {
    fn get<T: morok::Element>(t: &Tensor, nd: bool) -> Result<usize> {
        if nd {
            Ok(t.to_ndarray::<T>()?.len())
        } else {
            Ok(t.to_vec::<T>()?.len())
        }
    }
    if !small(t) {
        return Ok(0);
    }
    with_element!(dtype, T => get::<T>(t, nd))
}

/// Whether `t`'s graph is small enough to realize: few nodes, and no node
/// with more than [`REALIZE_LIMIT`] elements.
fn small(t: &Tensor) -> bool {
    if t.error().is_some() {
        return true;
    }
    let nodes = t.uop().toposort();
    nodes.len() <= REALIZE_NODES
        && nodes.iter().all(|n| match shape_of(n) {
            Ok(Some(s)) => s.iter().map(|&d| d as u128).product::<u128>() <= REALIZE_LIMIT,
            _ => true,
        })
}

thread_local! {
    /// Whether panics on this thread are being caught by [`guarded`].
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// The message and location of the last caught panic.
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Records panics of guarded code instead of printing them.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) {
                PANIC.with(|p| *p.borrow_mut() = Some(info.to_string()));
            } else {
                previous(info);
            }
        }));
    });
}

/// Every call of `hostile_calls_return_errors_and_never_panic` with the
/// optimizer off (`MOROK_NOOPT=1`: plain loops), in a child process.
#[test]
fn hostile_calls_never_panic_without_the_optimizer() {
    common::passes_without_optimizer(
        "hostile_calls_return_errors_and_never_panic",
        "no_panic:",
        &[],
    );
}

/// Runs `f`, turning a panic into its message.
fn guarded<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    CATCHING.with(|c| c.set(true));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    r.map_err(|_| {
        PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "a panic".into())
            .replace('\n', " ")
    })
}

/// What is wrong with the error `e` of a call that may name `ops`.
fn error_problem(e: &Error, ops: &[String]) -> Option<String> {
    let text = e.to_string();
    let loc = e.location();
    if !loc.file().ends_with("no_panic.rs") {
        return Some(format!("located at {loc}, not at the call: {text}"));
    }
    if !ops.iter().any(|o| o == e.op()) {
        return Some(format!(
            "names op `{}`, expected one of {ops:?}: {text}",
            e.op()
        ));
    }
    if !text.starts_with(&format!("{}: ", e.op())) || !text.ends_with(&format!(" at {loc}")) {
        return Some(format!("message lacks the op or location: {text}"));
    }
    None
}

#[test]
fn hostile_calls_return_errors_and_never_panic() {
    install_hook();
    let start = Instant::now();
    let mut gen = Gen {
        rng: Rng::new(SEED),
        carried: Vec::new(),
    };
    let mut problems = Vec::new();
    let (mut oks, mut errs, mut realized) = (0, 0, 0);
    for i in 0..CALLS + SURFACE_CALLS {
        let call = match guarded(|| {
            if i < CALLS {
                gen.call()
            } else {
                gen.surface_call()
            }
        }) {
            Ok(c) => c,
            Err(p) => {
                problems.push(format!("#{i}: building the operands panicked: {p}"));
                continue;
            }
        };
        let Call { text, ops, run } = call;
        match guarded(run) {
            Err(p) => problems.push(format!("#{i} {text}: PANIC {p}")),
            Ok(Err(e)) => {
                errs += 1;
                if let Some(p) = error_problem(&e, &ops) {
                    problems.push(format!("#{i} {text}: {p}"));
                }
            }
            Ok(Ok(tensors)) => {
                oks += 1;
                for t in &tensors {
                    if let Some(e) = t.error() {
                        problems.push(format!("#{i} {text}: Ok, but the result carries {e}"));
                        continue;
                    }
                    match guarded(|| small(t)) {
                        Err(p) => {
                            problems.push(format!("#{i} {text}: shape_of PANIC {p}"));
                            continue;
                        }
                        Ok(false) => continue,
                        Ok(true) => {}
                    }
                    match guarded(|| compiled(t)) {
                        Err(p) => problems.push(format!("#{i} {text}: realize PANIC {p}")),
                        Ok(Err(e)) => problems.push(format!("#{i} {text}: realize failed: {e}")),
                        Ok(Ok(v)) if v.len() != t.numel() => problems.push(format!(
                            "#{i} {text}: read {} values of {:?}",
                            v.len(),
                            t.shape()
                        )),
                        Ok(Ok(_)) => realized += 1,
                    }
                }
            }
        }
    }
    eprintln!(
        "no_panic: {} calls, {oks} Ok ({realized} tensors realized), {errs} Err, in {:.2?}",
        CALLS + SURFACE_CALLS,
        start.elapsed()
    );
    assert!(
        problems.is_empty(),
        "{} of {} calls failed:\n{}",
        problems.len(),
        CALLS + SURFACE_CALLS,
        problems.join("\n")
    );
    assert!(
        errs >= CALLS / 5 && realized >= CALLS / 10,
        "too few errors or realized results"
    );
}
