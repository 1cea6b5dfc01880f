#[morok::kernel]
fn f(q: Tensor<f32, 1, 4, 8, 16>, m: Tensor<bool, 8, 8>) -> Tensor<f32, 1, 4, 8, 16> {
    q.scaled_dot_product_attention(q, q, AttentionOptions { mask: Some(m), ..Default::default() })
}

fn main() {}
