//! A training step is one cached plan: from the second step on, no
//! schedule is built and no kernel compiled (`morok::stats`). Alone in
//! its test binary, so no other test moves the counters.

use morok::nn::{Dropout, Linear, Module};
use morok::optim::{Adam, AdamOptions, Optimizer, Sgd, SgdOptions};
use morok::{stats, Tensor};

/// The same data in new buffers each call, as a data loader gives.
fn batch() -> (Tensor, Tensor) {
    let x = Tensor::rand_seeded(&[16, 12], morok::DType::F32, 3)
        .realize()
        .unwrap();
    let labels: Vec<i32> = (0..16).map(|i| i * 7 % 5).collect();
    (x, Tensor::from_vec(labels, &[16]).unwrap())
}

#[test]
fn steps_after_the_first_build_and_compile_nothing() {
    let fc1 = Linear::init(12, 20, true, 1).unwrap();
    let fc2 = Linear::init(20, 5, true, 2).unwrap();
    let mut params = Vec::new();
    fc1.parameters("fc1", &mut params);
    fc2.parameters("fc2", &mut params);
    let params: Vec<Tensor> = params.into_iter().map(|(_, t)| t).collect();
    let sgd = Sgd::new(
        &params,
        SgdOptions {
            lr: 0.1,
            momentum: 0.9,
            ..SgdOptions::default()
        },
    )
    .unwrap();
    let adam = Adam::new(&params, AdamOptions::default()).unwrap();
    let optimizers: Vec<Box<dyn Optimizer>> = vec![Box::new(sgd), Box::new(adam)];
    // Dropout's key advances every step, in the step's schedule.
    let mut drop = Dropout::new(0.2, 4).unwrap();
    drop.train(true);
    for mut opt in optimizers {
        let mut losses = Vec::new();
        for step in 0..6 {
            // Batches realized before counting: they are data, not the step.
            let (x, y) = batch();
            let (schedules, compiles) = (stats::pipeline_runs(), stats::kernel_compiles());
            let logits = fc2
                .forward(&fc1.forward(&x).unwrap().relu().unwrap())
                .unwrap();
            let loss = opt.minimize(&logits.cross_entropy(&y).unwrap()).unwrap();
            losses.push(loss.to_vec::<f32>().unwrap()[0]);
            if step > 0 {
                assert_eq!(
                    stats::pipeline_runs(),
                    schedules,
                    "step {step} built a schedule"
                );
                assert_eq!(stats::kernel_compiles(), compiles, "step {step} compiled");
            }
            if step == 3 {
                // A new learning rate is a buffer's contents, not a new graph.
                opt.set_lr(opt.lr() * 0.5).unwrap();
            }
        }
        assert!(losses[5] < losses[0], "{losses:?}");
    }
}
