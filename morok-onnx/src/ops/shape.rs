//! Shape and movement ops: `Reshape`, `Flatten`, `(Un)Squeeze`,
//! `Transpose`, `Concat`, `Split`, `Slice`, `Expand`, `Tile`, `Pad`,
//! `DepthToSpace`/`SpaceToDepth`, `Trilu`, and the ops that make tensors
//! from shapes and constants (`Shape`, `Size`, `Constant`,
//! `ConstantOfShape`, `Range`, `EyeLike`).
//!
//! `Shape` and `Size` are static here: they read the (always known) shape
//! of their input, so shape arithmetic that feeds a `Reshape` is host work.

use super::{
    host_ints, host_scalar, invalid, to_shape, unsupported, OpCtx, OpError, OpFn, OpResult,
};
use crate::data::{dtype_of, tensor_from_proto, DataDir};
use morok::{DType, PadMode, Slice, Tensor};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("Reshape", reshape),
    ("Flatten", flatten),
    ("Squeeze", squeeze),
    ("Unsqueeze", unsqueeze),
    ("Transpose", transpose),
    ("Concat", concat),
    ("Split", split),
    ("Slice", slice),
    ("Shape", shape),
    ("Size", size),
    ("Expand", expand),
    ("Tile", tile),
    ("Pad", pad),
    ("Constant", constant),
    ("ConstantOfShape", constant_of_shape),
    ("Range", range),
    ("EyeLike", eye_like),
    ("Trilu", trilu),
    ("DepthToSpace", depth_to_space),
    ("SpaceToDepth", space_to_depth),
    ("CenterCropPad", center_crop_pad),
    ("ReverseSequence", reverse_sequence),
];

fn isize_dims(shape: &[usize]) -> Vec<isize> {
    shape.iter().map(|&d| d as isize).collect()
}

fn reshape(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let target = if ctx.opset < 5 {
        ctx.ints("shape")?.unwrap_or_default()
    } else {
        host_ints(ctx.input(1)?)?
    };
    let allow_zero = ctx.int("allowzero", 0)? != 0;
    let mut dims = Vec::with_capacity(target.len());
    for (i, &d) in target.iter().enumerate() {
        dims.push(match d {
            0 if !allow_zero => match x.shape().get(i) {
                Some(&s) => s as isize,
                None => invalid!(
                    "shape {target:?} copies dim {i} of a rank-{} input",
                    x.ndim()
                ),
            },
            d if d < -1 => invalid!("shape {target:?} has a negative size"),
            d => d as isize,
        });
    }
    Ok(vec![x.reshape(&dims)?])
}

fn flatten(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let axis = ctx.int("axis", 1)?;
    let rank = x.ndim() as i64;
    if axis < -rank || axis > rank {
        invalid!("axis {axis} for rank {rank}");
    }
    let axis = if axis < 0 { axis + rank } else { axis } as usize;
    let outer: usize = x.shape()[..axis].iter().product();
    let inner: usize = x.shape()[axis..].iter().product();
    Ok(vec![x.reshape(&[outer as isize, inner as isize])?])
}

/// The axes of `(Un)Squeeze`: an attribute before opset 13, an input after.
fn axes_of(ctx: &OpCtx<'_>) -> OpResult<Option<Vec<i64>>> {
    if ctx.opset < 13 {
        ctx.ints("axes")
    } else {
        ctx.opt(1).map(host_ints).transpose()
    }
}

fn squeeze(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let rank = x.ndim();
    let axes: Vec<usize> = match axes_of(ctx)? {
        Some(axes) => axes
            .iter()
            .map(|&a| ctx.axis(a, rank))
            .collect::<OpResult<_>>()?,
        None => (0..rank).filter(|&i| x.shape()[i] == 1).collect(),
    };
    for &a in &axes {
        if x.shape()[a] != 1 {
            invalid!("axis {a} of shape {:?} is not 1", x.shape());
        }
    }
    let dims: Vec<isize> = (0..rank)
        .filter(|i| !axes.contains(i))
        .map(|i| x.shape()[i] as isize)
        .collect();
    Ok(vec![x.reshape(&dims)?])
}

