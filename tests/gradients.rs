//! Gradients of the `Tensor` API's differentiable ops, each checked three
//! ways on random f64 inputs: the gradient graph evaluated by the
//! reference evaluator against central finite differences of the forward
//! graph (also on the reference evaluator), and the compiled gradient
//! against the reference evaluator's.
//!
//! Each case differentiates `sum(f(x...) * r)` for fixed random weights
//! `r`, so every output element contributes with its own weight.

mod common;

use common::Rng;
use morok::{DType, Error, Tensor};

/// Where an input's random values are drawn from.
#[derive(Clone, Copy)]
enum Dom {
    /// [-2, 2].
    Any,
    /// [0.3, 2.5].
    Pos,
    /// [-0.8, 0.8].
    Unit,
}

impl Dom {
    fn sample(self, rng: &mut Rng) -> f64 {
        match self {
            Dom::Any => rng.uniform(-2.0, 2.0),
            Dom::Pos => rng.uniform(0.3, 2.5),
            Dom::Unit => rng.uniform(-0.8, 0.8),
        }
    }
}

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
                .map(|_| dom.sample(&mut rng))
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
    let compiled = Tensor::realize_all(&grads.iter().collect::<Vec<_>>())
        .unwrap_or_else(|e| panic!("{name}: realize: {e}"));
    for (i, (g, c)) in grads.iter().zip(&compiled).enumerate() {
        assert_eq!(g.shape(), specs[i].0, "{name}: shape of gradient {i}");
        let analytic = flat(g);
        let run = c.to_vec::<f64>().unwrap();
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
    transpose: Dom::Any => |x: &Tensor| x.try_transpose(0, 1)?.exp();
    reshape: Dom::Any => |x: &Tensor| x.try_reshape(&[5, 3])?.softmax(0);
    expand: Dom::Any => |x: &Tensor| x.try_unsqueeze(0)?.try_expand(&[2, 3, 5])?.mul(&Tensor::arange(0, 2, 1)?.cast(DType::F64)?.try_reshape(&[2, 1, 1])?);
    pad: Dom::Any => |x: &Tensor| x.try_pad(&[(1, 2), (0, 1)], 0.5f64);
    shrink: Dom::Any => |x: &Tensor| x.try_shrink(&[(1, 3), (2, 5)]);
    flip: Dom::Any => |x: &Tensor| x.try_flip(&[1])?.mul(&Tensor::arange(0, 5, 1)?.cast(DType::F64)?);
    repeat: Dom::Any => |x: &Tensor| x.try_repeat(&[2, 1]);
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
            x[0].matmul(&x[1].try_reshape(&[5, 1])?.try_expand(&[5, 3])?)
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
        .add(&x.exp().unwrap())
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
        .mul(&x.detach().unwrap())
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
    let flat = x.try_reshape(&[6]).unwrap();
    let y = flat
        .try_reshape(&[3, 2])
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
