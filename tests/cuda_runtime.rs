//! The CUDA runtime on a GPU (feature `cuda`): buffers, copies, launches
//! and the buffer cache, each result compared with the reference
//! evaluator. Without a GPU (no driver, or no device) each test prints
//! why and passes: CI has none; on a GPU machine run
//! `cargo test --features cuda --test cuda_runtime -- --nocapture`
//! (and the whole differential suite with `MOROK_DEVICE=CUDA`).
#![cfg(feature = "cuda")]

mod common;

use morok::{DType, Device, Tensor};

/// The CUDA device, or `None` after printing why there is none.
fn gpu(test: &str) -> Option<Device> {
    match Device::get("CUDA") {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("skipped {test}: {e}");
            None
        }
    }
}

/// `data` of `shape` uploaded to `dev`.
fn on(dev: &Device, data: Vec<f32>, shape: &[usize]) -> Tensor {
    Tensor::from_vec(data, shape)
        .and_then(|t| t.to_device(dev))
        .expect("uploads")
}

#[test]
fn elementwise_reduce_and_matmul_match_the_reference() {
    let Some(dev) = gpu("elementwise_reduce_and_matmul_match_the_reference") else {
        return;
    };
    let mut rng = common::Rng::new(7);
    let mut data =
        |n: usize| -> Vec<f32> { (0..n).map(|_| rng.uniform(-1.0, 1.0) as f32).collect() };
    let a = on(&dev, data(64 * 96), &[64, 96]);
    let b = on(&dev, data(96 * 48), &[96, 48]);
    let cases = [
        ("add and exp", (&a + &a).exp().expect("builds")),
        ("row sums", a.sum(Some(&[1]), false).expect("builds")),
        ("full max", a.max(None, false).expect("builds")),
        ("matmul", a.dot(&b).expect("builds")),
        ("softmax", a.softmax(-1).expect("builds")),
    ];
    for (name, t) in cases {
        let got = common::compiled(&t).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = common::reference(&t).unwrap_or_else(|e| panic!("{name}: {e}"));
        common::compare(morok::ScalarType::F32, &got, &want)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            t.realize().unwrap().device().unwrap().name(),
            "CUDA",
            "{name}"
        );
    }
}

#[test]
fn buffers_round_trip_through_the_device() {
    let Some(dev) = gpu("buffers_round_trip_through_the_device") else {
        return;
    };
    for n in [0usize, 1, 1000, 1 << 20] {
        let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let t = on(&dev, data.clone(), &[n]);
        assert_eq!(t.to_vec::<f32>().unwrap(), data, "{n} elements");
    }
    let ints = Tensor::zeros(&[3, 5], DType::I64).to_device(&dev).unwrap();
    assert_eq!(ints.to_vec::<i64>().unwrap(), vec![0; 15]);
}