fn unsqueeze(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let Some(axes) = axes_of(ctx)? else {
        invalid!("no axes");
    };
    let out_rank = x.ndim() + axes.len();
    let mut axes: Vec<usize> = axes
        .iter()
        .map(|&a| ctx.axis(a, out_rank))
        .collect::<OpResult<_>>()?;
    axes.sort_unstable();
    if axes.windows(2).any(|w| w[0] == w[1]) {
        invalid!("repeated axes");
    }
    let mut src = x.shape().iter();
    let dims: Vec<isize> = (0..out_rank)
        .map(|i| {
            if axes.contains(&i) {
                1
            } else {
                src.next().map_or(1, |&d| d as isize)
            }
        })
        .collect();
    Ok(vec![x.reshape(&dims)?])
}

fn transpose(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let perm: Vec<isize> = match ctx.ints("perm")? {
        Some(p) => p.iter().map(|&a| a as isize).collect(),
        None => (0..x.ndim() as isize).rev().collect(),
    };
    Ok(vec![x.permute(&perm)?])
}

fn concat(ctx: &OpCtx<'_>) -> OpResult {
    let inputs: Vec<&Tensor> = ctx.inputs.iter().flatten().collect();
    let Some(first) = inputs.first() else {
        invalid!("no inputs");
    };
    let axis = ctx.axis(ctx.int("axis", 0)?, first.ndim())?;
    Ok(vec![Tensor::cat(&inputs, axis as isize)?])
}

fn split(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let axis = ctx.axis(ctx.int("axis", 0)?, x.ndim())?;
    let len = x.shape()[axis];
    let outputs = ctx.node.proto.output.len();
    let sizes = if ctx.opset < 13 {
        ctx.ints("split")?
    } else {
        ctx.opt(1).map(host_ints).transpose()?
    };
    let sizes: Vec<usize> = match sizes {
        Some(s) => to_shape(&s)?,
        None => {
            let parts = if ctx.opset >= 18 {
                ctx.int("num_outputs", outputs as i64)? as usize
            } else {
                outputs
            };
            if parts == 0 {
                invalid!("no outputs");
            }
            let chunk = len.div_ceil(parts);
            (0..parts)
                .map(|i| chunk.min(len.saturating_sub(i * chunk)))
                .collect()
        }
    };
    if sizes.iter().sum::<usize>() != len {
        invalid!("split sizes {sizes:?} do not add up to {len}");
    }
    Ok(x.split(&sizes, axis as isize)?)
}

fn slice(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let rank = x.ndim();
    let (starts, ends, axes, steps) = if ctx.opset < 10 {
        (
            ctx.ints("starts")?.unwrap_or_default(),
            ctx.ints("ends")?.unwrap_or_default(),
            ctx.ints("axes")?,
            None,
        )
    } else {
        (
            host_ints(ctx.input(1)?)?,
            host_ints(ctx.input(2)?)?,
            ctx.opt(3).map(host_ints).transpose()?,
            ctx.opt(4).map(host_ints).transpose()?,
        )
    };
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        invalid!("starts, ends, axes and steps differ in length");
    }
    let mut slices = vec![Slice::all(); rank];
    for i in 0..starts.len() {
        let axis = ctx.axis(axes[i], rank)?;
        let n = x.shape()[axis] as i64;
        let step = steps[i];
        if step == 0 {
            invalid!("step 0 on axis {axis}");
        }
        // Clamp the bounds to what ONNX allows so that huge sentinels fit.
        let clamp = |v: i64| -> isize {
            let v = if v < 0 { v.saturating_add(n) } else { v };
            if step > 0 {
                v.clamp(0, n) as isize
            } else {
                v.clamp(-1, n - 1) as isize
            }
        };
        let (s, e) = (clamp(starts[i]), clamp(ends[i]));
        slices[axis] = Slice {
            start: Some(s),
            end: if step < 0 && e < 0 { None } else { Some(e) },
            step: step as isize,
        };
    }
    Ok(vec![x.slice(&slices)?])
}

