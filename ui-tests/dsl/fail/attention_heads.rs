#[morok::kernel]
fn f(q: Tensor<f32, 1, 4, 8, 16>, k: Tensor<f32, 1, 3, 8, 16>, v: Tensor<f32, 1, 3, 8, 16>) -> Tensor<f32, 1, 4, 8, 16> {
    q.scaled_dot_product_attention(k, v, AttentionOptions { enable_gqa: true, ..Default::default() })
}

fn main() {}
