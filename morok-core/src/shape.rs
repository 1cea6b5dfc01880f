//! Shape rules, in one place.
//!
//! The pure functions here (broadcasting, matmul, reductions, reshape with
//! `-1`, axis normalization) are the only definition of the shape rules:
//! the tensor API calls them at run time and the macros call them at
//! expansion time, so both report the same error text.
//!
//! [`shape_of`] computes (and caches on the node) the shape of a
//! tensor-level UOp, checking that each node is well formed.

use crate::uop::{Arg, Op, OpGroup, Shape, UOp};
use smallvec::SmallVec;
use std::fmt;
use std::sync::Arc;

/// A shape rule was violated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    /// The operation that was asked for (`add`, `reshape`, `matmul`, ...).
    pub op: String,
    /// The shapes involved, in operand order.
    pub shapes: Vec<Shape>,
    /// What is wrong.
    pub reason: String,
}

impl ShapeError {
    /// A new error for `op` over `shapes`.
    pub fn new(op: impl Into<String>, shapes: &[&[usize]], reason: impl Into<String>) -> Self {
        ShapeError {
            op: op.into(),
            shapes: shapes.iter().map(|s| Shape::from_slice(s)).collect(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.op)?;
        for (i, s) in self.shapes.iter().enumerate() {
            if i > 0 {
                f.write_str(" and ")?;
            }
            write!(f, "{:?}", s.as_slice())?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for ShapeError {}

/// Number of elements of a shape (1 for a scalar), saturating at
/// `usize::MAX` when the product overflows (a zero size still gives 0).
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().fold(1usize, |acc, &d| acc.saturating_mul(d))
}

/// Resolves a possibly negative axis against `rank` (`-1` is the last axis).
pub fn normalize_axis(op: &str, shape: &[usize], axis: isize) -> Result<usize, ShapeError> {
    let rank = shape.len() as isize;
    let a = if axis < 0 { axis + rank } else { axis };
    if a < 0 || a >= rank.max(1) || (rank == 0 && a != 0) {
        return Err(ShapeError::new(
            op,
            &[shape],
            format!("axis {axis} is out of range for a tensor of rank {rank}"),
        ));
    }
    Ok(a as usize)
}

/// NumPy broadcasting: align from the right; each pair of dimensions must
/// be equal or one of them 1.
pub fn broadcast_shapes(op: &str, a: &[usize], b: &[usize]) -> Result<Shape, ShapeError> {
    let rank = a.len().max(b.len());
    let mut out = Shape::with_capacity(rank);
    for i in 0..rank {
        let da = if i + a.len() >= rank {
            a[i + a.len() - rank]
        } else {
            1
        };
        let db = if i + b.len() >= rank {
            b[i + b.len() - rank]
        } else {
            1
        };
        out.push(match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            (x, y) => {
                return Err(ShapeError::new(
                    op,
                    &[a, b],
                    format!(
                        "dimension {i} of the broadcast shape: {x} and {y} differ and neither is 1"
                    ),
                ))
            }
        });
    }
    Ok(out)
}

/// The result shape of `a @ b` with NumPy/PyTorch `matmul` rules: 1-D
/// operands are promoted to a row (left) or column (right) vector and the
/// added axis removed again; batch axes broadcast.
pub fn matmul_shape(a: &[usize], b: &[usize]) -> Result<Shape, ShapeError> {
    if a.is_empty() || b.is_empty() {
        return Err(ShapeError::new(
            "matmul",
            &[a, b],
            "both operands need at least one axis",
        ));
    }
    let k_a = a[a.len() - 1];
    let k_b = if b.len() == 1 { b[0] } else { b[b.len() - 2] };
    if k_a != k_b {
        return Err(ShapeError::new(
            "matmul",
            &[a, b],
            format!("inner dimensions differ ({k_a} vs {k_b})"),
        ));
    }
    let batch_a = if a.len() > 2 {
        &a[..a.len() - 2]
    } else {
        &[][..]
    };
    let batch_b = if b.len() > 2 {
        &b[..b.len() - 2]
    } else {
        &[][..]
    };
    let mut out = broadcast_shapes("matmul", batch_a, batch_b)
        .map_err(|e| ShapeError::new("matmul", &[a, b], format!("batch axes: {}", e.reason)))?;
    if a.len() >= 2 {
        out.push(a[a.len() - 2]);
    }
    if b.len() >= 2 {
        out.push(b[b.len() - 1]);
    }
    Ok(out)
}

/// Resolves a reshape target with at most one `-1` against `shape`.
pub fn reshape_target(shape: &[usize], target: &[isize]) -> Result<Shape, ShapeError> {
    let total = numel(shape);
    let err = |reason: String| {
        let t: Vec<String> = target.iter().map(|d| d.to_string()).collect();
        ShapeError::new(
            "reshape",
            &[shape],
            format!("to [{}]: {reason}", t.join(", ")),
        )
    };
    let mut infer = None;
    // The product of the non-zero sizes, checked: a zero beside huge sizes
    // must not hide an overflow.
    let mut nonzero = 1usize;
    let mut zero = false;
    for (i, &d) in target.iter().enumerate() {
        match d {
            -1 if infer.is_none() => infer = Some(i),
            -1 => return Err(err("more than one dimension is -1".into())),
            d if d < 0 => return Err(err(format!("dimension {d} is negative"))),
            0 => zero = true,
            d => {
                nonzero = nonzero
                    .checked_mul(d as usize)
                    .ok_or_else(|| err("the sizes' product overflows".into()))?
            }
        }
    }
    let known = if zero { 0 } else { nonzero };
    let mut out: Shape = target.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(i) = infer {
        if known == 0 || !total.is_multiple_of(known) {
            return Err(err(format!("cannot infer -1 from {total} elements")));
        }
        out[i] = total / known;
    } else if known != total {
        return Err(err(format!("{total} elements cannot be viewed as {known}")));
    }
    Ok(out)
}

/// The shape after reducing `axes` (already normalized); reduced axes
/// become 1 with `keepdim`, or are removed.
pub fn reduce_shape(shape: &[usize], axes: &[usize], keepdim: bool) -> Shape {
    shape
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (axes.contains(&i), keepdim) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

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
            &[],
            "the node is not a tensor-level operation",
        )
    })
}

