//! The API's conventions (`docs/CONVENTIONS.md`), one way each: every
//! index-producing op returns i64; tolerances are named options; the
//! rounding modes are PyTorch's names.

use morok::{DType, IsCloseOptions, RoundingMode, Tensor};

#[test]
fn every_index_producing_op_returns_i64() -> morok::Result<()> {
    let x = Tensor::from_vec(vec![3.0f32, 1.0, 2.0, 0.0, 5.0, 4.0], &[2, 3])?;
    let labels = Tensor::from_vec(vec![1i32, 0], &[2])?;
    let indices = [
        ("argmax", x.argmax(Some(1))?),
        ("argmin", x.argmin(None)?),
        ("argsort", x.argsort(1, false)?),
        ("sort", x.sort(1, true)?.1),
        ("topk", x.topk(2, 1, true)?.1),
        ("cummax", x.cummax(1)?.1),
        ("cummin", x.cummin(0)?.1),
        ("nonzero", x.nonzero()?),
        ("one_hot", labels.one_hot(3)?),
    ];
    for (op, t) in indices {
        assert_eq!(t.dtype(), DType::I64, "{op}");
    }
    assert_eq!(x.argmax(Some(1))?.to_vec::<i64>()?, [0, 1]);
    Ok(())
}

#[test]
fn isclose_takes_named_tolerances() -> morok::Result<()> {
    let a = Tensor::from_vec(vec![1.0f32, 1.0, f32::NAN], &[3])?;
    let b = Tensor::from_vec(vec![1.0f32, 1.1, f32::NAN], &[3])?;
    let strict = a.isclose(&b, IsCloseOptions::default())?;
    assert_eq!(strict.to_vec::<bool>()?, [true, false, false]);
    let loose = IsCloseOptions {
        rtol: 0.2,
        equal_nan: true,
        ..Default::default()
    };
    assert_eq!(a.isclose(&b, loose)?.to_vec::<bool>()?, [true, true, true]);
    assert!(a.allclose(&b, loose)?);
    Ok(())
}

#[test]
#[allow(deprecated)] // checks the deprecated alias itself
fn rounding_modes_have_pytorch_names() -> morok::Result<()> {
    let a = Tensor::from_vec(vec![7i32, -7], &[2])?;
    let exact = a.div_mode(2i32, RoundingMode::None)?;
    assert_eq!(exact.to_vec::<f32>()?, [3.5, -3.5]);
    assert_eq!(
        a.div_mode(2i32, RoundingMode::Trunc)?.to_vec::<i32>()?,
        [3, -3]
    );
    assert_eq!(
        a.div_mode(2i32, RoundingMode::Floor)?.to_vec::<i32>()?,
        [3, -4]
    );
    assert_eq!(RoundingMode::True, RoundingMode::None);
    Ok(())
}

#[test]
#[allow(deprecated)] // checks the deprecated aliases themselves
fn the_old_try_names_forward_to_the_new_ones() -> morok::Result<()> {
    let x = Tensor::from_vec(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3])?;
    let same = |a: Tensor, b: Tensor| -> morok::Result<()> {
        assert_eq!(a.shape(), b.shape());
        assert_eq!(a.to_vec::<f32>()?, b.to_vec::<f32>()?);
        Ok(())
    };
    same(x.try_reshape(&[3, -1])?, x.reshape(&[3, -1])?)?;
    same(x.try_permute(&[1, 0])?, x.permute(&[1, 0])?)?;
    same(x.try_transpose(0, 1)?, x.transpose(0, 1)?)?;
    same(x.try_flip(&[1])?, x.flip(&[1])?)?;
    same(
        x.try_pad(&[(1, 0), (0, 1)], 9.0f32)?,
        x.pad(&[(1, 0), (0, 1)], 9.0f32)?,
    )?;
    same(
        x.try_shrink(&[(0, 1), (1, 3)])?,
        x.shrink(&[(0, 1), (1, 3)])?,
    )?;
    same(x.try_repeat(&[2, 1])?, x.repeat(&[2, 1])?)?;
    same(x.try_flatten(0, 1)?, x.flatten(0, 1)?)?;
    same(x.try_unsqueeze(0)?.try_squeeze(0)?, x.clone())?;
    same(x.try_expand(&[2, -1])?, x.expand(&[2, -1])?)?;
    same(x.try_broadcast_to(&[2, 2, 3])?, x.broadcast_to(&[2, 2, 3])?)?;
    same(Tensor::try_cat(&[&x, &x], 0)?, Tensor::cat(&[&x, &x], 0)?)?;
    same(
        Tensor::try_stack(&[&x, &x], 1)?,
        Tensor::stack(&[&x, &x], 1)?,
    )?;
    assert_eq!(x.try_split(&[1, 2], 1)?.len(), 2);
    assert_eq!(x.try_chunk(3, 1)?.len(), 3);
    assert_eq!(x.try_slice(&[morok::Slice::all()])?.shape(), x.shape());
    Ok(())
}

#[test]
fn losses_take_the_classes_on_axis_1() -> morok::Result<()> {
    let values: Vec<f32> = (0..30).map(|i| ((i * 7) % 11) as f32 * 0.3 - 1.0).collect();
    let logits = Tensor::from_vec(values, &[2, 3, 5])?;
    let labels = Tensor::from_vec(vec![2i64, 0, 1, 1, 0, 0, 2, 2, 1, 0], &[2, 5])?;
    let plain = logits.cross_entropy(&labels)?.to_vec::<f32>()?;
    let with = logits
        .cross_entropy_with(&labels, &morok::ClassLossOptions::default())?
        .to_vec::<f32>()?;
    assert!((plain[0] - with[0]).abs() < 1e-5, "{plain:?} vs {with:?}");
    let last_axis = Tensor::from_vec(vec![0i64; 6], &[2, 3])?;
    let e = logits.cross_entropy(&last_axis).unwrap_err().to_string();
    assert!(e.contains("without the class axis 1"), "{e}");
    Ok(())
}
