//! Fusion and caching at the tensor level: how many kernels a realize
//! runs, and that repeated graphs skip the pipeline.

use morok::stats::{kernel_launches, pipeline_runs};
use morok::{ConvOptions, Tensor};
use std::sync::Mutex;

/// The counters are process-wide: tests that read them run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn data(n: usize, seed: f32) -> Vec<f32> {
    (0..n)
        .map(|i| (i as f32 * 0.37 + seed).sin() * 3.0)
        .collect()
}

fn matrix(rows: usize, cols: usize, seed: f32) -> Tensor {
    Tensor::from_vec(data(rows * cols, seed), &[rows, cols]).unwrap()
}

/// `t` realized, checked against the reference evaluator (1e-4).
fn realized_as_reference(t: &Tensor) -> Tensor {
    let r = t.realize().unwrap();
    let got = r.to_vec::<f32>().unwrap();
    let want = t.reference().unwrap();
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        assert!(
            (*g as f64 - w).abs() <= 1e-4 * (1.0 + w.abs()),
            "{i}: {g} vs {w}"
        );
    }
    r
}

/// Realizes `t` and returns how many kernels ran.
fn kernels_for(t: &Tensor) -> usize {
    let before = kernel_launches();
    let r = t.realize().unwrap();
    let ran = kernel_launches() - before;
    assert_eq!(r.kernels().len(), ran);
    ran
}

#[test]
fn elementwise_chain_is_one_kernel() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (a, b, c) = (matrix(5, 7, 0.1), matrix(5, 7, 0.2), matrix(1, 7, 0.3));
    let t = ((&a * &b + &c) * 2.0).relu().unwrap();
    assert_eq!(kernels_for(&t), 1);
}

#[test]
fn reduce_then_elementwise_is_one_kernel() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (a, b) = (matrix(6, 9, 0.4), matrix(6, 9, 0.5));
    let t = &(&a * &b).sum(Some(&[1]), false).unwrap() * 2.0 + 1.0;
    assert_eq!(kernels_for(&t), 1);
}

/// The row normalizations of the library, by name.
fn row_op(name: &str, x: &Tensor) -> Tensor {
    match name {
        "softmax" => x.softmax(-1),
        "log_softmax" => x.log_softmax(-1),
        _ => x.layernorm(&[-1], None, None, 1e-5),
    }
    .unwrap()
}

/// Realizes `t`, checks it against the reference evaluator and returns how
/// many kernels ran.
fn checked_kernels(t: &Tensor, tol: f64) -> usize {
    let ran = kernels_for(t);
    let got = t.realize().unwrap().to_vec::<f32>().unwrap();
    let want = t.reference().unwrap();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        assert!(
            (*g as f64 - w).abs() <= tol * (1.0 + w.abs()),
            "element {i}: {g} vs {w}"
        );
    }
    ran
}

#[test]
fn row_normalizations_of_cached_rows_are_one_kernel() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Row lengths that are and are not multiples of the vector widths.
    for (rows, cols) in [(8, 11), (3, 64), (5, 37), (1, 1), (4, 1000)] {
        for name in ["softmax", "log_softmax", "layernorm"] {
            let t = row_op(name, &matrix(rows, cols, 0.6 + cols as f32));
            assert_eq!(checked_kernels(&t, 1e-5), 1, "{name} of {rows}×{cols}");
        }
    }
    // Weight and bias fuse into the same kernel.
    let (w, b) = (matrix(1, 24, 0.1), matrix(1, 24, 0.2));
    let t = matrix(6, 24, 0.3)
        .layernorm(&[-1], Some(&w), Some(&b), 1e-5)
        .unwrap();
    assert_eq!(checked_kernels(&t, 1e-5), 1);
}

#[test]
fn row_normalizations_of_long_rows_fall_back_to_three_kernels() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cols = morok_core::MAX_FUSED_ROW + 3;
    for name in ["softmax", "log_softmax", "layernorm"] {
        let t = row_op(name, &matrix(2, cols, 0.4));
        assert_eq!(checked_kernels(&t, 1e-5), 3, "{name} of 2×{cols}");
    }
}

#[test]
fn matmul_is_one_kernel() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t = matrix(7, 5, 0.7).dot(&matrix(5, 3, 0.8)).unwrap();
    assert_eq!(kernels_for(&t), 1);
    let tt = matrix(5, 7, 0.7)
        .transpose(0, 1)
        .unwrap()
        .dot(&matrix(5, 3, 0.8))
        .unwrap();
    assert_eq!(kernels_for(&tt), 1);
}

/// Buffer slots a kernel's C code reads or writes (`bufs[i]`).
fn slots(code: &str) -> usize {
    (0..16)
        .take_while(|i| code.contains(&format!("bufs[{i}]")))
        .count()
}