fn shape(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let rank = x.ndim() as i64;
    let bound = |v: i64| if v < 0 { (v + rank).max(0) } else { v.min(rank) } as usize;
    let start = bound(ctx.int("start", 0)?);
    let end = bound(ctx.int("end", rank)?).max(start);
    let dims: Vec<i64> = x.shape()[start..end].iter().map(|&d| d as i64).collect();
    let n = dims.len();
    Ok(vec![Tensor::from_vec(dims, &[n])?])
}

fn size(ctx: &OpCtx<'_>) -> OpResult {
    let n = ctx.input(0)?.numel() as i64;
    Ok(vec![Tensor::from_vec(vec![n], &[])?])
}

/// The broadcast of two shapes (NumPy rules), for `Expand`.
fn broadcast(a: &[usize], b: &[usize]) -> OpResult<Vec<usize>> {
    let rank = a.len().max(b.len());
    let at = |s: &[usize], i: usize| {
        if i + s.len() < rank {
            1
        } else {
            s[i + s.len() - rank]
        }
    };
    (0..rank)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y || y == 1 => Ok(x),
            (1, y) => Ok(y),
            (x, y) => invalid!("cannot broadcast {a:?} with {b:?} (axis {i}: {x} vs {y})"),
        })
        .collect()
}

fn expand(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let target = to_shape(&host_ints(ctx.input(1)?)?)?;
    let out = broadcast(x.shape(), &target)?;
    to_shape(&out.iter().map(|&d| d as i64).collect::<Vec<_>>())?;
    Ok(vec![x.broadcast_to(&out)?])
}

fn tile(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let reps = to_shape(&host_ints(ctx.input(1)?)?)?;
    if reps.len() != x.ndim() {
        invalid!("{} repeats for rank {}", reps.len(), x.ndim());
    }
    let total: Vec<i64> = x
        .shape()
        .iter()
        .zip(&reps)
        .map(|(&d, &r)| (d * r) as i64)
        .collect();
    to_shape(&total)?;
    Ok(vec![x.repeat(&reps)?])
}

fn pad(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let rank = x.ndim();
    let (pads, value) = if ctx.opset < 11 {
        (
            ctx.ints("pads")?
                .or(ctx.ints("paddings")?)
                .unwrap_or_default(),
            ctx.float("value", 0.0)? as f64,
        )
    } else {
        let v = match ctx.opt(2) {
            Some(t) if t.numel() > 0 => host_scalar(t)?,
            _ => 0.0,
        };
        (host_ints(ctx.input(1)?)?, v)
    };
    let axes: Vec<usize> = match ctx.opt(3) {
        Some(a) => host_ints(a)?
            .iter()
            .map(|&a| ctx.axis(a, rank))
            .collect::<OpResult<_>>()?,
        None => (0..rank).collect(),
    };
    if pads.len() != 2 * axes.len() {
        invalid!("{} pads for {} axes", pads.len(), axes.len());
    }
    let mut per_axis = vec![(0isize, 0isize); rank];
    for (i, &a) in axes.iter().enumerate() {
        per_axis[a] = (pads[i] as isize, pads[i + axes.len()] as isize);
    }
    let mode = ctx.string("mode", "constant")?;
    let out = pad_axes(x, &per_axis, &mode, value)?;
    Ok(vec![out])
}

