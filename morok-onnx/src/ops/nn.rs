//! Neural-network ops: convolutions, pooling, `Gemm`, `MatMul`, `Einsum`.
//!
//! ONNX pads may differ on the two sides of an axis and `auto_pad` derives
//! them from the output size; the tensor API pads symmetrically, so
//! asymmetric pads are applied to the input first (zeros for convolution
//! and sums, the dtype's minimum for max pooling) and the op runs with
//! none.

use super::shape::pad_axes;
use super::{invalid, unsupported, OpCtx, OpFn, OpResult};
use morok::{
    Conv1dOptions, Conv3dOptions, ConvOptions, ConvTranspose3dOptions, ConvTransposeOptions, DType,
    Pads, Pool3dOptions, PoolOptions, Tensor,
};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("Conv", conv),
    ("ConvTranspose", conv_transpose),
    ("MaxPool", max_pool),
    ("AveragePool", average_pool),
    ("GlobalAveragePool", global_average_pool),
    ("GlobalMaxPool", global_max_pool),
    ("Gemm", gemm),
    ("MatMul", matmul),
    ("Einsum", einsum),
    ("LpPool", lp_pool),
    ("Resize", super::resize::resize),
    ("Upsample", super::resize::upsample),
];

/// The window geometry of a conv or pool node over `spatial` axes.
struct Window {
    kernel: Vec<usize>,
    strides: Vec<usize>,
    dilations: Vec<usize>,
    /// `(before, after)` per spatial axis.
    pads: Vec<(usize, usize)>,
}

fn usizes(v: &[i64], what: &str) -> OpResult<Vec<usize>> {
    v.iter()
        .map(|&x| match usize::try_from(x) {
            Ok(u) => Ok(u),
            Err(_) => invalid!("negative {what} {v:?}"),
        })
        .collect()
}

/// The non-negative integer-list attribute `name`, or `n` copies of
/// `default`.
fn sizes_attr(ctx: &OpCtx<'_>, name: &str, default: usize, n: usize) -> OpResult<Vec<usize>> {
    match ctx.ints(name)? {
        Some(v) => usizes(&v, name),
        None => Ok(vec![default; n]),
    }
}

/// Reads kernel, strides, dilations and pads (with `auto_pad`) for input
/// spatial sizes `input`; `kernel` is the weight's when the node has none.
fn window(ctx: &OpCtx<'_>, input: &[usize], kernel: Option<&[usize]>) -> OpResult<Window> {
    let n = input.len();
    let kernel = match ctx.ints("kernel_shape")? {
        Some(k) => usizes(&k, "kernel_shape")?,
        None => match kernel {
            Some(k) => k.to_vec(),
            None => invalid!("no kernel_shape"),
        },
    };
    let strides = sizes_attr(ctx, "strides", 1, n)?;
    let dilations = sizes_attr(ctx, "dilations", 1, n)?;
    if kernel.len() != n || strides.len() != n || dilations.len() != n {
        invalid!(
            "kernel {kernel:?}, strides {strides:?}, dilations {dilations:?} for {n} spatial axes"
        );
    }
    if strides.contains(&0) || dilations.contains(&0) || kernel.contains(&0) {
        invalid!("zero in kernel {kernel:?}, strides {strides:?} or dilations {dilations:?}");
    }
    let auto_pad = ctx.string("auto_pad", "NOTSET")?;
    let pads = match auto_pad.as_str() {
        "NOTSET" => match ctx.ints("pads")? {
            Some(p) if p.len() == 2 * n => {
                let p = usizes(&p, "pads")?;
                (0..n).map(|i| (p[i], p[i + n])).collect()
            }
            Some(p) => invalid!("{} pads for {n} spatial axes", p.len()),
            None => vec![(0, 0); n],
        },
        "VALID" => vec![(0, 0); n],
        "SAME_UPPER" | "SAME_LOWER" => (0..n)
            .map(|i| {
                let out = input[i].div_ceil(strides[i]);
                let span = (kernel[i] - 1) * dilations[i] + 1;
                let total = ((out - 1) * strides[i] + span).saturating_sub(input[i]);
                let small = total / 2;
                if auto_pad == "SAME_UPPER" {
                    (small, total - small)
                } else {
                    (total - small, small)
                }
            })
            .collect(),
        other => invalid!("auto_pad {other:?}"),
    };
    Ok(Window {
        kernel,
        strides,
        dilations,
        pads,
    })
}

