//! Elementwise kernels over several dtypes, through the whole path:
//! kernel AST → lower → render C → compile → run.

use super::common::*;
use morok_core::dtype::DType;

#[test]
fn add_f32() {
    let (dev, _dir) = device(1);
    let ast = elementwise(7, &[DType::F32, DType::F32], |v| v[0].add(&v[1]));
    let a: Vec<f32> = (0..7).map(|x| x as f32 * 1.5).collect();
    let b: Vec<f32> = (0..7).map(|x| 10.0 - x as f32).collect();
    let mut args = [
        Arg::zeros(DType::F32, 7),
        Arg::new(DType::F32, &a),
        Arg::new(DType::F32, &b),
    ];
    let k = exec(&dev, &ast, &mut args);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(args[0].get::<f32>(), want, "{}", k.source());
}
