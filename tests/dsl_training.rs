//! The DSL in training steps: a `#[morok::kernel]` called on parameters
//! returns its lazy result, whose gradients are the `Tensor` API's; a
//! `model!` network trains with an optimizer over its `parameters()`.

#[path = "../examples/common/mlp.rs"]
mod shared_mlp;

use morok::optim::{Adam, AdamOptions, Optimizer, Sgd, SgdOptions};
use morok::{DType, Tensor};
use shared_mlp::{mlp, DigitsMlp};

fn weights(shape: &[usize], seed: u64) -> Tensor {
    Tensor::rand_seeded(shape, DType::F32, seed)
        .sub(0.5f32)
        .unwrap()
        .mul(0.3f32)
        .unwrap()
        .realize()
        .unwrap()
}

fn close(a: &[f32], b: &[f32]) {
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{a:?} vs {b:?}");
    }
}

#[test]
fn a_kernel_on_parameters_is_differentiable() {
    let x = weights(&[8, 64], 1);
    let (w1, w2) = (weights(&[64, 128], 2), weights(&[128, 10], 3));
    let pick = weights(&[8, 10], 4);
    let opts = SgdOptions {
        lr: 0.5,
        ..SgdOptions::default()
    };
    let mut opt = Sgd::new(&[w1.clone(), w2.clone()], opts).unwrap();
    let probs = mlp(&x, &w1, &w2).unwrap();
    assert!(probs.realized_buffer().is_none(), "the result stays lazy");
    let loss = probs.mul(&pick).unwrap().sum(None, false).unwrap();
    let by_api = x
        .matmul(&w1)
        .unwrap()
        .relu()
        .unwrap()
        .matmul(&w2)
        .unwrap()
        .softmax(-1)
        .unwrap()
        .mul(&pick)
        .unwrap()
        .sum(None, false)
        .unwrap();
    let g = loss.gradient(&[&w1, &w2]).unwrap();
    let want = by_api.gradient(&[&w1, &w2]).unwrap();
    for (g, w) in g.iter().zip(&want) {
        close(&g.to_vec::<f32>().unwrap(), &w.to_vec::<f32>().unwrap());
    }
    let before = w2.to_vec::<f32>().unwrap();
    opt.minimize(&loss).unwrap();
    assert_ne!(w2.to_vec::<f32>().unwrap(), before);
}

#[test]
fn a_model_trains_over_its_named_parameters() {
    let m = DigitsMlp::new(5).unwrap();
    let named = m.parameters();
    let names: Vec<&str> = named.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]);
    let params: Vec<Tensor> = named.into_iter().map(|(_, t)| t).collect();
    let mut opt = Adam::new(
        &params,
        AdamOptions {
            lr: 0.01,
            ..AdamOptions::default()
        },
    )
    .unwrap();
    let x = weights(&[32, 64], 9);
    let labels: Vec<i32> = (0..32).map(|i| i % 10).collect();
    let y = Tensor::from_vec(labels, &[32]).unwrap();
    let mut losses = Vec::new();
    for _ in 0..20 {
        // `forward` ends in softmax: the loss is the mean negative log
        // probability of the label.
        let logp = m.forward(&x).unwrap().log().unwrap();
        let onehot = y
            .unsqueeze(1)
            .unwrap()
            .eq(Tensor::arange(0, 10, 1).unwrap())
            .unwrap();
        let loss = onehot
            .where_(&logp, 0.0f32)
            .unwrap()
            .sum(None, false)
            .unwrap()
            .div(-32.0f32)
            .unwrap();
        losses.push(opt.minimize(&loss).unwrap().to_vec::<f32>().unwrap()[0]);
    }
    assert!(losses[19] < 0.5 * losses[0], "{losses:?}");
}