#[test]
fn a_layers_bias_and_activation_run_in_its_matmul_kernel() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Odd batch sizes, and widths that are and are not vector multiples.
    for (batch, inp, hidden, out) in [(5, 13, 16, 10), (1, 7, 9, 3), (33, 40, 32, 10)] {
        let x = matrix(batch, inp, 0.1);
        let (w1, b1) = (matrix(inp, hidden, 0.2), matrix(1, hidden, 0.3));
        let (w2, b2) = (matrix(hidden, out, 0.4), matrix(1, out, 0.5));
        let h = x.matmul(&w1).unwrap().add(&b1).unwrap().relu().unwrap();
        let t = h.matmul(&w2).unwrap().add(&b2).unwrap();
        // The first kernel reads x, w1 and b1 and stores relu(x @ w1 + b1);
        // the second reads that, w2 and b2: the bias and relu are computed
        // once per hidden element, not once per (element, output column).
        let r = realized_as_reference(&t);
        let kernels = r.kernels();
        assert_eq!(kernels.len(), 2, "{batch}x{inp}x{hidden}x{out}");
        // The slots are read off the C code (`bufs[i]`); other devices'
        // code (LLVM IR) is checked by the kernel count and results.
        if kernels.iter().all(|k| k.code.contains("bufs[")) {
            let codes: Vec<usize> = kernels.iter().map(|k| slots(&k.code)).collect();
            assert_eq!(codes, [4, 4], "{batch}x{inp}x{hidden}x{out}");
        }
    }
}

#[test]
fn a_padded_reduction_is_stored_unpadded_then_padded_by_a_copy() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // A 1×1 convolution with bias and relu, then a 3×3 convolution with
    // padding 1 (a ResNet bottleneck's first two layers), and a row sum
    // padded on both sides.
    let x = Tensor::from_vec(data(2 * 8 * 6 * 6, 0.1), &[2, 8, 6, 6]).unwrap();
    let w1 = Tensor::from_vec(data(4 * 8, 0.2), &[4, 8, 1, 1]).unwrap();
    let b1 = Tensor::from_vec(data(4, 0.3), &[4]).unwrap();
    let w2 = Tensor::from_vec(data(4 * 4 * 9, 0.4), &[4, 4, 3, 3]).unwrap();
    let h = x
        .conv2d(&w1, Some(&b1), ConvOptions::default())
        .unwrap()
        .relu()
        .unwrap();
    let padded = ConvOptions {
        padding: (1, 1).into(),
        ..ConvOptions::default()
    };
    let conv = h.conv2d(&w2, None, padded).unwrap();
    let rows = matrix(6, 10, 0.5)
        .sum(Some(&[1]), false)
        .unwrap()
        .pad(&[(2, 3)], 0.0f32)
        .unwrap()
        .mul(3.0)
        .unwrap();
    for (t, want_kernels) in [(&conv, 3), (&rows, 2)] {
        let r = realized_as_reference(t);
        // The reduction's kernel stores the unpadded shape (no border
        // test in its loop); the pad is a copy kernel of its own.
        let kernels = r.kernels();
        assert_eq!(kernels.len(), want_kernels, "{:?}", t.shape());
        assert!(
            kernels.iter().any(|k| k.name.starts_with('E')),
            "{:?}",
            kernels.iter().map(|k| &k.name).collect::<Vec<_>>()
        );
    }
}

#[test]
fn realizing_a_realized_tensor_runs_nothing() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let r = (&matrix(4, 4, 0.9) + 1.0).realize().unwrap();
    let (launches, runs) = (kernel_launches(), pipeline_runs());
    let again = r.realize().unwrap();
    assert_eq!(again.to_vec::<f32>().unwrap(), r.to_vec::<f32>().unwrap());
    assert_eq!(kernel_launches(), launches);
    assert_eq!(pipeline_runs(), runs);
}

#[test]
fn same_structure_new_data_skips_the_pipeline() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let step = |seed: f32| {
        let (x, w) = (matrix(3, 4, seed), matrix(4, 2, seed + 1.0));
        x.dot(&w)
            .unwrap()
            .softmax(-1)
            .unwrap()
            .realize()
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    };
    let first = step(1.0);
    let runs = pipeline_runs();
    let second = step(2.0);
    assert_eq!(
        pipeline_runs(),
        runs,
        "the second graph must hit the schedule cache"
    );
    assert_ne!(first, second, "new data must give new results");
    let reference = {
        let (x, w) = (matrix(3, 4, 2.0), matrix(4, 2, 3.0));
        x.dot(&w).unwrap().softmax(-1).unwrap().reference().unwrap()
    };
    for (got, want) in second.iter().zip(reference.iter()) {
        assert!((*got as f64 - want).abs() < 1e-5, "{got} vs {want}");
    }
}
