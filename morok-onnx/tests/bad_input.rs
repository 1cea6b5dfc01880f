//! Bad input never panics: malformed bytes, broken graphs, unknown ops,
//! missing values, huge declared tensors and wrong run-time inputs each
//! give an `Err` that names the node and op (or the input), and 10,000
//! random mutations of a valid model load or fail without a panic.

#[path = "../examples/common/proto_build.rs"]
mod proto_build;

use morok::{DType, Tensor};
use morok_onnx::proto::{
    tensor_proto::DataType, AttributeProto, GraphProto, NodeProto, TensorProto, ValueInfoProto,
};
use morok_onnx::{Error, Model};
use proto_build::{model_bytes, node, value};

fn int64_init(name: &str, values: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: vec![values.len() as i64],
        data_type: Some(DataType::Int64 as i32),
        int64_data: values.to_vec(),
        ..Default::default()
    }
}

fn model(
    nodes: Vec<NodeProto>,
    inputs: Vec<ValueInfoProto>,
    outputs: Vec<ValueInfoProto>,
    inits: Vec<TensorProto>,
) -> Vec<u8> {
    model_bytes(GraphProto {
        node: nodes,
        name: Some("g".into()),
        input: inputs,
        output: outputs,
        initializer: inits,
        ..Default::default()
    })
}

/// `y = relu(reshape(x + x, [batch, 2]))` over `x: [batch, 2, 1]`.
fn valid_model() -> Vec<u8> {
    model(
        vec![
            node("add", "Add", &["x", "x"], &["s"]),
            node("reshape", "Reshape", &["s", "shape"], &["r"]),
            node("relu", "Relu", &["r"], &["y"]),
        ],
        vec![value("x", &[Err("batch"), Ok(2), Ok(1)])],
        vec![value("y", &[Err("batch"), Ok(2)])],
        vec![int64_init("shape", &[-1, 2])],
    )
}

fn message<T>(r: Result<T, Error>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

fn x(shape: &[usize]) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_vec((0..n).map(|i| i as f32 - 1.5).collect(), shape).unwrap()
}

#[test]
fn the_valid_model_runs() {
    let m = Model::from_bytes(&valid_model()).unwrap();
    assert_eq!(m.inputs()[0].name, "x");
    assert_eq!(
        m.inputs()[0].shape.as_ref().unwrap()[0],
        morok_onnx::Dim::Named("batch".into())
    );
    let y = m.run(&[("x", &x(&[2, 2, 1]))]).unwrap();
    assert_eq!(y[0].to_vec::<f32>().unwrap(), [0.0, 0.0, 1.0, 3.0]);
}

