morok::dsl::model! {
    pub struct Mlp {
        fc1: Linear(64 -> 128),
        fc2: Linear(64 -> 10),
    }
    fn forward(x: f32[B, 64]) -> f32[B, 10] {
        fc2(fc1(x).relu())
    }
}

fn main() -> morok::Result<()> {
    let m = Mlp::new(1)?;
    let x = morok::Tensor::zeros(&[2, 64], morok::DType::F32);
    let _y = m.forward(&x)?.realize()?;
    let _n = m.parameters().len();
    m.save_safetensors("m.safetensors")?;
    let _m2 = Mlp::load_safetensors("m.safetensors")?;
    Ok(())
}
