//! Hand-computed answers for every op the evaluator knows.

use super::*;
use crate::uop::{new_buffer_id, ReduceOp, Srcs};
use smallvec::smallvec;

/// A buffer node and its data, viewed with `shape`.
struct Input {
    id: u64,
    data: Vec<f64>,
    node: Arc<UOp>,
}

fn input(dtype: DType, shape: &[usize], data: &[f64]) -> Input {
    let id = new_buffer_id();
    let buf = UOp::new(
        Op::Buffer,
        dtype,
        Srcs::new(),
        Arg::Buffer {
            id,
            size: data.len(),
        },
    );
    let node = UOp::new(
        Op::Reshape,
        dtype,
        smallvec![buf],
        Arg::Shape(shape.iter().copied().collect()),
    );
    Input {
        id,
        data: data.to_vec(),
        node,
    }
}

fn eval(root: &Arc<UOp>, inputs: &[&Input]) -> Result<RefArray, EvalError> {
    let lookup = |id: u64| inputs.iter().find(|i| i.id == id).map(|i| i.data.clone());
    evaluate(root, &lookup)
}

fn values(root: &Arc<UOp>, inputs: &[&Input]) -> Vec<f64> {
    match eval(root, inputs) {
        Ok(r) => r.data,
        Err(e) => panic!("{e}"),
    }
}

fn mv(x: &Arc<UOp>, op: Op, arg: Arg) -> Arc<UOp> {
    UOp::new(op, x.dtype(), smallvec![x.clone()], arg)
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()) || (x.is_nan() && y.is_nan()))
}

#[test]
fn float_unary_ops() {
    let x = input(DType::F64, &[4], &[-1.5, 0.25, 2.5, 4.0]);
    let cases: [(Op, [f64; 4]); 18] = [
        (Op::Neg, [1.5, -0.25, -2.5, -4.0]),
        (Op::Abs, [1.5, 0.25, 2.5, 4.0]),
        (Op::Sqrt, [f64::NAN, 0.5, 2.5f64.sqrt(), 2.0]),
        (Op::Rsqrt, [f64::NAN, 2.0, 1.0 / 2.5f64.sqrt(), 0.5]),
        (Op::Recip, [-1.0 / 1.5, 4.0, 0.4, 0.25]),
        (
            Op::Exp,
            [(-1.5f64).exp(), 0.25f64.exp(), 2.5f64.exp(), 4.0f64.exp()],
        ),
        (
            Op::Exp2,
            [2f64.powf(-1.5), 2f64.powf(0.25), 2f64.powf(2.5), 16.0],
        ),
        (Op::Log, [f64::NAN, 0.25f64.ln(), 2.5f64.ln(), 4.0f64.ln()]),
        (Op::Log2, [f64::NAN, -2.0, 2.5f64.log2(), 2.0]),
        (
            Op::Sin,
            [(-1.5f64).sin(), 0.25f64.sin(), 2.5f64.sin(), 4.0f64.sin()],
        ),
        (
            Op::Cos,
            [(-1.5f64).cos(), 0.25f64.cos(), 2.5f64.cos(), 4.0f64.cos()],
        ),
        (
            Op::Tan,
            [(-1.5f64).tan(), 0.25f64.tan(), 2.5f64.tan(), 4.0f64.tan()],
        ),
        (
            Op::Tanh,
            [
                (-1.5f64).tanh(),
                0.25f64.tanh(),
                2.5f64.tanh(),
                4.0f64.tanh(),
            ],
        ),
        (
            Op::Erf,
            [
                -0.9661051464753108,
                0.2763263901682369,
                0.999593047982555,
                0.9999999845827421,
            ],
        ),
        (Op::Floor, [-2.0, 0.0, 2.0, 4.0]),
        (Op::Ceil, [-1.0, 1.0, 3.0, 4.0]),
        (Op::Round, [-2.0, 0.0, 2.0, 4.0]),
        (Op::Trunc, [-1.0, 0.0, 2.0, 4.0]),
    ];
    for (op, want) in cases {
        let got = values(&x.node.un(op), &[&x]);
        assert!(close(&got, &want, 1e-13), "{op:?}: {got:?} vs {want:?}");
    }
    let nan = input(DType::F32, &[2], &[f64::NAN, 1.0]);
    assert_eq!(values(&nan.node.un(Op::IsNan), &[&nan]), [1.0, 0.0]);
}

