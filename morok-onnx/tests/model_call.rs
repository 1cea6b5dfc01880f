//! `Model::call`: realized outputs through a plan cached per input shape
//! (the `onnx!` struct's `forward`). Warm calls launch the plan without
//! building the graph and give `Model::run`'s values on new inputs; a
//! model whose graph reads an input's values is built on every call.

#[path = "../examples/common/proto_build.rs"]
mod proto_build;

use morok::Tensor;
use morok_onnx::proto::{
    tensor_proto::DataType, type_proto, GraphProto, NodeProto, TensorShapeProto, TypeProto,
    ValueInfoProto,
};
use morok_onnx::Model;
use proto_build::{model_bytes, node, value};

fn model(
    nodes: Vec<NodeProto>,
    inputs: Vec<ValueInfoProto>,
    outputs: Vec<ValueInfoProto>,
) -> Model {
    let bytes = model_bytes(GraphProto {
        node: nodes,
        name: Some("g".into()),
        input: inputs,
        output: outputs,
        ..Default::default()
    });
    Model::from_bytes(&bytes).unwrap()
}

/// An int64 input of one dim of size `n`.
fn int64_input(name: &str, n: i64) -> ValueInfoProto {
    let dim = morok_onnx::proto::tensor_shape_proto::Dimension {
        value: Some(morok_onnx::proto::tensor_shape_proto::dimension::Value::DimValue(n)),
        ..Default::default()
    };
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(DataType::Int64 as i32),
                shape: Some(TensorShapeProto { dim: vec![dim] }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn data(n: usize, seed: f32) -> Vec<f32> {
    (0..n).map(|i| ((i as f32 + seed) * 0.37).sin()).collect()
}

/// `y = relu(a * b + a)`, `z = sum(a, axis 1)` over `a, b: [batch, 3]`:
/// two outputs, one plan.
fn two_output_model() -> Model {
    model(
        vec![
            node("mul", "Mul", &["a", "b"], &["m"]),
            node("add", "Add", &["m", "a"], &["s"]),
            node("relu", "Relu", &["s"], &["y"]),
            node("sum", "ReduceSum", &["a"], &["z"]),
        ],
        vec![
            value("a", &[Err("batch"), Ok(3)]),
            value("b", &[Err("batch"), Ok(3)]),
        ],
        vec![value("y", &[Err("batch"), Ok(3)]), value("z", &[])],
    )
}

#[test]
fn warm_calls_launch_the_plan_and_match_run() {
    let m = two_output_model();
    // The third round's batch was planned in the first.
    for (round, batch) in [2usize, 5, 2].into_iter().enumerate() {
        for seed in 0..3 {
            let a = Tensor::from_vec(data(batch * 3, seed as f32), &[batch, 3]).unwrap();
            let b = Tensor::from_vec(data(batch * 3, 10.0 + seed as f32), &[batch, 3]).unwrap();
            let before = m.warm_calls();
            // Inputs in another order than declared: the same plan.
            let got = m.call(&[("b", &b), ("a", &a)]).unwrap();
            let warm = m.warm_calls() - before;
            assert_eq!(
                warm,
                usize::from(seed > 0 || round == 2),
                "batch {batch}, call {seed}"
            );
            let want = m.run(&[("a", &a), ("b", &b)]).unwrap();
            assert_eq!(got.len(), 2);
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g.shape(), w.shape());
                assert_eq!(g.to_vec::<f32>().unwrap(), w.to_vec::<f32>().unwrap());
            }
        }
    }
}

#[test]
fn a_graph_that_reads_an_input_is_built_on_every_call() {
    // y = relu(reshape(x, s)): the target shape is an input's values.
    let m = model(
        vec![
            node("reshape", "Reshape", &["x", "s"], &["r"]),
            node("relu", "Relu", &["r"], &["y"]),
        ],
        vec![value("x", &[Ok(4)]), int64_input("s", 2)],
        vec![value("y", &[Err("r"), Err("c")])],
    );
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    for target in [[2i64, 2], [1, 4], [4, 1], [2, 2]] {
        let s = Tensor::from_vec(target.to_vec(), &[2]).unwrap();
        let before = m.warm_calls();
        let y = m.call(&[("x", &x), ("s", &s)]).unwrap();
        assert_eq!(m.warm_calls(), before);
        assert_eq!(y[0].shape(), [target[0] as usize, target[1] as usize]);
        assert_eq!(y[0].to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
    }
}

#[test]
fn wrong_inputs_are_the_same_errors_as_run() {
    let m = two_output_model();
    let a = Tensor::from_vec(data(6, 0.0), &[2, 3]).unwrap();
    let short = Tensor::from_vec(data(4, 0.0), &[2, 2]).unwrap();
    let called = m.call(&[("a", &a), ("b", &short)]).unwrap_err().to_string();
    let ran = m.run(&[("a", &a), ("b", &short)]).unwrap_err().to_string();
    assert_eq!(called, ran);
    let missing = m.call(&[("a", &a)]).unwrap_err().to_string();
    assert!(missing.contains("input b: missing"), "{missing}");
}
