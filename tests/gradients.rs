//! Gradients of the `Tensor` API's differentiable ops, each checked three
//! ways on random f64 inputs: the gradient graph evaluated by the
//! reference evaluator against central finite differences of the forward
//! graph (also on the reference evaluator), and the compiled gradient
//! against the reference evaluator's.
//!
//! Each case differentiates `sum(f(x...) * r)` for fixed random weights
//! `r`, so every output element contributes with its own weight. Only the
//! float inputs are differentiated: integer indices, bool masks and
//! class labels are fixed tensors built inside the case.
//!
//! The families below (one `#[test]` each, a table of cases) cover every
//! differentiable public op of the `Tensor` API. Input domains keep each
//! function smooth at the sampled points: away from kinks (`relu` at 0,
//! clamp bounds), ties (of `max`, `sort`, pooling windows) and the
//! discontinuities of rounding, which random points miss. `special_points`
//! checks chosen points instead (0, overflowing exponentials, zero
//! factors of products) where the functions are smooth but their
//! decompositions have branches and quotients that must not leak a NaN
//! into the gradient.

mod common;

use common::Rng;
use morok::{
    AttentionOptions, ClassLossOptions, Conv1dOptions, Conv3dOptions, ConvOptions,
    ConvTranspose3dOptions, ConvTransposeOptions, DType, Error, Index, InterpolateMode,
    MeshIndexing, PadMode, Pads, Pool3dOptions, PoolOptions, Reduction, RoundingMode,
    ScatterReduce, Slice, Tensor,
};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Where an input's random values are drawn from.
#[derive(Clone, Copy)]
enum Dom {
    /// [-2, 2].
    Any,
    /// [0.3, 2.5].
    Pos,
    /// [-0.8, 0.8].
    Unit,
    /// [lo, hi].
    In(f64, f64),
    /// Exactly these values, in order (repeated): special points such as
    /// 0 or arguments where an exponential overflows.
    At(&'static [f64]),
}

impl Dom {
    /// The value of element `k`.
    fn sample(self, k: usize, rng: &mut Rng) -> f64 {
        match self {
            Dom::Any => rng.uniform(-2.0, 2.0),
            Dom::Pos => rng.uniform(0.3, 2.5),
            Dom::Unit => rng.uniform(-0.8, 0.8),
            Dom::In(lo, hi) => rng.uniform(lo, hi),
            Dom::At(values) => values[k % values.len()],
        }
    }
}

/// Probabilities away from 0 and 1.
const PROB: Dom = Dom::In(0.05, 0.95);

type Forward<'a> = &'a dyn Fn(&[Tensor]) -> Result<Tensor, Error>;

fn tensors(specs: &[(&[usize], Dom)], data: &[Vec<f64>]) -> Vec<Tensor> {
    specs
        .iter()
        .zip(data)
        .map(|((shape, _), d)| Tensor::from_vec(d.clone(), shape).unwrap())
        .collect()
}

fn flat(t: &Tensor) -> Vec<f64> {
    t.reference().unwrap().iter().copied().collect()
}

fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Checks the gradients of `f` with respect to every input.
fn check(name: &str, specs: &[(&[usize], Dom)], f: Forward<'_>) {
    let mut rng = Rng::new(seed_of(name));
    let data: Vec<Vec<f64>> = specs
        .iter()
        .map(|(shape, dom)| {
            (0..shape.iter().product::<usize>())
                .map(|k| dom.sample(k, &mut rng))
                .collect()
        })
        .collect();
    let xs = tensors(specs, &data);
    let y = f(&xs).unwrap_or_else(|e| panic!("{name}: {e}"));
    let weights: Vec<f64> = (0..y.numel()).map(|_| rng.uniform(0.5, 1.5)).collect();
    let r = Tensor::from_vec(weights, y.shape()).unwrap();
    let loss_of = |xs: &[Tensor]| f(xs).unwrap().mul(&r).unwrap().sum(None, false).unwrap();
    let loss = loss_of(&xs);
    let refs: Vec<&Tensor> = xs.iter().collect();
    let grads = loss
        .gradient(&refs)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let runs = Tensor::realize_all(&grads.iter().collect::<Vec<_>>())
        .unwrap_or_else(|e| panic!("{name}: realize: {e}"));
    for (i, g) in grads.iter().enumerate() {
        assert_eq!(g.shape(), specs[i].0, "{name}: shape of gradient {i}");
        let analytic = flat(g);
        let run = runs[i].to_vec::<f64>().unwrap();
        for (j, (&a, &b)) in analytic.iter().zip(&run).enumerate() {
            assert!(
                (a - b).abs() <= 1e-9 * (1.0 + a.abs()),
                "{name}: input {i} element {j}: compiled {b} but reference {a}"
            );
        }
        for (j, &a) in analytic.iter().enumerate() {
            let x = data[i][j];
            let eps = 1e-6 * (1.0 + x.abs());
            let at = |v: f64| {
                let mut d = data.clone();
                d[i][j] = v;
                flat(&loss_of(&tensors(specs, &d)))[0]
            };
            let fd = (at(x + eps) - at(x - eps)) / (2.0 * eps);
            assert!(
                (a - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                "{name}: input {i} element {j} (x = {x}): gradient {a} but finite difference {fd}"
            );
        }
    }
}

/// One case of a family: a name, the inputs' shapes and domains, and the
/// function whose gradients are checked.
type Case<'a> = (&'a str, &'a [(&'a [usize], Dom)], Forward<'a>);

/// Checks every case of a family and reports all that fail at once.
fn check_all(family: &str, cases: &[Case<'_>]) {
    let mut failed = Vec::new();
    for &(name, specs, f) in cases {
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| check(name, specs, f))) {
            let why = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            // The checks' messages start with the case's name already.
            failed.push(if why.starts_with(name) {
                why
            } else {
                format!("{name}: {why}")
            });
        }
    }
    assert!(
        failed.is_empty(),
        "{family}: {} of {} cases failed:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n")
    );
}

/// A fixed `i64` tensor (indices, labels).
fn ints(values: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape).unwrap()
}

/// A fixed bool tensor from 0s and 1s.
fn mask(values: &[u8], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.iter().map(|&v| v != 0).collect(), shape).unwrap()
}

macro_rules! unary_cases {
    ($($name:ident: $dom:expr => $body:expr;)*) => {$(
        #[test]
        fn $name() {
            let f: Forward<'_> = &|x: &[Tensor]| $body(&x[0]);
            check(stringify!($name), &[(&[3, 5], $dom)], f);
        }
    )*};
}

unary_cases! {
    exp: Dom::Any => |x: &Tensor| x.exp();
    exp2: Dom::Any => |x: &Tensor| x.exp2();
    log: Dom::Pos => |x: &Tensor| x.log();
    log2: Dom::Pos => |x: &Tensor| x.log2();
    sqrt: Dom::Pos => |x: &Tensor| x.sqrt();
    rsqrt: Dom::Pos => |x: &Tensor| x.rsqrt();
    reciprocal: Dom::Pos => |x: &Tensor| x.reciprocal();
    sin: Dom::Any => |x: &Tensor| x.sin();
    cos: Dom::Any => |x: &Tensor| x.cos();
    tan: Dom::Unit => |x: &Tensor| x.tan();
    tanh: Dom::Any => |x: &Tensor| x.tanh();
    erf: Dom::Any => |x: &Tensor| x.erf();
    abs: Dom::Any => |x: &Tensor| x.abs();
    neg: Dom::Any => |x: &Tensor| x.neg();
    relu: Dom::Any => |x: &Tensor| x.relu();
    sigmoid: Dom::Any => |x: &Tensor| x.sigmoid();
    gelu: Dom::Any => |x: &Tensor| x.gelu();
    silu: Dom::Any => |x: &Tensor| x.silu();
    square_by_mul: Dom::Any => |x: &Tensor| x.mul(x);
    pow_const: Dom::Pos => |x: &Tensor| x.pow(2.5);
    const_pow: Dom::Any => |x: &Tensor| Tensor::full(&[3, 5], 1.7f64).pow(x);
    softmax: Dom::Any => |x: &Tensor| x.softmax(-1);
    log_softmax: Dom::Any => |x: &Tensor| x.log_softmax(0);
    sum_axis: Dom::Any => |x: &Tensor| x.sum(Some(&[1]), false);
    sum_keepdim_neg: Dom::Any => |x: &Tensor| x.sum(Some(&[-2]), true);
    prod_axis: Dom::Pos => |x: &Tensor| x.prod(Some(&[1]), false);
    max_axis: Dom::Any => |x: &Tensor| x.max(Some(&[1]), false);
    min_all: Dom::Any => |x: &Tensor| x.min(None, false);
    mean_axis: Dom::Any => |x: &Tensor| x.mean(Some(&[0]), true);
    var_axis: Dom::Any => |x: &Tensor| x.var(Some(&[1]), 1, false);
    std_axis: Dom::Any => |x: &Tensor| x.std(Some(&[1]), 1, false);
    logsumexp: Dom::Any => |x: &Tensor| x.logsumexp(Some(&[1]), false);
    cumsum: Dom::Any => |x: &Tensor| x.cumsum(1);
    transpose: Dom::Any => |x: &Tensor| x.transpose(0, 1)?.exp();
    reshape: Dom::Any => |x: &Tensor| x.reshape(&[5, 3])?.softmax(0);
    expand: Dom::Any => |x: &Tensor| x.unsqueeze(0)?.expand(&[2, 3, 5])?.mul(&Tensor::arange(0, 2, 1)?.cast(DType::F64)?.reshape(&[2, 1, 1])?);
    pad: Dom::Any => |x: &Tensor| x.pad(&[(1, 2), (0, 1)], 0.5f64);
    shrink: Dom::Any => |x: &Tensor| x.shrink(&[(1, 3), (2, 5)]);
    flip: Dom::Any => |x: &Tensor| x.flip(&[1])?.mul(&Tensor::arange(0, 5, 1)?.cast(DType::F64)?);
    repeat: Dom::Any => |x: &Tensor| x.repeat(&[2, 1]);
}

