use morok::dsl::kernel;
use morok::{DType, Tensor};

#[morok::kernel]
fn mlp(x: Tensor<f32, B, 64>, w1: Tensor<f32, 64, 128>, w2: Tensor<f32, 128, 10>) -> Tensor<f32, B, 10> {
    let h = x.dot(w1).relu();
    h.dot(w2).softmax(-1)
}

#[morok::kernel]
fn everything(x: Tensor<f32, B, 4>, y: Tensor<f32, 4>, m: Tensor<i32, B, 4>) -> Tensor<f32, B, 2> {
    let a = (x + y) * 2.0 - 1.0;
    let b = -a.abs().sqrt().exp().log() / 3.0;
    let c = b.gelu().silu().sigmoid().tanh().maximum(x).minimum(y);
    let d = (c.gt(0.0)).where_(c, x.layernorm([-1], 0.00001));
    let e = d.reshape([B, 2, -1]).transpose(1, 2).permute([0, 2, 1]);
    let f = e.sum([2], false) + e.mean([2], false) + e.max([2], false) - e.min([2], false);
    let g = m.cast(f32) + f.reshape([B * 2 / 2, 2]).log_softmax(-1).reshape([B, 2, 1]).expand([B, 2, 2]).reshape([B, 4]);
    let h = g.expand([3, B, 4]).sum([0], true).reshape([B, 4]);
    let idx = h.argmax(1).cast(f32).reshape([B, 1]);
    (h + idx).reshape([B, 2, 2]).sum([2], false)
}

fn main() -> morok::Result<()> {
    let x = Tensor::rand_seeded(&[3, 64], DType::F32, 1);
    let w1 = Tensor::rand_seeded(&[64, 128], DType::F32, 2);
    let w2 = Tensor::rand_seeded(&[128, 10], DType::F32, 3);
    assert_eq!(mlp(&x, &w1, &w2)?.shape(), [3, 10]);
    let f = kernel!(|a: f32[N, K], b: f32[K, M]| (a.dot(b) * 2.0).relu());
    assert_eq!(f(&w1, &w2)?.shape(), [64, 10]);
    let x = Tensor::rand_seeded(&[5, 4], DType::F32, 4);
    let y = Tensor::rand_seeded(&[4], DType::F32, 5);
    let m = Tensor::zeros(&[5, 4], DType::I32);
    assert_eq!(everything(&x, &y, &m)?.shape(), [5, 2]);
    let scalar = kernel!(|s: f32| s * 2.0);
    assert_eq!(scalar(&Tensor::from_slice(&[1.5f32]).reshape(&[])?)?.to_vec::<f32>()?, [3.0]);
    Ok(())
}
