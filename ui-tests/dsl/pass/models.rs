use morok::dsl::model;
use morok::{DType, Tensor};

model! {
    /// Every layer kind.
    pub struct Net {
        emb: Embedding(10 -> 8),
        conv: Conv2d(1 -> 2, kernel = 3, stride = 1, padding = 1),
        norm: LayerNorm(8),
        fc: Linear(8 -> 4, bias = false),
        scale: Param[4],
    }
    /// Token path.
    pub fn tokens(ids: i32[B, T]) -> f32[B, T, 4] {
        fc(norm(emb(ids))) * scale
    }
    fn image(x: f32[B, 1, H, W]) -> f32[B, 2, H, W] {
        conv(x).relu()
    }
}

fn main() -> morok::Result<()> {
    let net = Net::new(7)?;
    let names: Vec<String> = net.parameters().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        ["emb.weight", "conv.weight", "conv.bias", "norm.weight", "norm.bias", "fc.weight", "scale"]
    );
    let ids = Tensor::from_vec(vec![1i32, 2, 3, 9], &[2, 2])?;
    assert_eq!(net.tokens(&ids)?.realize()?.shape(), [2, 2, 4]);
    let img = Tensor::rand_seeded(&[1, 1, 5, 6], DType::F32, 3);
    assert_eq!(net.image(&img)?.realize()?.shape(), [1, 2, 5, 6]);
    Ok(())
}
