//! The facade's device handling: choosing a device by name or in code,
//! tensors remembering theirs, moving data between devices, errors for
//! unknown names and mixed devices, and the one kernel cache.

mod common;

use morok::{Device, Tensor};

fn interp() -> Device {
    common::interp_device::register();
    Device::get("interp").expect("INTERP is registered")
}

#[test]
fn unknown_device_names_list_the_devices_that_exist() {
    common::interp_device::register();
    let e = Device::get("TPU").unwrap_err().to_string();
    assert!(e.contains("unknown device `TPU`"), "{e}");
    assert!(e.contains("CPU") && e.contains("INTERP"), "{e}");
    assert!(e.contains("tests/devices.rs"), "located at the caller: {e}");
    assert!(Device::names().contains(&"CPU".to_string()));
    assert_eq!(Device::get("cpu").unwrap().name(), "CPU");
}

/// `MOROK_DEVICE` naming no device makes the first upload fail with that
/// error (checked in a child process, which gets the variable).
#[test]
fn an_unknown_morok_device_is_an_error_not_a_panic() {
    if std::env::var("MOROK_DEVICE").as_deref() == Ok("NOPE") {
        let t = Tensor::from_slice(&[1.0f32, 2.0]);
        let e = t.realize().unwrap_err().to_string();
        assert!(
            e.contains("unknown device `NOPE`; the devices are CPU"),
            "{e}"
        );
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["an_unknown_morok_device_is_an_error_not_a_panic", "--exact"])
        .env("MOROK_DEVICE", "NOPE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn tensors_remember_their_device_and_move_between_devices() {
    // The default device: `CPU`, or the one `MOROK_DEVICE` names when the
    // suite runs on another device (e.g. `LLVM`).
    let host = Device::default_device().unwrap();
    let dev = interp();
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    assert_eq!(a.device().unwrap(), host);
    let b = a.to_device(&dev).unwrap();
    assert_eq!(b.device().unwrap(), dev);
    let c = (&b * 2.0).realize().unwrap();
    assert_eq!(c.device().unwrap(), dev, "results stay on their device");
    assert!(c.kernels().iter().all(|k| k.backend == "INTERP"));
    assert_eq!(c.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
    let back = c.to_device(&host).unwrap();
    assert_eq!(back.device().unwrap(), host);
    assert_eq!((&back + 1.0).to_vec::<f32>().unwrap(), vec![3.0, 5.0, 7.0]);
}

/// The CPU devices finish each launch before it returns: waiting for
/// them succeeds at once.
#[test]
fn waiting_for_a_cpu_device_returns_at_once() {
    let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let doubled = (&t + &t).realize().unwrap();
    for dev in [Device::get("CPU").unwrap(), interp()] {
        dev.synchronize().expect("nothing queued");
    }
    assert_eq!(doubled.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
}

#[test]
fn mixing_devices_in_one_graph_is_an_error() {
    let dev = interp();
    let a = Tensor::from_slice(&[1.0f32, 2.0]);
    let b = Tensor::from_slice(&[3.0f32, 4.0]).to_device(&dev).unwrap();
    let sum = &a + &b;
    let e = sum.realize().unwrap_err().to_string();
    assert!(e.contains("two devices") && e.contains("to_device"), "{e}");
    assert!(sum.device().is_err());
}

#[test]
fn the_kernel_cache_is_keyed_by_ast_and_device() {
    let dev = interp();
    let x = Tensor::from_slice(&[1.5f32, -2.0, 4.25, 7.0]);
    let square = |t: &Tensor| {
        (t * t)
            .reshape(&[2, 2])
            .unwrap()
            .sum(Some(&[1]), false)
            .unwrap()
    };
    square(&x).realize().unwrap();
    let before = morok::stats::kernel_compiles();
    let again = square(&x).realize().unwrap();
    assert_eq!(
        morok::stats::kernel_compiles(),
        before,
        "a hit compiles nothing"
    );
    assert_eq!(again.to_vec::<f32>().unwrap(), vec![6.25, 67.0625]);
    let there = square(&x.to_device(&dev).unwrap()).realize().unwrap();
    assert!(
        morok::stats::kernel_compiles() > before,
        "a new device compiles"
    );
    assert_eq!(there.to_vec::<f32>().unwrap(), vec![6.25, 67.0625]);
}

#[test]
fn dsl_kernels_with_named_dims_run_on_the_arguments_device() {
    // The generic kernel (N as a variable) runs on INTERP, call after call.
    let f = morok::dsl::kernel!(|a: f32[N]| (a * 2.0).relu());
    for n in [3usize, 5, 5] {
        let data: Vec<f32> = (0..n).map(|i| i as f32 - 1.0).collect();
        let a = Tensor::from_vec(data.clone(), &[n])
            .unwrap()
            .to_device(&interp())
            .unwrap();
        let y = f(&a).unwrap();
        assert_eq!(y.device().unwrap(), interp());
        let want: Vec<f32> = data.iter().map(|v| (v * 2.0).max(0.0)).collect();
        assert_eq!(y.to_vec::<f32>().unwrap(), want);
    }
}

/// `kernels()` names the device and its code generator with its version:
/// the C compiler's `--version` line on CPU, the LLVM version with the
/// `llvm` feature.
#[test]
fn kernels_report_the_device_and_its_code_generator() {
    let cpu = Device::get("CPU").unwrap();
    let t = Tensor::from_slice(&[1.0f32, 2.0]).to_device(&cpu).unwrap();
    let r = (&t * 3.0f32).realize().unwrap();
    let k = &r.kernels()[0];
    assert_eq!(k.backend, "CPU");
    assert!(
        k.compiler.starts_with("C (") && k.compiler.len() > 5,
        "{}",
        k.compiler
    );
    if cfg!(feature = "llvm") {
        let llvm = Device::get("LLVM").unwrap();
        let t = Tensor::from_slice(&[1.0f32, 2.0]).to_device(&llvm).unwrap();
        let r = (&t * 4.0f32).realize().unwrap();
        let k = &r.kernels()[0];
        assert_eq!(k.backend, "LLVM");
        assert!(k.compiler.starts_with("LLVM 19."), "{}", k.compiler);
    }
}

/// With the `cuda` feature, `CUDA` is a known name; on a machine without
/// the driver, getting it is an error naming what is missing and the
/// devices that exist, never a panic. (On a machine with a driver and
/// NVRTC the test is skipped, saying so.)
#[cfg(feature = "cuda")]
#[test]
fn cuda_without_a_driver_is_an_error_listing_the_devices() {
    assert!(Device::names().contains(&"CUDA".to_string()));
    match Device::get("CUDA") {
        Ok(d) => eprintln!("skipped: a CUDA device is present ({})", d.name()),
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("device `CUDA` is not available: CUDA:"), "{e}");
            assert!(e.contains("the devices are CPU"), "{e}");
            assert!(e.contains("tests/devices.rs"), "located at the caller: {e}");
            // Another GPU by number: the same error, naming it.
            let e = Device::get("cuda:3").unwrap_err().to_string();
            assert!(e.contains("device `CUDA:3` is not available: CUDA:"), "{e}");
        }
    }
    let e = Device::get("CUDA:x").unwrap_err().to_string();
    assert!(e.contains("unknown device `CUDA:x`"), "{e}");
}