fn src_shape(node: &UOp, i: usize) -> Result<Shape, ShapeError> {
    match node.src().get(i).map(|s| s.cache().shape.get()) {
        Some(Some(Ok(Some(s)))) => Ok(s.clone()),
        _ => Err(ShapeError::new(
            node.op().dump_name(),
            &[],
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
    fn broadcasting() {
        assert_eq!(
            broadcast_shapes("add", &[3, 2], &[1, 2])
                .unwrap()
                .as_slice(),
            &[3, 2]
        );
        assert_eq!(
            broadcast_shapes("add", &[3, 2], &[2]).unwrap().as_slice(),
            &[3, 2]
        );
        let e = broadcast_shapes("add", &[3, 2], &[3]).unwrap_err();
        assert_eq!(e.to_string(), "add: [3, 2] and [3]: dimension 1 of the broadcast shape: 2 and 3 differ and neither is 1");
    }

    #[test]
    fn matmul_rules() {
        assert_eq!(matmul_shape(&[4, 3], &[3, 2]).unwrap().as_slice(), &[4, 2]);
        assert_eq!(matmul_shape(&[3], &[3, 2]).unwrap().as_slice(), &[2]);
        assert_eq!(matmul_shape(&[4, 3], &[3]).unwrap().as_slice(), &[4]);
        assert_eq!(
            matmul_shape(&[5, 4, 3], &[5, 3, 2]).unwrap().as_slice(),
            &[5, 4, 2]
        );
        assert_eq!(
            matmul_shape(&[5, 4, 3], &[3, 2]).unwrap().as_slice(),
            &[5, 4, 2]
        );
        assert_eq!(
            matmul_shape(&[3], &[3]).unwrap().as_slice(),
            &[] as &[usize]
        );
        assert!(matmul_shape(&[4, 3], &[2, 2])
            .unwrap_err()
            .to_string()
            .contains("inner dimensions differ (3 vs 2)"));
    }

    #[test]
    fn reshape_with_minus_one() {
        assert_eq!(reshape_target(&[6], &[-1, 3]).unwrap().as_slice(), &[2, 3]);
        assert!(reshape_target(&[6], &[-1, 4]).is_err());
        assert!(reshape_target(&[6], &[-1, -1]).is_err());
        assert!(reshape_target(&[6], &[4]).is_err());
        // A zero size does not hide sizes whose product overflows.
        let e = reshape_target(&[0], &[isize::MAX, isize::MAX, 0]).unwrap_err();
        assert!(e.to_string().contains("product overflows"), "{e}");
        assert_eq!(
            reshape_target(&[0, 3], &[3, -1, 0]).unwrap_err().reason,
            "to [3, -1, 0]: cannot infer -1 from 0 elements"
        );
        assert_eq!(numel(&[usize::MAX, 2, 0]), 0);
        assert_eq!(numel(&[usize::MAX, 2]), usize::MAX);
        assert_eq!(normalize_axis("sum", &[2, 3], -1).unwrap(), 1);
        assert!(normalize_axis("sum", &[2, 3], 2).is_err());
    }

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
        assert_eq!(
            e.shapes,
            vec![Shape::from_slice(&[6]), Shape::from_slice(&[4])]
        );
        let add = p.add(&r);
        assert!(shape_of(&add)
            .unwrap_err()
            .to_string()
            .contains("equal shapes"));
    }
}
