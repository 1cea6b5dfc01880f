use morok_core::patterns;

fn main() {
    let _ = patterns! {
        Where[c, t, f] ~> t,
        End[x, ..] ~> x,
    };
}
