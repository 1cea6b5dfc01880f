//! Indexing ops: `Gather`, `GatherElements`, `GatherND`, `Scatter*`,
//! `OneHot`, `NonZero`, `Compress`, `TensorScatter`, `Unique`.
//!
//! ONNX indices may be negative (counting from the end); they are made
//! non-negative first. `GatherND` and `ScatterND` fold the indexed leading
//! axes into one, so that each becomes a `Gather` / `ScatterElements` over
//! that axis with a linear index.

use super::reduce::shape_along;
use super::{host_floats, host_ints, host_scalar, invalid, unsupported, OpCtx, OpFn, OpResult};
use morok::{DType, ScatterReduce, Tensor};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("Gather", gather),
    ("GatherElements", gather_elements),
    ("GatherND", gather_nd),
    ("ScatterElements", scatter_elements),
    ("Scatter", scatter_elements),
    ("ScatterND", scatter_nd),
    ("OneHot", one_hot),
    ("NonZero", non_zero),
    ("Compress", compress),
    ("TensorScatter", tensor_scatter),
    ("Unique", unique),
];

/// `index` with negative entries moved up by `n`, as `i64`.
fn wrap(index: &Tensor, n: usize) -> OpResult<Tensor> {
    if !index.dtype().is_int() {
        invalid!("indices of dtype {}, expected integers", index.dtype());
    }
    let i = index.cast(DType::I64)?;
    Ok(i.lt(0)?.where_(i.add(n as i64)?, &i)?)
}

/// NumPy `take` along `axis`: `data.shape[..axis] + index.shape +
/// data.shape[axis + 1..]`.
pub(crate) fn take(data: &Tensor, axis: usize, index: &Tensor) -> OpResult<Tensor> {
    let n = data.shape()[axis];
    let flat = wrap(index, n)?.reshape(&[-1])?;
    let picked = data.index_select(axis as isize, &flat)?;
    let mut dims: Vec<isize> = data.shape()[..axis].iter().map(|&d| d as isize).collect();
    dims.extend(index.shape().iter().map(|&d| d as isize));
    dims.extend(data.shape()[axis + 1..].iter().map(|&d| d as isize));
    Ok(picked.reshape(&dims)?)
}

fn gather(ctx: &OpCtx<'_>) -> OpResult {
    let data = ctx.input(0)?;
    let axis = ctx.axis(ctx.int("axis", 0)?, data.ndim())?;
    Ok(vec![take(data, axis, ctx.input(1)?)?])
}

fn gather_elements(ctx: &OpCtx<'_>) -> OpResult {
    let data = ctx.input(0)?;
    let axis = ctx.axis(ctx.int("axis", 0)?, data.ndim())?;
    let index = wrap(ctx.input(1)?, data.shape()[axis])?;
    Ok(vec![data.gather(axis as isize, &index)?])
}

/// The reduction of a `Scatter*` node.
fn reduction(ctx: &OpCtx<'_>) -> OpResult<Option<ScatterReduce>> {
    Ok(match ctx.string("reduction", "none")?.as_str() {
        "none" => None,
        "add" => Some(ScatterReduce::Sum),
        "mul" => Some(ScatterReduce::Prod),
        "max" => Some(ScatterReduce::Amax),
        "min" => Some(ScatterReduce::Amin),
        other => unsupported!("reduction {other:?}"),
    })
}

fn scatter_into(
    data: &Tensor,
    axis: usize,
    index: &Tensor,
    updates: &Tensor,
    reduce: Option<ScatterReduce>,
) -> OpResult<Tensor> {
    let out = match reduce {
        None => data.scatter(axis as isize, index, updates)?,
        Some(r) => data.scatter_reduce(axis as isize, index, updates, r, true)?,
    };
    Ok(out.cast(data.dtype())?)
}

fn scatter_elements(ctx: &OpCtx<'_>) -> OpResult {
    let data = ctx.input(0)?;
    let axis = ctx.axis(ctx.int("axis", 0)?, data.ndim())?;
    let index = wrap(ctx.input(1)?, data.shape()[axis])?;
    let reduce = reduction(ctx)?;
    Ok(vec![scatter_into(
        data,
        axis,
        &index,
        ctx.input(2)?,
        reduce,
    )?])
}

