//! The DSL macros at run time: results agree with the reference evaluator
//! and with the same code written with the tensor API; bad arguments and
//! bad safetensors files are `Err`s naming the parameter (or file and
//! tensor), the dim and both values.

mod common;

use morok::dsl::{kernel, model};
use morok::{DType, Error, Tensor};

#[path = "../examples/common/mlp.rs"]
mod shared_mlp;
use shared_mlp::{mlp, DigitsMlp};

/// Uniform data in `[-1, 1)` as a plain buffer (so the reference
/// evaluator reads data, not a random-number graph).
fn rand(shape: &[usize], seed: u64) -> Tensor {
    let mut rng = common::Rng::new(seed);
    let n = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|_| rng.uniform(-1.0, 1.0) as f32).collect();
    Tensor::from_vec(data, shape).expect("sizes match")
}

#[test]
fn kernel_attr_matches_the_reference_and_the_tensor_api() -> morok::Result<()> {
    let (w1, w2) = (rand(&[64, 128], 2), rand(&[128, 10], 3));
    for b in [1, 7] {
        let x = rand(&[b, 64], 10 + b as u64);
        let y = mlp(&x, &w1, &w2)?;
        assert_eq!(y.shape(), [b, 10]);
        let by_hand = x.dot(&w1)?.relu()?.dot(&w2)?.softmax(-1)?;
        common::compare(
            morok::ScalarType::F32,
            &common::compiled(&y)?,
            &common::reference(&by_hand)?,
        )
        .unwrap();
    }
    Ok(())
}

#[test]
fn inline_kernel_with_literals_and_scalars() -> morok::Result<()> {
    let f = kernel!(|a: f32[N, K], b: f32[K, M]| (a.dot(b) * 2.0).relu());
    let (a, b) = (rand(&[3, 4], 1), rand(&[4, 2], 2));
    let y = f(&a, &b)?;
    let want = a.dot(&b)?.mul(2.0)?.relu()?;
    common::compare(
        morok::ScalarType::F32,
        &common::compiled(&y)?,
        &common::reference(&want)?,
    )
    .unwrap();
    let g = kernel!(|x: f32[N]| { let y = 1.0 - x; y / 2.0 });
    assert_eq!(
        g(&Tensor::from_slice(&[1.0f32, 3.0]))?.to_vec::<f32>()?,
        [0.0, -1.0]
    );
    Ok(())
}

fn message(e: Error) -> String {
    assert!(matches!(e, Error::Argument { .. }), "{e}");
    e.to_string()
}

#[test]
fn bad_arguments_are_errors_naming_parameter_dim_and_values() {
    let (w1, w2) = (rand(&[64, 128], 2), rand(&[128, 10], 3));
    let line = line!() + 1;
    let e = mlp(&rand(&[2, 32], 1), &w1, &w2).unwrap_err();
    assert_eq!(e.location().line(), line);
    assert!(message(e)
        .starts_with("mlp: parameter `x` dim 1 is 32 but the signature says 64 (f32[B, 64])"));
    let e = mlp(&rand(&[2, 64, 1], 1), &w1, &w2).unwrap_err();
    assert!(message(e)
        .contains("parameter `x` has 3 axes [2, 64, 1] but the signature says f32[B, 64]"));
    let ints = Tensor::zeros(&[2, 64], DType::I32);
    let e = mlp(&ints, &w1, &w2).unwrap_err();
    assert!(
        message(e).contains("parameter `x` holds i32 elements but the signature says f32[B, 64]")
    );
    let f = kernel!(|a: f32[N, K], b: f32[N, K]| a + b);
    let e = f(&rand(&[2, 3], 1), &rand(&[5, 3], 2)).unwrap_err();
    assert!(message(e).starts_with(
        "kernel!: dim `N` is 2 in parameter `a` (dim 0) but 5 in parameter `b` (dim 0)"
    ));
    // A tensor carrying an error passes that error on.
    let bad = &rand(&[2], 1) + &rand(&[3], 1);
    assert_eq!(mlp(&bad, &w1, &w2).unwrap_err().op(), "add");
}

