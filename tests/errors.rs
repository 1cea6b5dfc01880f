//! Errors name the op, the shapes or dtypes, and the caller's line; the
//! operators carry errors forward instead of panicking.

use morok::{DType, Error, Tensor};

fn matrix() -> Tensor {
    Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .reshape(&[3, 2])
        .unwrap()
}

#[test]
fn broadcast_mismatch_is_carried_to_the_first_fallible_call() {
    let a = matrix();
    let b = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    let line = line!() + 1;
    let c = &a + &b;
    assert_eq!(c.shape(), &[] as &[usize]);
    let d = &(&c * 2.0) - &a;
    let e = d.realize().unwrap_err();
    assert!(matches!(e, Error::Shape { .. }));
    assert_eq!(e.op(), "add");
    assert_eq!(e.location().line(), line);
    assert!(e.location().file().ends_with("errors.rs"));
    let text = e.to_string();
    assert!(text.starts_with("add: [3, 2] and [3]: "), "{text}");
    assert!(
        text.ends_with(&format!("at {}:{line}:13", file!())),
        "{text}"
    );
    // Every later fallible call returns the same error.
    assert_eq!(d.to_vec::<f32>().unwrap_err().to_string(), text);
    assert_eq!(d.sum(None, false).unwrap_err().to_string(), text);
}

#[test]
fn fallible_methods_fail_at_once_with_the_callers_line() {
    let m = matrix();
    let line = line!() + 1;
    let e = m.reshape(&[4, -1]).unwrap_err();
    assert_eq!(e.location().line(), line);
    assert_eq!(e.op(), "reshape");
    assert!(e.to_string().contains("[3, 2]"), "{e}");
    assert!(m
        .transpose(0, 2)
        .unwrap_err()
        .to_string()
        .contains("axis 2 is out of range"));
    assert!(m
        .squeeze(0)
        .unwrap_err()
        .to_string()
        .contains("has size 3, not 1"));
    assert!(m.permute(&[0, 0]).is_err());
    assert!(m.broadcast_to(&[3, 3]).is_err());
    assert!(m.shrink(&[(0, 4), (0, 1)]).is_err());
    assert!(m.pad(&[(0, 0)], 0.0f32).is_err());
    assert!(m.split(&[1, 1], 0).is_err());
    assert!(Tensor::cat(&[], 0).is_err());
    assert!(Tensor::cat(&[&m, &m.transpose(0, 1).unwrap()], 0).is_err());
    assert!(Tensor::from_vec(vec![1u8, 2, 3], &[2, 2]).is_err());
}

#[test]
fn matmul_errors_quote_both_shapes() {
    let a = matrix();
    let line = line!() + 1;
    let e = a.dot(&a).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "matmul: [3, 2] and [3, 2]: inner dimensions differ (2 vs 3) at {}:{line}:15",
            file!()
        )
    );
}

#[test]
fn composite_ops_report_the_callers_line() {
    let a = matrix();
    let line = line!() + 1;
    let e = a.softmax(5).unwrap_err();
    assert_eq!((e.op(), e.location().line()), ("softmax", line));
    let labels = Tensor::from_slice(&[0.5f32, 1.0, 2.0]);
    let e = a.cross_entropy(&labels).unwrap_err();
    assert!(matches!(e, Error::DType { .. }), "{e}");
    let bad = Tensor::from_slice(&[1i32]);
    let line = line!() + 1;
    let e = a.cross_entropy(&bad).unwrap_err();
    assert_eq!(e.location().line(), line);
}

#[test]
fn graph_nodes_record_the_users_line() {
    let a = matrix();
    let line = line!() + 1;
    let s = a.softmax(-1).unwrap();
    assert_eq!(s.uop().location().line(), line);
    assert!(s.uop().location().file().ends_with("errors.rs"));
}

#[test]
fn dtype_errors() {
    let flags = Tensor::from_slice(&[true, false]);
    assert!((&flags - &flags).error().is_some());
    assert!((-&flags)
        .error()
        .unwrap()
        .to_string()
        .contains("neg: not defined for bool"));
    let x = Tensor::from_slice(&[1.0f32]);
    let e = x.to_vec::<i32>().unwrap_err();
    assert_eq!(
        e.to_string().split(" at ").next(),
        Some("to_vec: the tensor holds f32 elements, not i32")
    );
    assert!(x.cast(DType::F32.vec(4)).is_err());
    assert!(Tensor::zeros(&[2], DType::VOID).error().is_some());
}