/// The linear position (into the first `batch + k` axes of `data`, folded)
/// that each row of a `[..., k]` index tensor names.
fn linear_index(data: &Tensor, index: &Tensor, batch: usize) -> OpResult<Tensor> {
    let k = *index.shape().last().unwrap_or(&0);
    if batch + k > data.ndim() {
        invalid!(
            "indices of shape {:?} for data of shape {:?}",
            index.shape(),
            data.shape()
        );
    }
    let lead = &index.shape()[..index.ndim() - 1];
    let mut linear = Tensor::zeros(lead, DType::I64);
    let mut stride = 1usize;
    for j in (0..k).rev() {
        let n = data.shape()[batch + j];
        let col = index.slice(&column(index.ndim(), j))?.squeeze(-1)?;
        linear = linear.add(&wrap(&col, n)?.mul(stride as i64)?)?;
        stride *= n;
    }
    if batch > 0 {
        let batches: usize = data.shape()[..batch].iter().product();
        let mut dims: Vec<isize> = index.shape()[..batch].iter().map(|&d| d as isize).collect();
        dims.extend(std::iter::repeat_n(1, lead.len() - batch));
        let ids = Tensor::arange(0i64, batches as i64, 1)?.reshape(&dims)?;
        linear = linear.add(&ids.mul(stride as i64)?)?;
    }
    Ok(linear)
}

/// The slices that pick column `j` of the last axis.
fn column(rank: usize, j: usize) -> Vec<morok::Slice> {
    let mut s = vec![morok::Slice::all(); rank];
    s[rank - 1] = morok::Slice {
        start: Some(j as isize),
        end: Some(j as isize + 1),
        step: 1,
    };
    s
}

/// `data` with its first `n` axes folded into one.
fn fold_leading(data: &Tensor, n: usize) -> OpResult<Tensor> {
    let mut dims = vec![data.shape()[..n].iter().product::<usize>() as isize];
    dims.extend(data.shape()[n..].iter().map(|&d| d as isize));
    Ok(data.reshape(&dims)?)
}

fn gather_nd(ctx: &OpCtx<'_>) -> OpResult {
    let (data, index) = (ctx.input(0)?, ctx.input(1)?);
    let batch = ctx.int("batch_dims", 0)?.max(0) as usize;
    if index.ndim() == 0 || batch >= index.ndim() {
        invalid!(
            "indices of shape {:?} with batch_dims {batch}",
            index.shape()
        );
    }
    let k = index.shape()[index.ndim() - 1];
    let linear = linear_index(data, index, batch)?;
    let folded = fold_leading(data, batch + k)?;
    Ok(vec![take(&folded, 0, &linear)?])
}

fn scatter_nd(ctx: &OpCtx<'_>) -> OpResult {
    let (data, index, updates) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    if index.ndim() == 0 {
        invalid!("scalar indices");
    }
    let k = index.shape()[index.ndim() - 1];
    let linear = linear_index(data, index, 0)?.reshape(&[-1])?;
    let folded = fold_leading(data, k)?;
    let rows = linear.shape()[0];
    let mut dims = vec![rows as isize];
    dims.extend(folded.shape()[1..].iter().map(|&d| d as isize));
    let updates = updates.reshape(&dims)?;
    let mut index_dims = vec![rows as isize];
    index_dims.extend(std::iter::repeat_n(1, folded.ndim() - 1));
    let index = linear.reshape(&index_dims)?.broadcast_to(updates.shape())?;
    let out = scatter_into(&folded, 0, &index, &updates, reduction(ctx)?)?;
    let shape: Vec<isize> = data.shape().iter().map(|&d| d as isize).collect();
    Ok(vec![out.reshape(&shape)?])
}

fn one_hot(ctx: &OpCtx<'_>) -> OpResult {
    let (index, values) = (ctx.input(0)?, ctx.input(2)?);
    let depth = host_scalar(ctx.input(1)?)?;
    if !(depth >= 1.0 && depth <= super::MAX_CREATED as f64) {
        invalid!("depth {depth}");
    }
    let depth = depth as usize;
    let rank = index.ndim() + 1;
    let axis = ctx.axis(ctx.int("axis", -1)?, rank)?;
    let idx = index.cast(DType::I64)?;
    let idx = idx
        .lt(0)?
        .where_(idx.add(depth as i64)?, &idx)?
        .unsqueeze(axis as isize)?;
    let classes =
        Tensor::arange(0i64, depth as i64, 1)?.reshape(&shape_along(rank, axis, depth))?;
    let vals = host_floats(values)?;
    let [off, on] = vals[..] else {
        invalid!("values has {} elements, expected 2", vals.len());
    };
    let out = idx.eq(&classes)?.where_(on, off)?;
    Ok(vec![out.cast(values.dtype())?])
}

fn non_zero(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    if x.ndim() == 0 {
        let any = host_scalar(x)? != 0.0;
        return Ok(vec![Tensor::zeros(&[0, usize::from(any)], DType::I64)]);
    }
    Ok(vec![x.nonzero()?.permute(&[1, 0])?.cast(DType::I64)?])
}

