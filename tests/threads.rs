//! Tensors are `Send + Sync`, and realizing from several threads at once
//! (shared inputs, the same and different graph structures) gives the
//! same results as one thread.

use morok::Tensor;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn tensors_realize_concurrently_from_many_threads() {
    assert_send_sync::<Tensor>();
    let n = 257;
    let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
    let shared = Tensor::from_vec(x.clone(), &[n]).unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let shared = &shared;
                let x = &x;
                s.spawn(move || {
                    for round in 0..5 {
                        let k = (t * 5 + round) as f32;
                        // Same structure for every thread (schedule-cache
                        // hits), different constants and a private input.
                        let own = Tensor::from_vec(vec![k; n], &[n]).unwrap();
                        let y = (&(shared * 2.0) + &own).relu().unwrap();
                        let got = y.to_vec::<f32>().unwrap();
                        let want: Vec<f32> = x.iter().map(|v| (v * 2.0 + k).max(0.0)).collect();
                        assert_eq!(got, want, "thread {t} round {round}");
                        // A structure only this thread builds.
                        let total = shared
                            .try_reshape(&[-1, 1])
                            .unwrap()
                            .try_expand(&[-1, t as isize + 1])
                            .unwrap()
                            .sum(None, false)
                            .unwrap()
                            .to_vec::<f32>()
                            .unwrap();
                        let want_total = x.iter().sum::<f32>() * (t + 1) as f32;
                        assert!((total[0] - want_total).abs() <= 1e-3 * (t + 1) as f32);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("a realizing thread panicked");
        }
    });
}