#[test]
fn argument_errors() {
    let x = matrix();
    assert!(matches!(
        Tensor::arange(0.0f32, 1.0, 0.0),
        Err(Error::Argument { .. })
    ));
    assert!(x.slice(&[morok::Slice::all().step(0)]).is_err());
    assert!(x.chunk(0, 0).is_err());
    let empty = Tensor::from_vec(Vec::<f32>::new(), &[0, 2]).unwrap();
    assert!(empty.argmax(Some(0)).is_err());
    let img = Tensor::zeros(&[1, 1, 2, 2], DType::F32);
    let w = Tensor::zeros(&[1, 2, 1, 1], DType::F32);
    let e = img
        .conv2d(&w, None, morok::ConvOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("do not fit"), "{e}");
}

#[test]
fn error_tensors_have_no_graph_but_do_not_panic() {
    let bad = &matrix() + &Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    assert!(bad.uop().src().is_empty());
    assert_eq!(bad.dtype(), DType::VOID);
    assert!(bad.kernels().is_empty());
    assert!(bad.reference().is_err());
    assert!(format!("{bad:?}").contains("error"));
}

#[test]
fn huge_arguments_are_errors_not_panics() {
    assert!(Tensor::zeros(&[usize::MAX, 2], DType::F32)
        .error()
        .is_some());
    assert!(Tensor::rand(&[usize::MAX, 3], DType::F32).error().is_some());
    assert!(Tensor::randn_seeded(&[usize::MAX], DType::F32, 1)
        .error()
        .is_some());
    assert!(Tensor::from_vec(vec![1u8], &[usize::MAX, usize::MAX]).is_err());
    assert!(Tensor::arange(0.0f64, 1e300, 1.0).is_err());
    assert!(Tensor::eye(usize::MAX, DType::F32).error().is_some());
    let x = matrix();
    assert!(x.pad(&[(isize::MIN, 0), (0, isize::MAX)], 0.0f32).is_err());
    assert!(x.pad(&[(0, 0), (isize::MAX, isize::MAX)], 0.0f32).is_err());
    assert!(x.repeat(&[usize::MAX, 2]).is_err());
    assert!(x.broadcast_to(&[usize::MAX, 3, 2]).is_err());
    let s = x.slice(&[morok::Slice {
        start: Some(isize::MIN),
        end: Some(isize::MAX),
        step: isize::MIN,
    }]);
    assert_eq!(s.unwrap().shape(), &[0, 2]);
    let s = x.slice(&[morok::Slice::all().step(isize::MAX)]).unwrap();
    assert_eq!(s.shape(), &[1, 2]);
    let img = Tensor::zeros(&[1, 1, 4, 4], DType::F32);
    let w = Tensor::zeros(&[1, 1, 2, 2], DType::F32);
    let opts = morok::ConvOptions {
        dilation: (usize::MAX, 1),
        ..Default::default()
    };
    assert!(img.conv2d(&w, None, opts).is_err());
    let opts = morok::ConvOptions {
        padding: (usize::MAX, 0).into(),
        ..Default::default()
    };
    assert!(img.conv2d(&w, None, opts).is_err());
    let opts = morok::ConvOptions {
        groups: usize::MAX,
        ..Default::default()
    };
    assert!(img.conv2d(&w, None, opts).is_err());
    let pool = morok::PoolOptions::new((2, 2)).stride((usize::MAX, 1));
    assert!(img.max_pool2d(pool).is_ok());
    let empty = Tensor::zeros(&[0, 3], DType::F32);
    assert_eq!(
        empty
            .slice(&[morok::Slice::all().step(-1)])
            .unwrap()
            .shape(),
        &[0, 3]
    );
    assert_eq!(empty.chunk(2, 0).unwrap().len(), 0);
}

