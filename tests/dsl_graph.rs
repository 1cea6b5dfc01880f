//! The graph a kernel macro embeds is static data: this test reads the
//! node table `#[morok::kernel]` emitted for a small kernel, and checks
//! that building it gives the very graph the same code written with the
//! `Tensor` API gives (interned nodes: the same root), with the results
//! of the reference evaluator.

mod common;

use morok::dsl::graph::{self, DimTok, Graph, Node, NodeOp, OpId, Src};
use morok::{ScalarType, Tensor};
use std::sync::Arc;

#[morok::kernel]
fn small(x: Tensor<f32, N, 2>, b: Tensor<f32, 2>) -> Tensor<f32, N> {
    let y = (2.0 - x * b).relu();
    y.reshape([N * 2]).reshape([N, 2]).sum([1], false)
}

/// An f32 node.
const fn node(op: NodeOp, src: &'static [Src]) -> Node {
    Node {
        op,
        dtype: ScalarType::F32,
        src,
    }
}

#[test]
fn the_emitted_table_is_the_body_in_evaluation_order() {
    use DimTok::*;
    const WANT: Graph = Graph {
        nodes: &[
            node(NodeOp::Arg(0), &[]),
            node(NodeOp::Arg(1), &[]),
            node(NodeOp::Op(OpId::Mul, &[]), &[Src::Node(0), Src::Node(1)]),
            node(NodeOp::Op(OpId::Sub, &[]), &[Src::F64(2.0), Src::Node(2)]),
            node(NodeOp::Op(OpId::Relu, &[]), &[Src::Node(3)]),
            node(
                NodeOp::Op(
                    OpId::Reshape,
                    &[graph::Lit::Dims(&[&[Name(0), Lit(2), Mul]])],
                ),
                &[Src::Node(4)],
            ),
            node(
                NodeOp::Op(OpId::Reshape, &[graph::Lit::Dims(&[&[Name(0)], &[Lit(2)]])]),
                &[Src::Node(5)],
            ),
            node(
                NodeOp::Op(
                    OpId::Sum,
                    &[graph::Lit::Axes(&[1]), graph::Lit::Bool(false)],
                ),
                &[Src::Node(6)],
            ),
        ],
        result: 7,
    };
    let spec = __morok_aot_small();
    assert_eq!(*spec.graph, WANT);
    assert_eq!(spec.sig.names, ["N"]);
}

#[test]
fn building_the_table_gives_the_tensor_api_graph() -> morok::Result<()> {
    let mut rng = common::Rng::new(7);
    for n in [1usize, 3, 5] {
        let xs: Vec<f64> = (0..2 * n).map(|_| rng.uniform(-2.0, 2.0)).collect();
        let x = common::tensor(ScalarType::F32, &[n, 2], &xs);
        let b = common::tensor(ScalarType::F32, &[2], &[0.5, -1.5]);
        let spec = __morok_aot_small();
        let built = spec.graph.build(spec.sig, &[&x, &b], &[], &[])?;
        let api = x
            .mul(&b)
            .and_then(|p| p.full_like(2.0)?.sub(&p))?
            .relu()?
            .reshape(&[2 * n as isize])?
            .reshape(&[n as isize, 2])?
            .sum(Some(&[1]), false)?;
        assert!(Arc::ptr_eq(&built.uop(), &api.uop()), "n = {n}");
        common::check(&built).map_err(|e| morok::Error::runtime("test", e))?;
        let want = common::reference(&api)?;
        common::close(&common::compiled(&small(&x, &b)?)?, &want);
    }
    Ok(())
}

#[test]
fn a_table_checks_its_arguments_like_the_function() {
    let spec = __morok_aot_small();
    let x = Tensor::from_vec(vec![1.0f32; 6], &[2, 3]).expect("sizes match");
    let b = Tensor::from_vec(vec![1.0f32; 2], &[2]).expect("sizes match");
    let e = spec.graph.build(spec.sig, &[&x, &b], &[], &[]).unwrap_err();
    assert!(
        e.to_string()
            .contains("parameter `x` dim 1 is 3 but the signature says 2"),
        "{e}"
    );
}