#[test]
fn binary_ops() {
    let cases: &[(&str, Dom, Dom, Forward<'_>)] = &[
        ("add_broadcast", Dom::Any, Dom::Any, &|x| x[0].add(&x[1])),
        ("sub_broadcast", Dom::Any, Dom::Any, &|x| x[0].sub(&x[1])),
        ("mul_broadcast", Dom::Any, Dom::Any, &|x| x[0].mul(&x[1])),
        ("div_broadcast", Dom::Any, Dom::Pos, &|x| x[0].div(&x[1])),
        ("pow_both", Dom::Pos, Dom::Any, &|x| x[0].pow(&x[1])),
        ("maximum", Dom::Any, Dom::Any, &|x| x[0].maximum(&x[1])),
        ("minimum", Dom::Any, Dom::Any, &|x| x[0].minimum(&x[1])),
        ("where", Dom::Any, Dom::Any, &|x| {
            x[0].gt(0.0)?.where_(&x[0], &x[1])
        }),
        ("matmul", Dom::Any, Dom::Any, &|x| {
            x[0].matmul(&x[1].reshape(&[5, 1])?.expand(&[5, 3])?)
        }),
    ];
    for (name, da, db, f) in cases {
        check(name, &[(&[3, 5], *da), (&[5], *db)], *f);
    }
}

#[test]
fn matmul_mlp() {
    let f: Forward<'_> = &|x| {
        x[0].matmul(&x[1])?
            .add(&x[2])?
            .tanh()?
            .matmul(&x[3])?
            .log_softmax(-1)
    };
    check(
        "mlp",
        &[
            (&[4, 3], Dom::Any),
            (&[3, 7], Dom::Unit),
            (&[7], Dom::Unit),
            (&[7, 2], Dom::Unit),
        ],
        f,
    );
}

#[test]
fn activations() {
    let wide = Dom::In(-4.0, 4.0);
    check_all(
        "activations",
        &[
            ("leaky_relu", &[(&[3, 7], Dom::Any)], &|x| {
                x[0].leaky_relu(0.1)
            }),
            ("elu", &[(&[3, 7], Dom::Any)], &|x| x[0].elu(1.3)),
            ("selu", &[(&[3, 7], Dom::Any)], &|x| x[0].selu()),
            ("celu", &[(&[3, 7], Dom::Any)], &|x| x[0].celu(0.7)),
            ("softplus", &[(&[3, 7], Dom::Any)], &|x| {
                x[0].softplus(1.0, 20.0)
            }),
            // beta·x above the threshold (x > 0.75) is the identity.
            ("softplus_threshold", &[(&[3, 7], Dom::Any)], &|x| {
                x[0].softplus(2.0, 1.5)
            }),
            ("softsign", &[(&[3, 7], Dom::Any)], &|x| x[0].softsign()),
            ("hardsigmoid", &[(&[3, 7], wide)], &|x| x[0].hardsigmoid()),
            ("hardswish", &[(&[3, 7], wide)], &|x| x[0].hardswish()),
            ("hardtanh", &[(&[3, 7], Dom::Any)], &|x| {
                x[0].hardtanh(-0.5, 1.2)
            }),
            ("relu6", &[(&[3, 7], Dom::In(-2.0, 8.0))], &|x| x[0].relu6()),
            ("mish", &[(&[3, 7], Dom::Any)], &|x| x[0].mish()),
            ("logsigmoid", &[(&[3, 7], wide)], &|x| x[0].logsigmoid()),
            ("quick_gelu", &[(&[3, 7], Dom::Any)], &|x| x[0].quick_gelu()),
            ("gelu_tanh", &[(&[3, 7], Dom::Any)], &|x| x[0].gelu_tanh()),
            ("softmin_last", &[(&[3, 7], Dom::Any)], &|x| {
                x[0].softmin(-1)
            }),
            ("softmin_first", &[(&[3, 7], Dom::Any)], &|x| {
                x[0].softmin(0)
            }),
            ("relu_3d", &[(&[3, 1, 5], Dom::Any)], &|x| {
                x[0].relu()?.mul(&x[0])
            }),
        ],
    );
}

#[test]
fn math_unary() {
    check_all(
        "math_unary",
        &[
            ("sinh", &[(&[3, 5], Dom::Any)], &|x| x[0].sinh()),
            ("cosh", &[(&[3, 5], Dom::Any)], &|x| x[0].cosh()),
            ("asinh", &[(&[3, 5], Dom::In(-3.0, 3.0))], &|x| x[0].asinh()),
            ("acosh", &[(&[3, 5], Dom::In(1.2, 3.5))], &|x| x[0].acosh()),
            ("atanh", &[(&[3, 5], Dom::Unit)], &|x| x[0].atanh()),
            ("asin", &[(&[3, 5], Dom::Unit)], &|x| x[0].asin()),
            ("acos", &[(&[3, 5], Dom::Unit)], &|x| x[0].acos()),
            // Every branch of the argument reduction: |x| > 1, > √2 - 1.
            ("atan", &[(&[3, 5], Dom::In(-4.0, 4.0))], &|x| x[0].atan()),
            ("log10", &[(&[3, 5], Dom::Pos)], &|x| x[0].log10()),
            ("log1p", &[(&[3, 5], Dom::In(-0.7, 3.0))], &|x| x[0].log1p()),
            ("expm1", &[(&[3, 5], Dom::Any)], &|x| x[0].expm1()),
            ("pow_int_negative_base", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].pow(3.0)
            }),
            ("square_by_pow", &[(&[3, 5], Dom::Any)], &|x| x[0].pow(2.0)),
            // Rounding and sign are piecewise constant: only the factors
            // they multiply carry a gradient.
            ("rounding", &[(&[3, 5], Dom::In(-3.0, 3.0))], &|x| {
                let x = &x[0];
                x.floor()?
                    .mul(x)?
                    .add(&x.ceil()?.mul(&x.exp()?)?)?
                    .add(&x.round()?.mul(&x.sin()?)?)?
                    .add(&x.trunc()?.add(x)?)?
                    .add(&x.sign()?.mul(&x.mul(x)?)?)
            }),
        ],
    );
}

