//! The small conveniences PyTorch users reach for: `split` by a part
//! size, `squeeze()` of every size-1 axis, `unflatten`, `var_mean` and
//! `std_mean`, `scatter` of a scalar, `%` with a scalar on either side and
//! a scalar base for `pow`. Each is checked against hand-computed values
//! (reference evaluator) and compiled against the reference.

mod common;

use common::{check, f32s, vals};
use morok::{DType, ScalarPow, Tensor};

fn compiled_matches(t: &Tensor) {
    check(t).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn split_every_gives_parts_of_the_size_and_a_smaller_last() -> morok::Result<()> {
    let x = f32s(&[0., 1., 2., 3., 4., 5., 6.], &[7]);
    let parts = x.split_every(3, 0)?;
    let got: Vec<Vec<f64>> = parts.iter().map(vals).collect();
    assert_eq!(got, [vec![0., 1., 2.], vec![3., 4., 5.], vec![6.]]);
    let m = f32s(&[0., 1., 2., 3., 4., 5.], &[2, 3]);
    let cols = m.split_every(2, -1)?;
    assert_eq!(cols[0].shape(), &[2, 2]);
    assert_eq!(vals(&cols[1]), [2., 5.]);
    compiled_matches(&cols[1]);
    let e = x.split_every(0, 0).unwrap_err().to_string();
    assert!(
        e.starts_with("split: the part size must be positive at "),
        "{e}"
    );
    let e = x.split_every(2, 1).unwrap_err().to_string();
    assert!(e.starts_with("split: [7]: axis 1 is out of range"), "{e}");
    Ok(())
}

#[test]
fn squeeze_all_and_unflatten_reshape_as_pytorch() -> morok::Result<()> {
    let x = Tensor::zeros(&[1, 3, 1, 2], DType::F32);
    assert_eq!(x.squeeze_all()?.shape(), &[3, 2]);
    assert_eq!(
        Tensor::zeros(&[1, 1], DType::F32).squeeze_all()?.shape(),
        &[] as &[usize]
    );
    let m = f32s(&[0., 1., 2., 3., 4., 5.], &[6]);
    let u = m.unflatten(0, &[2, -1])?;
    assert_eq!(u.shape(), &[2, 3]);
    assert_eq!(vals(&u), [0., 1., 2., 3., 4., 5.]);
    compiled_matches(&u.transpose(0, 1)?);
    let e = m.unflatten(0, &[4, -1]).unwrap_err().to_string();
    assert!(
        e.starts_with("unflatten: [6]: axis 0 to [4, -1]: cannot infer -1 from 6 elements at "),
        "{e}"
    );
    let e = m.unflatten(0, &[]).unwrap_err().to_string();
    assert!(
        e.starts_with("unflatten: [6]: needs an axis and at least one size"),
        "{e}"
    );
    Ok(())
}

#[test]
fn var_mean_and_std_mean_match_their_parts() -> morok::Result<()> {
    let x = f32s(&[1., 2., 4., 8., 3., 3.], &[2, 3]);
    let (var, mean) = x.var_mean(Some(&[1]), 1, false)?;
    assert_eq!(vals(&mean), vals(&x.mean(Some(&[1]), false)?));
    assert_eq!(vals(&var), vals(&x.var(Some(&[1]), 1, false)?));
    let (std, mean) = x.std_mean(Some(&[0]), 0, true)?;
    assert_eq!(std.shape(), &[1, 3]);
    common::close(&vals(&std), &[3.5, 0.5, 0.5]);
    common::close(&vals(&mean), &[4.5, 2.5, 3.5]);
    compiled_matches(&std);
    let e = x.var_mean(Some(&[2]), 1, false).unwrap_err().to_string();
    assert!(
        e.starts_with("var_mean: [2, 3]: axis 2 is out of range"),
        "{e}"
    );
    Ok(())
}

#[test]
fn scatter_value_writes_a_scalar_where_the_index_points() -> morok::Result<()> {
    let x = Tensor::zeros(&[2, 3], DType::F32);
    let index = Tensor::from_vec(vec![2i64, 0], &[2, 1])?;
    let y = x.scatter_value(1, &index, 7.5f32)?;
    assert_eq!(vals(&y), [0., 0., 7.5, 7.5, 0., 0.]);
    compiled_matches(&y);
    let bad = Tensor::from_vec(vec![0i64], &[1])?;
    assert!(x.scatter_value(1, &bad, 1.0f32).is_err());
    Ok(())
}

#[test]
fn remainder_and_pow_take_a_scalar_on_either_side() -> morok::Result<()> {
    let x = f32s(&[-3., -1., 2., 5.], &[4]);
    // Python's `%`: the result has the divisor's sign.
    assert_eq!(vals(&(&x % 3.0f32)), [0., 2., 2., 2.]);
    assert_eq!(vals(&(7.0f32 % &x)), [-2., -0., 1., 2.]);
    let e = f32s(&[0., 1., 3.], &[3]);
    let p = 2.0f32.pow(&e)?;
    assert_eq!(vals(&p), [1., 2., 8.]);
    compiled_matches(&p);
    let q = ScalarPow::pow(2i32, &Tensor::from_vec(vec![0i32, 1, 4], &[3])?)?;
    assert_eq!(q.dtype(), DType::F32);
    assert_eq!(vals(&q), [1., 2., 16.]);
    Ok(())
}