fn compress(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let cond = host_ints(&ctx.input(1)?.cast(DType::I64)?)?;
    let (data, axis) = match ctx.attr("axis") {
        Some(_) => (x.clone(), ctx.axis(ctx.int("axis", 0)?, x.ndim())?),
        None => (x.reshape(&[-1])?, 0),
    };
    let n = data.shape()[axis];
    let keep: Vec<i64> = cond
        .iter()
        .take(n)
        .enumerate()
        .filter(|(_, &c)| c != 0)
        .map(|(i, _)| i as i64)
        .collect();
    let len = keep.len();
    Ok(vec![take(&data, axis, &Tensor::from_vec(keep, &[len])?)?])
}

/// Writes `update` into `past` along `axis` at each batch's write index
/// (a KV-cache update), wrapping around in `circular` mode.
fn tensor_scatter(ctx: &OpCtx<'_>) -> OpResult {
    let (past, update) = (ctx.input(0)?, ctx.input(1)?);
    let rank = past.ndim();
    let axis = ctx.axis(ctx.int("axis", -2)?, rank)?;
    if axis == 0 || update.ndim() != rank {
        invalid!(
            "cache {:?}, update {:?}, axis {axis}",
            past.shape(),
            update.shape()
        );
    }
    let (batch, max_len, len) = (
        past.shape()[0],
        past.shape()[axis] as i64,
        update.shape()[axis],
    );
    let starts = match ctx.opt(2) {
        Some(w) => host_ints(w)?,
        None => vec![0; batch],
    };
    if starts.len() != batch {
        invalid!("{} write indices for a batch of {batch}", starts.len());
    }
    let circular = match ctx.string("mode", "linear")?.as_str() {
        "linear" => false,
        "circular" => true,
        other => invalid!("mode {other:?}"),
    };
    let mut positions = Vec::with_capacity(batch * len);
    for &start in &starts {
        for s in 0..len as i64 {
            let p = start + s;
            positions.push(if circular {
                p.rem_euclid(max_len.max(1))
            } else {
                p
            });
        }
    }
    let mut dims = vec![1isize; rank];
    dims[0] = batch as isize;
    dims[axis] = len as isize;
    let index = Tensor::from_vec(positions, &[batch, len])?
        .reshape(&dims)?
        .broadcast_to(update.shape())?;
    Ok(vec![past.scatter(axis as isize, &index, update)?])
}

/// The distinct elements (or slices along `axis`) of the input, with the
/// first index of each, the inverse map and the counts, read on the host
/// (the output length depends on the data).
fn unique(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let (data, axis) = match ctx.attr("axis") {
        Some(_) => (x.clone(), ctx.axis(ctx.int("axis", 0)?, x.ndim())?),
        None => (x.reshape(&[-1])?, 0),
    };
    let n = data.shape()[axis];
    let moved = data
        .transpose(0, axis as isize)?
        .reshape(&[n as isize, -1])?;
    let values = host_floats(&moved)?;
    let width = values.len().checked_div(n).unwrap_or(0);
    let item = |i: usize| &values[i * width..(i + 1) * width];
    let order_of = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    // First occurrences, in order of appearance.
    let mut firsts: Vec<usize> = Vec::new();
    let mut inverse = vec![0usize; n];
    let mut sorted_all: Vec<usize> = (0..n).collect();
    sorted_all.sort_by(|&a, &b| order_of(item(a), item(b)).then(a.cmp(&b)));
    let mut group_of = vec![0usize; n];
    for (k, &i) in sorted_all.iter().enumerate() {
        if k == 0 || order_of(item(sorted_all[k - 1]), item(i)).is_ne() {
            firsts.push(i);
        }
        group_of[i] = firsts.len() - 1;
    }
    if ctx.int("sorted", 1)? == 0 {
        let mut by_position: Vec<usize> = (0..firsts.len()).collect();
        by_position.sort_by_key(|&g| firsts[g]);
        let mut rank = vec![0usize; firsts.len()];
        for (r, &g) in by_position.iter().enumerate() {
            rank[g] = r;
        }
        firsts = by_position.iter().map(|&g| firsts[g]).collect();
        group_of.iter_mut().for_each(|g| *g = rank[*g]);
    }
    let mut counts = vec![0i64; firsts.len()];
    for (i, &g) in group_of.iter().enumerate() {
        counts[g] += 1;
        inverse[i] = g;
    }
    let m = firsts.len();
    let first_idx: Vec<i64> = firsts.iter().map(|&i| i as i64).collect();
    let y = take(&data, axis, &Tensor::from_vec(first_idx.clone(), &[m])?)?;
    Ok(vec![
        y,
        Tensor::from_vec(first_idx, &[m])?,
        Tensor::from_vec(inverse.iter().map(|&g| g as i64).collect(), &[n])?,
        Tensor::from_vec(counts, &[m])?,
    ])
}