#[test]
fn math_binary() {
    let away = Dom::In(0.6, 1.7);
    let away_neg = Dom::In(-1.7, -0.6);
    check_all(
        "math_binary",
        &[
            ("atan2", &[(&[3, 5], Dom::Any), (&[5], Dom::Any)], &|x| {
                x[0].atan2(&x[1])
            }),
            ("copysign", &[(&[3, 5], Dom::Any), (&[5], Dom::Any)], &|x| {
                x[0].copysign(&x[1])
            }),
            ("fmod", &[(&[3, 5], Dom::Any), (&[5], away)], &|x| {
                x[0].fmod(&x[1])
            }),
            (
                "fmod_negative",
                &[(&[3, 5], Dom::Any), (&[3, 1], away_neg)],
                &|x| x[0].fmod(&x[1]),
            ),
            ("fmod_scalar", &[(&[3, 5], Dom::Any)], &|x| x[0].fmod(0.7)),
            ("remainder", &[(&[3, 5], Dom::Any), (&[5], away)], &|x| {
                x[0].remainder(&x[1])
            }),
            (
                "remainder_negative",
                &[(&[3, 5], Dom::Any), (&[5], away_neg)],
                &|x| x[0].remainder(&x[1]),
            ),
            ("remainder_scalar", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].remainder(-0.9)
            }),
            (
                "div_mode_true",
                &[(&[3, 5], Dom::Any), (&[5], away)],
                &|x| x[0].div_mode(&x[1], RoundingMode::None),
            ),
            // The rounded quotients are piecewise constant.
            (
                "div_mode_rounded",
                &[(&[3, 5], Dom::Any), (&[5], away)],
                &|x| {
                    let t = x[0].div_mode(&x[1], RoundingMode::Trunc)?;
                    let f = x[0].div_mode(&x[1], RoundingMode::Floor)?;
                    t.mul(&x[0])?
                        .add(&f.mul(&x[1])?)?
                        .add(&x[0].floor_div(&x[1])?)
                },
            ),
            ("scalar_over_tensor", &[(&[3, 5], Dom::Pos)], &|x| {
                Tensor::full(&[5], 2.0f64).div(&x[0])
            }),
            (
                "lerp",
                &[(&[3, 5], Dom::Any), (&[3, 5], Dom::Any), (&[5], Dom::Any)],
                &|x| x[0].lerp(&x[1], &x[2]),
            ),
            (
                "lerp_scalar",
                &[(&[3, 5], Dom::Any), (&[5], Dom::Any)],
                &|x| x[0].lerp(&x[1], 0.3),
            ),
            (
                "logaddexp",
                &[(&[3, 5], Dom::Any), (&[5], Dom::Any)],
                &|x| x[0].logaddexp(&x[1]),
            ),
            ("logaddexp_scalar", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].logaddexp(0.5)
            }),
            ("clamp", &[(&[3, 5], Dom::Any)], &|x| x[0].clamp(-0.5, 0.8)),
            (
                "clamp_tensors",
                &[
                    (&[3, 5], Dom::Any),
                    (&[5], Dom::In(-1.5, -0.2)),
                    (&[3, 1], Dom::In(0.2, 1.5)),
                ],
                &|x| x[0].clamp(&x[1], &x[2]),
            ),
            (
                "where_broadcast",
                &[(&[3, 5], Dom::Any), (&[5], Dom::Any)],
                &|x| mask(&[1, 0, 1], &[3, 1]).where_(&x[0], &x[1]),
            ),
            ("where_scalar", &[(&[3, 5], Dom::Any)], &|x| {
                mask(&[0, 1, 1, 0, 1], &[5]).where_(0.25, &x[0].exp()?)
            }),
            ("maximum_scalar", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].maximum(0.3)
            }),
            ("minimum_scalar", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].minimum(-0.2)
            }),
            (
                "operators",
                &[(&[3, 5], Dom::Any), (&[5], Dom::Pos)],
                &|x| Ok(&(&(&x[0] * &x[1]) - &-&x[0]) / &(&x[1] + &x[0].abs()?)),
            ),
        ],
    );
}

#[test]
fn reductions() {
    check_all(
        "reductions",
        &[
            ("prod_all", &[(&[3, 5], Dom::Pos)], &|x| {
                x[0].prod(None, false)
            }),
            ("prod_keepdim_neg", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].prod(Some(&[-1, 0]), true)
            }),
            ("prod_dtype", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].prod_dtype(Some(&[0]), false, DType::F64)
            }),
            ("sum_dtype", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].sum_dtype(Some(&[-1]), true, DType::F64)?.exp()
            }),
            ("sum_all_keepdim", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].sum(None, true)?.sin()
            }),
            ("mean_axes_neg", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].mean(Some(&[-1, -3]), false)?.exp()
            }),
            ("max_keepdim_neg", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].max(Some(&[-1]), true)
            }),
            ("min_axes", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].min(Some(&[0, 2]), false)
            }),
            ("max_all", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].max(None, false)
            }),
            ("cumprod_last", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].cumprod(-1)
            }),
            ("cumprod_first", &[(&[4, 3], Dom::Any)], &|x| {
                x[0].cumprod(0)
            }),
            ("cummax", &[(&[3, 7], Dom::Any)], &|x| {
                Ok(x[0].cummax(-1)?.0)
            }),
            ("cummin", &[(&[5, 3], Dom::Any)], &|x| Ok(x[0].cummin(0)?.0)),
            ("var_keepdim_neg", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].var(Some(&[-1]), 1, true)
            }),
            ("var_axes_population", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].var(Some(&[0, -1]), 0, false)
            }),
            ("var_all", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].var(None, 1, false)
            }),
            ("std_keepdim_neg", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].std(Some(&[-2]), 1, true)
            }),
            ("std_all_population", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].std(None, 0, false)
            }),
            ("logsumexp_keepdim_neg", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].logsumexp(Some(&[-2]), true)
            }),
            ("logsumexp_all", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].logsumexp(None, false)
            }),
        ],
    );
}

/// Running sums along every axis. Their backward reads the output's
/// gradient through the forward's padded, overlapping windows: a gated
/// load whose gate holds where a window position `y` (linear in the loop
/// counters) is in its window, `y % 2n < n`. For `cumsum(0)` of a `[3, 5]`
/// input the gate is `y % 6 < 3` with `y = w + 5r + 2` (`w` the output
/// row, `r` the window counter), and the index, built from
/// `q = 18·c + y` (`c` the column) as `5·(v % 3) + v // 3` with
/// `v = 3·(q // 18) + q % 6`, was simplified without the gate into
/// `(w + 2r + 2) % 3` and `(r + (w + 2r + 2) // 3) % 2` terms, which the
/// access bounds cannot relate
/// to the gate: the CPU backend refused the kernel (`buffer 1 has 15
/// elements, the kernel may access elements 0..=15`), and the same for
/// the padded gradient kernel of `logcumsumexp` along any axis. Indices
/// of gated accesses are now simplified with every node their gate
/// compares with a constant narrowed (`schedule::rangeify::gated_index`):
/// the index is `5·(y % 6) + …`, which the gate bounds. (The cases along
/// a middle axis compiled before too.)
#[test]
fn running_sums() {
    check_all(
        "running_sums",
        &[
            ("cumsum_first", &[(&[3, 5], Dom::Any)], &|x| x[0].cumsum(-2)),
            ("cumsum_middle", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].cumsum(1)
            }),
            ("cumsum_first_long", &[(&[9, 4], Dom::Any)], &|x| {
                x[0].cumsum(0)
            }),
            ("logcumsumexp_last", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].logcumsumexp(-1)
            }),
            ("logcumsumexp_first", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].logcumsumexp(0)
            }),
            ("logcumsumexp_middle", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].logcumsumexp(1)
            }),
        ],
    );
}

#[test]
fn movement() {
    check_all(
        "movement",
        &[
            ("permute", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].permute(&[2, 0, 1])
            }),
            ("permute_neg", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].permute(&[-1, 0, -2])?.exp()
            }),
            ("transpose_neg", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].transpose(-1, -3)
            }),
            ("squeeze", &[(&[3, 1, 5], Dom::Any)], &|x| x[0].squeeze(1)),
            ("squeeze_neg", &[(&[3, 1, 5], Dom::Any)], &|x| {
                x[0].squeeze(-2)?.softmax(-1)
            }),
            ("unsqueeze_neg", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].unsqueeze(-1)?.expand(&[3, 5, 2])
            }),
            ("unsqueeze_first", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].unsqueeze(0)?.log_softmax(-1)
            }),
            ("flatten_all", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].flatten(0, -1)?.softmax(0)
            }),
            ("flatten_tail", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].flatten(-2, -1)?.softmax(-1)
            }),
            ("broadcast_to", &[(&[3, 1], Dom::Any)], &|x| {
                x[0].broadcast_to(&[2, 3, 5])
            }),
            ("expand_keep", &[(&[1, 3, 1], Dom::Any)], &|x| {
                x[0].expand(&[2, -1, 5])?.exp()
            }),
            (
                "cat_last",
                &[
                    (&[3, 2], Dom::Any),
                    (&[3, 5], Dom::Any),
                    (&[3, 1], Dom::Any),
                ],
                &|x| Tensor::cat(&[&x[0], &x[1], &x[2]], -1)?.softmax(-1),
            ),
            (
                "cat_first",
                &[(&[2, 5], Dom::Any), (&[3, 5], Dom::Any)],
                &|x| Tensor::cat(&[&x[1], &x[0].exp()?], 0),
            ),
            (
                "stack_middle",
                &[(&[3, 5], Dom::Any), (&[3, 5], Dom::Any)],
                &|x| Tensor::stack(&[&x[0], &x[1]], 1)?.softmax(1),
            ),
            (
                "stack_neg",
                &[(&[3, 5], Dom::Any), (&[3, 5], Dom::Any)],
                &|x| Tensor::stack(&[&x[1], &x[0], &x[1]], -1),
            ),
            ("split", &[(&[3, 7], Dom::Any)], &|x| {
                let p = x[0].split(&[2, 4, 1], -1)?;
                Tensor::cat(&[&p[2], &p[0].exp()?, &p[1].mul(&p[1])?], 1)
            }),
            ("chunk", &[(&[7, 3], Dom::Any)], &|x| {
                let c = x[0].chunk(3, 0)?;
                assert_eq!(c.len(), 3);
                Tensor::cat(&[&c[1], &c[2].sin()?, &c[0]], 0)
            }),
            ("slice_steps", &[(&[5, 7], Dom::Any)], &|x| {
                x[0].slice(&[Slice::all().step(2), Slice::range(1, -1).step(3)])
            }),
            ("slice_negative_steps", &[(&[5, 7], Dom::Any)], &|x| {
                let back = Slice {
                    start: Some(-1),
                    end: None,
                    step: -2,
                };
                x[0].slice(&[back, Slice::all().step(-3)])?.exp()
            }),
            ("pad_negative", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].pad(&[(-1, 2), (1, -2)], 0.0f64)?.exp()
            }),
            ("pad_constant", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].pad_mode(&[(0, 1), (1, 2)], PadMode::Constant(0.5))?
                    .softmax(-1)
            }),
            ("pad_reflect", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].pad_mode(&[(1, 1), (2, 1)], PadMode::Reflect)
            }),
            ("pad_reflect_3d", &[(&[2, 3, 5], Dom::Any)], &|x| {
                x[0].pad_mode(&[(1, 0), (2, 0), (1, 3)], PadMode::Reflect)
            }),
            ("pad_replicate", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].pad_mode(&[(1, 0), (2, 3)], PadMode::Replicate)
            }),
            ("pad_circular", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].pad_mode(&[(1, 2), (2, 3)], PadMode::Circular)
            }),
            ("repeat_new_axis", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].repeat(&[2, 1, 3])
            }),
            ("flip_axes", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].flip(&[0, -1])?.softmax(-1)
            }),
            ("meshgrid_ij", &[(&[3], Dom::Any), (&[5], Dom::Any)], &|x| {
                let g = Tensor::meshgrid(&[&x[0], &x[1]], MeshIndexing::Ij)?;
                g[0].mul(&g[1].exp()?)
            }),
            ("meshgrid_xy", &[(&[3], Dom::Any), (&[5], Dom::Any)], &|x| {
                let g = Tensor::meshgrid(&[&x[0], &x[1]], MeshIndexing::Xy)?;
                g[0].sin()?.add(&g[1].mul(&g[0])?)
            }),
        ],
    );
}

