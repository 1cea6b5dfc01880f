use morok::dsl::{kernel, model};
use morok::Tensor;

#[morok::kernel]
fn mlp(
    x: Tensor<f32, B, 64>,
    w1: Tensor<f32, 64, 128>,
    w2: Tensor<f32, 128, 10>,
) -> Tensor<f32, B, 10> {
    let h = x.dot(w1).relu();
    h.dot(w2).softmax(-1)
}

model! {
    /// A two-layer perceptron over 8×8 digits.
    pub struct DigitsMlp {
        fc1: Linear(64 -> 128),
        fc2: Linear(128 -> 10),
    }
    fn forward(x: f32[B, 64]) -> f32[B, 10] {
        fc2(fc1(x).relu()).softmax(-1)
    }
}

fn main() -> morok::Result<()> {
    let x = Tensor::rand_seeded(&[3, 64], morok::DType::F32, 1);
    let w1 = Tensor::rand_seeded(&[64, 128], morok::DType::F32, 2);
    let w2 = Tensor::rand_seeded(&[128, 10], morok::DType::F32, 3);
    let y = mlp(&x, &w1, &w2)?;
    println!("{:?}", y.shape());
    let f = kernel!(|a: f32[N, K], b: f32[K, M]| (a.dot(b) * 2.0).relu());
    println!("{:?}", f(&w1, &w2)?.shape());
    let m = DigitsMlp::new(42)?;
    let p = m.forward(&x)?.realize()?;
    println!(
        "{:?} {:?}",
        p.shape(),
        m.parameters()
            .iter()
            .map(|(n, t)| (n.clone(), t.shape().to_vec()))
            .collect::<Vec<_>>()
    );
    let path = std::env::temp_dir().join("dsl_try.safetensors");
    m.save_safetensors(&path)?;
    let m2 = DigitsMlp::load_safetensors(&path)?;
    println!(
        "{:?}",
        m2.forward(&x)?.to_vec::<f32>()? == p.to_vec::<f32>()?
    );
    println!("{}", mlp(&w1, &w1, &w2).unwrap_err());
    Ok(())
}
