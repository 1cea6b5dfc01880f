//! Convolutions whose weights are a view of a buffer laid out with the
//! output channels innermost (`[I, kh, kw, O]`, as `morok-onnx` keeps a
//! Conv's weights): the optimizer then vectorizes short and strided
//! feature maps along the output channels and stores each lane on its
//! own. Results match the reference evaluator for the shapes of
//! ResNet-50's later stages, odd channel counts and batches included.

use morok::{ConvOptions, Tensor};

fn data(n: usize, seed: f32) -> Vec<f32> {
    (0..n).map(|i| ((i as f32 + seed) * 0.61).sin()).collect()
}

/// `[o, i, k, k]` weights as a permuted view of an `[i, k, k, o]` buffer.
fn channels_inner(o: usize, i: usize, k: usize) -> Tensor {
    Tensor::from_vec(data(i * k * k * o, 0.5), &[i, k, k, o])
        .unwrap()
        .permute(&[3, 0, 1, 2])
        .unwrap()
}

#[test]
fn convolutions_with_output_channels_innermost_match_the_reference() {
    // (batch, in, out, side, kernel, stride, padding)
    let cases = [
        (1, 64, 64, 7, 1, 1, 0),
        (1, 32, 48, 7, 3, 1, 1),
        (2, 16, 32, 14, 3, 1, 1),
        (1, 16, 32, 28, 3, 2, 1),
        (1, 8, 64, 14, 1, 2, 0),
        (1, 5, 33, 9, 3, 1, 1),
    ];
    for (batch, cin, cout, side, k, stride, pad) in cases {
        let x = Tensor::from_vec(
            data(batch * cin * side * side, 0.1),
            &[batch, cin, side, side],
        )
        .unwrap();
        let w = channels_inner(cout, cin, k);
        let b = Tensor::from_vec(data(cout, 0.3), &[cout]).unwrap();
        let opts = ConvOptions {
            stride: (stride, stride),
            padding: (pad, pad).into(),
            ..ConvOptions::default()
        };
        let y = x.conv2d(&w, Some(&b), opts).unwrap().relu().unwrap();
        let got = y.to_vec::<f32>().unwrap();
        let want = y.reference().unwrap();
        assert_eq!(got.len(), want.len());
        for (i, (g, r)) in got.iter().zip(want.iter()).enumerate() {
            let tol = 1e-4 * (1.0 + r.abs()) * (cin * k * k) as f64 / 64.0;
            assert!(
                (*g as f64 - r).abs() <= tol.max(1e-4),
                "{batch}x{cin}->{cout} {side}² k{k} s{stride}: element {i} is {g}, the reference {r}"
            );
        }
    }
}
