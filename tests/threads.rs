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
                            .reshape(&[-1, 1])
                            .unwrap()
                            .expand(&[-1, t as isize + 1])
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

/// The kernels of one schedule group are independent: the large ones run
/// at the same time (`src/realize.rs`, `run_group`), the small ones after
/// them on the calling thread. Either way every result matches the
/// reference, also when the group mixes both and when later groups read
/// what they wrote.
#[test]
fn independent_kernels_of_a_group_run_together_and_match_the_reference() {
    let big = |seed: f32| {
        let n = 300 * 700;
        let v: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.013 + seed).sin()).collect();
        Tensor::from_vec(v, &[300, 700]).unwrap()
    };
    let (a, b, c) = (big(0.1), big(0.7), big(1.3));
    let small = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let rows = a.sum(Some(&[1]), false).unwrap();
    let cols = b.sum(Some(&[0]), false).unwrap();
    let soft = c.softmax(-1).unwrap();
    let tiny = small.exp().unwrap();
    let outs = [&rows, &cols, &soft, &tiny];
    let got = Tensor::realize_all(&outs).unwrap();
    for (g, want) in got.iter().zip(outs) {
        let got = g.to_vec::<f32>().unwrap();
        let want = want.reference().unwrap();
        for (x, w) in got.iter().zip(want.iter()) {
            assert!(
                (*x as f64 - w).abs() <= 1e-4 * (1.0 + w.abs()),
                "{x} vs {w}"
            );
        }
    }
}

/// The thread count of a CPU device (`MOROK_THREADS`, here
/// `CpuConfig::threads`) caps the `THREAD` axes the optimizer plans and
/// the threads a launch uses; no reduction is split, so every thread
/// count stores the same bits, and the results match the reference.
#[test]
fn thread_counts_give_identical_results_matching_the_reference() {
    use morok::Device;
    use morok_backends::{CpuConfig, CpuDevice};
    let devices: Vec<Device> = [1usize, 2, 4]
        .iter()
        .map(|&threads| {
            let name = format!("CPU_THREADS_{threads}");
            Device::register(&name, move || {
                let config = CpuConfig {
                    threads,
                    ..CpuConfig::from_env()
                };
                Ok(std::sync::Arc::new(CpuDevice::with_config(config)) as _)
            })
            .unwrap();
            Device::get(&name).unwrap()
        })
        .collect();
    let data = |n: usize, seed: f32| -> Vec<f32> {
        (0..n).map(|i| ((i as f32) * 0.0137 + seed).sin()).collect()
    };
    let results: Vec<Vec<Vec<f32>>> = devices
        .iter()
        .map(|dev| {
            let on = |v: Vec<f32>, shape: &[usize]| {
                Tensor::from_vec(v, shape).unwrap().to_device(dev).unwrap()
            };
            let wide = on(data(2 * 65536, 0.3), &[2, 65536]);
            let a = on(data(96 * 64, 0.1), &[96, 64]);
            let b = on(data(64 * 48, 0.2), &[64, 48]);
            let c = on(data(300 * 700, 0.5), &[300, 700]);
            let outs = [
                (&wide * 3.0).relu().unwrap(),
                a.matmul(&b).unwrap(),
                c.softmax(-1).unwrap(),
                c.sum(Some(&[0]), false).unwrap(),
            ];
            outs.iter()
                .map(|t| {
                    let got = t.to_vec::<f32>().unwrap();
                    let want = t.reference().unwrap();
                    for (x, w) in got.iter().zip(want.iter()) {
                        assert!(
                            (*x as f64 - w).abs() <= 1e-4 * (1.0 + w.abs()),
                            "{x} vs {w}"
                        );
                    }
                    got
                })
                .collect()
        })
        .collect();
    for (i, r) in results.iter().enumerate().skip(1) {
        assert_eq!(r, &results[0], "device {i} differs from one thread");
    }
}
