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

/// A `shape` tensor of values drawn uniformly from `[lo, hi)`, on `dev`.
fn random_on(dev: &Device, rng: &mut common::Rng, shape: &[usize], (lo, hi): (f64, f64)) -> Tensor {
    let n = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|_| rng.uniform(lo, hi) as f32).collect();
    on(dev, data, shape)
}

#[test]
fn elementwise_reduce_and_matmul_match_the_reference() {
    let Some(dev) = gpu("elementwise_reduce_and_matmul_match_the_reference") else {
        return;
    };
    let mut rng = common::Rng::new(7);
    let a = random_on(&dev, &mut rng, &[64, 96], (-1.0, 1.0));
    let b = random_on(&dev, &mut rng, &[96, 48], (-1.0, 1.0));
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

/// A tensor moved between two GPUs goes device to device
/// (`DeviceBuffer::copy_from`) and computes the same on both; skips
/// where the machine has fewer than two GPUs.
#[test]
fn tensors_move_between_two_gpus_without_the_host() {
    let Some(first) = gpu("tensors_move_between_two_gpus_without_the_host") else {
        return;
    };
    let second = match Device::get("CUDA:1") {
        Ok(d) => d,
        Err(e) => {
            eprintln!("skipped tensors_move_between_two_gpus_without_the_host: {e}");
            return;
        }
    };
    assert_ne!(first, second);
    let data: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
    let a = on(&first, data.clone(), &[10, 100]);
    let b = a.to_device(&second).expect("moves");
    assert_eq!(b.device().unwrap().name(), "CUDA:1");
    assert_eq!(b.to_vec::<f32>().unwrap(), data);
    let sums: Vec<f64> = b
        .sum(Some(&[1]), false)
        .unwrap()
        .to_vec::<f32>()
        .unwrap()
        .into_iter()
        .map(f64::from)
        .collect();
    let want: Vec<f64> = data
        .chunks(100)
        .map(|c| c.iter().map(|&v| f64::from(v)).sum())
        .collect();
    common::close(&sums, &want);
}

/// With `MOROK_CUDA_UNIFIED=1` (in a child process: the setting is read
/// when the device opens) buffers are unified memory and the runtime
/// tests pass the same.
#[test]
fn unified_memory_runs_the_same_kernels() {
    if std::env::var("MOROK_CUDA_UNIFIED").is_ok()
        || gpu("unified_memory_runs_the_same_kernels").is_none()
    {
        return;
    }
    let mut cmd = common::child_test("elementwise_reduce_and_matmul_match_the_reference");
    cmd.env("MOROK_CUDA_UNIFIED", "1");
    let out = cmd.output().expect("runs the child");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `f16` and `bf16` matmuls of tensor-core shapes (`mma.sync`, sm_80 on)
/// match the reference, and waiting for the device after queued launches
/// succeeds.
#[test]
fn half_matmuls_on_tensor_cores_match_the_reference() {
    let Some(dev) = gpu("half_matmuls_on_tensor_cores_match_the_reference") else {
        return;
    };
    let mut rng = common::Rng::new(11);
    for dtype in [DType::F16, DType::BF16] {
        let a = random_on(&dev, &mut rng, &[128, 64], (0.0, 1.0));
        let b = random_on(&dev, &mut rng, &[64, 96], (0.0, 1.0));
        let (a, b) = (a.cast(dtype).unwrap(), b.cast(dtype).unwrap());
        let t = a.matmul(&b).unwrap();
        let queued = t.realize().unwrap();
        dev.synchronize().expect("the stream finishes");
        let got = common::compiled(&queued).unwrap();
        let want = common::reference(&t).unwrap();
        common::compare(dtype.scalar_type(), &got, &want)
            .unwrap_or_else(|e| panic!("{dtype}: {e}"));
    }
}