/// Pads (or, for negative amounts, crops) each axis by `(before, after)`
/// in ONNX's `mode` (`constant`, `reflect`, `edge`, `wrap`).
pub(crate) fn pad_axes(
    x: &Tensor,
    pads: &[(isize, isize)],
    mode: &str,
    value: f64,
) -> OpResult<Tensor> {
    // Crops first, so that the padding modes only see non-negative amounts.
    let bounds: Vec<(usize, usize)> = x
        .shape()
        .iter()
        .zip(pads)
        .map(|(&n, &(b, a))| {
            let lo = (-b).max(0) as usize;
            let hi = (n as isize + a.min(0)).max(lo as isize) as usize;
            (lo.min(n), hi.min(n))
        })
        .collect();
    let x = if pads.iter().any(|&(b, a)| b < 0 || a < 0) {
        x.shrink(&bounds)?
    } else {
        x.clone()
    };
    let grow: Vec<(isize, isize)> = pads.iter().map(|&(b, a)| (b.max(0), a.max(0))).collect();
    if grow.iter().all(|&(b, a)| b == 0 && a == 0) {
        return Ok(x);
    }
    let mode = match mode {
        "constant" => {
            let filled = x.cast(DType::F64)?.pad(&grow, value)?;
            return Ok(filled.cast(x.dtype())?);
        }
        "reflect" => PadMode::Reflect,
        "edge" => PadMode::Replicate,
        "wrap" => PadMode::Circular,
        other => unsupported!("pad mode {other:?}"),
    };
    Ok(x.pad_mode(&grow, mode)?)
}

fn constant(ctx: &OpCtx<'_>) -> OpResult {
    if let Some(t) = ctx.tensor_attr("value")? {
        return Ok(vec![
            tensor_from_proto(t, DataDir(None)).map_err(|e| OpError::Nested(Box::new(e)))?
        ]);
    }
    if let Some(a) = ctx.attr("value_float") {
        return Ok(vec![Tensor::full(&[], a.f.unwrap_or(0.0))]);
    }
    if let Some(a) = ctx.attr("value_int") {
        return Ok(vec![Tensor::full(&[], a.i.unwrap_or(0))]);
    }
    if let Some(v) = ctx.floats("value_floats")? {
        let n = v.len();
        return Ok(vec![Tensor::from_vec(v, &[n])?]);
    }
    if let Some(v) = ctx.ints("value_ints")? {
        let n = v.len();
        return Ok(vec![Tensor::from_vec(v, &[n])?]);
    }
    if ctx.attr("sparse_value").is_some() {
        unsupported!("sparse constant");
    }
    if ctx.attr("value_string").is_some() || ctx.attr("value_strings").is_some() {
        unsupported!("string constants (Morok has no string dtype)");
    }
    invalid!("no value attribute")
}

fn constant_of_shape(ctx: &OpCtx<'_>) -> OpResult {
    let shape = to_shape(&host_ints(ctx.input(0)?)?)?;
    let value = match ctx.tensor_attr("value")? {
        Some(t) => tensor_from_proto(t, DataDir(None)).map_err(|e| OpError::Nested(Box::new(e)))?,
        None => Tensor::full(&[1], 0.0f32),
    };
    if value.numel() != 1 {
        invalid!("value has {} elements, expected one", value.numel());
    }
    let scalar = value.reshape(&[])?;
    Ok(vec![scalar.broadcast_to(&shape)?.contiguous()?])
}

fn range(ctx: &OpCtx<'_>) -> OpResult {
    let start = ctx.input(0)?;
    let (s, l, d) = (
        host_scalar(start)?,
        host_scalar(ctx.input(1)?)?,
        host_scalar(ctx.input(2)?)?,
    );
    if d == 0.0 {
        invalid!("delta 0");
    }
    let n = ((l - s) / d).ceil().max(0.0);
    if n > super::MAX_CREATED as f64 {
        invalid!("range of {n} elements");
    }
    let idx = Tensor::arange_dtype(0.0, n, 1.0, DType::F64)?;
    let out = idx.mul(d)?.add(s)?;
    Ok(vec![out.cast(start.dtype())?])
}

fn eye_like(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    if x.ndim() != 2 {
        invalid!("input of rank {}, expected 2", x.ndim());
    }
    let dtype = match ctx.attr("dtype") {
        Some(a) => dtype_of(a.i.unwrap_or(1) as i32).map_err(OpError::Unsupported)?,
        None => x.dtype(),
    };
    let k = ctx.int("k", 0)?;
    let (n, m) = (x.shape()[0], x.shape()[1]);
    let ones = Tensor::ones(&[n, m], DType::F32);
    let band = ones.triu(k as isize)?.mul(&ones.tril(k as isize)?)?;
    Ok(vec![band.cast(dtype)?])
}