#[test]
fn truncated_and_random_bytes() {
    let bytes = valid_model();
    for cut in [1, 7, bytes.len() / 2, bytes.len() - 1] {
        let m = message(Model::from_bytes(&bytes[..cut]));
        assert!(m.contains("malformed"), "{m}");
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for len in [0usize, 1, 16, 1000] {
        let junk: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        assert!(Model::from_bytes(&junk).is_err());
    }
}

#[test]
fn a_cycle_names_a_node_on_it() {
    let bytes = model(
        vec![
            node("a", "Relu", &["b_out"], &["a_out"]),
            node("b", "Relu", &["a_out"], &["b_out"]),
        ],
        vec![],
        vec![value("a_out", &[Ok(1)])],
        vec![],
    );
    let m = message(Model::from_bytes(&bytes));
    assert!(m.contains("cycle") && m.contains("(Relu)"), "{m}");
}

#[test]
fn an_unknown_op_is_named_at_load() {
    let bytes = model(
        vec![node("mystery", "FrobnicateV2", &["x"], &["y"])],
        vec![value("x", &[Ok(2)])],
        vec![value("y", &[Ok(2)])],
        vec![],
    );
    let m = message(Model::from_bytes(&bytes));
    assert!(
        m.contains("node mystery (FrobnicateV2)") && m.contains("unsupported"),
        "{m}"
    );
}

#[test]
fn a_missing_initializer_is_named_at_load() {
    let bytes = model(
        vec![node("mm", "MatMul", &["x", "weights"], &["y"])],
        vec![value("x", &[Ok(2), Ok(2)])],
        vec![value("y", &[Ok(2), Ok(2)])],
        vec![],
    );
    let m = message(Model::from_bytes(&bytes));
    assert!(
        m.contains("node mm (MatMul)") && m.contains("\"weights\""),
        "{m}"
    );
}

#[test]
fn huge_declared_tensors() {
    // An initializer of 10^12 elements without the data.
    let huge = TensorProto {
        name: Some("w".into()),
        dims: vec![1_000_000, 1_000_000],
        data_type: Some(DataType::Float as i32),
        ..Default::default()
    };
    let bytes = model(
        vec![node("add", "Add", &["x", "w"], &["y"])],
        vec![value("x", &[Ok(1)])],
        vec![value("y", &[Ok(1)])],
        vec![huge],
    );
    let m = message(Model::from_bytes(&bytes));
    assert!(m.contains("\"w\"") && m.contains("1000000"), "{m}");

    // Dims whose product overflows.
    let overflow = TensorProto {
        name: Some("w".into()),
        dims: vec![i64::MAX, 4],
        data_type: Some(DataType::Float as i32),
        ..Default::default()
    };
    let bytes = model(
        vec![node("add", "Add", &["x", "w"], &["y"])],
        vec![value("x", &[Ok(1)])],
        vec![value("y", &[Ok(1)])],
        vec![overflow],
    );
    assert!(message(Model::from_bytes(&bytes)).contains("overflow"));

    // A ConstantOfShape asked for 10^12 elements.
    let bytes = model(
        vec![node("fill", "ConstantOfShape", &["shape"], &["y"])],
        vec![],
        vec![value("y", &[Ok(1_000_000), Ok(1_000_000)])],
        vec![int64_init("shape", &[1_000_000, 1_000_000])],
    );
    let m = message(Model::from_bytes(&bytes).unwrap().run(&[]));
    assert!(
        m.contains("node fill (ConstantOfShape)") && m.contains("elements"),
        "{m}"
    );

    // An input declared with 10^12 elements is only checked against what is passed.
    let bytes = model(
        vec![node("relu", "Relu", &["x"], &["y"])],
        vec![value("x", &[Ok(1_000_000_000_000)])],
        vec![value("y", &[Ok(1_000_000_000_000)])],
        vec![],
    );
    let m = message(Model::from_bytes(&bytes).unwrap().run(&[("x", &x(&[4]))]));
    assert!(m.contains("input x") && m.contains("1000000000000"), "{m}");
}

#[test]
fn wrong_inputs_at_run() {
    let m = Model::from_bytes(&valid_model()).unwrap();
    let msg = message(m.run(&[("z", &x(&[1, 2, 1]))]));
    assert!(
        msg.contains("input z") && msg.contains("no such input"),
        "{msg}"
    );
    let msg = message(m.run(&[]));
    assert!(msg.contains("input x") && msg.contains("missing"), "{msg}");
    let msg = message(m.run(&[("x", &x(&[1, 3, 1]))]));
    assert!(
        msg.contains("input x") && msg.contains("[1, 3, 1]"),
        "{msg}"
    );
    let msg = message(m.run(&[("x", &x(&[1, 2]))]));
    assert!(msg.contains("input x") && msg.contains("batch"), "{msg}");
    let ints = Tensor::zeros(&[1, 2, 1], DType::I32);
    let msg = message(m.run(&[("x", &ints)]));
    assert!(msg.contains("input x") && msg.contains("dtype"), "{msg}");
}

#[test]
fn a_bad_attribute_names_the_node() {
    let mut transpose = node("t", "Transpose", &["x"], &["y"]);
    transpose.attribute.push(AttributeProto {
        name: Some("perm".into()),
        r#type: Some(7),
        ints: vec![0, 5],
        ..Default::default()
    });
    let bytes = model(
        vec![transpose],
        vec![value("x", &[Ok(2), Ok(3)])],
        vec![value("y", &[Ok(3), Ok(2)])],
        vec![],
    );
    let m = message(
        Model::from_bytes(&bytes)
            .unwrap()
            .run(&[("x", &x(&[2, 3]))]),
    );
    assert!(m.contains("node t (Transpose)"), "{m}");
}

/// 10,000 mutated copies of a valid model (bytes flipped, cut, repeated)
/// load or fail, and those that load run or fail, all without a panic.
#[test]
fn mutated_models_never_panic() {
    let base = valid_model();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut loaded, mut ran) = (0, 0);
    for _ in 0..10_000 {
        let mut bytes = base.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() as usize) % bytes.len();
            match next() % 4 {
                0 => bytes[at] = next() as u8,
                1 => bytes[at] ^= 1 << (next() % 8),
                2 => bytes.truncate(at.max(1)),
                _ => {
                    let b = bytes[at];
                    bytes.insert(at, b);
                }
            }
        }
        let outcome = std::panic::catch_unwind(|| {
            let Ok(m) = Model::from_bytes(&bytes) else {
                return (false, false);
            };
            let ran = m
                .run(&[("x", &x(&[2, 2, 1]))])
                .is_ok_and(|out| out.iter().all(|t| t.realize().is_ok()));
            (true, ran)
        });
        let (l, r) = outcome.unwrap_or_else(|_| panic!("a mutated model panicked: {bytes:?}"));
        loaded += usize::from(l);
        ran += usize::from(r);
    }
    println!("10000 mutations: {loaded} loaded, {ran} ran");
}
