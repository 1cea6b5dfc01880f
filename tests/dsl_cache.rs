//! A kernel called again with new data of the same shape reuses its
//! schedule and compiled kernels (the pipeline does not run again); a new
//! value of a named dim schedules its graph once (its kernels take the
//! dim as a variable: `tests/dsl_symbolic.rs`).

use morok::stats::pipeline_runs;
use morok::{DType, Tensor};

#[path = "../examples/common/mlp.rs"]
mod shared_mlp;
use shared_mlp::mlp;

#[test]
fn warm_calls_reuse_the_pipeline() -> morok::Result<()> {
    let (w1, w2) = (
        Tensor::zeros(&[64, 128], DType::F32),
        Tensor::zeros(&[128, 10], DType::F32),
    );
    let x = |b: usize, v: f32| Tensor::from_vec(vec![v; b * 64], &[b, 64]).expect("sizes match");
    mlp(&x(3, 1.0), &w1, &w2)?;
    let runs = pipeline_runs();
    let y = mlp(&x(3, 2.0), &w1, &w2)?;
    assert_eq!(pipeline_runs(), runs, "a warm call with the same shapes");
    assert_eq!(y.to_vec::<f32>()?, vec![0.1f32; 30]);
    mlp(&x(5, 1.0), &w1, &w2)?;
    assert!(pipeline_runs() > runs, "a new batch size runs the pipeline");
    Ok(())
}

/// Calls from several threads at once share their call site's plans but
/// never its intermediates: every result equals the same call made alone.
#[test]
fn concurrent_calls_get_their_own_intermediates() -> morok::Result<()> {
    let seeded = |shape: &[usize], seed| Tensor::rand_seeded(shape, DType::F32, seed).realize();
    let (w1, w2) = (seeded(&[64, 128], 11)?, seeded(&[128, 10], 12)?);
    let inputs = (0..4)
        .map(|i| seeded(&[1 + (i as usize % 2) * 2, 64], 20 + i))
        .collect::<morok::Result<Vec<_>>>()?;
    let expected = inputs
        .iter()
        .map(|x| mlp(x, &w1, &w2)?.to_vec::<f32>())
        .collect::<morok::Result<Vec<_>>>()?;
    std::thread::scope(|s| {
        let calls: Vec<_> = inputs
            .iter()
            .zip(&expected)
            .map(|(x, want)| {
                let (w1, w2) = (&w1, &w2);
                s.spawn(move || -> morok::Result<()> {
                    for _ in 0..300 {
                        assert_eq!(&mlp(x, w1, w2)?.to_vec::<f32>()?, want);
                    }
                    Ok(())
                })
            })
            .collect();
        calls
            .into_iter()
            .try_for_each(|c| c.join().expect("a calling thread panicked"))
    })
}
