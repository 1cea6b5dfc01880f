//! The `model!` layers beyond `Linear`: `Conv1d`, `BatchNorm2d`,
//! `GroupNorm`, `Dropout`, `MultiheadAttention` and `Sequential` blocks.
//! Each forward equals the same computation written with the `Tensor`
//! API on the model's own parameters (reference evaluator); the names
//! are PyTorch's `state_dict`'s; the buffers save and load; training mode
//! switches dropout and batch statistics on.

use morok::nn::Module;
use morok::{AttentionOptions, Conv1dOptions, DType, Pads, Tensor};

mod common;

use common::{close, vals};

morok::dsl::model! {
    /// A small convolutional sequence model with every new layer kind.
    pub struct Blocks {
        conv: Conv1d(4 -> 6, kernel = 3, padding = 1),
        gn: GroupNorm(2, 6),
        bn: BatchNorm2d(6),
        attn: MultiheadAttention(6, heads = 2, causal = true),
        drop: Dropout(0.5),
        head: Sequential(Linear(6 -> 8), Relu, Dropout(0.25), Linear(8 -> 3), Tanh),
    }
    fn forward(x: f32[B, 4, 5]) -> f32[B, 5, 3] {
        let y = gn(conv(x));
        let z = bn(y.unsqueeze(3)).squeeze(3);
        head(drop(attn(z.transpose(1, 2))))
    }
}

fn input() -> Tensor {
    Tensor::randn_seeded(&[2, 4, 5], DType::F32, 11)
}

/// The forward pass by hand, on the model's parameters, in evaluation
/// mode.
fn by_hand(m: &Blocks, x: &Tensor) -> morok::Result<Tensor> {
    let conv = x.conv1d(
        &m.conv.weight,
        Some(&m.conv.bias),
        Conv1dOptions {
            padding: Pads::same(1),
            ..Conv1dOptions::default()
        },
    )?;
    let g = conv
        .reshape(&[2, 2, -1])?
        .layernorm(&[-1], None, None, 1e-5)?
        .reshape(&[2, 6, 5])?
        .mul(&m.gn.weight.reshape(&[1, 6, 1])?)?
        .add(&m.gn.bias.reshape(&[1, 6, 1])?)?;
    let b = g
        .sub(&m.bn.running_mean.reshape(&[1, 6, 1])?)?
        .mul(&m.bn.running_var.add(1e-5)?.rsqrt()?.reshape(&[1, 6, 1])?)?
        .mul(&m.bn.weight.reshape(&[1, 6, 1])?)?
        .add(&m.bn.bias.reshape(&[1, 6, 1])?)?;
    let t = b.transpose(1, 2)?;
    let causal = AttentionOptions {
        is_causal: true,
        ..AttentionOptions::default()
    };
    let a = m.attn.attention.forward(&t, &t, &t, &causal)?;
    let params = m.parameters();
    let p = |name: &str| {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
            .expect("a parameter of that name")
    };
    a.linear(&p("head.0.weight"), Some(&p("head.0.bias")))?
        .relu()?
        .linear(&p("head.3.weight"), Some(&p("head.3.bias")))?
        .tanh()
}

#[test]
fn each_layer_computes_what_the_tensor_api_does() -> morok::Result<()> {
    let m = Blocks::new(5)?;
    let x = input();
    let y = m.forward(&x)?;
    assert_eq!(y.shape(), &[2, 5, 3]);
    close(&vals(&y), &vals(&by_hand(&m, &x)?));
    Ok(())
}

#[test]
fn names_follow_pytorch_and_buffers_are_saved() -> morok::Result<()> {
    let m = Blocks::new(5)?;
    let names: Vec<String> = m.parameters().into_iter().map(|(n, _)| n).collect();
    for want in [
        "conv.weight",
        "conv.bias",
        "gn.weight",
        "bn.weight",
        "attn.in_proj_weight",
        "attn.out_proj.weight",
        "head.0.weight",
        "head.3.bias",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    assert!(!names.iter().any(|n| n.contains("running")), "{names:?}");
    let state: Vec<String> = m.state().into_iter().map(|(n, _)| n).collect();
    assert!(state.iter().any(|n| n == "bn.running_var"), "{state:?}");

    let dir = std::env::temp_dir().join(format!("morok-dsl-layers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| morok::Error::argument("test", e.to_string()))?;
    let path = dir.join("blocks.safetensors");
    let mut trained = Blocks::new(5)?;
    trained.bn.running_mean = Tensor::full(&[6], 0.5f32).realize()?;
    trained.save_safetensors(&path)?;
    let loaded = Blocks::load_safetensors(&path)?;
    close(
        &vals(&loaded.bn.running_mean),
        &vals(&trained.bn.running_mean),
    );
    let x = input();
    close(&vals(&loaded.forward(&x)?), &vals(&trained.forward(&x)?));
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

#[test]
fn training_mode_drops_and_uses_batch_statistics() -> morok::Result<()> {
    let mut m = Blocks::new(5)?;
    let x = input();
    let eval = vals(&m.forward(&x)?);
    assert!(m.take_updates().is_empty());
    m.train(true);
    let train = vals(&m.forward(&x)?);
    assert_ne!(
        eval, train,
        "dropout and batch statistics change the output"
    );
    // Running statistics (2) and the dropout keys (2) move after the step.
    assert_eq!(m.take_updates().len(), 4);
    m.train(false);
    close(&vals(&m.forward(&x)?), &eval);
    let mut drop = m.drop.clone();
    drop.train(true);
    let kept = vals(&drop.forward(&Tensor::ones(&[1000], DType::F32))?);
    let zeros = kept.iter().filter(|&&v| v == 0.0).count();
    assert!(
        (350..650).contains(&zeros),
        "{zeros} of 1000 dropped at p = 0.5"
    );
    assert!(kept.iter().all(|&v| v == 0.0 || (v - 2.0).abs() < 1e-6));
    Ok(())
}
