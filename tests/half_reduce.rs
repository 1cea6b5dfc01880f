//! Regression: max/argmax/argmin reductions over f16 and bf16 data.

use half::{bf16, f16};
use morok::Tensor;

const DATA: [f32; 8] = [1.0, -3.5, 2.5, 0.25, -1.0, 2.125, -7.0, 0.5];

#[test]
fn max_f16() {
    let v: Vec<f16> = DATA.iter().map(|&x| f16::from_f32(x)).collect();
    let t = Tensor::from_vec(v, &[2, 4]).unwrap();
    let m: Vec<f16> = t.max(Some(&[1]), false).unwrap().to_vec().unwrap();
    assert_eq!(m, vec![f16::from_f32(2.5), f16::from_f32(2.125)]);
    let m: Vec<f16> = t.max(Some(&[0]), false).unwrap().to_vec().unwrap();
    let want: Vec<f16> = [1.0, 2.125, 2.5, 0.5]
        .iter()
        .map(|&x| f16::from_f32(x))
        .collect();
    assert_eq!(m, want);
}

#[test]
fn max_bf16() {
    let v: Vec<bf16> = DATA.iter().map(|&x| bf16::from_f32(x)).collect();
    let t = Tensor::from_vec(v, &[2, 4]).unwrap();
    let m: Vec<bf16> = t.max(Some(&[1]), false).unwrap().to_vec().unwrap();
    assert_eq!(m, vec![bf16::from_f32(2.5), bf16::from_f32(2.125)]);
}

#[test]
fn argmax_argmin_f16() {
    let v: Vec<f16> = DATA.iter().map(|&x| f16::from_f32(x)).collect();
    let t = Tensor::from_vec(v, &[8]).unwrap();
    let a = t.argmax(None).unwrap().to_vec::<i64>();
    let b = t.argmin(None).unwrap().to_vec::<i64>();
    assert_eq!(format!("{a:?} {b:?}"), "Ok([2]) Ok([6])");
}
