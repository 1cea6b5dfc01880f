//! Tensors past 2^31 elements: index arithmetic must be 64-bit wherever
//! an index can leave the `i32` range, or a kernel reads and writes the
//! wrong elements (or out of bounds). Each case works on a `u8` buffer of
//! 2^31 + 4099 elements (2 GiB; 4 GiB of memory at the peak) and checks
//! the elements around and past the 2^31 boundary, on every CPU device
//! this build has.
//!
//! About 10 s on 2 cores; `MOROK_SKIP_LARGE=1` skips it on machines with
//! less than 5 GiB of memory to spare.

mod common;

use morok::{DType, Device, Slice, Tensor};

/// Elements of the big buffer: past `i32::MAX`, and not a multiple of
/// any tile or vector width.
const N: usize = (1 << 31) + 4099;

/// The devices to run on: the C device, and LLVM with the feature.
fn devices() -> Vec<Device> {
    let mut names = vec!["CPU"];
    if cfg!(feature = "llvm") {
        names.push("LLVM");
    }
    names
        .into_iter()
        .map(|n| Device::get(n).expect("device"))
        .collect()
}

/// The `u8` values `i mod 251` of the big buffer on `dev` (a realized
/// buffer, so kernels read memory, not a folded expression).
fn big_input(dev: &Device) -> Tensor {
    let data: Vec<u8> = (0..N).map(|i| (i % 251) as u8).collect();
    Tensor::from_vec(data, &[N])
        .and_then(|t| t.to_device(dev))
        .expect("2 GiB upload")
}

/// Elements `from..N` of `t` (one axis) as `u64`s.
fn tail(t: &Tensor, from: usize) -> Vec<u64> {
    t.slice(&[Slice::range(from as isize, N as isize)])
        .and_then(|s| s.cast(DType::U64))
        .and_then(|s| s.to_vec::<u64>())
        .expect("reads the tail")
}

#[test]
fn elementwise_reverse_and_sum_past_two_to_the_31() {
    if std::env::var("MOROK_SKIP_LARGE").is_ok_and(|v| v == "1") {
        eprintln!("skipped: MOROK_SKIP_LARGE=1");
        return;
    }
    let edge = (1usize << 31) - 5;
    let want = |i: usize| (i % 251) as u64;
    for dev in devices() {
        let name = dev.name().to_string();
        let x = big_input(&dev);
        // x + 1 written over the whole range.
        let y = (&x + 1u8).realize().expect("elementwise");
        let got = tail(&y, edge);
        let expect: Vec<u64> = (edge..N).map(|i| (want(i) + 1) % 256).collect();
        assert_eq!(got, expect, "{name}: x + 1 past 2^31");
        drop(y);
        // The reversed buffer: element i reads N - 1 - i.
        let r = x.flip(&[0]).and_then(|t| t.realize()).expect("flip");
        let got = tail(&r, edge);
        let expect: Vec<u64> = (edge..N).map(|i| want(N - 1 - i)).collect();
        assert_eq!(got, expect, "{name}: flip past 2^31");
        drop(r);
        // A sum over every element (in u64).
        let s = x
            .cast(DType::U64)
            .and_then(|t| t.sum(None, false))
            .and_then(|t| t.to_vec::<u64>())
            .expect("sum");
        let full: u64 = (0..251u64).sum::<u64>() * (N / 251) as u64;
        let rest: u64 = (0..(N % 251) as u64).sum();
        assert_eq!(s, vec![full + rest], "{name}: sum of 2^31 + 4099 elements");
        common::report(&format!(
            "large tensors: {name}: 3 kernels over {N} elements match"
        ));
    }
}