#[test]
fn indexing() {
    let all = || Index::Slice(Slice::all());
    check_all(
        "indexing",
        &[
            ("index_int_slice", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].index(&[Index::Int(-1), Index::Slice(Slice::all().step(2))])
            }),
            ("index_new_axis_ellipsis", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].index(&[
                    Index::NewAxis,
                    Index::Ellipsis,
                    Index::Slice(Slice::range(1, 4).step(2)),
                ])
            }),
            // Repeated positions sum their gradients; -2 counts from the end.
            ("index_tensor", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].index(&[all(), Index::Tensor(ints(&[4, 0, 4, -2], &[4]))])
            }),
            ("index_tensors_broadcast", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].index(&[
                    Index::Tensor(ints(&[2, 0], &[2, 1])),
                    Index::Tensor(ints(&[1, 3, 1], &[3])),
                ])
            }),
            ("index_tensors_apart", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].index(&[
                    Index::Tensor(ints(&[0, 2, 2], &[3])),
                    all(),
                    Index::Tensor(ints(&[4, 1, -1], &[3])),
                ])
            }),
            ("index_tensor_middle", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].index(&[
                    all(),
                    Index::Tensor(ints(&[3, 0, 1, 3], &[2, 2])),
                    Index::Int(2),
                ])
            }),
            ("index_bool_mask", &[(&[3, 5], Dom::Any)], &|x| {
                let m = mask(&[1, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1], &[3, 5]);
                x[0].index(&[Index::Tensor(m)])
            }),
            ("index_select_last", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].index_select(-1, &ints(&[4, -1, 0, 2, 2], &[5]))
            }),
            ("index_select_first", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].index_select(0, &ints(&[2, 0, 2], &[3]))?.exp()
            }),
            ("gather_rows", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].gather(1, &ints(&[0, 4, 4, 1, 2, 2, 3, 0, 1, 1, 1, 4], &[3, 4]))
            }),
            ("gather_columns", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].gather(0, &ints(&[2, 0, 1, 1, 2, 0, 0, 2, 1, 2], &[2, 5]))
            }),
            ("gather_narrow", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].gather(-1, &ints(&[3, 3, 0, 1, 4, 2], &[2, 3]))
            }),
            ("masked_fill_row", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].masked_fill(&mask(&[0, 1, 0, 0, 1], &[1, 5]), 0.5)
            }),
            ("masked_fill_column", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].masked_fill(&mask(&[1, 0, 1], &[3, 1]), -1.5)?
                    .softmax(-1)
            }),
            ("masked_select", &[(&[3, 5], Dom::Any)], &|x| {
                let m = mask(&[0, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1], &[3, 5]);
                x[0].masked_select(&m)
            }),
            ("masked_select_broadcast", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].masked_select(&mask(&[1, 0, 0, 1, 1], &[5]))?.exp()
            }),
            ("tril", &[(&[3, 5], Dom::Any)], &|x| x[0].tril(0)),
            ("tril_below_batched", &[(&[2, 3, 5], Dom::Any)], &|x| {
                x[0].tril(-1)?.exp()
            }),
            ("triu_above", &[(&[3, 5], Dom::Any)], &|x| x[0].triu(1)),
            ("triu_below", &[(&[5, 3], Dom::Any)], &|x| {
                x[0].triu(-2)?.exp()
            }),
            ("diag_build", &[(&[5], Dom::Any)], &|x| {
                x[0].diag(0)?.softmax(-1)
            }),
            ("diag_build_below", &[(&[3], Dom::Any)], &|x| x[0].diag(-2)),
            ("diag_take_above", &[(&[3, 5], Dom::Any)], &|x| x[0].diag(1)),
            ("diag_take_below", &[(&[5, 3], Dom::Any)], &|x| {
                x[0].diag(-1)
            }),
            ("diagonal", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].diagonal(0, 0, 1)
            }),
            ("diagonal_neg_axes", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].diagonal(1, -1, -3)
            }),
            ("diagonal_below", &[(&[4, 3, 5], Dom::Any)], &|x| {
                x[0].diagonal(-1, 0, 2)
            }),
            ("roll", &[(&[3, 5], Dom::Any)], &|x| x[0].roll(&[2], &[-1])),
            ("roll_two_axes", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].roll(&[1, -2], &[0, 1])?.softmax(0)
            }),
            ("roll_flat", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].roll(&[4], &[])
            }),
            ("repeat_interleave_last", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].repeat_interleave(2, Some(-1))
            }),
            ("repeat_interleave_flat", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].repeat_interleave(3, None)
            }),
            ("repeat_interleave_counts", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].repeat_interleave_counts(&ints(&[2, 0, 1, 3, 1], &[5]), Some(1))
            }),
            ("unfold_step", &[(&[3, 7], Dom::Any)], &|x| {
                x[0].unfold(-1, 3, 2)
            }),
            ("unfold_overlap", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].unfold(0, 2, 1)?.exp()
            }),
        ],
    );
}