fn trilu(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let k = match ctx.opt(1) {
        Some(t) => host_scalar(t)? as isize,
        None => 0,
    };
    let out = if ctx.int("upper", 1)? != 0 {
        x.triu(k)?
    } else {
        x.tril(k)?
    };
    Ok(vec![out])
}

fn depth_to_space(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let b = ctx.int("blocksize", 0)? as usize;
    let [n, c, h, w] = *x.shape() else {
        invalid!("input of shape {:?}, expected rank 4", x.shape());
    };
    if b == 0 || c % (b * b) != 0 {
        invalid!("blocksize {b} for {c} channels");
    }
    let cb = (c / (b * b)) as isize;
    let (n, h, w, b) = (n as isize, h as isize, w as isize, b as isize);
    let out = if ctx.string("mode", "DCR")? == "CRD" {
        x.reshape(&[n, cb, b, b, h, w])?
            .permute(&[0, 1, 4, 2, 5, 3])?
    } else {
        x.reshape(&[n, b, b, cb, h, w])?
            .permute(&[0, 3, 4, 1, 5, 2])?
    };
    Ok(vec![out.reshape(&[n, cb, h * b, w * b])?])
}

fn space_to_depth(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let b = ctx.int("blocksize", 0)? as usize;
    let [n, c, h, w] = *x.shape() else {
        invalid!("input of shape {:?}, expected rank 4", x.shape());
    };
    if b == 0 || h % b != 0 || w % b != 0 {
        invalid!("blocksize {b} for {h}x{w}");
    }
    let dims = isize_dims(&[n, c, h / b, b, w / b, b]);
    let out = x.reshape(&dims)?.permute(&[0, 3, 5, 1, 2, 4])?;
    Ok(vec![out.reshape(&isize_dims(&[
        n,
        c * b * b,
        h / b,
        w / b,
    ]))?])
}

fn center_crop_pad(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let target = to_shape(&host_ints(ctx.input(1)?)?)?;
    let axes: Vec<usize> = match ctx.ints("axes")? {
        Some(a) => a
            .iter()
            .map(|&a| ctx.axis(a, x.ndim()))
            .collect::<OpResult<_>>()?,
        None => (0..x.ndim()).collect(),
    };
    if axes.len() != target.len() {
        invalid!("{} sizes for {} axes", target.len(), axes.len());
    }
    let mut pads = vec![(0isize, 0isize); x.ndim()];
    for (&a, &want) in axes.iter().zip(&target) {
        let diff = want as isize - x.shape()[a] as isize;
        // Growth and crops are split with the odd element at the end.
        pads[a] = (diff / 2, diff - diff / 2);
    }
    Ok(vec![pad_axes(x, &pads, "constant", 0.0)?])
}

fn reverse_sequence(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let lens = host_ints(ctx.input(1)?)?;
    let time = ctx.axis(ctx.int("time_axis", 0)?, x.ndim())?;
    let batch = ctx.axis(ctx.int("batch_axis", 1)?, x.ndim())?;
    let (t_len, b_len) = (x.shape()[time], x.shape()[batch]);
    if lens.len() != b_len || time == batch {
        invalid!(
            "{} lengths for a batch of {b_len} (time axis {time}, batch axis {batch})",
            lens.len()
        );
    }
    let mut index = vec![0i64; t_len * b_len];
    for (b, &len) in lens.iter().enumerate() {
        let len = len.clamp(0, t_len as i64);
        for t in 0..t_len as i64 {
            let src = if t < len { len - 1 - t } else { t };
            index[t as usize * b_len + b] = src;
        }
    }
    let mut dims = vec![1isize; x.ndim()];
    dims[time] = t_len as isize;
    dims[batch] = b_len as isize;
    let index = if time < batch {
        Tensor::from_vec(index, &[t_len, b_len])?.reshape(&dims)?
    } else {
        Tensor::from_vec(index, &[t_len, b_len])?
            .permute(&[1, 0])?
            .reshape(&dims)?
    };
    let index = index.broadcast_to(x.shape())?;
    Ok(vec![x.gather(time as isize, &index)?])
}
