//! Shape rules of the ops that join tensors along an axis: `cat` and
//! `stack`.

use super::rules::normalize_axis;
use super::{Dim, Dims, ShapeError};

/// `cat(tensors, dim)` (`op` names the error: `cat`, or an op built on
/// it): at least one tensor, none 0-d, all shapes equal except on axis
/// `dim` (of the first tensor), where the lengths add up.
pub fn cat_shape<D: Dim>(op: &str, shapes: &[&[D]], dim: isize) -> Result<Dims<D>, ShapeError> {
    let Some(&first) = shapes.first() else {
        return Err(ShapeError::new(op, shapes, "needs at least one tensor"));
    };
    let d = normalize_axis(op, first, dim)?;
    if first.is_empty() {
        return Err(ShapeError::new(
            op,
            &[first],
            "zero-dimensional tensors have no axis to join along",
        ));
    }
    let mut total = D::lit(0);
    for &shape in shapes {
        let fits = shape.len() == first.len()
            && shape
                .iter()
                .zip(first)
                .enumerate()
                .all(|(i, (a, b))| i == d || a == b);
        if !fits {
            return Err(ShapeError::new(
                op,
                &[first, shape],
                format!("shapes must match except on axis {d}"),
            ));
        }
        total = match total.add(&shape[d]) {
            Some(t) => t,
            None => {
                return Err(ShapeError::new(
                    op,
                    shapes,
                    format!("the lengths along axis {d} overflow"),
                ))
            }
        };
    }
    let mut out: Dims<D> = first.iter().cloned().collect();
    out[d] = total;
    Ok(out)
}

/// `stack(tensors, dim)`: at least one tensor, all of one shape; the
/// new axis `dim` is counted among rank + 1 axes and has one entry per
/// tensor.
pub fn stack_shape<D: Dim>(shapes: &[&[D]], dim: isize) -> Result<Dims<D>, ShapeError> {
    let op = "stack";
    let Some(&first) = shapes.first() else {
        return Err(ShapeError::new(op, shapes, "needs at least one tensor"));
    };
    let mut out: Dims<D> = first.iter().cloned().collect();
    out.push(D::lit(1));
    let d = normalize_axis(op, &out, dim)?;
    if let Some(other) = shapes.iter().find(|s| **s != first) {
        return Err(ShapeError::new(
            op,
            &[first, other],
            "the tensors must have equal shapes",
        ));
    }
    out.pop();
    out.insert(d, D::lit(shapes.len()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::SymDim;

    fn text<T: std::fmt::Debug>(r: Result<T, ShapeError>) -> String {
        r.map_or_else(|e| e.to_string(), |v| format!("{v:?}"))
    }

    #[test]
    fn cat_shapes_and_errors() {
        let cat = |shapes: &[&[usize]], dim| text(cat_shape("cat", shapes, dim));
        assert_eq!(cat(&[&[2, 3], &[4, 3]], 0), "[6, 3]");
        assert_eq!(cat(&[&[2, 3], &[2, 1], &[2, 0]], -1), "[2, 4]");
        assert_eq!(cat(&[], 0), "cat: needs at least one tensor");
        assert_eq!(
            cat(&[&[]], 0),
            "cat: []: zero-dimensional tensors have no axis to join along"
        );
        assert_eq!(
            cat(&[&[2, 3]], 2),
            "cat: [2, 3]: axis 2 is out of range for a tensor of rank 2"
        );
        assert_eq!(
            cat(&[&[2, 3], &[3, 2]], 0),
            "cat: [2, 3] and [3, 2]: shapes must match except on axis 0"
        );
        assert_eq!(
            cat(&[&[2, 3], &[2]], 0),
            "cat: [2, 3] and [2]: shapes must match except on axis 0"
        );
        let big = usize::MAX / 2 + 1;
        assert_eq!(
            text(cat_shape("pad", &[&[big], &[big]], 0)),
            format!("pad: [{big}] and [{big}]: the lengths along axis 0 overflow")
        );
    }

    #[test]
    fn stack_shapes_and_errors() {
        let stack = |shapes: &[&[usize]], dim| text(stack_shape(shapes, dim));
        assert_eq!(stack(&[&[2, 3], &[2, 3], &[2, 3]], 0), "[3, 2, 3]");
        assert_eq!(stack(&[&[2, 3], &[2, 3]], -1), "[2, 3, 2]");
        assert_eq!(stack(&[&[]], 0), "[1]");
        assert_eq!(stack(&[], 0), "stack: needs at least one tensor");
        assert_eq!(
            stack(&[&[2, 3], &[3, 2]], 0),
            "stack: [2, 3] and [3, 2]: the tensors must have equal shapes"
        );
        assert_eq!(
            stack(&[&[2, 3]], 3),
            "stack: [2, 3, 1]: axis 3 is out of range for a tensor of rank 3"
        );
    }

    #[test]
    fn symbolic_lengths() {
        let b = SymDim::name("B");
        let n = |v: usize| SymDim::from(v);
        let out = cat_shape("cat", &[&[b.clone(), n(3)], &[n(2), n(3)]], 0).unwrap();
        assert_eq!(out[0].to_string(), "B + 2");
        let e = cat_shape("cat", &[&[n(3), b.clone()], &[n(3), n(4)]], 0).unwrap_err();
        assert_eq!(e.reason, "shapes must match except on axis 0");
        let one = [b.clone()];
        let out = stack_shape(&[&one, &one], 0).unwrap();
        assert_eq!(out.to_vec(), [n(2), b]);
        assert!(stack_shape(&[&one, &[n(3)]], 0).is_err());
    }
}