/// `x` padded on its spatial axes (from axis 2) by `pads` with `value`.
pub(super) fn pad_spatial(x: &Tensor, pads: &[(usize, usize)], value: f64) -> OpResult<Tensor> {
    let mut all = vec![(0isize, 0isize); 2];
    all.extend(pads.iter().map(|&(b, a)| (b as isize, a as isize)));
    pad_axes(x, &all, "constant", value)
}

/// The symmetric padding of `w`, or `None` with `x` padded explicitly.
fn symmetric_pads(x: &Tensor, w: &Window, value: f64) -> OpResult<(Tensor, Vec<usize>)> {
    if w.pads.iter().all(|&(b, a)| b == a) {
        return Ok((x.clone(), w.pads.iter().map(|&(b, _)| b).collect()));
    }
    Ok((pad_spatial(x, &w.pads, value)?, vec![0; w.pads.len()]))
}

fn conv(ctx: &OpCtx<'_>) -> OpResult {
    Ok(vec![conv_of(
        ctx,
        ctx.input(0)?,
        ctx.input(1)?,
        ctx.opt(2),
    )?])
}

/// The node's convolution of `x` by `weight` (its pads, strides,
/// dilations and groups), 1-D to 3-D.
pub(super) fn conv_of(
    ctx: &OpCtx<'_>,
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
) -> OpResult<Tensor> {
    if x.ndim() < 3 || weight.ndim() != x.ndim() {
        invalid!("input {:?} and weight {:?}", x.shape(), weight.shape());
    }
    let w = window(ctx, &x.shape()[2..], Some(&weight.shape()[2..]))?;
    let groups = ctx.int("group", 1)?.max(1) as usize;
    let (x, pad) = symmetric_pads(x, &w, 0.0)?;
    let out = match x.ndim() - 2 {
        1 => x.conv1d(
            weight,
            bias,
            Conv1dOptions {
                stride: w.strides[0],
                padding: Pads::from(pad[0]),
                dilation: w.dilations[0],
                groups,
            },
        )?,
        2 => x.conv2d(
            weight,
            bias,
            ConvOptions {
                stride: (w.strides[0], w.strides[1]),
                padding: (pad[0], pad[1]).into(),
                dilation: (w.dilations[0], w.dilations[1]),
                groups,
            },
        )?,
        3 => x.conv3d(
            weight,
            bias,
            Conv3dOptions {
                stride: (w.strides[0], w.strides[1], w.strides[2]),
                padding: (pad[0], pad[1], pad[2]).into(),
                dilation: (w.dilations[0], w.dilations[1], w.dilations[2]),
                groups,
            },
        )?,
        n => unsupported!("{n}-D convolution"),
    };
    Ok(out)
}