/// The scatter family: the gradient reaches both the input (where nothing
/// overwrites it) and the written values.
#[test]
fn scatter() {
    // Column 1 and 4 are written twice along axis 0.
    let cols = || ints(&[0, 2, 1, 2, 0, 2, 2, 0, 1, 0], &[2, 5]);
    // Rows written with repeats; 7 is out of range (dropped).
    let rows = || ints(&[0, 3, 3, 1, 4, 2, 4, 7, 1, 1, 1, 0], &[3, 4]);
    let both = |d: Dom| -> [(&'static [usize], Dom); 2] { [(&[3, 5], Dom::Any), (&[3, 4], d)] };
    let any2 = both(Dom::Any);
    let prod2 = both(Dom::In(0.5, 1.8));
    let reduce = |how: ScatterReduce, include: bool| {
        move |x: &[Tensor]| x[0].scatter_reduce(1, &rows(), &x[1], how, include)
    };
    let (sum_t, sum_f) = (
        reduce(ScatterReduce::Sum, true),
        reduce(ScatterReduce::Sum, false),
    );
    let (prod_t, prod_f) = (
        reduce(ScatterReduce::Prod, true),
        reduce(ScatterReduce::Prod, false),
    );
    let (mean_t, mean_f) = (
        reduce(ScatterReduce::Mean, true),
        reduce(ScatterReduce::Mean, false),
    );
    let (amax_t, amax_f) = (
        reduce(ScatterReduce::Amax, true),
        reduce(ScatterReduce::Amax, false),
    );
    let (amin_t, amin_f) = (
        reduce(ScatterReduce::Amin, true),
        reduce(ScatterReduce::Amin, false),
    );
    check_all(
        "scatter",
        &[
            // The last write along the axis wins.
            (
                "scatter_columns",
                &[(&[3, 5], Dom::Any), (&[3, 5], Dom::Any)],
                &|x| x[0].scatter(0, &cols(), &x[1]),
            ),
            ("scatter_rows", &any2, &|x| x[0].scatter(-1, &rows(), &x[1])),
            ("scatter_add_rows", &any2, &|x| {
                x[0].scatter_add(1, &rows(), &x[1])
            }),
            (
                "scatter_add_columns",
                &[(&[3, 5], Dom::Any), (&[2, 5], Dom::Any)],
                &|x| x[0].scatter_add(0, &cols(), &x[1])?.exp(),
            ),
            ("scatter_reduce_sum_self", &any2, &sum_t),
            ("scatter_reduce_sum", &any2, &sum_f),
            ("scatter_reduce_prod_self", &prod2, &prod_t),
            ("scatter_reduce_prod", &prod2, &prod_f),
            ("scatter_reduce_mean_self", &any2, &mean_t),
            ("scatter_reduce_mean", &any2, &mean_f),
            ("scatter_reduce_amax_self", &any2, &amax_t),
            ("scatter_reduce_amax", &any2, &amax_f),
            ("scatter_reduce_amin_self", &any2, &amin_t),
            ("scatter_reduce_amin", &any2, &amin_f),
            ("max_unpool1d", &[(&[2, 3, 8], Dom::Any)], &|x| {
                let o = PoolOptions::new((1, 3)).stride((1, 2)).padding((0, 1));
                let (v, i) = x[0].max_pool1d_with_indices(o)?;
                v.exp()?.max_unpool1d(&i, o, Some(9))
            }),
            ("max_unpool2d", &[(&[1, 2, 4, 6], Dom::Any)], &|x| {
                let o = PoolOptions::new((2, 2));
                let (v, i) = x[0].max_pool2d_with_indices(o)?;
                v.max_unpool2d(&i, o, None)
            }),
            ("max_unpool3d", &[(&[1, 1, 4, 4, 3], Dom::Any)], &|x| {
                let o = Pool3dOptions::new((2, 2, 3));
                let (v, i) = x[0].max_pool3d_with_indices(o)?;
                v.max_unpool3d(&i, o, None)
            }),
        ],
    );
}

#[test]
fn linalg() {
    let q = (&[1usize, 2, 3, 4][..], Dom::Any);
    let k = (&[1usize, 2, 5, 4][..], Dom::Any);
    let v = (&[1usize, 2, 5, 3][..], Dom::Any);
    // Every query row keeps at least one key.
    let keep = || mask(&[1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0], &[3, 5]);
    check_all(
        "linalg",
        &[
            ("dot_vectors", &[(&[5], Dom::Any), (&[5], Dom::Any)], &|x| {
                x[0].dot(&x[1])
            }),
            (
                "dot_matrices",
                &[(&[3, 5], Dom::Any), (&[5, 2], Dom::Any)],
                &|x| x[0].dot(&x[1]),
            ),
            (
                "matmul_vector_matrix",
                &[(&[5], Dom::Any), (&[5, 3], Dom::Any)],
                &|x| x[0].matmul(&x[1]),
            ),
            (
                "matmul_matrix_vector",
                &[(&[3, 5], Dom::Any), (&[5], Dom::Any)],
                &|x| x[0].matmul(&x[1]),
            ),
            (
                "matmul_batched_broadcast",
                &[(&[2, 1, 3, 4], Dom::Any), (&[5, 4, 2], Dom::Any)],
                &|x| x[0].matmul(&x[1]),
            ),
            (
                "linear_bias",
                &[(&[3, 5], Dom::Any), (&[4, 5], Dom::Any), (&[4], Dom::Any)],
                &|x| x[0].linear(&x[1], Some(&x[2])),
            ),
            (
                "linear_batched",
                &[(&[2, 3, 5], Dom::Any), (&[4, 5], Dom::Any)],
                &|x| x[0].linear(&x[1], None)?.tanh(),
            ),
            (
                "linear_vector_weight",
                &[(&[3, 5], Dom::Any), (&[5], Dom::Any)],
                &|x| x[0].linear(&x[1], None),
            ),
            (
                "einsum_matmul",
                &[(&[3, 5], Dom::Any), (&[5, 4], Dom::Any)],
                &|x| Tensor::einsum("ij,jk->ik", &[&x[0], &x[1]]),
            ),
            (
                "einsum_implicit",
                &[(&[3, 5], Dom::Any), (&[5, 4], Dom::Any)],
                &|x| Tensor::einsum("ij,jk", &[&x[0], &x[1]]),
            ),
            ("einsum_trace", &[(&[4, 4], Dom::Any)], &|x| {
                Tensor::einsum("ii", &[&x[0]])
            }),
            ("einsum_diagonal", &[(&[4, 4], Dom::Any)], &|x| {
                Tensor::einsum("ii->i", &[&x[0]])
            }),
            (
                "einsum_batched",
                &[(&[2, 3, 4], Dom::Any), (&[2, 4, 5], Dom::Any)],
                &|x| Tensor::einsum("bij,bjk->bik", &[&x[0], &x[1]]),
            ),
            (
                "einsum_ellipsis_transpose",
                &[(&[2, 3, 5], Dom::Any)],
                &|x| Tensor::einsum("...ij->...ji", &[&x[0]])?.softmax(-1),
            ),
            (
                "einsum_outer",
                &[(&[3], Dom::Any), (&[5], Dom::Any)],
                &|x| Tensor::einsum("i,j->ij", &[&x[0], &x[1]]),
            ),
            (
                "einsum_full_contraction",
                &[(&[3, 5], Dom::Any), (&[3, 5], Dom::Any)],
                &|x| Tensor::einsum("ij,ij->", &[&x[0], &x[1]]),
            ),
            (
                "einsum_three",
                &[(&[3, 4], Dom::Any), (&[4, 5], Dom::Any), (&[5], Dom::Any)],
                &|x| Tensor::einsum("ij,jk,k->i", &[&x[0], &x[1], &x[2]]),
            ),
            ("attention", &[q, k, v], &|x| {
                x[0].scaled_dot_product_attention(&x[1], &x[2], &AttentionOptions::default())
            }),
            ("attention_bool_mask", &[q, k, v], &|x| {
                let opts = AttentionOptions {
                    mask: Some(keep()),
                    ..Default::default()
                };
                x[0].scaled_dot_product_attention(&x[1], &x[2], &opts)
            }),
            (
                "attention_float_mask",
                &[q, k, v, (&[3, 5], Dom::Any)],
                &|x| {
                    let opts = AttentionOptions {
                        mask: Some(x[3].clone()),
                        ..Default::default()
                    };
                    x[0].scaled_dot_product_attention(&x[1], &x[2], &opts)
                },
            ),
            ("attention_causal", &[q, k, v], &|x| {
                let opts = AttentionOptions {
                    is_causal: true,
                    scale: Some(0.7),
                    ..Default::default()
                };
                x[0].scaled_dot_product_attention(&x[1], &x[2], &opts)
            }),
            ("attention_gqa", &[(&[1, 4, 3, 4], Dom::Any), k, v], &|x| {
                let opts = AttentionOptions {
                    enable_gqa: true,
                    mask: Some(keep()),
                    ..Default::default()
                };
                x[0].scaled_dot_product_attention(&x[1], &x[2], &opts)
            }),
            ("attention_dropout", &[q, k, v], &|x| {
                let opts = AttentionOptions {
                    dropout_p: 0.3,
                    dropout_seed: 7,
                    ..Default::default()
                };
                x[0].scaled_dot_product_attention(&x[1], &x[2], &opts)
            }),
        ],
    );
}

#[test]
fn convolutions() {
    check_all(
        "convolutions",
        &[
            (
                "conv1d",
                &[(&[1, 3, 7], Dom::Any), (&[2, 3, 3], Dom::Any)],
                &|x| x[0].conv1d(&x[1], None, Conv1dOptions::default()),
            ),
            (
                "conv1d_strided_grouped",
                &[
                    (&[2, 4, 7], Dom::Any),
                    (&[6, 2, 3], Dom::Any),
                    (&[6], Dom::Any),
                ],
                &|x| {
                    let opts = Conv1dOptions {
                        stride: 2,
                        padding: Pads::same(1),
                        dilation: 2,
                        groups: 2,
                    };
                    x[0].conv1d(&x[1], Some(&x[2]), opts)
                },
            ),
            (
                "conv2d",
                &[
                    (&[1, 2, 5, 6], Dom::Any),
                    (&[3, 2, 3, 2], Dom::Any),
                    (&[3], Dom::Any),
                ],
                &|x| {
                    let opts = ConvOptions {
                        stride: (2, 1),
                        padding: (1, 0).into(),
                        dilation: (1, 2),
                        groups: 1,
                    };
                    x[0].conv2d(&x[1], Some(&x[2]), opts)
                },
            ),
            (
                "conv2d_grouped",
                &[(&[1, 4, 5, 5], Dom::Any), (&[4, 2, 3, 3], Dom::Any)],
                &|x| {
                    let opts = ConvOptions {
                        groups: 2,
                        padding: (1, 1).into(),
                        ..Default::default()
                    };
                    x[0].conv2d(&x[1], None, opts)
                },
            ),
            (
                "conv3d",
                &[
                    (&[1, 2, 4, 5, 3], Dom::Any),
                    (&[2, 1, 2, 3, 2], Dom::Any),
                    (&[2], Dom::Any),
                ],
                &|x| {
                    let opts = Conv3dOptions {
                        stride: (1, 2, 1),
                        padding: (1, 0, 1).into(),
                        dilation: (2, 1, 1),
                        groups: 2,
                    };
                    x[0].conv3d(&x[1], Some(&x[2]), opts)
                },
            ),
            (
                "conv_transpose1d",
                &[
                    (&[1, 4, 5], Dom::Any),
                    (&[4, 3, 3], Dom::Any),
                    (&[6], Dom::Any),
                ],
                &|x| {
                    let opts = ConvTransposeOptions {
                        stride: (1, 2),
                        padding: (0, 1).into(),
                        output_padding: (0, 1),
                        groups: 2,
                        ..Default::default()
                    };
                    x[0].conv_transpose1d(&x[1], Some(&x[2]), opts)
                },
            ),
            (
                "conv_transpose2d",
                &[
                    (&[1, 2, 3, 4], Dom::Any),
                    (&[2, 3, 3, 2], Dom::Any),
                    (&[3], Dom::Any),
                ],
                &|x| {
                    let opts = ConvTransposeOptions {
                        stride: (2, 3),
                        padding: (1, 0).into(),
                        output_padding: (1, 2),
                        dilation: (2, 1),
                        groups: 1,
                    };
                    x[0].conv_transpose2d(&x[1], Some(&x[2]), opts)
                },
            ),
            (
                "conv_transpose3d",
                &[
                    (&[1, 2, 3, 2, 3], Dom::Any),
                    (&[2, 2, 2, 2, 2], Dom::Any),
                    (&[2], Dom::Any),
                ],
                &|x| {
                    let opts = ConvTranspose3dOptions {
                        stride: (2, 1, 2),
                        padding: (0, 1, 1).into(),
                        output_padding: (1, 0, 1),
                        dilation: (1, 2, 1),
                        groups: 1,
                    };
                    x[0].conv_transpose3d(&x[1], Some(&x[2]), opts)
                },
            ),
        ],
    );
}

#[test]
fn pooling() {
    let p1 = PoolOptions::new((1, 3)).stride((1, 2)).padding((0, 1));
    let p2 = PoolOptions::new((3, 2))
        .stride((2, 2))
        .padding((1, 1))
        .dilation((1, 2));
    let p3 = Pool3dOptions::new((2, 3, 2))
        .stride((2, 2, 1))
        .padding((1, 1, 0));
    check_all(
        "pooling",
        &[
            ("max_pool1d", &[(&[2, 3, 9], Dom::Any)], &|x| {
                x[0].max_pool1d(p1)
            }),
            ("max_pool1d_ceil", &[(&[2, 3, 8], Dom::Any)], &|x| {
                x[0].max_pool1d(p1.ceil_mode(true))
            }),
            ("max_pool2d", &[(&[1, 2, 5, 7], Dom::Any)], &|x| {
                x[0].max_pool2d(p2)
            }),
            (
                "max_pool2d_with_indices",
                &[(&[1, 2, 5, 7], Dom::Any)],
                &|x| Ok(x[0].max_pool2d_with_indices(PoolOptions::new((2, 3)))?.0),
            ),
            ("max_pool3d", &[(&[1, 2, 4, 5, 5], Dom::Any)], &|x| {
                x[0].max_pool3d(p3)
            }),
            ("avg_pool1d", &[(&[2, 3, 9], Dom::Any)], &|x| {
                x[0].avg_pool1d(p1)
            }),
            (
                "avg_pool1d_ceil_exclude_pad",
                &[(&[2, 3, 8], Dom::Any)],
                &|x| x[0].avg_pool1d(p1.ceil_mode(true).count_include_pad(false)),
            ),
            ("avg_pool2d", &[(&[1, 2, 5, 7], Dom::Any)], &|x| {
                x[0].avg_pool2d(PoolOptions::new((3, 3)).stride((2, 2)).padding((1, 1)))
            }),
            ("avg_pool2d_divisor", &[(&[1, 2, 5, 7], Dom::Any)], &|x| {
                x[0].avg_pool2d(PoolOptions::new((2, 3)).divisor_override(4))
            }),
            ("avg_pool3d", &[(&[1, 2, 4, 5, 5], Dom::Any)], &|x| {
                x[0].avg_pool3d(p3.count_include_pad(false))
            }),
        ],
    );
}

#[test]
fn interpolation() {
    use InterpolateMode::{Bilinear, Linear, Nearest, NearestExact, Trilinear};
    check_all(
        "interpolation",
        &[
            ("nearest", &[(&[1, 2, 5], Dom::Any)], &|x| {
                x[0].interpolate(&[7], Nearest, false)
            }),
            ("nearest_down", &[(&[1, 2, 7], Dom::Any)], &|x| {
                x[0].interpolate(&[3], Nearest, false)
            }),
            ("nearest_exact", &[(&[1, 2, 3, 4], Dom::Any)], &|x| {
                x[0].interpolate(&[5, 7], NearestExact, false)
            }),
            ("linear", &[(&[1, 2, 5], Dom::Any)], &|x| {
                x[0].interpolate(&[8], Linear, false)
            }),
            ("linear_align_corners", &[(&[1, 2, 5], Dom::Any)], &|x| {
                x[0].interpolate(&[3], Linear, true)
            }),
            ("bilinear", &[(&[1, 2, 3, 4], Dom::Any)], &|x| {
                x[0].interpolate(&[5, 3], Bilinear, false)
            }),
            (
                "bilinear_align_corners",
                &[(&[1, 2, 3, 4], Dom::Any)],
                &|x| x[0].interpolate(&[4, 7], Bilinear, true),
            ),
            ("trilinear", &[(&[1, 1, 2, 3, 4], Dom::Any)], &|x| {
                x[0].interpolate(&[3, 4, 5], Trilinear, false)
            }),
            ("linear_scale", &[(&[1, 2, 5], Dom::Any)], &|x| {
                x[0].interpolate_scale(&[2.5], Linear, false)
            }),
            ("nearest_scale", &[(&[1, 2, 3, 4], Dom::Any)], &|x| {
                x[0].interpolate_scale(&[2.0, 1.5], Nearest, false)
            }),
        ],
    );
}

#[test]
fn normalization() {
    check_all(
        "normalization",
        &[
            (
                "layernorm_affine",
                &[(&[3, 5], Dom::Any), (&[5], Dom::Any), (&[5], Dom::Any)],
                &|x| x[0].layernorm(&[-1], Some(&x[1]), Some(&x[2]), 1e-5),
            ),
            ("layernorm_two_axes", &[(&[2, 3, 5], Dom::Any)], &|x| {
                x[0].layernorm(&[-2, -1], None, None, 1e-5)
            }),
            (
                "layernorm_first_axis",
                &[(&[3, 5], Dom::Any), (&[3, 1], Dom::Any)],
                &|x| x[0].layernorm(&[0], Some(&x[1]), None, 1e-3),
            ),
            ("normalize_l2", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].normalize(2.0, -1, 1e-12)
            }),
            ("normalize_l1", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].normalize(1.0, 0, 1e-12)
            }),
            ("normalize_l3", &[(&[3, 5], Dom::Any)], &|x| {
                x[0].normalize(3.0, 1, 1e-12)
            }),
            ("softmax_middle", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].softmax(-2)
            }),
            ("log_softmax_middle", &[(&[3, 4, 5], Dom::Any)], &|x| {
                x[0].log_softmax(1)
            }),
        ],
    );
}

