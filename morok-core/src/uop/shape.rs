//! The shape of a tensor-level UOp node: computed with the rules of
//! [`crate::shape`], checked and cached on the node.

use crate::shape::{numel, reduce_shape, Shape, ShapeError};
use crate::uop::{Arg, Op, OpGroup, UOp};
use smallvec::SmallVec;
use std::sync::Arc;

const NONE: &[&[usize]] = &[];

/// The shape of a tensor-level node, checked and cached on the node.
/// Nodes without a tensor shape (loop-level ops) give `Ok(None)`.
pub fn shape_of(node: &Arc<UOp>) -> Result<Option<Shape>, ShapeError> {
    // Compute operand shapes first, iteratively, so deep graphs are fine.
    for n in node.toposort() {
        if let Err(e) = n.cache().shape.get_or_init(|| compute(&n)) {
            return Err(e.clone());
        }
    }
    node.cache().shape.get().cloned().unwrap_or(Ok(None))
}

/// The shape of a node known to be tensor-level (an error if it has none).
pub fn tensor_shape(node: &Arc<UOp>) -> Result<Shape, ShapeError> {
    shape_of(node)?.ok_or_else(|| {
        ShapeError::new(
            node.op().dump_name(),
            NONE,
            "the node is not a tensor-level operation",
        )
    })
}

fn src_shape(node: &UOp, i: usize) -> Result<Shape, ShapeError> {
    match node.src().get(i).map(|s| s.cache().shape.get()) {
        Some(Some(Ok(Some(s)))) => Ok(s.clone()),
        _ => Err(ShapeError::new(
            node.op().dump_name(),
            NONE,
            format!("operand {i} has no tensor shape"),
        )),
    }
}

fn compute(node: &UOp) -> Result<Option<Shape>, ShapeError> {
    let name = node.op().dump_name();
    let shape = match (node.op(), node.arg()) {
        (Op::Buffer, Arg::Buffer { size, .. }) => SmallVec::from_slice(&[*size]),
        (Op::Const, _) if node.src().is_empty() => Shape::new(),
        (Op::Reshape, Arg::Shape(new)) => {
            let s = src_shape(node, 0)?;
            if numel(&s) != numel(new) {
                return Err(ShapeError::new(
                    "reshape",
                    &[&s, new],
                    format!("{} elements cannot be viewed as {}", numel(&s), numel(new)),
                ));
            }
            new.clone()
        }
        (Op::Permute, Arg::Axes(perm)) => {
            let s = src_shape(node, 0)?;
            let mut seen = vec![false; s.len()];
            if perm.len() != s.len()
                || perm
                    .iter()
                    .any(|&p| p >= s.len() || std::mem::replace(&mut seen[p], true))
            {
                return Err(ShapeError::new(
                    "permute",
                    &[&s],
                    format!(
                        "{:?} is not a permutation of {} axes",
                        perm.as_slice(),
                        s.len()
                    ),
                ));
            }
            perm.iter().map(|&p| s[p]).collect()
        }
        (Op::Expand, Arg::Shape(new)) => {
            let s = src_shape(node, 0)?;
            if s.len() != new.len() || s.iter().zip(new).any(|(&a, &b)| a != b && a != 1) {
                return Err(ShapeError::new(
                    "expand",
                    &[&s, new],
                    "each dimension must match or be 1 in the source",
                ));
            }
            new.clone()
        }
        (Op::Pad, Arg::Pairs(p)) => {
            let s = src_shape(node, 0)?;
            let grown: Option<Shape> = s
                .iter()
                .zip(p)
                .map(|(&d, &(a, b))| {
                    let a = usize::try_from(a).ok()?;
                    d.checked_add(a)?.checked_add(usize::try_from(b).ok()?)
                })
                .collect();
            match grown {
                Some(g) if p.len() == s.len() => g,
                _ => {
                    return Err(ShapeError::new(
                        "pad",
                        &[&s],
                        format!("bad padding {:?}", p.as_slice()),
                    ))
                }
            }
        }
        (Op::Shrink, Arg::Pairs(p)) => {
            let s = src_shape(node, 0)?;
            if p.len() != s.len()
                || p.iter()
                    .zip(&s)
                    .any(|(&(b, e), &d)| b < 0 || b > e || e as usize > d)
            {
                return Err(ShapeError::new(
                    "shrink",
                    &[&s],
                    format!("bad bounds {:?}", p.as_slice()),
                ));
            }
            p.iter().map(|&(b, e)| (e - b) as usize).collect()
        }
        (Op::Flip, Arg::Axes(axes)) => {
            let s = src_shape(node, 0)?;
            if axes.iter().any(|&a| a >= s.len()) {
                return Err(ShapeError::new(
                    "flip",
                    &[&s],
                    format!("bad axes {:?}", axes.as_slice()),
                ));
            }
            s
        }
        (Op::ReduceAxis, Arg::ReduceAxis(_, axes)) => {
            let s = src_shape(node, 0)?;
            if axes.iter().any(|&a| a >= s.len()) {
                return Err(ShapeError::new(
                    "reduce",
                    &[&s],
                    format!("bad axes {:?}", axes.as_slice()),
                ));
            }
            reduce_shape(&s, axes, true)
        }
        (Op::Cast | Op::Bitcast | Op::Contiguous | Op::Detach | Op::Noop | Op::Copy, _) => {
            src_shape(node, 0)?
        }
        (op, _)
            if matches!(
                op.group(),
                OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary
            ) =>
        {
            let shapes: Vec<Shape> = (0..node.src().len())
                .map(|i| src_shape(node, i))
                .collect::<Result<_, _>>()?;
            if shapes.iter().any(|s| s != &shapes[0]) {
                let refs: Vec<&[usize]> = shapes.iter().map(|s| s.as_slice()).collect();
                return Err(ShapeError::new(
                    name,
                    &refs,
                    "operands of an elementwise op must have equal shapes (broadcast first)",
                ));
            }
            shapes.into_iter().next().unwrap_or_default()
        }
        _ => return Ok(None),
    };
    Ok(Some(shape))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::uop::{ReduceOp, Srcs};
    use smallvec::smallvec;

    #[test]
    fn node_shapes_are_checked_and_cached() {
        let buf = UOp::new(
            Op::Buffer,
            DType::F32,
            Srcs::new(),
            Arg::Buffer {
                id: 9_000_001,
                size: 6,
            },
        );
        let r = UOp::new(
            Op::Reshape,
            DType::F32,
            smallvec![buf.clone()],
            Arg::Shape(smallvec![2, 3]),
        );
        let p = UOp::new(
            Op::Permute,
            DType::F32,
            smallvec![r.clone()],
            Arg::Axes(smallvec![1, 0]),
        );
        assert_eq!(shape_of(&p).unwrap().unwrap().as_slice(), &[3, 2]);
        let s = UOp::new(
            Op::ReduceAxis,
            DType::F32,
            smallvec![p.clone()],
            Arg::ReduceAxis(ReduceOp::Add, smallvec![0]),
        );
        assert_eq!(tensor_shape(&s).unwrap().as_slice(), &[1, 2]);
        let bad = UOp::new(
            Op::Reshape,
            DType::F32,
            smallvec![buf],
            Arg::Shape(smallvec![4]),
        );
        let e = shape_of(&bad).unwrap_err();
        assert_eq!(e.op, "reshape");
        assert_eq!(e.shapes, ["[6]", "[4]"]);
        let add = p.add(&r);
        assert!(shape_of(&add)
            .unwrap_err()
            .to_string()
            .contains("equal shapes"));
    }
}