fn conv_transpose(ctx: &OpCtx<'_>) -> OpResult {
    let (x, weight, bias) = (ctx.input(0)?, ctx.input(1)?, ctx.opt(2));
    if x.ndim() < 3 || weight.ndim() != x.ndim() {
        invalid!("input {:?} and weight {:?}", x.shape(), weight.shape());
    }
    let spatial = x.ndim() - 2;
    let input = &x.shape()[2..];
    let kernel = match ctx.ints("kernel_shape")? {
        Some(k) => usizes(&k, "kernel_shape")?,
        None => weight.shape()[2..].to_vec(),
    };
    let strides = sizes_attr(ctx, "strides", 1, spatial)?;
    let dilations = sizes_attr(ctx, "dilations", 1, spatial)?;
    let out_pad = sizes_attr(ctx, "output_padding", 0, spatial)?;
    if kernel.len() != spatial
        || strides.len() != spatial
        || dilations.len() != spatial
        || out_pad.len() != spatial
    {
        invalid!("kernel, strides, dilations or output_padding of the wrong length for {spatial} spatial axes");
    }
    let full: Vec<usize> = (0..spatial)
        .map(|i| (input[i].max(1) - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1)
        .collect();
    let auto_pad = ctx.string("auto_pad", "NOTSET")?;
    let output_shape = ctx.ints("output_shape")?;
    let pads: Vec<(isize, isize)> = if let Some(shape) = output_shape {
        let target = usizes(
            &shape[shape.len().saturating_sub(spatial)..],
            "output_shape",
        )?;
        (0..spatial)
            .map(|i| {
                let total = (full[i] + out_pad[i]) as isize - target[i] as isize;
                if total < 0 {
                    // A larger output than the full one grows at the end.
                    (0, total)
                } else if auto_pad == "SAME_UPPER" {
                    (total / 2, total - total / 2)
                } else {
                    (total - total / 2, total / 2)
                }
            })
            .collect()
    } else if auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" {
        (0..spatial)
            .map(|i| {
                let total = (full[i] + out_pad[i]).saturating_sub(input[i] * strides[i]) as isize;
                if auto_pad == "SAME_UPPER" {
                    (total / 2, total - total / 2)
                } else {
                    (total - total / 2, total / 2)
                }
            })
            .collect()
    } else {
        match ctx.ints("pads")? {
            Some(p) if p.len() == 2 * spatial => {
                let p = usizes(&p, "pads")?;
                (0..spatial)
                    .map(|i| (p[i] as isize, p[i + spatial] as isize))
                    .collect()
            }
            Some(p) => invalid!("{} pads for {spatial} spatial axes", p.len()),
            None => vec![(0, 0); spatial],
        }
    };
    let groups = ctx.int("group", 1)?.max(1) as usize;
    let raw = match spatial {
        1 => x.conv_transpose1d(
            weight,
            None,
            ConvTransposeOptions {
                stride: (1, strides[0]),
                padding: (0, 0).into(),
                output_padding: (0, 0),
                dilation: (1, dilations[0]),
                groups,
            },
        )?,
        2 => x.conv_transpose2d(
            weight,
            None,
            ConvTransposeOptions {
                stride: (strides[0], strides[1]),
                padding: (0, 0).into(),
                output_padding: (0, 0),
                dilation: (dilations[0], dilations[1]),
                groups,
            },
        )?,
        3 => x.conv_transpose3d(
            weight,
            None,
            ConvTranspose3dOptions {
                stride: (strides[0], strides[1], strides[2]),
                padding: (0, 0, 0).into(),
                output_padding: (0, 0, 0),
                dilation: (dilations[0], dilations[1], dilations[2]),
                groups,
            },
        )?,
        n => unsupported!("{n}-D transposed convolution"),
    };
    // The output padding grows the end; the pads then crop both sides.
    let mut amounts = vec![(0isize, 0isize); 2];
    for i in 0..spatial {
        amounts.push((-pads[i].0, out_pad[i] as isize - pads[i].1));
    }
    let mut out = pad_axes(&raw, &amounts, "constant", 0.0)?;
    if let Some(b) = bias {
        let mut dims = vec![1isize, b.numel() as isize];
        dims.extend(std::iter::repeat_n(1, spatial));
        out = out.add(&b.reshape(&dims)?)?;
    }
    Ok(vec![out.cast(x.dtype())?])
}

/// Pooling over 1 to 3 spatial axes (1-D runs as 2-D of height 1).
fn pool(
    x: &Tensor,
    w: &Window,
    ceil: bool,
    include_pad: bool,
    max: bool,
) -> OpResult<(Tensor, Option<Tensor>)> {
    let spatial = x.ndim() - 2;
    if spatial == 1 {
        let x2 = x.unsqueeze(2)?;
        let w2 = Window {
            kernel: vec![1, w.kernel[0]],
            strides: vec![1, w.strides[0]],
            dilations: vec![1, w.dilations[0]],
            pads: vec![(0, 0), w.pads[0]],
        };
        let (out, idx) = pool(&x2, &w2, ceil, include_pad, max)?;
        return Ok((out.squeeze(2)?, idx.map(|i| i.squeeze(2)).transpose()?));
    }
    let fill = if max {
        x.dtype().scalar_type().min_f64()
    } else {
        0.0
    };
    let (xp, pad) = symmetric_pads(x, w, fill)?;
    let explicit = pad.iter().all(|&p| p == 0) && w.pads.iter().any(|&(b, a)| b + a > 0);
    // Average pooling of `xp` by `avg`; with explicit pads that must not
    // count, the window sums over the counts of real elements.
    let average = |avg: &dyn Fn(&Tensor) -> morok::Result<Tensor>| -> OpResult<Tensor> {
        if explicit && !include_pad {
            let ones = pad_spatial(&x.ones_like()?, &w.pads, 0.0)?;
            return Ok(avg(&xp)?.div(&avg(&ones)?)?.cast(x.dtype())?);
        }
        Ok(avg(&xp)?)
    };
    match spatial {
        2 => {
            let opts = PoolOptions {
                kernel: (w.kernel[0], w.kernel[1]),
                stride: (w.strides[0], w.strides[1]),
                padding: (pad[0], pad[1]).into(),
                dilation: (w.dilations[0], w.dilations[1]),
                ceil_mode: ceil,
                count_include_pad: include_pad,
                divisor_override: None,
            };
            if max {
                let (v, i) = xp.max_pool2d_with_indices(opts)?;
                return Ok((v, Some(i)));
            }
            Ok((average(&|t: &Tensor| t.avg_pool2d(opts))?, None))
        }
        3 => {
            let t = |v: &[usize]| (v[0], v[1], v[2]);
            let opts = Pool3dOptions {
                kernel: t(&w.kernel),
                stride: t(&w.strides),
                padding: t(&pad).into(),
                dilation: t(&w.dilations),
                ceil_mode: ceil,
                count_include_pad: include_pad,
                divisor_override: None,
            };
            if max {
                return Ok((xp.max_pool3d(opts)?, None));
            }
            Ok((average(&|t: &Tensor| t.avg_pool3d(opts))?, None))
        }
        n => unsupported!("{n}-D pooling"),
    }
}