#[test]
fn losses() {
    use Reduction::{Mean, None as Each, Sum};
    let pair = [(&[3usize, 5][..], Dom::Any), (&[3usize, 5][..], Dom::Any)];
    let probs = [
        (&[3usize, 5][..], PROB),
        (&[3usize, 5][..], Dom::In(0.0, 1.0)),
    ];
    let logits = [
        (&[3usize, 5][..], Dom::Any),
        (&[3usize, 5][..], Dom::In(0.0, 1.0)),
    ];
    let labels = || ints(&[2, 0, 1, 2], &[4]);
    let class_opts =
        |w: Option<&Tensor>, ignore: Option<i64>, smooth: f64, r: Reduction| ClassLossOptions {
            weight: w.cloned(),
            ignore_index: ignore,
            label_smoothing: smooth,
            reduction: r,
        };
    check_all(
        "losses",
        &[
            ("mse_mean", &pair, &|x| x[0].mse_loss(&x[1], Mean)),
            ("mse_sum", &pair, &|x| x[0].mse_loss(&x[1], Sum)),
            ("mse_none", &pair, &|x| x[0].mse_loss(&x[1], Each)),
            ("l1_mean", &pair, &|x| x[0].l1_loss(&x[1], Mean)),
            ("l1_none", &pair, &|x| x[0].l1_loss(&x[1], Each)),
            // |d| up to 4: both the quadratic and the linear part.
            ("smooth_l1_mean", &pair, &|x| {
                x[0].smooth_l1_loss(&x[1], Mean, 1.0)
            }),
            ("smooth_l1_none", &pair, &|x| {
                x[0].smooth_l1_loss(&x[1], Each, 0.5)
            }),
            ("smooth_l1_beta0", &pair, &|x| {
                x[0].smooth_l1_loss(&x[1], Sum, 0.0)
            }),
            ("bce_mean", &probs, &|x| {
                x[0].binary_cross_entropy(&x[1], None, Mean)
            }),
            ("bce_none", &probs, &|x| {
                x[0].binary_cross_entropy(&x[1], None, Each)
            }),
            (
                "bce_weight",
                &[probs[0], probs[1], (&[5], Dom::Pos)],
                &|x| x[0].binary_cross_entropy(&x[1], Some(&x[2]), Sum),
            ),
            ("bce_logits_mean", &logits, &|x| {
                x[0].binary_cross_entropy_with_logits(&x[1], None, None, Mean)
            }),
            (
                "bce_logits_weights",
                &[logits[0], logits[1], (&[5], Dom::Pos), (&[5], Dom::Pos)],
                &|x| x[0].binary_cross_entropy_with_logits(&x[1], Some(&x[2]), Some(&x[3]), Each),
            ),
            ("nll_mean", &[(&[4, 3], Dom::Any)], &|x| {
                x[0].nll_loss(&labels(), &class_opts(None, None, 0.0, Mean))
            }),
            (
                "nll_weight",
                &[(&[4, 3], Dom::Any), (&[3], Dom::Pos)],
                &|x| x[0].nll_loss(&labels(), &class_opts(Some(&x[1]), None, 0.0, Mean)),
            ),
            ("nll_ignore_sum", &[(&[4, 3], Dom::Any)], &|x| {
                x[0].nll_loss(&labels(), &class_opts(None, Some(0), 0.0, Sum))
            }),
            (
                "nll_ignore_mean",
                &[(&[4, 3], Dom::Any), (&[3], Dom::Pos)],
                &|x| x[0].nll_loss(&labels(), &class_opts(Some(&x[1]), Some(2), 0.0, Mean)),
            ),
            ("nll_spatial_none", &[(&[2, 3, 4], Dom::Any)], &|x| {
                let t = ints(&[0, 2, 1, 1, 2, 2, 0, 1], &[2, 4]);
                x[0].nll_loss(&t, &class_opts(None, None, 0.0, Each))
            }),
            ("nll_single", &[(&[3], Dom::Any)], &|x| {
                x[0].nll_loss(&ints(&[1], &[]), &class_opts(None, None, 0.0, Mean))
            }),
            ("cross_entropy", &[(&[4, 3], Dom::Any)], &|x| {
                x[0].cross_entropy(&labels())
            }),
            ("cross_entropy_batched", &[(&[2, 3, 5], Dom::Any)], &|x| {
                x[0].cross_entropy(&ints(&[2, 0, 1, 1, 0, 0, 2, 2, 1, 0], &[2, 5]))
            }),
            (
                "cross_entropy_smoothing_ignore",
                &[(&[4, 3], Dom::Any)],
                &|x| x[0].cross_entropy_with(&labels(), &class_opts(None, Some(1), 0.1, Mean)),
            ),
            (
                "cross_entropy_weight_smoothing",
                &[(&[4, 3], Dom::Any), (&[3], Dom::Pos)],
                &|x| x[0].cross_entropy_with(&labels(), &class_opts(Some(&x[1]), None, 0.2, Mean)),
            ),
            (
                "cross_entropy_spatial_sum",
                &[(&[2, 3, 4], Dom::Any)],
                &|x| {
                    let t = ints(&[0, 2, 1, 1, 2, 2, 0, 1], &[2, 4]);
                    x[0].cross_entropy_with(&t, &class_opts(None, None, 0.0, Sum))
                },
            ),
            (
                "cross_entropy_probabilities",
                &[(&[4, 3], Dom::Any), (&[4, 3], PROB)],
                &|x| x[0].cross_entropy_with(&x[1], &class_opts(None, None, 0.2, Mean)),
            ),
            (
                "cross_entropy_probabilities_weight",
                &[(&[2, 3, 4], Dom::Any), (&[2, 3, 4], PROB), (&[3], Dom::Pos)],
                &|x| x[0].cross_entropy_with(&x[1], &class_opts(Some(&x[2]), None, 0.0, Each)),
            ),
        ],
    );
}