#[test]
fn model_parameters_forward_and_safetensors() -> morok::Result<()> {
    let m = DigitsMlp::new(42)?;
    let params = m.parameters();
    let names: Vec<(&str, &[usize])> = params
        .iter()
        .map(|(n, t)| (n.as_str(), t.shape()))
        .collect();
    assert_eq!(
        names,
        [
            ("fc1.weight", &[128, 64][..]),
            ("fc1.bias", &[128][..]),
            ("fc2.weight", &[10, 128][..]),
            ("fc2.bias", &[10][..])
        ]
    );
    // PyTorch's default init: uniform in ±1/sqrt(in_features).
    let w = params[0].1.to_vec::<f32>()?;
    assert!(w.iter().all(|v| v.abs() <= 1.0 / 8.0));
    assert!(w.iter().any(|v| v.abs() > 0.1));
    assert_eq!(DigitsMlp::new(42)?.parameters()[0].1.to_vec::<f32>()?, w);
    assert_ne!(DigitsMlp::new(43)?.parameters()[0].1.to_vec::<f32>()?, w);

    let x = rand(&[5, 64], 9);
    let y = m.forward(&x)?;
    let h = x.linear(&params[0].1, Some(&params[1].1))?.relu()?;
    let want = h.linear(&params[2].1, Some(&params[3].1))?.softmax(-1)?;
    common::compare(
        morok::ScalarType::F32,
        &common::compiled(&y)?,
        &common::reference(&want)?,
    )
    .unwrap();

    let dir = std::env::temp_dir().join(format!("morok-dsl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("digits.safetensors");
    m.save_safetensors(&path)?;
    let m2 = DigitsMlp::load_safetensors(&path)?;
    assert_eq!(m2.forward(&x)?.to_vec::<f32>()?, y.to_vec::<f32>()?);

    // Missing, truncated and mismatched files name the file (and tensor).
    let missing = dir.join("missing.safetensors");
    let e = DigitsMlp::load_safetensors(&missing)
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.safetensors"), "{e}");
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.join("cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = DigitsMlp::load_safetensors(&cut).unwrap_err().to_string();
    assert!(
        e.starts_with("load_safetensors: ") && e.contains("cut.safetensors"),
        "{e}"
    );
    model! {
        struct Wider { fc1: Linear(64 -> 100) }
        fn forward(x: f32[B, 64]) -> f32[B, 100] { fc1(x) }
    }
    let e = Wider::load_safetensors(&path).unwrap_err().to_string();
    assert!(
        e.contains("digits.safetensors: tensor `fc1.weight`: has shape [128, 64], the model expects [100, 64]"),
        "{e}"
    );
    let w = Wider::new(1)?;
    assert_eq!(w.forward(&x)?.realize()?.shape(), [5, 100]);
    std::fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

/// `B` fixed by the attribute: the kernel takes that one value.
#[morok::kernel(B = 4)]
fn fixed_relu(x: Tensor<f32, B, 8>) -> Tensor<f32, B, 8> {
    (x * 2.0).relu()
}

#[test]
fn fixed_dims_bind_one_value_and_render_ahead_of_time() -> morok::Result<()> {
    let x = rand(&[4, 8], 1);
    let want: Vec<f32> = x
        .to_vec::<f32>()?
        .iter()
        .map(|v| (v * 2.0).max(0.0))
        .collect();
    let (cold, warm) = (fixed_relu(&x)?, fixed_relu(&x)?);
    assert_eq!(cold.to_vec::<f32>()?, want);
    assert_eq!(warm.to_vec::<f32>()?, want);
    // A plan's results list its kernels, cold or warm.
    let kernels = warm.kernels();
    assert_eq!(kernels.len(), 1);
    assert_eq!(cold.kernels(), kernels);
    assert!(kernels[0].code.contains(&kernels[0].name));
    let e = fixed_relu(&rand(&[3, 8], 2)).unwrap_err();
    assert!(message(e).starts_with(
        "fixed_relu: dim `B` is 3 in parameter `x` (dim 0) but the kernel fixes it to 4"
    ));
    // What a build script compiles: one C kernel, whose entry point is in
    // its source; with `llvm`, also the LLVM device's object of it.
    let sources = morok::aot::render(&morok::aot::kernels!(fixed_relu))?;
    let (c, llvm): (Vec<_>, Vec<_>) = sources.iter().partition(|k| k.object.is_none());
    assert_eq!(c.len(), 1);
    let k = c[0];
    assert_eq!(k.function, "fixed_relu");
    assert!(
        k.source.contains(&format!("void {}(", k.entry)),
        "{}",
        k.source
    );
    assert_eq!(k.key.len(), 64);
    assert_eq!(llvm.len(), usize::from(cfg!(feature = "llvm")));
    for l in llvm {
        assert!(l.entry.starts_with(&k.entry) && l.key.starts_with("llvm:"));
        assert!(l.object.as_ref().is_some_and(|o| !o.is_empty()));
    }
    // A named dim that nothing fixes cannot be compiled ahead of time.
    let e = morok::aot::render(&morok::aot::kernels!(shared_mlp::mlp)).unwrap_err();
    assert!(e
        .to_string()
        .contains("kernel `mlp` has named dims [B]: fix each to a value"));
    Ok(())
}

/// The functions of a list of tensors and `index` in `kernel!` and
/// `model!` bodies agree with the reference evaluator on the API's graph.
#[test]
fn functions_and_index_in_inline_kernels_and_models() -> morok::Result<()> {
    use morok::{Index, Slice};
    let close = |got: &Tensor, want: &Tensor| -> morok::Result<()> {
        common::compare(
            morok::ScalarType::F32,
            &common::compiled(got)?,
            &common::reference(want)?,
        )
        .unwrap();
        Ok(())
    };
    let f = kernel!(|a: f32[N, K], b: f32[K, M]| Tensor::einsum("nk,km->mn", [a, b]));
    let (a, b) = (rand(&[3, 4], 21), rand(&[4, 2], 22));
    close(&f(&a, &b)?, &Tensor::einsum("nk,km->mn", &[&a, &b])?)?;
    let g = kernel!(|a: f32[N, 3], b: f32[N, 3]| {
        Tensor::cat([a, b], 1).index([Index::Slice(..), Index::Slice(1..), Index::NewAxis])
    });
    let (a3, c) = (rand(&[3, 3], 23), rand(&[3, 3], 26));
    let want = Tensor::cat(&[&a3, &c], 1)?.index(&[
        Index::Slice(Slice::all()),
        Index::Slice(Slice::from(1)),
        Index::NewAxis,
    ])?;
    close(&g(&a3, &c)?, &want)?;
    model! {
        struct Heads { fc: Linear(4 -> 3) }
        fn forward(x: f32[B, 4], y: f32[B, 4]) -> f32[B, 2, 3] {
            Tensor::stack([fc(x), fc(y)], 1)
        }
    }
    let heads = Heads::new(5)?;
    let (x, y) = (rand(&[2, 4], 24), rand(&[2, 4], 25));
    let by_hand = |t: &Tensor| t.linear(&heads.fc.weight, heads.fc.bias.as_ref());
    let want = Tensor::stack(&[&by_hand(&x)?, &by_hand(&y)?], 1)?;
    close(&heads.forward(&x, &y)?, &want)?;
    Ok(())
}