fn max_pool(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    if x.ndim() < 3 {
        invalid!("input of shape {:?}", x.shape());
    }
    let w = window(ctx, &x.shape()[2..], None)?;
    let ceil = ctx.int("ceil_mode", 0)? != 0;
    let (out, idx) = pool(x, &w, ceil, false, true)?;
    let mut outputs = vec![out.cast(x.dtype())?];
    if ctx.node.proto.output.len() > 1 && !ctx.node.proto.output[1].is_empty() {
        let Some(idx) = idx.filter(|_| x.ndim() == 4 && w.pads.iter().all(|&(b, a)| b == a)) else {
            unsupported!("MaxPool indices other than 2-D with symmetric pads");
        };
        if ctx.int("storage_order", 0)? != 0 {
            unsupported!("MaxPool indices in column-major storage order");
        }
        let (n, c, plane) = (x.shape()[0], x.shape()[1], x.shape()[2] * x.shape()[3]);
        let base = Tensor::arange(0i64, (n * c) as i64, 1)?
            .mul(plane as i64)?
            .reshape(&[n as isize, c as isize, 1, 1])?;
        outputs.push(idx.cast(DType::I64)?.add(&base)?);
    }
    Ok(outputs)
}

fn average_pool(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    if x.ndim() < 3 {
        invalid!("input of shape {:?}", x.shape());
    }
    let w = window(ctx, &x.shape()[2..], None)?;
    let ceil = ctx.int("ceil_mode", 0)? != 0;
    let include = ctx.int("count_include_pad", 0)? != 0;
    Ok(vec![pool(x, &w, ceil, include, false)?
        .0
        .cast(x.dtype())?])
}

pub(super) fn spatial_axes(x: &Tensor) -> Vec<isize> {
    (2..x.ndim() as isize).collect()
}

fn global_average_pool(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    Ok(vec![x
        .mean(Some(&spatial_axes(x)), true)?
        .cast(x.dtype())?])
}
fn global_max_pool(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    Ok(vec![x.max(Some(&spatial_axes(x)), true)?])
}

fn lp_pool(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    if x.ndim() < 3 {
        invalid!("input of shape {:?}", x.shape());
    }
    let w = window(ctx, &x.shape()[2..], None)?;
    let p = ctx.int("p", 2)? as f64;
    let ceil = ctx.int("ceil_mode", 0)? != 0;
    let powered = x.abs()?.pow(p)?;
    let (mean, _) = pool(&powered, &w, ceil, true, false)?;
    let cells: usize = w.kernel.iter().product();
    Ok(vec![mean
        .mul(cells as f64)?
        .pow(1.0 / p)?
        .cast(x.dtype())?])
}

fn gemm(ctx: &OpCtx<'_>) -> OpResult {
    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
    let a = if ctx.int("transA", 0)? != 0 {
        a.transpose(0, 1)?
    } else {
        a.clone()
    };
    let b = if ctx.int("transB", 0)? != 0 {
        b.transpose(0, 1)?
    } else {
        b.clone()
    };
    let alpha = ctx.float("alpha", 1.0)? as f64;
    let beta = ctx.float("beta", 1.0)? as f64;
    let mut y = a.matmul(&b)?;
    if alpha != 1.0 {
        y = y.mul(alpha)?;
    }
    if let Some(c) = ctx.opt(2) {
        y = y.add(&if beta != 1.0 { c.mul(beta)? } else { c.clone() })?;
    }
    Ok(vec![y.cast(a.dtype())?])
}

fn matmul(ctx: &OpCtx<'_>) -> OpResult {
    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
    Ok(vec![a.matmul(b)?.cast(a.dtype())?])
}

fn einsum(ctx: &OpCtx<'_>) -> OpResult {
    let eq = ctx.string("equation", "")?.replace(' ', "");
    let inputs: Vec<&Tensor> = ctx.inputs.iter().flatten().collect();
    let Some(first) = inputs.first() else {
        invalid!("no inputs");
    };
    Ok(vec![Tensor::einsum(&eq, &inputs)?.cast(first.dtype())?])
}
