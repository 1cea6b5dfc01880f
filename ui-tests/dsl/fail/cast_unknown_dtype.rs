fn g() {
    let _f = morok::dsl::kernel!(|a: f32[N]| a.cast(f8));
}

fn main() {}