#[test]
fn erf_matches_tables() {
    for (x, want) in [
        (0.0, 0.0),
        (0.5, 0.5204998778130465),
        (1.0, 0.8427007929497149),
        (2.0, 0.9953222650189527),
        (3.0, 0.9999779095030014),
        (-4.0, -0.9999999845827421),
        (7.0, 1.0),
    ] {
        let got = crate::symbolic::eval::erf_f64(x);
        assert!((got - want).abs() < 1e-15, "erf({x}) = {got}");
    }
}

#[test]
fn float32_results_are_rounded() {
    let x = input(DType::F32, &[1], &[0.1]);
    let y = input(DType::F32, &[1], &[0.2]);
    let got = values(&x.node.add(&y.node), &[&x, &y]);
    assert_eq!(got, [(0.1f32 + 0.2f32) as f64]);
    let h = input(DType::F16, &[1], &[1.0]);
    let third = values(&h.node.un(Op::Recip), &[&h]);
    assert_eq!(third, [half::f16::from_f64(1.0).to_f64()]);
    let h3 = input(DType::F16, &[1], &[3.0]);
    assert_eq!(
        values(&h3.node.un(Op::Recip), &[&h3]),
        [half::f16::from_f64(1.0 / 3.0).to_f64()]
    );
}

#[test]
fn float_binary_ops() {
    let a = input(DType::F64, &[4], &[7.0, -7.0, 2.0, f64::NAN]);
    let b = input(DType::F64, &[4], &[2.0, 2.0, -3.0, 1.0]);
    let cases: [(Op, [f64; 4]); 12] = [
        (Op::Add, [9.0, -5.0, -1.0, f64::NAN]),
        (Op::Sub, [5.0, -9.0, 5.0, f64::NAN]),
        (Op::Mul, [14.0, -14.0, -6.0, f64::NAN]),
        (Op::Fdiv, [3.5, -3.5, -2.0 / 3.0, f64::NAN]),
        (Op::Mod, [1.0, -1.0, 2.0, f64::NAN]),
        (Op::Pow, [49.0, 49.0, 0.125, f64::NAN]),
        (Op::Max, [7.0, 2.0, 2.0, f64::NAN]),
        (Op::Min, [2.0, -7.0, -3.0, f64::NAN]),
        (Op::CmpLt, [0.0, 1.0, 0.0, 0.0]),
        (Op::CmpLe, [0.0, 1.0, 0.0, 0.0]),
        (Op::CmpEq, [0.0, 0.0, 0.0, 0.0]),
        (Op::CmpNe, [1.0, 1.0, 1.0, 1.0]),
    ];
    for (op, want) in cases {
        let got = values(&a.node.bin(op, &b.node), &[&a, &b]);
        assert!(close(&got, &want, 1e-15), "{op:?}: {got:?} vs {want:?}");
    }
}

#[test]
fn integer_semantics() {
    let a = input(DType::I8, &[4], &[7.0, -7.0, 100.0, -128.0]);
    let b = input(DType::I8, &[4], &[2.0, 2.0, 100.0, -1.0]);
    let cases: [(Op, [f64; 4]); 11] = [
        (Op::Add, [9.0, -5.0, -56.0, 127.0]),
        (Op::Sub, [5.0, -9.0, 0.0, -127.0]),
        (Op::Mul, [14.0, -14.0, 16.0, -128.0]),
        (Op::Idiv, [3.0, -3.0, 1.0, -128.0]),
        (Op::Mod, [1.0, -1.0, 0.0, 0.0]),
        (Op::Max, [7.0, 2.0, 100.0, -1.0]),
        (Op::Min, [2.0, -7.0, 100.0, -128.0]),
        (Op::And, [2.0, 0.0, 100.0, -128.0]),
        (Op::Or, [7.0, -5.0, 100.0, -1.0]),
        (Op::Xor, [5.0, -5.0, 0.0, 127.0]),
        (Op::CmpLt, [0.0, 1.0, 0.0, 1.0]),
    ];
    for (op, want) in cases {
        assert_eq!(values(&a.node.bin(op, &b.node), &[&a, &b]), want, "{op:?}");
    }
    assert_eq!(
        values(&a.node.un(Op::Neg), &[&a]),
        [-7.0, 7.0, -100.0, -128.0]
    );
    assert_eq!(
        values(&a.node.un(Op::Not), &[&a]),
        [-8.0, 6.0, -101.0, 127.0]
    );
    let zero = input(DType::I32, &[1], &[0.0]);
    let seven = input(DType::I32, &[1], &[7.0]);
    assert_eq!(
        values(&seven.node.bin(Op::Idiv, &zero.node), &[&seven, &zero]),
        [0.0]
    );
    let u = input(DType::U8, &[2], &[250.0, 1.0]);
    let s = input(DType::U8, &[2], &[10.0, 3.0]);
    assert_eq!(values(&u.node.add(&s.node), &[&u, &s]), [4.0, 4.0]);
    assert_eq!(values(&u.node.bin(Op::Shl, &s.node), &[&u, &s]), [0.0, 8.0]);
    assert_eq!(values(&u.node.bin(Op::Shr, &s.node), &[&u, &s]), [0.0, 0.0]);
    assert_eq!(values(&u.node.un(Op::Neg), &[&u]), [6.0, 255.0]);
}

