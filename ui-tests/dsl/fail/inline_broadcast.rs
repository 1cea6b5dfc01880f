fn g() {
    let _f = morok::dsl::kernel!(|a: f32[N, 3], b: f32[4]| a * b);
}

fn main() {}
