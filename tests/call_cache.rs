//! `CallCache`: compiled plans of a function of tensors. Warm calls skip
//! the closure and match the reference evaluator on new data; a closure
//! that reads, realizes or passes on its arguments' values is run on
//! every call; keys separate shapes, dtypes and aliasing.

use morok::{CallCache, DType, Tensor};
use std::cell::Cell;

fn data(n: usize, seed: u64) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as u64 * 7 + seed * 13) as f32 * 0.37).sin())
        .collect()
}

fn close(got: &Tensor, want: &Tensor) {
    let g = got.to_vec::<f32>().unwrap();
    let r = want.reference().unwrap();
    assert_eq!(got.shape(), r.shape());
    for (a, b) in g.iter().zip(r.iter()) {
        assert!(
            (*a as f64 - b).abs() <= 1e-5 * (1.0 + b.abs()),
            "{a} vs {b}"
        );
    }
}

/// A softmax of a product and a row sum: two outputs sharing work.
fn two_outputs(a: &[&Tensor]) -> morok::Result<Vec<Tensor>> {
    let p = a[0].matmul(a[1])?;
    Ok(vec![p.softmax(-1)?, a[0].sum(Some(&[1]), false)?])
}

#[test]
fn warm_calls_skip_the_closure_and_match_the_reference() {
    let cache = CallCache::new();
    let built = Cell::new(0);
    for (round, n) in [8usize, 12, 8].into_iter().enumerate() {
        for seed in 0..3u64 {
            let a = Tensor::from_vec(data(n * 16, seed), &[n, 16]).unwrap();
            let b = Tensor::from_vec(data(16 * 5, 100 + seed), &[16, 5]).unwrap();
            let got = cache
                .call(&[&a, &b], |args| {
                    built.set(built.get() + 1);
                    two_outputs(args)
                })
                .unwrap();
            let want = two_outputs(&[&a, &b]).unwrap();
            close(&got[0], &want[0]);
            close(&got[1], &want[1]);
            let warm = seed > 0 || round == 2;
            assert_eq!(got[0].shape(), [n, 5], "round {round}, call {seed}");
            assert!(warm || built.get() > 0);
        }
    }
    // Two shapes were built once each; the other seven calls were warm.
    assert_eq!(built.get(), 2);
    assert_eq!(cache.warm_calls(), 7);
    assert_eq!(cache.len(), 2);
}

#[test]
fn a_closure_that_reads_its_arguments_runs_on_every_call() {
    let cache = CallCache::new();
    let built = Cell::new(0);
    for scale in [1.0f32, 3.0, -2.0] {
        let x = Tensor::from_vec(vec![scale, 2.0, 4.0], &[3]).unwrap();
        // The first value decides the graph: a host read.
        let y = cache
            .call(&[&x], |a| {
                built.set(built.get() + 1);
                let s = a[0].to_vec::<f32>()?[0];
                Ok::<_, morok::Error>(vec![a[0].mul(s)?.relu()?])
            })
            .unwrap();
        let want: Vec<f32> = [scale, 2.0, 4.0]
            .iter()
            .map(|v| (v * scale).max(0.0))
            .collect();
        assert_eq!(y[0].to_vec::<f32>().unwrap(), want);
    }
    assert_eq!(built.get(), 3);
    assert_eq!(cache.warm_calls(), 0);
}

#[test]
fn a_closure_that_realizes_a_value_of_its_arguments_runs_on_every_call() {
    let cache = CallCache::new();
    for v in [1.0f32, 5.0] {
        let x = Tensor::from_vec(vec![v; 4], &[4]).unwrap();
        // The realized intermediate would be a fixed buffer of the plan.
        let y = cache
            .call(&[&x], |a| {
                let mid = a[0].add(1.0)?.realize()?;
                Ok::<_, morok::Error>(vec![mid.mul(2.0)?])
            })
            .unwrap();
        assert_eq!(y[0].to_vec::<f32>().unwrap(), vec![(v + 1.0) * 2.0; 4]);
    }
    assert_eq!(cache.warm_calls(), 0);
}

#[test]
fn a_nested_cached_call_on_the_arguments_makes_the_outer_one_data_dependent() {
    let (outer, inner) = (CallCache::new(), CallCache::new());
    for v in [1.0f32, 2.0, 3.0] {
        let x = Tensor::from_vec(vec![v; 4], &[4]).unwrap();
        let y = outer
            .call(&[&x], |a| {
                let mid = inner.call(a, |b| Ok::<_, morok::Error>(vec![b[0].mul(3.0)?]))?;
                Ok::<_, morok::Error>(vec![mid[0].add(1.0)?])
            })
            .unwrap();
        assert_eq!(y[0].to_vec::<f32>().unwrap(), vec![v * 3.0 + 1.0; 4]);
    }
    assert_eq!(outer.warm_calls(), 0);
    assert_eq!(inner.warm_calls(), 2);
}

#[test]
fn keys_separate_dtypes_and_aliasing() {
    let cache = CallCache::new();
    let f = |a: &[&Tensor]| -> morok::Result<Vec<Tensor>> { Ok(vec![a[0].add(a[1])?]) };
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let y = Tensor::from_vec(vec![10.0f32, 20.0], &[2]).unwrap();
    assert_eq!(
        cache.call(&[&x, &y], f).unwrap()[0]
            .to_vec::<f32>()
            .unwrap(),
        [11.0, 22.0]
    );
    // The same buffer twice: another key (the graph reads one buffer).
    assert_eq!(
        cache.call(&[&x, &x], f).unwrap()[0]
            .to_vec::<f32>()
            .unwrap(),
        [2.0, 4.0]
    );
    assert_eq!(
        cache.call(&[&y, &x], f).unwrap()[0]
            .to_vec::<f32>()
            .unwrap(),
        [11.0, 22.0]
    );
    assert_eq!(cache.warm_calls(), 1);
    let xi = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    let yi = Tensor::from_vec(vec![3i32, 4], &[2]).unwrap();
    let sum = cache.call(&[&xi, &yi], f).unwrap();
    assert_eq!(sum[0].dtype(), DType::I32);
    assert_eq!(sum[0].to_vec::<i32>().unwrap(), [4, 6]);
    assert_eq!(cache.len(), 3);
}

#[test]
fn lazy_arguments_and_closure_errors() {
    let cache = CallCache::new();
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let lazy = x.add(1.0).unwrap();
    let y = cache
        .call(&[&lazy], |a| Ok::<_, morok::Error>(vec![a[0].mul(2.0)?]))
        .unwrap();
    assert_eq!(y[0].to_vec::<f32>().unwrap(), [4.0, 6.0]);
    assert!(cache.is_empty());
    let err = cache
        .call(&[&x], |a| Ok::<_, morok::Error>(vec![a[0].reshape(&[3])?]))
        .unwrap_err();
    assert!(err.to_string().contains("reshape"), "{err}");
}
