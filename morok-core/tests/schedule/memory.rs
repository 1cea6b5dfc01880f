//! Memory planning: liveness-based storage reuse.

use crate::common::*;
use morok_core::BufferKind;
use morok_core::DType;
use std::collections::HashSet;

#[test]
fn chain_of_intermediates_reuses_storage() {
    let mut io = Inputs::default();
    let d = data(16, 1);
    let x = io.f32(&[16], d.clone());
    let mut t = x.clone();
    for k in 1..=4 {
        t = contiguous(&add(
            &mul(&t, &full(2.0, DType::F32, &[16])),
            &full(k as f64, DType::F32, &[16]),
        ));
    }
    let y = add(&t, &full(1.0, DType::F32, &[16]));
    let (s, out) = io.run(&[y]);
    let inter: Vec<_> = s
        .buffers
        .iter()
        .filter(|b| b.kind == BufferKind::Intermediate)
        .collect();
    assert_eq!(inter.len(), 4);
    let storages: HashSet<u64> = inter.iter().map(|b| b.storage).collect();
    assert!(
        storages.len() < 4,
        "4 intermediates in {} storages",
        storages.len()
    );
    // The interpreter runs in the shared storage: values prove no live buffer was clobbered.
    let want: Vec<f64> = d
        .iter()
        .map(|&v| {
            (1..=4).fold(v, |acc, k| {
                ((acc * 2.0) as f32 as f64 + k as f64) as f32 as f64
            }) + 1.0
        })
        .collect();
    assert_close(&out[0], &want);
    for b in s
        .buffers
        .iter()
        .filter(|b| b.kind != BufferKind::Intermediate)
    {
        assert_eq!(b.storage, b.id, "inputs and outputs keep their own memory");
    }
}

#[test]
fn buffers_alive_together_never_share() {
    let mut io = Inputs::default();
    let x = io.f32(&[8], data(8, 2));
    // Two independent intermediates, both read by the last kernel.
    let a = contiguous(&x.un(morok_core::Op::Exp));
    let b = contiguous(&x.un(morok_core::Op::Neg));
    let c = contiguous(&add(&a, &full(1.0, DType::F32, &[8])));
    let y = add(&add(&b, &c), &a);
    let (s, out) = io.run(&[y]);
    let inter: Vec<_> = s
        .buffers
        .iter()
        .filter(|b| b.kind == BufferKind::Intermediate)
        .collect();
    assert_eq!(inter.len(), 3);
    let storages: HashSet<u64> = inter.iter().map(|b| b.storage).collect();
    assert_eq!(storages.len(), 3, "all three are read by the last kernel");
    let d = data(8, 2);
    let want: Vec<f64> = d.iter().map(|v| -v + (v.exp() + 1.0) + v.exp()).collect();
    assert_close(&out[0], &want);
}
