//! Shape rules of the ops that read or write by an index or a mask tensor:
//! PyTorch's `index` (`t[...]`, [`index_shape`]), `gather`,
//! `index_select`, `masked_fill`, the scatter family.

use super::rules::{broadcast_shapes, normalize_axis, numel_of};
use super::{Dim, Dims, ShapeError, Slice};

/// Whether `a <= b` is known: both numbers in order, or the same dim. A
/// symbolic dim is not known to be at most another one.
pub(super) fn known_at_most<D: Dim>(a: &D, b: &D) -> bool {
    match (a.as_lit(), b.as_lit()) {
        (Some(x), Some(y)) => x <= y,
        _ => a == b,
    }
}

/// Whether `index` has `shape`'s rank and no axis known to be longer
/// than `shape`'s, except axis `d`.
fn fits_except<D: Dim>(index: &[D], shape: &[D], d: usize) -> bool {
    index.len() == shape.len()
        && index
            .iter()
            .zip(shape)
            .enumerate()
            .all(|(i, (a, b))| i == d || known_at_most(a, b))
}

/// `gather(axis, index)`: the index has the input's rank and no axis
/// longer than the input's except `axis`; the result has the index's
/// shape (a 0-d input takes a 0-d index).
pub fn gather_shape<D: Dim>(shape: &[D], index: &[D], axis: isize) -> Result<Dims<D>, ShapeError> {
    let d = normalize_axis("gather", shape, axis)?;
    if !fits_except(index, shape, d) {
        return Err(ShapeError::new(
            "gather",
            &[shape, index],
            format!("the index must have the input's rank and fit it except on axis {d}"),
        ));
    }
    Ok(index.iter().cloned().collect())
}

/// `index_select(axis, index)`: a 0-d or 1-D index; the axis takes the
/// index's length (a 0-d input gives the index's shape).
pub fn index_select_shape<D: Dim>(
    shape: &[D],
    index: &[D],
    axis: isize,
) -> Result<Dims<D>, ShapeError> {
    let d = normalize_axis("index_select", shape, axis)?;
    if index.len() > 1 {
        return Err(ShapeError::new(
            "index_select",
            &[shape, index],
            "the index must be 0-d or 1-D",
        ));
    }
    if shape.is_empty() {
        return Ok(index.iter().cloned().collect());
    }
    let mut out: Dims<D> = shape.iter().cloned().collect();
    out[d] = numel_of(index).unwrap_or_else(|| D::lit(1));
    Ok(out)
}

/// A mask, and a value tensor if any, that broadcast to the input's shape
/// (`op` is `masked_fill`); the result has the input's shape.
pub fn masked_shape<D: Dim>(
    op: &str,
    shape: &[D],
    mask: &[D],
    value: Option<&[D]>,
) -> Result<Dims<D>, ShapeError> {
    let parts = std::iter::once(("mask", mask)).chain(value.map(|v| ("value", v)));
    for (role, part) in parts {
        let joint = broadcast_shapes(op, shape, part)?;
        if joint.as_slice() != shape {
            return Err(ShapeError::new(
                op,
                &[shape, part],
                format!("the {role} must broadcast to the input's shape"),
            ));
        }
    }
    Ok(shape.iter().cloned().collect())
}

/// The scatter family (`op`: `scatter`, `scatter_add`, ...): input, index
/// and src have one rank (at least 1), the index fits src, and the input
/// except on `axis`; the result has the input's shape.
pub fn scatter_shape<D: Dim>(
    op: &str,
    shape: &[D],
    index: &[D],
    src: &[D],
    axis: isize,
) -> Result<Dims<D>, ShapeError> {
    let d = normalize_axis(op, shape, axis)?;
    let fits = !shape.is_empty()
        && src.len() == shape.len()
        && index.iter().zip(src).all(|(a, b)| known_at_most(a, b))
        && fits_except(index, shape, d);
    if !fits {
        return Err(ShapeError::new(
            op,
            &[shape, index, src],
            format!(
                "input, index and src must have one rank (at least 1), the index must fit \
                 src, and the input except on axis {d}"
            ),
        ));
    }
    Ok(shape.iter().cloned().collect())
}

/// One entry of `index` (`t[a, b:c, None, idx, ...]`), with the shapes
/// of its index tensors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexEntry<D> {
    /// A single position (negative counts from the end); removes the axis.
    Int(isize),
    /// A [`Slice`] of the axis.
    Slice(Slice),
    /// A new axis of size 1.
    NewAxis,
    /// All the axes the other entries do not name; at most one.
    Ellipsis,
    /// An integer index tensor of this shape.
    Tensor(Vec<D>),
    /// A bool mask of `shape`, over as many axes, with `count` true
    /// elements: one index of length `count` per covered axis (a 0-d mask
    /// adds an axis and indexes it).
    Mask {
        /// The mask's shape.
        shape: Vec<D>,
        /// Its number of true elements.
        count: D,
    },
}