#[test]
fn bool_logic() {
    let a = input(DType::BOOL, &[4], &[0.0, 0.0, 1.0, 1.0]);
    let b = input(DType::BOOL, &[4], &[0.0, 1.0, 0.0, 1.0]);
    assert_eq!(
        values(&a.node.bin(Op::And, &b.node), &[&a, &b]),
        [0.0, 0.0, 0.0, 1.0]
    );
    assert_eq!(
        values(&a.node.bin(Op::Or, &b.node), &[&a, &b]),
        [0.0, 1.0, 1.0, 1.0]
    );
    assert_eq!(
        values(&a.node.bin(Op::Xor, &b.node), &[&a, &b]),
        [0.0, 1.0, 1.0, 0.0]
    );
    assert_eq!(values(&a.node.un(Op::Not), &[&a]), [1.0, 1.0, 0.0, 0.0]);
}

#[test]
fn where_and_mulacc() {
    let c = input(DType::BOOL, &[3], &[1.0, 0.0, 1.0]);
    let a = input(DType::F32, &[3], &[1.0, 2.0, 3.0]);
    let b = input(DType::F32, &[3], &[-1.0, -2.0, -3.0]);
    assert_eq!(
        values(&c.node.where_(&a.node, &b.node), &[&c, &a, &b]),
        [1.0, -2.0, 3.0]
    );
    let fma = UOp::alu(
        Op::MulAcc,
        smallvec![a.node.clone(), a.node.clone(), b.node.clone()],
    );
    assert_eq!(values(&fma, &[&a, &b]), [0.0, 2.0, 6.0]);
}

#[test]
fn casts_round_truncate_and_saturate() {
    let x = input(DType::F64, &[5], &[-1.7, 2.9, 300.0, 0.1, 0.0]);
    assert_eq!(
        values(&x.node.cast(DType::I32), &[&x]),
        [-1.0, 2.0, 300.0, 0.0, 0.0]
    );
    assert_eq!(
        values(&x.node.cast(DType::U8), &[&x]),
        [0.0, 2.0, 255.0, 0.0, 0.0]
    );
    assert_eq!(
        values(&x.node.cast(DType::BOOL), &[&x]),
        [1.0, 1.0, 1.0, 1.0, 0.0]
    );
    let f32s = values(&x.node.cast(DType::F32), &[&x]);
    assert_eq!(f32s[3], 0.1f32 as f64);
    let bf = values(&x.node.cast(DType::BF16), &[&x]);
    assert_eq!(bf[3], half::bf16::from_f64(0.1).to_f64());
    let i = input(DType::I32, &[2], &[-129.0, 65.0]);
    assert_eq!(values(&i.node.cast(DType::I8), &[&i]), [127.0, 65.0]);
    assert_eq!(values(&i.node.cast(DType::F16), &[&i]), [-129.0, 65.0]);
}

#[test]
fn bitcasts() {
    let x = input(DType::F32, &[2], &[1.0, -2.0]);
    assert_eq!(
        values(&x.node.bitcast(DType::U32), &[&x]),
        [0x3f80_0000u32 as f64, 0xc000_0000u32 as f64]
    );
    assert_eq!(
        values(&x.node.bitcast(DType::I32), &[&x])[1],
        -1_073_741_824.0
    );
    let u = input(DType::U16, &[1], &[0x3c00 as f64]);
    assert_eq!(values(&u.node.bitcast(DType::F16), &[&u]), [1.0]);
    let bad = x.node.bitcast(DType::F64);
    assert!(eval(&bad, &[&x])
        .unwrap_err()
        .message
        .contains("cannot reinterpret"));
}