#[test]
fn former_panics_are_errors_naming_the_op() {
    let op = |r: Result<Tensor, Error>| r.map(|_| ()).unwrap_err().op().to_string();
    // A zero-size axis does not hide sizes whose product overflows.
    let e = Tensor::zeros(&[0, usize::MAX, 2], DType::F32);
    assert_eq!(e.error().map(Error::op), Some("zeros"));
    let empty = Tensor::zeros(&[0], DType::F32);
    assert_eq!(op(empty.reshape(&[isize::MAX, isize::MAX, 0])), "reshape");
    let m = matrix();
    let e = m.split(&[usize::MAX, 1], 0).unwrap_err();
    assert_eq!(e.op(), "split");
    let wide = Tensor::zeros(&[0, isize::MAX as usize], DType::F32);
    assert_eq!(op(Tensor::cat(&[&wide, &wide, &wide], 1)), "cat");
    assert_eq!(op(Tensor::cat(&[&wide, &wide], 1)), "cat");
    // Scalars have no axis to split or join, but transpose to themselves.
    let s = Tensor::full(&[], 1.0f32);
    assert_eq!(s.transpose(0, 0).unwrap().shape(), &[] as &[usize]);
    assert_eq!(s.chunk(2, 0).unwrap_err().op(), "chunk");
    assert_eq!(op(Tensor::cat(&[&s], 0)), "cat");
    // Composite ops name themselves, not the ops they are built from.
    let t = m.transpose(0, 1).unwrap();
    assert_eq!(op(Tensor::stack(&[&m, &t], 0)), "stack");
    assert_eq!(m.to_ndarray::<i32>().unwrap_err().op(), "to_ndarray");
    assert_eq!(op(m.std(Some(&[2]), 1, false)), "std");
    assert_eq!(op(m.expand(&[3, 2, -1, 4])), "expand");
    let img = Tensor::zeros(&[1, 2, 3, 3], DType::F32);
    let w = Tensor::zeros(&[4, 2, 2, 2], DType::F32);
    let bias = Tensor::zeros(&[2, 2], DType::F32);
    let e = img
        .conv2d(&w, Some(&bias), morok::ConvOptions::default())
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("conv2d: [1, 2, 3, 3] and [4, 2, 2, 2] and [2, 2]"),
        "{e}"
    );
    let pool = morok::PoolOptions::new((2, 2)).padding((1, usize::MAX));
    assert_eq!(op(img.max_pool2d(pool)), "max_pool2d");
    // An axis past i32 positions is counted in i64: not an error.
    let long = Tensor::zeros(&[0, 1 << 32], DType::F32);
    let shape = long.argmax(Some(1)).map(|t| t.shape().to_vec());
    assert_eq!(shape.ok(), Some(vec![0]));
    // An error tensor is never returned as a success.
    let bad = &m + &Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    assert_eq!(op(bad.flip(&[])), "add");
    // Failures while running are located at the caller too.
    let big = Tensor::ones(&[1 << 25, 1 << 25], DType::F32);
    let line = line!() + 1;
    let e = big.realize().unwrap_err();
    assert_eq!((e.op(), e.location().line()), ("realize", line));
    assert!(e.location().file().ends_with("errors.rs"));
    let huge = Tensor::zeros(&[isize::MAX as usize, 1], DType::I32);
    assert_eq!(huge.reference().unwrap_err().op(), "reference");
}

#[test]
fn composite_ops_name_themselves_but_keep_their_operands_errors() {
    let m = matrix(); // [3, 2]
    let w = Tensor::from_slice(&[1.0f32, 2.0, 3.0])
        .reshape(&[1, 3])
        .unwrap();
    let e = m.linear(&w, None).unwrap_err();
    assert_eq!(e.op(), "linear");
    assert!(
        e.to_string().starts_with("linear: [3, 2] and [1, 3]"),
        "{e}"
    );
    let ok_w = Tensor::from_slice(&[1.0f32, 2.0]).reshape(&[1, 2]).unwrap();
    let bad_bias = Tensor::from_slice(&[1.0f32, 2.0]);
    assert_eq!(m.linear(&ok_w, Some(&bad_bias)).unwrap_err().op(), "linear");
    assert_eq!(m.linear(&ok_w, None).unwrap().shape(), [3, 1]);
    let e = m
        .clamp(Tensor::from_slice(&[0.0f32, 1.0, 2.0]), 5.0)
        .unwrap_err();
    assert_eq!(e.op(), "clamp");
    // An operand that already carries an error keeps its op and line.
    let line = line!() + 1;
    let broken = &m + &Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    let e = broken.clamp(0.0, 1.0).unwrap_err();
    assert_eq!((e.op(), e.location().line()), ("add", line));
    assert_eq!(broken.linear(&ok_w, None).unwrap_err().op(), "add");
}

