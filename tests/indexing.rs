//! Indexing ops against hand-computed PyTorch results (reference
//! evaluator), and the documented behavior of out-of-range positions
//! held in tensors (compiled).

use morok::{Index, MeshIndexing, ScatterReduce, Slice, Tensor};

mod common;

use common::vals;

/// `[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]` as f32.
fn m34() -> Tensor {
    Tensor::from_vec((0..12).map(|x| x as f32).collect(), &[3, 4]).unwrap()
}

fn i64s(v: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

#[test]
fn basic_and_advanced_index() {
    let x = m34();
    let t = x
        .index(&[Index::Int(-1), Index::Slice(Slice::all().step(2))])
        .unwrap();
    assert_eq!(t.shape(), &[2]);
    assert_eq!(vals(&t), [8.0, 10.0]);
    let t = x
        .index(&[Index::NewAxis, Index::Ellipsis, Index::Int(1)])
        .unwrap();
    assert_eq!(t.shape(), &[1, 3]);
    assert_eq!(vals(&t), [1.0, 5.0, 9.0]);
    // x[[2, -3]] picks rows; x[:, [[0], [3]]] puts the index shape at axis 1.
    let t = x.index(&[Index::Tensor(i64s(&[2, -3], &[2]))]).unwrap();
    assert_eq!(vals(&t), [8.0, 9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 3.0]);
    let t = x
        .index(&[
            Index::Slice(Slice::all()),
            Index::Tensor(i64s(&[0, 3], &[2, 1])),
        ])
        .unwrap();
    assert_eq!(t.shape(), &[3, 2, 1]);
    assert_eq!(vals(&t), [0.0, 3.0, 4.0, 7.0, 8.0, 11.0]);
    // Two index tensors broadcast together: x[[0, 2], [1]] = [1, 9].
    let t = x
        .index(&[
            Index::Tensor(i64s(&[0, 2], &[2])),
            Index::Tensor(i64s(&[1], &[1])),
        ])
        .unwrap();
    assert_eq!(vals(&t), [1.0, 9.0]);
    // Separated index tensors: their shape comes first.
    let y = Tensor::from_vec((0..24).map(|x| x as f32).collect(), &[2, 3, 4]).unwrap();
    let t = y
        .index(&[
            Index::Tensor(i64s(&[1, 0], &[2])),
            Index::Slice(Slice::all()),
            Index::Tensor(i64s(&[3, 0], &[2])),
        ])
        .unwrap();
    assert_eq!(t.shape(), &[2, 3]);
    assert_eq!(vals(&t), [15.0, 19.0, 23.0, 0.0, 4.0, 8.0]);
    assert!(x.index(&[Index::Int(3)]).is_err());
    assert!(x
        .index(&[Index::Int(0), Index::Int(0), Index::Int(0)])
        .is_err());
}

#[test]
fn gather_scatter_and_select() {
    let x = m34();
    let idx = i64s(&[3, 0, 1, 1], &[2, 2]);
    // torch.gather(x, 1, idx) = [[3, 0], [5, 5]]
    assert_eq!(vals(&x.gather(1, &idx).unwrap()), [3.0, 0.0, 5.0, 5.0]);
    // torch.gather(x, 0, [[2, 0]]) = [[8, 1]]
    assert_eq!(
        vals(&x.gather(0, &i64s(&[2, 0], &[1, 2])).unwrap()),
        [8.0, 1.0]
    );
    assert_eq!(
        vals(&x.index_select(1, &i64s(&[3, 1], &[2])).unwrap()),
        [3.0, 1.0, 7.0, 5.0, 11.0, 9.0]
    );
    let z = Tensor::zeros(&[2, 3], morok::DType::F32);
    let src = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let idx = i64s(&[0, 1, 0, 0, 0, 1], &[2, 3]);
    // Last writer along dim wins: out[0] = [4, 5, 3]... with writes
    // (0,0)<-1,(1,1)<-2,(0,2)<-3,(0,0)<-4,(0,1)<-5,(1,2)<-6.
    assert_eq!(
        vals(&z.scatter(0, &idx, &src).unwrap()),
        [4.0, 5.0, 3.0, 0.0, 2.0, 6.0]
    );
    assert_eq!(
        vals(&z.scatter_add(0, &idx, &src).unwrap()),
        [5.0, 5.0, 3.0, 0.0, 2.0, 6.0]
    );
    let base = Tensor::full(&[2, 3], 2.0f32);
    let red = |r, inc| vals(&base.scatter_reduce(0, &idx, &src, r, inc).unwrap());
    assert_eq!(
        red(ScatterReduce::Prod, true),
        [8.0, 10.0, 6.0, 2.0, 4.0, 12.0]
    );
    assert_eq!(
        red(ScatterReduce::Mean, true),
        [(7.0f32 / 3.0) as f64, 3.5, 2.5, 2.0, 2.0, 4.0]
    );
    assert_eq!(
        red(ScatterReduce::Mean, false),
        [2.5, 5.0, 3.0, 2.0, 2.0, 6.0]
    );
    assert_eq!(
        red(ScatterReduce::Amax, false),
        [4.0, 5.0, 3.0, 2.0, 2.0, 6.0]
    );
    assert_eq!(
        red(ScatterReduce::Amin, true),
        [1.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    );
}

#[test]
fn masks_and_nonzero() {
    let x = m34();
    let mask = x.remainder(3.0).unwrap().eq(0.0).unwrap();
    assert_eq!(vals(&x.masked_select(&mask).unwrap()), [0.0, 3.0, 6.0, 9.0]);
    let nz = mask.nonzero().unwrap();
    assert_eq!(nz.shape(), &[4, 2]);
    assert_eq!(vals(&nz), [0.0, 0.0, 0.0, 3.0, 1.0, 2.0, 2.0, 1.0]);
    let filled = x.masked_fill(&mask, -1.0).unwrap();
    assert_eq!(vals(&filled)[..4], [-1.0, 1.0, 2.0, -1.0]);
    let oh = i64s(&[2, 0, 5], &[3]).one_hot(3).unwrap();
    assert_eq!(vals(&oh), [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
}

#[test]
fn triangles_diagonals_and_views() {
    let x = m34();
    assert_eq!(
        vals(&x.tril(0).unwrap()),
        [0.0, 0.0, 0.0, 0.0, 4.0, 5.0, 0.0, 0.0, 8.0, 9.0, 10.0, 0.0]
    );
    assert_eq!(
        vals(&x.triu(1).unwrap()),
        [0.0, 1.0, 2.0, 3.0, 0.0, 0.0, 6.0, 7.0, 0.0, 0.0, 0.0, 11.0]
    );
    assert_eq!(vals(&x.diagonal(0, 0, 1).unwrap()), [0.0, 5.0, 10.0]);
    assert_eq!(vals(&x.diagonal(1, 0, 1).unwrap()), [1.0, 6.0, 11.0]);
    assert_eq!(vals(&x.diagonal(-1, 1, 0).unwrap()), [1.0, 6.0, 11.0]);
    assert_eq!(vals(&x.diag(-2).unwrap()), [8.0]);
    let v = Tensor::from_slice(&[1.0f32, 2.0]);
    assert_eq!(
        vals(&v.diag(1).unwrap()),
        [0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0]
    );
    assert_eq!(
        vals(&x.roll(&[1, -1], &[0, 1]).unwrap())[..4],
        [9.0, 10.0, 11.0, 8.0]
    );
    assert_eq!(vals(&v.roll(&[3], &[]).unwrap()), [2.0, 1.0]);
    let g = Tensor::meshgrid(
        &[&v, &Tensor::from_slice(&[5.0f32, 6.0, 7.0])],
        MeshIndexing::Xy,
    )
    .unwrap();
    assert_eq!(g[0].shape(), &[3, 2]);
    assert_eq!(vals(&g[0]), [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
    assert_eq!(vals(&g[1]), [5.0, 5.0, 6.0, 6.0, 7.0, 7.0]);
    assert_eq!(
        vals(&v.repeat_interleave(2, None).unwrap()),
        [1.0, 1.0, 2.0, 2.0]
    );
    let u = x.unfold(1, 2, 2).unwrap();
    assert_eq!(u.shape(), &[3, 2, 2]);
    assert_eq!(vals(&u)[..4], [0.0, 1.0, 2.0, 3.0]);
    let u = x.unfold(0, 2, 1).unwrap();
    assert_eq!(u.shape(), &[2, 4, 2]);
    assert_eq!(vals(&u)[..4], [0.0, 4.0, 1.0, 5.0]);
}

/// Positions out of range in an index tensor read 0 and drop writes, in
/// the compiled code as in the reference.
#[test]
fn out_of_range_tensor_indices_are_defined() {
    let x = m34();
    let idx = i64s(&[7, -1, 100, 2], &[4]);
    let t = x.index_select(1, &idx).unwrap().realize().unwrap();
    assert_eq!(t.to_vec::<f32>().unwrap()[..4], [0.0, 3.0, 0.0, 2.0]);
    let g = x.gather(0, &i64s(&[5, -1, 1, 3], &[1, 4])).unwrap();
    assert_eq!(
        g.realize().unwrap().to_vec::<f32>().unwrap(),
        [0.0, 0.0, 6.0, 0.0]
    );
    let z = Tensor::zeros(&[2], morok::DType::F32);
    let s = z
        .scatter(
            0,
            &i64s(&[9, 1, -4], &[3]),
            &Tensor::from_slice(&[1.0f32, 2.0, 3.0]),
        )
        .unwrap();
    assert_eq!(s.realize().unwrap().to_vec::<f32>().unwrap(), [0.0, 2.0]);
}

#[test]
fn bool_masks_and_repeat_counts() {
    let x = m34();
    let mask = Tensor::from_vec(
        vec![
            true, false, false, true, false, false, false, false, false, true, true, false,
        ],
        &[3, 4],
    )
    .unwrap();
    // A mask over every axis indexes like its nonzero() coordinates.
    let picked = x.index(&[Index::Tensor(mask)]).unwrap();
    assert_eq!(vals(&picked), [0.0, 3.0, 9.0, 10.0]);
    let cols = Tensor::from_vec(vec![false, true, true, false], &[4]).unwrap();
    let c = x
        .index(&[Index::Slice(Slice::all()), Index::Tensor(cols.clone())])
        .unwrap();
    assert_eq!(c.shape(), &[3, 2]);
    assert_eq!(vals(&c), [1.0, 2.0, 5.0, 6.0, 9.0, 10.0]);
    // Broadcast with an integer index: rows [2, 0] paired with columns [1, 2].
    let rows = i64s(&[2, 0], &[2]);
    let rc = x
        .index(&[Index::Tensor(rows), Index::Tensor(cols.clone())])
        .unwrap();
    assert_eq!(vals(&rc), [9.0, 2.0]);
    // A 0-d mask adds an axis of size 1 (true) or 0 (false).
    let yes = Tensor::from_vec(vec![true], &[]).unwrap();
    assert_eq!(x.index(&[Index::Tensor(yes)]).unwrap().shape(), &[1, 3, 4]);
    let line = line!() + 1;
    let e = x.index(&[Index::Tensor(cols.clone()), Index::Ellipsis]);
    let e = e.unwrap_err();
    assert_eq!((e.op(), e.location().line()), ("index", line));
    assert!(e.to_string().contains("[3, 4] and [4]"), "{e}");
    // repeat_interleave with a tensor of counts.
    let v = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let r = v
        .repeat_interleave_counts(&i64s(&[2, 0, 1], &[3]), None)
        .unwrap();
    assert_eq!(vals(&r), [1.0, 1.0, 3.0]);
    let rows = x
        .repeat_interleave_counts(&i64s(&[1, 0, 2], &[3]), Some(0))
        .unwrap();
    assert_eq!(rows.shape(), &[3, 4]);
    assert_eq!(
        vals(&rows)[4..],
        [8.0, 9.0, 10.0, 11.0, 8.0, 9.0, 10.0, 11.0]
    );
    let line = line!() + 1;
    let e = v.repeat_interleave_counts(&i64s(&[1, -1, 0], &[3]), None);
    let e = e.unwrap_err();
    assert_eq!((e.op(), e.location().line()), ("repeat_interleave", line));
    assert!(v
        .repeat_interleave_counts(&i64s(&[1, 2], &[2]), None)
        .is_err());
    assert!(v
        .repeat_interleave_counts(&Tensor::from_slice(&[1.0f32]), None)
        .is_err());
}