#[test]
fn threefry_node_matches_function() {
    let c = input(DType::U64, &[2], &[0.0, 5.0]);
    let k = input(DType::U64, &[2], &[0.0, 9.0]);
    let got = values(&c.node.bin(Op::Threefry, &k.node), &[&c, &k]);
    assert_eq!(got, [threefry2x32(0, 0) as f64, threefry2x32(5, 9) as f64]);
}

use crate::random::threefry2x32;

#[test]
fn movement_ops() {
    // [[0, 1, 2], [3, 4, 5]]
    let x = input(DType::I32, &[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let t = mv(&x.node, Op::Permute, Arg::Axes(smallvec![1, 0]));
    assert_eq!(values(&t, &[&x]), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let f = mv(&x.node, Op::Flip, Arg::Axes(smallvec![1]));
    assert_eq!(values(&f, &[&x]), [2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
    let s = mv(&x.node, Op::Shrink, Arg::Pairs(smallvec![(1, 2), (1, 3)]));
    let r = eval(&s, &[&x]).unwrap();
    assert_eq!((r.shape, r.data), (vec![1, 2], vec![4.0, 5.0]));
    let p = mv(&x.node, Op::Pad, Arg::Pairs(smallvec![(0, 1), (1, 0)]));
    assert_eq!(
        values(&p, &[&x]),
        [0.0, 0.0, 1.0, 2.0, 0.0, 3.0, 4.0, 5.0, 0.0, 0.0, 0.0, 0.0]
    );
    let col = mv(&x.node, Op::Shrink, Arg::Pairs(smallvec![(0, 2), (0, 1)]));
    let e = mv(&col, Op::Expand, Arg::Shape(smallvec![2, 2]));
    assert_eq!(values(&e, &[&x]), [0.0, 0.0, 3.0, 3.0]);
    let bad = mv(&x.node, Op::Expand, Arg::Shape(smallvec![4, 3]));
    assert!(eval(&bad, &[&x]).is_err());
}

#[test]
fn reductions_keep_axes() {
    let x = input(DType::F32, &[2, 3], &[1.0, 5.0, 2.0, -3.0, 4.0, 0.5]);
    let red = |op, axes: &[usize]| {
        let n = mv(
            &x.node,
            Op::ReduceAxis,
            Arg::ReduceAxis(op, axes.iter().copied().collect()),
        );
        eval(&n, &[&x]).unwrap()
    };
    let s = red(ReduceOp::Add, &[1]);
    assert_eq!((s.shape, s.data), (vec![2, 1], vec![8.0, 1.5]));
    assert_eq!(red(ReduceOp::Mul, &[0]).data, [-3.0, 20.0, 1.0]);
    assert_eq!(red(ReduceOp::Max, &[0, 1]).data, [5.0]);
    assert_eq!(red(ReduceOp::Min, &[1]).data, [1.0, -3.0]);
    let empty = input(DType::F32, &[0, 2], &[]);
    let n = mv(
        &empty.node,
        Op::ReduceAxis,
        Arg::ReduceAxis(ReduceOp::Max, smallvec![0]),
    );
    assert_eq!(values(&n, &[&empty]), [f64::NEG_INFINITY; 2]);
    let b = input(DType::BOOL, &[3], &[0.0, 1.0, 0.0]);
    let any = mv(
        &b.node,
        Op::ReduceAxis,
        Arg::ReduceAxis(ReduceOp::Max, smallvec![0]),
    );
    assert_eq!(values(&any, &[&b]), [1.0]);
}

#[test]
fn consts_and_errors() {
    let c = UOp::const_(DType::I8, ConstValue::Int(300));
    let r = evaluate(&c, &|_| None).unwrap();
    assert_eq!((r.shape, r.data), (vec![], vec![44.0]));
    let x = input(DType::F32, &[2], &[1.0, 2.0]);
    assert!(eval(&x.node, &[])
        .unwrap_err()
        .message
        .contains("has no data"));
    let short = Input {
        data: vec![1.0],
        ..input(DType::F32, &[2], &[1.0, 2.0])
    };
    assert!(eval(&short.node, &[&short]).is_err());
    let loop_level = UOp::range(&UOp::index(4), 0, crate::uop::AxisType::Loop);
    assert!(evaluate(&loop_level, &|_| None).is_err());
    let mixed = x.node.add(&UOp::const_(DType::F32, ConstValue::Float(1.0)));
    assert!(eval(&mixed, &[&x])
        .unwrap_err()
        .message
        .contains("shapes differ"));
}