#[test]
fn sorting() {
    check_all(
        "sorting",
        &[
            ("sort_ascending", &[(&[3, 5], Dom::Any)], &|x| {
                Ok(x[0].sort(-1, false)?.0)
            }),
            ("sort_descending_first", &[(&[3, 5], Dom::Any)], &|x| {
                Ok(x[0].sort(0, true)?.0)
            }),
            ("topk_largest", &[(&[3, 5], Dom::Any)], &|x| {
                Ok(x[0].topk(2, -1, true)?.0)
            }),
            ("topk_smallest_first", &[(&[5, 3], Dom::Any)], &|x| {
                Ok(x[0].topk(3, 0, false)?.0)
            }),
        ],
    );
}

/// Points where a decomposition used to give a NaN or a wrong gradient:
/// 0 (for `|x|` written as `ABS`, and quotients such as `x / log(e^x)`
/// in branches not taken), arguments where an exponential in a branch not
/// taken overflows or underflows, the axis `x = 0` of `atan2`, and zero
/// factors of products. The functions are smooth at these points, so the
/// finite differences still hold.
#[test]
fn special_points() {
    const ZERO_ISH: Dom = Dom::At(&[0.0, 1e-20, -1e-18, 1e-300, 0.3, -0.2]);
    const FAR: Dom = Dom::At(&[-40.0, 40.0, -0.6, -800.0, 800.0, 0.5]);
    check_all(
        "special_points",
        &[
            ("expm1_near_0", &[(&[6], ZERO_ISH)], &|x| x[0].expm1()),
            (
                "expm1_far",
                &[(&[5], Dom::At(&[-40.0, 3.0, -800.0, -3.0, 1.5]))],
                &|x| x[0].expm1(),
            ),
            ("log1p_near_0", &[(&[6], ZERO_ISH)], &|x| x[0].log1p()),
            // alpha = 1: elu is smooth at 0.
            ("elu_near_0", &[(&[6], ZERO_ISH)], &|x| x[0].elu(1.0)),
            ("elu_far", &[(&[6], FAR)], &|x| x[0].elu(0.7)),
            ("selu_far", &[(&[6], FAR)], &|x| x[0].selu()),
            ("celu_near_0", &[(&[6], ZERO_ISH)], &|x| x[0].celu(0.7)),
            ("celu_far", &[(&[6], FAR)], &|x| x[0].celu(0.7)),
            ("softplus_far", &[(&[6], FAR)], &|x| {
                x[0].softplus(1.0, 20.0)
            }),
            ("softplus_beta_far", &[(&[6], FAR)], &|x| {
                x[0].softplus(0.5, 3.0)
            }),
            ("logsigmoid_far", &[(&[6], FAR)], &|x| x[0].logsigmoid()),
            (
                "mish_far",
                &[(&[6], Dom::At(&[-40.0, 0.0, 30.0, -0.3, 1e-20, 25.0]))],
                &|x| x[0].mish(),
            ),
            (
                "bce_logits_far",
                &[
                    (&[6], FAR),
                    (&[6], Dom::At(&[1.0, 0.0, 0.5, 1.0, 0.0, 0.2])),
                ],
                &|x| x[0].binary_cross_entropy_with_logits(&x[1], None, None, Reduction::Sum),
            ),
            ("atan_near_0", &[(&[6], ZERO_ISH)], &|x| x[0].atan()),
            ("asin_near_0", &[(&[6], ZERO_ISH)], &|x| x[0].asin()),
            ("acos_near_0", &[(&[6], ZERO_ISH)], &|x| x[0].acos()),
            ("asinh_near_0", &[(&[6], ZERO_ISH)], &|x| x[0].asinh()),
            (
                "atan2_axes",
                &[
                    (&[6], Dom::At(&[1.3, -0.7, 0.0, 0.0, 2.0, -1.0])),
                    (&[6], Dom::At(&[0.0, 0.0, 1.5, 0.4, -3.0, -0.5])),
                ],
                &|x| x[0].atan2(&x[1]),
            ),
            (
                "prod_zeros",
                &[(
                    &[3, 4],
                    Dom::At(&[0.0, 1.5, -2.0, 0.7, 0.0, 0.0, 1.1, 0.9, 0.4, -1.2, 0.8, 1.3]),
                )],
                &|x| x[0].prod(Some(&[-1]), false),
            ),
            (
                "prod_all_one_zero",
                &[(&[5], Dom::At(&[0.5, 0.0, 1.5, -1.0, 2.0]))],
                &|x| x[0].prod(None, false),
            ),
            (
                "cumprod_zeros",
                &[(&[2, 4], Dom::At(&[1.5, 0.0, -0.7, 1.2, 0.0, 0.9, 0.0, 1.1]))],
                &|x| x[0].cumprod(-1),
            ),
            (
                "scatter_reduce_prod_zero",
                &[
                    (&[2, 3], Dom::At(&[1.5, 0.0, 2.0, -1.0, 0.5, 1.2])),
                    (&[2, 2], Dom::At(&[0.0, 1.3, 0.8, 0.0])),
                ],
                &|x| {
                    x[0].scatter_reduce(
                        1,
                        &ints(&[0, 0, 2, 1], &[2, 2]),
                        &x[1],
                        ScatterReduce::Prod,
                        true,
                    )
                },
            ),
        ],
    );
}

