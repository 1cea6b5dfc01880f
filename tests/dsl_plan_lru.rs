//! A call site keeps its most recently used plans: called with more sizes
//! than it holds (64), it forgets the least recently used one, and a size
//! called often stays warm.
//!
//! One test in this binary: the counters are process-wide.

use morok::stats::dsl_warm_calls;
use morok::{DType, Tensor};

#[path = "../examples/common/mlp.rs"]
mod shared_mlp;
use shared_mlp::mlp;

#[test]
fn a_call_site_forgets_its_least_recently_used_plan() -> morok::Result<()> {
    let zeros = |shape: &[usize]| Tensor::zeros(shape, DType::F32).realize();
    let (w1, w2) = (zeros(&[64, 128])?, zeros(&[128, 10])?);
    let x = |b: usize| zeros(&[b, 64]);
    // Whether a call with batch `b` took the warm path (a cached plan).
    let warm = |b: usize| -> morok::Result<bool> {
        let input = x(b)?;
        let before = dsl_warm_calls();
        let y = mlp(&input, &w1, &w2)?;
        assert_eq!(y.to_vec::<f32>()?, vec![0.1f32; b * 10]);
        Ok(dsl_warm_calls() > before)
    };
    for b in 1..=64 {
        assert!(!warm(b)?, "B = {b} is new");
    }
    assert!(warm(1)?, "64 plans fit");
    // A 65th size evicts the least recently used plan: B = 2 (B = 1 was
    // just used).
    assert!(!warm(65)?);
    assert!(warm(1)?, "the recently used plan stays");
    assert!(!warm(2)?, "the least recently used plan was forgotten");
    Ok(())
}
