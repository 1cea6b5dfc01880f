//! einsum, attention and the math / nn ops of issue 10 against
//! hand-computed PyTorch results (reference evaluator).

use morok::{AttentionOptions, Tensor};

fn vals(t: &Tensor) -> Vec<f64> {
    match t.reference() {
        Ok(a) => a.iter().copied().collect(),
        Err(e) => panic!("{e}"),
    }
}

fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        let ok = g == w || (g - w).abs() <= 1e-5 * (1.0 + w.abs()) || (g.is_nan() && w.is_nan());
        assert!(ok, "{got:?} vs {want:?}");
    }
}

fn f32s(data: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(data.to_vec(), shape).unwrap()
}

#[test]
fn einsum_equations() {
    let a = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = f32s(&[1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]);
    let mm = Tensor::einsum("ij,jk->ik", &[&a, &b]).unwrap();
    close(&vals(&mm), &vals(&a.matmul(&b).unwrap()));
    let implicit = Tensor::einsum("ij, jk", &[&a, &b]).unwrap();
    close(&vals(&implicit), &vals(&mm));
    let sq = f32s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    close(&vals(&Tensor::einsum("ii", &[&sq]).unwrap()), &[5.0]);
    close(&vals(&Tensor::einsum("ii->i", &[&sq]).unwrap()), &[1.0, 4.0]);
    close(
        &vals(&Tensor::einsum("ij->ji", &[&a]).unwrap()),
        &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0],
    );
    close(&vals(&Tensor::einsum("ij->", &[&a]).unwrap()), &[21.0]);
    let v = f32s(&[1.0, 2.0], &[2]);
    close(
        &vals(&Tensor::einsum("i,j->ij", &[&v, &v]).unwrap()),
        &[1.0, 2.0, 2.0, 4.0],
    );
    let batch = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[2, 2, 2]);
    let t = Tensor::einsum("...ij->...ji", &[&batch]).unwrap();
    assert_eq!(t.shape(), &[2, 2, 2]);
    close(&vals(&t), &[1.0, 3.0, 2.0, 4.0, 5.0, 7.0, 6.0, 8.0]);
    let bmm = Tensor::einsum("bij,bjk->bik", &[&batch, &batch]).unwrap();
    close(&vals(&bmm), &vals(&batch.matmul(&batch).unwrap()));
    close(&vals(&Tensor::einsum("...ii->...", &[&batch]).unwrap()), &[5.0, 13.0]);
    for bad in ["ij,jk->ik,", "ij->ii", "ij->k", "i2", "ij->i->j", "ijk", "ij,jk"] {
        let e = Tensor::einsum(bad, &[&a, &a]).unwrap_err();
        assert_eq!(e.op(), "einsum", "{bad}");
        assert!(e.location().file().ends_with("nn_ops.rs"), "{bad}: {e}");
    }
}

#[test]
fn attention_values() {
    let q = f32s(&[1.0], &[1, 1]);
    let k = f32s(&[0.0, 1.0], &[2, 1]);
    let v = f32s(&[10.0, 20.0], &[2, 1]);
    let out = q
        .scaled_dot_product_attention(&k, &v, &AttentionOptions::default())
        .unwrap();
    let w = 1.0f64.exp() / (1.0 + 1.0f64.exp());
    close(&vals(&out), &[10.0 * (1.0 - w) + 20.0 * w]);
    let q2 = f32s(&[1.0, 1.0], &[2, 1]);
    let causal = AttentionOptions {
        is_causal: true,
        ..AttentionOptions::default()
    };
    let out = q2.scaled_dot_product_attention(&k, &v, &causal).unwrap();
    close(&vals(&out), &[10.0, 10.0 * (1.0 - w) + 20.0 * w]);
    // Grouped-query heads: 2 query heads share one key/value head.
    let qh = f32s(&[1.0, 1.0], &[2, 1, 1]);
    let kh = k.try_reshape(&[1, 2, 1]).unwrap();
    let vh = v.try_reshape(&[1, 2, 1]).unwrap();
    let gqa = AttentionOptions {
        enable_gqa: true,
        ..AttentionOptions::default()
    };
    let out = qh.scaled_dot_product_attention(&kh, &vh, &gqa).unwrap();
    close(&vals(&out), &[10.0 * (1.0 - w) + 20.0 * w; 2]);
    let line = line!() + 1;
    let e = qh.scaled_dot_product_attention(&kh, &vh, &AttentionOptions::default());
    let e = e.unwrap_err();
    assert_eq!((e.op(), e.location().line()), ("scaled_dot_product_attention", line));
    assert!(e.to_string().contains("2 query heads for 1 key/value heads"), "{e}");
}
