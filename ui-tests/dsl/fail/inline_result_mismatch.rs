fn g() {
    let _f = morok::dsl::kernel!(|a: f32[N, K], b: f32[K, M]| -> f32[N, K] a.dot(b));
}

fn main() {}
