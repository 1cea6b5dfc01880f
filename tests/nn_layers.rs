//! The `nn` layers with state or modes: batch normalization (batch and
//! running statistics), dropout (rates, scaling, fresh masks per step),
//! multi-head attention (against the same computation with the `Tensor`
//! API), their parameter names, saving and loading, and their errors.

use morok::nn::{BatchNorm2d, Dropout, Linear, Module, MultiheadAttention, ParamFile};
use morok::optim::{Optimizer, Sgd, SgdOptions};
use morok::{AttentionOptions, DType, Tensor};

fn close(a: &[f32], b: &[f32], tol: f32) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{a:?}\nvs {b:?}");
    }
}

fn images() -> Tensor {
    Tensor::randn_seeded(&[4, 3, 5, 5], DType::F32, 11)
        .mul(2.0f32)
        .unwrap()
        .add(1.0f32)
        .unwrap()
        .realize()
        .unwrap()
}

#[test]
fn batch_norm_uses_batch_statistics_in_training_and_running_ones_in_eval() {
    let x = images();
    let mut bn = BatchNorm2d::new(3).unwrap();
    bn.train(true);
    let y = bn.forward(&x).unwrap();
    let mean = x.mean(Some(&[0, 2, 3]), true).unwrap();
    let var = x.var(Some(&[0, 2, 3]), 0, true).unwrap();
    let want = x
        .sub(&mean)
        .unwrap()
        .div(var.add(1e-5f32).unwrap().sqrt().unwrap())
        .unwrap();
    close(
        &y.to_vec::<f32>().unwrap(),
        &want.to_vec::<f32>().unwrap(),
        1e-4,
    );

    // The step writes the running statistics with the parameters.
    let mut named = Vec::new();
    bn.parameters("bn", &mut named);
    let params: Vec<Tensor> = named.into_iter().map(|(_, t)| t).collect();
    let mut opt = Sgd::new(&params, SgdOptions::default()).unwrap();
    let loss = y.mul(&y).unwrap().mean(None, false).unwrap();
    let updates = bn.take_updates();
    assert_eq!(updates.len(), 2);
    assert!(bn.take_updates().is_empty());
    opt.minimize_with(&loss, &updates).unwrap();
    let m: Vec<f32> = mean
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|v| 0.1 * v)
        .collect();
    close(&bn.running_mean.to_vec::<f32>().unwrap(), &m, 1e-5);
    let n = 100.0f32;
    let v: Vec<f32> = var
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|v| 0.9 + 0.1 * v * n / (n - 1.0))
        .collect();
    close(&bn.running_var.to_vec::<f32>().unwrap(), &v, 1e-5);

    // Evaluation normalizes with the running statistics.
    bn.train(false);
    let y = bn.forward(&x).unwrap();
    assert!(bn.take_updates().is_empty());
    let rm = bn.running_mean.reshape(&[1, 3, 1, 1]).unwrap();
    let rv = bn.running_var.reshape(&[1, 3, 1, 1]).unwrap();
    let want = x
        .sub(&rm)
        .unwrap()
        .div(rv.add(1e-5f32).unwrap().sqrt().unwrap())
        .unwrap()
        .mul(bn.weight.reshape(&[1, 3, 1, 1]).unwrap())
        .unwrap()
        .add(bn.bias.reshape(&[1, 3, 1, 1]).unwrap())
        .unwrap();
    close(
        &y.to_vec::<f32>().unwrap(),
        &want.to_vec::<f32>().unwrap(),
        1e-4,
    );

    let mut names = Vec::new();
    bn.state("bn", &mut names);
    let names: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"]
    );
    let e = bn
        .forward(&Tensor::ones(&[2, 4, 3, 3], DType::F32))
        .unwrap_err();
    assert!(
        e.to_string().contains("[2, 4, 3, 3] is not [N, 3, H, W]"),
        "{e}"
    );
}

#[test]
fn dropout_drops_at_its_rate_scales_the_rest_and_draws_new_masks_each_step() {
    let x = Tensor::ones(&[100, 100], DType::F32).realize().unwrap();
    let mut d = Dropout::new(0.3, 5).unwrap();
    assert_eq!(
        d.forward(&x).unwrap().to_vec::<f32>().unwrap(),
        vec![1.0; 10_000]
    );
    d.train(true);
    let w = Tensor::ones(&[1], DType::F32).realize().unwrap();
    let mut opt = Sgd::new(std::slice::from_ref(&w), SgdOptions::default()).unwrap();
    let mut masks = Vec::new();
    for _ in 0..2 {
        // Realized before the step: a lazy `y` read after it would see the
        // advanced key (an assignment is seen by every graph that reads
        // the buffer).
        let y = d.forward(&x).unwrap().realize().unwrap();
        let loss = y.mul(&w).unwrap().sum(None, false).unwrap();
        opt.minimize_with(&loss, &d.take_updates()).unwrap();
        let v = y.to_vec::<f32>().unwrap();
        let dropped = v.iter().filter(|&&e| e == 0.0).count();
        assert!(
            (2700..3300).contains(&dropped),
            "{dropped} of 10000 dropped"
        );
        assert!(v.iter().all(|&e| e == 0.0 || (e - 1.0 / 0.7).abs() < 1e-6));
        masks.push(v);
    }
    assert!(masks[0] != masks[1], "the key advanced with the step");
    let again = Dropout::new(0.3, 5).unwrap();
    let mut again = again;
    again.train(true);
    let first = again.forward(&x).unwrap().to_vec::<f32>().unwrap();
    assert!(first == masks[0], "the same seed gives the same mask");
    let e = Dropout::new(1.5, 0).unwrap_err();
    assert!(e.to_string().contains("p = 1.5"), "{e}");
}