/// How many input axes `entries` name: one per integer, slice and index
/// tensor, a mask's rank, none for new axes and the ellipsis.
pub fn consumed_axes<D>(entries: &[IndexEntry<D>]) -> usize {
    entries
        .iter()
        .map(|e| match e {
            IndexEntry::NewAxis | IndexEntry::Ellipsis => 0,
            IndexEntry::Mask { shape, .. } => shape.len(),
            _ => 1,
        })
        .sum()
}

/// The size of axis `axis` of the input `shape` when it is a known
/// number, or an error saying that `what` needs one.
fn known<D: Dim>(shape: &[D], dim: &D, axis: usize, what: &str) -> Result<usize, ShapeError> {
    dim.as_lit().ok_or_else(|| {
        ShapeError::new(
            "index",
            &[shape],
            format!("{what} axis {axis} of size {dim} needs a known size (only `..` keeps it)"),
        )
    })
}

/// PyTorch's `index(entries)`, `t[...]`: integers remove an axis,
/// slices keep a strided part of it, new axes insert one, an ellipsis
/// stands for the axes not named, and index tensors and masks select
/// (advanced indexing). Integers and slices apply first (on a symbolic
/// axis only `..` can); the index tensors then broadcast together, and
/// their joint shape replaces the axes they index where those are
/// adjacent, or comes first otherwise.
pub fn index_shape<D: Dim>(shape: &[D], entries: &[IndexEntry<D>]) -> Result<Dims<D>, ShapeError> {
    let op = "index";
    let consuming = consumed_axes(entries);
    let ellipses = entries
        .iter()
        .filter(|e| matches!(e, IndexEntry::Ellipsis))
        .count();
    if ellipses > 1 || consuming > shape.len() {
        let more = if ellipses > 1 {
            " and more than one ellipsis"
        } else {
            ""
        };
        return Err(ShapeError::new(
            op,
            &[shape],
            format!("{consuming} indices for {} axes{more}", shape.len()),
        ));
    }
    // Basic indexing, axis by axis; index tensors keep their axis. `axis`
    // counts the axes of `cur`, `src` those of the input.
    let mut cur: Vec<D> = shape.to_vec();
    let (mut axis, mut src) = (0, 0);
    let mut indexed: Vec<(usize, Vec<D>)> = Vec::new();
    for entry in entries {
        match entry {
            IndexEntry::Ellipsis => {
                axis += shape.len() - consuming;
                src += shape.len() - consuming;
            }
            IndexEntry::NewAxis => {
                cur.insert(axis, D::lit(1));
                axis += 1;
            }
            IndexEntry::Slice(s) => {
                if s.step == 0 {
                    return Err(ShapeError::new(op, &[shape], format!("{s:?} has step 0")));
                }
                if *s != Slice::all() {
                    let n = known(shape, &cur[axis], src, "slicing")?;
                    cur[axis] = D::lit(s.resolve(n).1);
                }
                axis += 1;
                src += 1;
            }
            IndexEntry::Int(i) => {
                let n = known(shape, &cur[axis], src, "indexing")?;
                let p = if *i < 0 {
                    *i as i128 + n as i128
                } else {
                    *i as i128
                };
                if p < 0 || p >= n as i128 {
                    return Err(ShapeError::new(
                        op,
                        &[shape],
                        format!("index {i} is out of range for an axis of size {n}"),
                    ));
                }
                cur.remove(axis);
                src += 1;
            }
            IndexEntry::Tensor(t) => {
                indexed.push((axis, t.clone()));
                axis += 1;
                src += 1;
            }
            IndexEntry::Mask { shape: ms, count } => {
                let k = ms.len();
                if cur.get(axis..axis + k) != Some(&ms[..]) {
                    return Err(ShapeError::new(
                        op,
                        &[&cur[..], ms],
                        format!("the bool mask does not match the axes from {axis} it indexes"),
                    ));
                }
                if k == 0 {
                    cur.insert(axis, D::lit(1));
                }
                for j in 0..k.max(1) {
                    indexed.push((axis + j, vec![count.clone()]));
                }
                axis += k.max(1);
                src += k;
            }
        }
    }
    let Some(&(first, _)) = indexed.first() else {
        return Ok(cur.into_iter().collect());
    };
    let mut joint: Dims<D> = Dims::new();
    for (_, t) in &indexed {
        joint = broadcast_shapes(op, &joint, t)?;
    }
    let axes: Vec<usize> = indexed.iter().map(|(a, _)| *a).collect();
    let rest = cur
        .iter()
        .enumerate()
        .filter(|(a, _)| !axes.contains(a))
        .map(|(_, d)| d.clone());
    let adjacent = axes.windows(2).all(|w| w[1] == w[0] + 1);
    if !adjacent || first == 0 {
        joint.extend(rest);
        return Ok(joint);
    }
    // The index dimensions go where the indexed axes were.
    let mut out: Dims<D> = cur[..first].iter().cloned().collect();
    out.extend(joint);
    out.extend(rest.skip(first));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::SymDim;
    use IndexEntry::{Ellipsis, Int, Mask, NewAxis, Tensor};

    fn index(shape: &[usize], entries: &[IndexEntry<usize>]) -> String {
        index_shape(shape, entries).map_or_else(|e| e.to_string(), |s| format!("{:?}", s.to_vec()))
    }

    fn mask(shape: &[usize], count: usize) -> IndexEntry<usize> {
        Mask {
            shape: shape.to_vec(),
            count,
        }
    }

    #[test]
    fn basic_indexing() {
        let x = [5, 6, 7];
        let all = IndexEntry::Slice(Slice::all());
        assert_eq!(index(&x, &[]), "[5, 6, 7]");
        assert_eq!(index(&x, &[Int(0)]), "[6, 7]");
        assert_eq!(
            index(&x, &[IndexEntry::Slice(Slice::range(1, 3)), Int(-1)]),
            "[2, 7]"
        );
        assert_eq!(index(&x, &[Ellipsis, Int(0)]), "[5, 6]");
        assert_eq!(index(&x, &[NewAxis, Ellipsis, NewAxis]), "[1, 5, 6, 7, 1]");
        assert_eq!(
            index(&x, &[all.clone(), IndexEntry::Slice(Slice::all().step(-4))]),
            "[5, 2, 7]"
        );
    }

    #[test]
    fn advanced_indexing() {
        let x = [5, 6, 7];
        let all = IndexEntry::Slice(Slice::all());
        assert_eq!(index(&x, &[all.clone(), Tensor(vec![4])]), "[5, 4, 7]");
        assert_eq!(
            index(&x, &[Tensor(vec![4]), all.clone(), Tensor(vec![4])]),
            "[4, 6]"
        );
        assert_eq!(
            index(&x, &[Tensor(vec![2, 1]), Tensor(vec![3])]),
            "[2, 3, 7]"
        );
        assert_eq!(
            index(&x, &[all.clone(), Tensor(vec![2, 1]), Tensor(vec![3])]),
            "[5, 2, 3]"
        );
        // Integers apply first: the index tensor is then on axis 1 of 2.
        assert_eq!(index(&x, &[Int(0), all.clone(), Tensor(vec![4])]), "[6, 4]");
        assert_eq!(index(&x, &[mask(&[5, 6], 9)]), "[9, 7]");
        assert_eq!(index(&x, &[all, mask(&[6, 7], 3)]), "[5, 3]");
        assert_eq!(index(&x, &[mask(&[], 1)]), "[1, 5, 6, 7]");
        assert_eq!(index(&x, &[Int(1), mask(&[], 0)]), "[0, 6, 7]");
        assert_eq!(
            index(&x, &[NewAxis, mask(&[], 1), Tensor(vec![2])]),
            "[1, 2, 6, 7]"
        );
    }

    #[test]
    fn errors() {
        let x = [5, 6, 7];
        assert_eq!(
            index(&x, &[Int(0), Int(0), Int(0), Int(0)]),
            "index: [5, 6, 7]: 4 indices for 3 axes"
        );
        assert_eq!(
            index(&x, &[Ellipsis, Ellipsis]),
            "index: [5, 6, 7]: 0 indices for 3 axes and more than one ellipsis"
        );
        assert_eq!(
            index(&x, &[Int(-6)]),
            "index: [5, 6, 7]: index -6 is out of range for an axis of size 5"
        );
        assert_eq!(
            index(&x, &[IndexEntry::Slice(Slice::all().step(0))]),
            "index: [5, 6, 7]: Slice { start: None, end: None, step: 0 } has step 0"
        );
        assert_eq!(
            index(&x, &[Int(0), mask(&[7], 2)]),
            "index: [6, 7] and [7]: the bool mask does not match the axes from 0 it indexes"
        );
        assert_eq!(
            index(&x, &[Tensor(vec![2]), Tensor(vec![3])]),
            "index: [2] and [3]: dimension 0 of the broadcast shape: 2 and 3 differ and \
             neither is 1"
        );
    }

    #[test]
    fn symbolic_axes() {
        let n = SymDim::name("N");
        let x = [SymDim::name("B"), SymDim::from(3)];
        let all = IndexEntry::Slice(Slice::all());
        let out = index_shape(&x, &[all, Int(1)]).unwrap();
        assert_eq!(out[..], x[..1]);
        let out = index_shape(&x, &[Tensor(vec![n.clone()])]).unwrap();
        assert_eq!(out.to_vec(), [n.clone(), SymDim::from(3)]);
        let masked = Mask {
            shape: x.to_vec(),
            count: n.clone(),
        };
        assert_eq!(index_shape(&x, &[masked]).unwrap().to_vec(), [n]);
        let e = index_shape(&x, &[Int(0)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "index: [B, 3]: indexing axis 0 of size B needs a known size (only `..` keeps it)"
        );
        let e = index_shape(&x, &[NewAxis, IndexEntry::Slice(Slice::to(2))]).unwrap_err();
        assert_eq!(
            e.reason,
            "slicing axis 0 of size B needs a known size (only `..` keeps it)"
        );
        let wrong = Mask {
            shape: vec![SymDim::from(3), SymDim::from(3)],
            count: SymDim::from(2),
        };
        assert!(index_shape(&x, &[wrong]).is_err());
    }
}