/// The binary cross-entropy at predictions of exactly 0 and 1 (a
/// saturated `sigmoid`): the clamped logarithm is -100 there and its
/// gradient 0, so the gradient is finite: `-y / x + (1 - y) / (1 - x)`
/// with each term dropped where its logarithm is clamped, and `-(log x -
/// log(1 - x))` (clamped) to the target.
#[test]
fn bce_at_saturated_predictions() {
    let (xs, ys) = ([0.0, 1.0, 0.0, 1.0, 0.25], [0.0, 1.0, 0.5, 0.3, 0.6]);
    let x = Tensor::from_slice(&xs);
    let y = Tensor::from_slice(&ys);
    let loss = x.binary_cross_entropy(&y, None, Reduction::Sum).unwrap();
    let g = loss.gradient(&[&x, &y]).unwrap();
    let clamped = |v: f64| v.ln().max(-100.0);
    let slope = |v: f64| if v.ln() > -100.0 { 1.0 / v } else { 0.0 };
    for (k, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
        let to_x = -y * slope(x) + (1.0 - y) * slope(1.0 - x);
        let to_y = -(clamped(x) - clamped(1.0 - x));
        for (i, want) in [to_x, to_y].into_iter().enumerate() {
            let got = g[i].to_vec::<f64>().unwrap()[k];
            assert!(
                (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "input {i} element {k}: gradient {got}, want {want}"
            );
        }
    }
}

#[test]
fn max_ties_split_the_gradient() {
    let x = Tensor::from_slice(&[1.0f32, 3.0, 3.0, 2.0]);
    let g = x.max(None, false).unwrap().gradient(&[&x]).unwrap();
    assert_eq!(g[0].to_vec::<f32>().unwrap(), [0.0, 0.5, 0.5, 0.0]);
    let y = Tensor::from_slice(&[2.0f32, 3.0, 1.0, 2.0]);
    let m = x.maximum(&y).unwrap().sum(None, false).unwrap();
    let g = m.gradient(&[&x, &y]).unwrap();
    assert_eq!(g[0].to_vec::<f32>().unwrap(), [0.0, 0.5, 1.0, 0.5]);
    assert_eq!(g[1].to_vec::<f32>().unwrap(), [1.0, 0.5, 0.0, 0.5]);
}

#[test]
fn a_tensor_used_twice_sums_its_contributions() {
    let x = Tensor::from_slice(&[1.0f32, 2.0]);
    let y = x
        .mul(&x)
        .unwrap()
        .add(x.exp().unwrap())
        .unwrap()
        .sum(None, false)
        .unwrap();
    let g = y.gradient(&[&x]).unwrap()[0].to_vec::<f32>().unwrap();
    for (got, x) in g.iter().zip([1.0f32, 2.0]) {
        assert!((got - (2.0 * x + x.exp())).abs() < 1e-5);
    }
}

#[test]
fn a_target_outside_the_graph_gets_zeros() {
    let x = Tensor::from_slice(&[1.0f32, 2.0]);
    let unused = Tensor::from_slice(&[5.0f32, 6.0, 7.0]);
    let y = x.sum(None, false).unwrap();
    let g = y.gradient(&[&unused]).unwrap();
    assert_eq!(g[0].to_vec::<f32>().unwrap(), [0.0, 0.0, 0.0]);
}

#[test]
fn bad_requests_are_errors_that_name_the_op() {
    let x = Tensor::from_slice(&[1.0f32, 2.0]);
    let e = x.gradient(&[&x]).unwrap_err();
    assert_eq!(e.op(), "gradient");
    assert!(e.to_string().contains("[2] is not a scalar"), "{e}");
    assert!(e.location().file().ends_with("gradients.rs"), "{e}");

    let i = Tensor::from_slice(&[1i32, 2]);
    let loss = i.cast(DType::F32).unwrap().sum(None, false).unwrap();
    let e = loss.gradient(&[&i]).unwrap_err();
    assert!(e.to_string().contains("target 0 [2] is i32"), "{e}");

    let e = i.sum(None, false).unwrap().gradient(&[&x]).unwrap_err();
    assert!(e.to_string().contains("only float outputs"), "{e}");

    let e = i.requires_grad(true).unwrap_err();
    assert_eq!(e.op(), "requires_grad");

    let seed = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    let e = x.gradient_seeded(&seed, &[&x]).unwrap_err();
    assert!(
        e.to_string()
            .contains("the seed is [3] but the output is [2]"),
        "{e}"
    );

    let e = x.sum(None, false).unwrap().backward().unwrap_err();
    assert_eq!(e.op(), "backward");
}

#[test]
fn seeded_gradient_is_a_vector_jacobian_product() {
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    let y = x.mul(&x).unwrap();
    let seed = Tensor::from_slice(&[1.0f32, 0.0, -1.0]);
    let g = y.gradient_seeded(&seed, &[&x]).unwrap();
    assert_eq!(g[0].to_vec::<f32>().unwrap(), [2.0, 0.0, -6.0]);
}

#[test]
fn backward_accumulates_until_zero_grad() {
    let w = Tensor::from_slice(&[1.0f32, -2.0])
        .requires_grad(true)
        .unwrap();
    assert!(w.needs_grad());
    let loss = w.mul(3.0).unwrap().sum(None, false).unwrap();
    loss.backward().unwrap();
    loss.backward().unwrap();
    assert_eq!(w.grad().unwrap().to_vec::<f32>().unwrap(), [6.0, 6.0]);
    w.zero_grad();
    assert!(w.grad().is_none());
    let frozen = Tensor::from_slice(&[1.0f32, 1.0]);
    let loss = w.mul(&frozen).unwrap().sum(None, false).unwrap();
    loss.backward().unwrap();
    assert_eq!(w.grad().unwrap().to_vec::<f32>().unwrap(), [1.0, 1.0]);
    assert!(frozen.grad().is_none());
}

#[test]
fn assign_writes_in_place_and_checks_its_operands() {
    let p = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    let view = p.clone();
    let newer = p.mul(2.0).unwrap();
    p.assign(&newer).unwrap();
    assert_eq!(view.to_vec::<f32>().unwrap(), [2.0, 4.0, 6.0]);
    // A graph built before the assignment reads the new contents.
    let e = p.assign(&Tensor::from_slice(&[1.0f32, 2.0])).unwrap_err();
    assert!(
        e.to_string()
            .contains("the value [2] f32 does not match the target [3] f32"),
        "{e}"
    );
    let e = p
        .assign(&Tensor::from_slice(&[1.0f64, 2.0, 3.0]))
        .unwrap_err();
    assert!(e.to_string().contains("f64 does not match"), "{e}");
    let lazy = p.add(1.0).unwrap();
    let e = lazy.assign(&p).unwrap_err();
    assert!(e.to_string().contains("not a realized tensor"), "{e}");
    assert!(e.location().file().ends_with("gradients.rs"), "{e}");
    let e = Tensor::assign_all(&[(&p, &newer), (&view, &newer)], &[]).unwrap_err();
    assert!(e.to_string().contains("assigned twice"), "{e}");
}

#[test]
fn detach_stops_the_gradient() {
    let x = Tensor::from_slice(&[1.0f32, -2.0, 3.0]);
    let y = x
        .mul(x.detach().unwrap())
        .unwrap()
        .sum(None, false)
        .unwrap();
    let g = y.gradient(&[&x]).unwrap();
    assert_eq!(g[0].to_vec::<f32>().unwrap(), [1.0, -2.0, 3.0]);
}

#[test]
fn casts_carry_the_gradient_between_float_types() {
    let x = Tensor::from_slice(&[1.5f64, -2.0, 0.25]);
    let y = x
        .cast(DType::F32)
        .unwrap()
        .mul(3.0f32)
        .unwrap()
        .cast(DType::F16)
        .unwrap();
    let g = y.sum(None, false).unwrap().gradient(&[&x]).unwrap();
    assert_eq!(g[0].dtype(), DType::F64);
    assert_eq!(g[0].to_vec::<f64>().unwrap(), [3.0, 3.0, 3.0]);
    // An integer path carries none.
    let k = x
        .cast(DType::I32)
        .unwrap()
        .cast(DType::F64)
        .unwrap()
        .add(&x)
        .unwrap();
    let g = k.sum(None, false).unwrap().gradient(&[&x]).unwrap();
    assert_eq!(g[0].to_vec::<f64>().unwrap(), [1.0, 1.0, 1.0]);
}

#[test]
fn gradient_with_respect_to_a_reshaped_view() {
    let x = Tensor::from_vec((0..6).map(|v| v as f32).collect(), &[2, 3]).unwrap();
    let flat = x.reshape(&[6]).unwrap();
    let y = flat
        .reshape(&[3, 2])
        .unwrap()
        .mul(2.0f32)
        .unwrap()
        .sum(None, false)
        .unwrap();
    let g = y.gradient(&[&flat, &x]).unwrap();
    assert_eq!(g[0].shape(), [6]);
    assert_eq!(g[1].shape(), [2, 3]);
    assert_eq!(g[1].to_vec::<f32>().unwrap(), [2.0; 6]);
}