#[test]
fn multihead_attention_matches_the_tensor_api() {
    let (b, l, s, e, h) = (2, 5, 3, 8, 2);
    let mha = MultiheadAttention::new(e, h, 3).unwrap();
    let q = Tensor::randn_seeded(&[b, l, e], DType::F32, 1)
        .realize()
        .unwrap();
    let kv = Tensor::randn_seeded(&[b, s, e], DType::F32, 2)
        .realize()
        .unwrap();
    let got = mha
        .forward(&q, &kv, &kv, &AttentionOptions::default())
        .unwrap();
    assert_eq!(got.shape(), [b, l, e]);

    // By hand: project, split heads, softmax(q kᵀ / √d) v, join, project.
    let d = (e / h) as isize;
    let w = mha.in_proj_weight.to_vec::<f32>().unwrap();
    let part =
        |i: usize| Tensor::from_vec(w[i * e * e..(i + 1) * e * e].to_vec(), &[e, e]).unwrap();
    let split = |x: &Tensor, i: usize| {
        let n = x.shape()[1] as isize;
        x.matmul(&part(i).transpose(0, 1).unwrap())
            .unwrap()
            .reshape(&[b as isize, n, h as isize, d])
            .unwrap()
            .permute(&[0, 2, 1, 3])
            .unwrap()
    };
    let (qh, kh, vh) = (split(&q, 0), split(&kv, 1), split(&kv, 2));
    let scores = qh
        .matmul(&kh.transpose(-1, -2).unwrap())
        .unwrap()
        .div((d as f32).sqrt())
        .unwrap()
        .softmax(-1)
        .unwrap();
    let joined = scores
        .matmul(&vh)
        .unwrap()
        .permute(&[0, 2, 1, 3])
        .unwrap()
        .reshape(&[b as isize, l as isize, e as isize])
        .unwrap();
    let want = joined
        .matmul(&mha.out_proj.weight.transpose(0, 1).unwrap())
        .unwrap();
    close(
        &got.to_vec::<f32>().unwrap(),
        &want.to_vec::<f32>().unwrap(),
        1e-4,
    );

    let causal = AttentionOptions {
        is_causal: true,
        ..AttentionOptions::default()
    };
    let c = mha.forward(&q, &q, &q, &causal).unwrap();
    assert_eq!(c.shape(), [b, l, e]);

    let mut names = Vec::new();
    mha.parameters("attn", &mut names);
    let names: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "attn.in_proj_weight",
            "attn.in_proj_bias",
            "attn.out_proj.weight",
            "attn.out_proj.bias"
        ]
    );
    // Trainable: the gradient reaches every parameter.
    let loss = got.sum(None, false).unwrap();
    let grads = loss
        .gradient(&[&mha.in_proj_weight, &mha.out_proj.weight])
        .unwrap();
    assert_eq!(grads[0].shape(), [3 * e, e]);
    assert!(grads[0].to_vec::<f32>().unwrap().iter().any(|v| *v != 0.0));
    assert!(MultiheadAttention::new(10, 3, 0).is_err());
    let e = mha
        .forward(&kv.reshape(&[6, 8]).unwrap(), &kv, &kv, &causal)
        .unwrap_err();
    assert!(e.to_string().contains("is not [batch, length, 8]"), "{e}");
}

#[test]
fn a_state_dict_saves_and_loads_through_safetensors() {
    let fc = Linear::init(4, 3, true, 9).unwrap();
    let mut bn = BatchNorm2d::new(3).unwrap();
    bn.train(true);
    bn.forward(&images()).unwrap();
    for (t, v) in bn.take_updates() {
        t.assign(&v).unwrap();
    }
    let mut state = Vec::new();
    fc.state("fc", &mut state);
    bn.state("bn", &mut state);
    let path = std::env::temp_dir().join(format!("nn-state-{}.safetensors", std::process::id()));
    morok::nn::save_safetensors(&path, &state).unwrap();
    let file = ParamFile::open(&path).unwrap();
    for (name, t) in &state {
        let loaded = file.take(name, t.shape()).unwrap();
        assert_eq!(
            loaded.to_vec::<f32>().unwrap(),
            t.to_vec::<f32>().unwrap(),
            "{name}"
        );
    }
    std::fs::remove_file(&path).unwrap();
}