/// A repeated flip axis is an error, as for reductions and permute (it
/// used to flip once).
#[test]
fn flip_rejects_a_repeated_axis() {
    let m = matrix();
    let line = line!() + 1;
    let e = m.flip(&[0, 0]).unwrap_err();
    assert_eq!(e.op(), "flip");
    assert_eq!(e.location().line(), line);
    assert!(e.to_string().contains("[3, 2]"), "{e}");
    assert!(e.to_string().contains("listed twice"), "{e}");
    assert!(m.flip(&[1, -1]).is_err());
    assert!(m.flip(&[0, 1]).is_ok());
}

/// Indexing errors name the op, the shapes and the caller's line.
#[test]
fn indexing_errors_name_op_shapes_and_line() {
    use morok::Index;
    let m = matrix();
    let floats = Tensor::from_slice(&[0.0f32, 1.0]);
    let line = line!() + 1;
    let e = m.gather(0, &floats).unwrap_err();
    assert_eq!((e.op(), e.location().line()), ("gather", line));
    assert!(
        e.to_string().contains("index tensor [2] has dtype f32"),
        "{e}"
    );
    let line = line!() + 1;
    let e = m.index(&[Index::Int(0), Index::Int(2)]).unwrap_err();
    assert_eq!((e.op(), e.location().line()), ("index", line));
    assert!(
        e.to_string()
            .contains("[3, 2]: index 2 is out of range for an axis of size 2"),
        "{e}"
    );
    let idx = Tensor::from_vec(vec![0i64; 8], &[4, 2]).unwrap();
    let e = m.gather(1, &idx).unwrap_err();
    assert!(
        e.to_string().starts_with("gather: [3, 2] and [4, 2]: "),
        "{e}"
    );
    let e = m.scatter(0, &idx, &m).unwrap_err();
    assert_eq!(e.op(), "scatter");
    assert!(m.index_select(0, &idx).is_err());
    assert!(m.masked_fill(&m, 0.0).is_err());
    assert!(m.diagonal(0, 1, -1).is_err());
    assert!(m.unfold(0, 4, 1).is_err());
    assert!(m.roll(&[1, 2], &[0]).is_err());
    assert!(m.index(&[Index::Ellipsis, Index::Ellipsis]).is_err());
}

/// einsum, attention and loss errors name the op, the shapes and the
/// caller's line.
#[test]
fn einsum_attention_and_loss_errors() {
    let m = matrix();
    let line = line!() + 1;
    let e = Tensor::einsum("ij,kj->iq", &[&m, &m]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "einsum: [3, 2] and [3, 2]: \"ij,kj->iq\": output label 'q' is in no input at {}:{line}:13",
            file!()
        )
    );
    let e = Tensor::einsum("ij,jk", &[&m, &m]).unwrap_err();
    assert!(e.to_string().contains("label 'j' has sizes 2 and 3"), "{e}");
    let q = Tensor::zeros(&[3, 4, 5], DType::F32);
    let kv = Tensor::zeros(&[2, 6, 5], DType::F32);
    let opts = Default::default();
    let line = line!() + 1;
    let e = q.scaled_dot_product_attention(&kv, &kv, &opts);
    let e = e.unwrap_err();
    assert_eq!(e.location().line(), line);
    assert!(
        e.to_string().starts_with(
            "scaled_dot_product_attention: [3, 4, 5] and [2, 6, 5] and [2, 6, 5]: 3 query heads for 2 key/value heads"
        ),
        "{e}"
    );
    let labels = Tensor::from_slice(&[0.5f32, 1.0, 2.0]);
    let e = m.nll_loss(&labels, &Default::default()).unwrap_err();
    assert_eq!(e.op(), "nll_loss");
    let e = m.cross_entropy_with(&Tensor::from_slice(&[0i64, 1]), &Default::default());
    assert!(e.unwrap_err().to_string().contains("[3, 2] and [2]"));
}
