//! Loads an ONNX model, runs it on a deterministic input and prints the
//! top outputs.
//!
//! `cargo run -p morok-onnx --example onnx_run -- path/to/model.onnx`
//! feeds every input `arange(n) / n` in its declared shape (named or
//! unknown dims taken as 1). Without a path it builds a small classifier
//! in memory (Conv → Relu → GlobalAveragePool → Flatten → Gemm → Softmax,
//! fixed weights) and runs that.

use morok::{DType, Tensor};
#[path = "common/proto_build.rs"]
mod proto_build;

use morok_onnx::proto::{
    attribute_proto::AttributeType, tensor_proto::DataType, AttributeProto, GraphProto, NodeProto,
    TensorProto,
};
use morok_onnx::{Dim, Model};
use proto_build::{model_bytes, node, value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = match std::env::args().nth(1) {
        Some(path) => Model::load(&path)?,
        None => Model::from_bytes(&demo_model())?,
    };
    println!("opset {}, producer {:?}", model.opset(), model.producer());
    let mut feeds = Vec::new();
    for input in model.inputs() {
        let shape: Vec<usize> = input
            .shape
            .iter()
            .flatten()
            .map(|d| if let Dim::Fixed(n) = d { *n } else { 1 })
            .collect();
        let n: usize = shape.iter().product();
        let ramp: Vec<f32> = (0..n).map(|i| i as f32 / n.max(1) as f32).collect();
        let dtype = input
            .dtype
            .ok_or(format!("input {} has type {}", input.name, input.type_name))?;
        let t = Tensor::from_vec(ramp, &shape)?.cast(dtype)?;
        println!("input {} {} {:?}", input.name, input.type_name, shape);
        feeds.push((input.name.clone(), t));
    }
    let named: Vec<(&str, &Tensor)> = feeds.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let start = std::time::Instant::now();
    let outputs = model.run(&named)?;
    let realized = Tensor::realize_all(&outputs.iter().collect::<Vec<_>>())?;
    println!(
        "ran in {:.1} ms (first call: includes compiling)",
        start.elapsed().as_secs_f64() * 1e3
    );
    for (info, t) in model.outputs().iter().zip(&realized) {
        let values = t.cast(DType::F64)?.to_vec::<f64>()?;
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
        let top: Vec<String> = order
            .iter()
            .take(5)
            .map(|&i| format!("[{i}] {:.4}", values[i]))
            .collect();
        println!(
            "output {} {:?}: top {}",
            info.name,
            t.shape(),
            top.join(", ")
        );
    }
    Ok(())
}

fn tensor(name: &str, dims: &[i64], values: Vec<f32>) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(DataType::Float as i32),
        float_data: values,
        ..Default::default()
    }
}

/// `proto_build::node` named after its one output, with integer-list
/// attributes.
fn node_with(op: &str, inputs: &[&str], output: &str, ints: &[(&str, &[i64])]) -> NodeProto {
    NodeProto {
        attribute: ints
            .iter()
            .map(|(name, v)| AttributeProto {
                name: Some(name.to_string()),
                r#type: Some(AttributeType::Ints as i32),
                ints: v.to_vec(),
                ..Default::default()
            })
            .collect(),
        ..node(output, op, inputs, &[output])
    }
}

/// A 3-channel 16×16 image classifier into 10 classes, weights from a
/// fixed formula.
fn demo_model() -> Vec<u8> {
    let wave = |n: usize, k: f32| {
        (0..n)
            .map(|i| (i as f32 * k).sin() * 0.5)
            .collect::<Vec<f32>>()
    };
    let graph = GraphProto {
        name: Some("demo".into()),
        node: vec![
            node_with(
                "Conv",
                &["image", "conv_w", "conv_b"],
                "conv",
                &[("pads", &[1, 1, 1, 1])],
            ),
            node_with("Relu", &["conv"], "relu", &[]),
            node_with("GlobalAveragePool", &["relu"], "pooled", &[]),
            node_with("Flatten", &["pooled"], "features", &[]),
            node_with("Gemm", &["features", "fc_w", "fc_b"], "logits", &[]),
            node_with("Softmax", &["logits"], "probabilities", &[]),
        ],
        initializer: vec![
            tensor("conv_w", &[8, 3, 3, 3], wave(8 * 27, 0.37)),
            tensor("conv_b", &[8], wave(8, 1.1)),
            tensor("fc_w", &[8, 10], wave(80, 0.53)),
            tensor("fc_b", &[10], wave(10, 0.29)),
        ],
        input: vec![value("image", &[Err("batch"), Ok(3), Ok(16), Ok(16)])],
        output: vec![value("probabilities", &[Err("batch"), Ok(10)])],
        ..Default::default()
    };
    model_bytes(graph)
}
