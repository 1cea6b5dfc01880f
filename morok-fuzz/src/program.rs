//! A fuzz program as data: a list of steps, each one tensor op on earlier
//! steps' tensors with its arguments as JSON, so that a program can be
//! shrunk (steps dropped, shapes cut) and written to a file that a
//! regression test replays. [`build`] turns one step into a lazy tensor
//! with the public `Tensor` API.

use crate::data::{input, Domain, Layout, Rng, LAYOUTS};
use morok::{DType, Index, IntoOperand, Operand, Slice, Tensor};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// One node of a program: `op` applied to the nodes `src` (indices of
/// earlier steps) with the arguments `arg`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The op's name (`input`, `index_input`, a `Tensor` method, or one of
    /// the composite names [`build`] documents).
    pub op: String,
    /// The operands: indices of earlier steps.
    #[serde(default)]
    pub src: Vec<usize>,
    /// The op's arguments.
    #[serde(default)]
    pub arg: Value,
}

/// A random tensor program: its steps, the steps realized together at the
/// end, and whether the gradient of their float outputs is checked too.
/// A step named `realize` realizes its operand on its own (an
/// intermediate realized before the program goes on).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// The steps, in order; step `i` makes node `i`.
    pub steps: Vec<Step>,
    /// The nodes realized together at the end.
    pub outputs: Vec<usize>,
    /// Whether the gradient of the float outputs' sum with respect to every
    /// float input is compiled and compared too.
    pub gradient: bool,
}

impl Program {
    /// The program as text, one step a line (`t3 = reshape(t1) [2, 6]`).
    pub fn text(&self) -> String {
        let mut lines: Vec<String> = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let src: Vec<String> = s.src.iter().map(|j| format!("t{j}")).collect();
                format!("t{i} = {}({}) {}", s.op, src.join(", "), s.arg)
            })
            .collect();
        let outs: Vec<String> = self.outputs.iter().map(|j| format!("t{j}")).collect();
        lines.push(format!("realize_all([{}])", outs.join(", ")));
        if self.gradient {
            lines.push("gradient of the float outputs' sum w.r.t. every float input".into());
        }
        lines.join("\n")
    }

    /// Whether node `i` is an input of the program.
    pub fn is_input(&self, i: usize) -> bool {
        matches!(self.steps[i].op.as_str(), "input" | "index_input")
    }
}

/// The dtype named `name` (as [`DType`]'s `Display` writes it).
pub fn dtype_named(name: &str) -> Result<DType, String> {
    crate::data::DTYPES
        .into_iter()
        .find(|d| d.to_string() == name)
        .ok_or_else(|| format!("unknown dtype {name:?}"))
}

fn layout_named(name: &str) -> Result<Layout, String> {
    LAYOUTS
        .into_iter()
        .find(|l| format!("{l:?}") == name)
        .ok_or_else(|| format!("unknown layout {name:?}"))
}

fn domain_named(name: &str) -> Result<Domain, String> {
    [Domain::Any, Domain::Positive, Domain::NonZero]
        .into_iter()
        .find(|d| format!("{d:?}") == name)
        .ok_or_else(|| format!("unknown domain {name:?}"))
}

/// The JSON argument of an `input` step.
pub fn input_arg(
    dtype: DType,
    shape: &[usize],
    layout: Layout,
    domain: Domain,
    seed: u64,
) -> Value {
    json!({
        "dtype": dtype.to_string(),
        "shape": shape,
        "layout": format!("{layout:?}"),
        "domain": format!("{domain:?}"),
        "seed": seed,
    })
}

/// Readers of a step's JSON arguments, with errors that name what is
/// missing.
fn int(v: &Value) -> Result<i64, String> {
    v.as_i64()
        .ok_or_else(|| format!("expected an integer, found {v}"))
}

fn ints(v: &Value) -> Result<Vec<i64>, String> {
    v.as_array()
        .ok_or_else(|| format!("expected a list, found {v}"))?
        .iter()
        .map(int)
        .collect()
}

fn isizes(v: &Value) -> Result<Vec<isize>, String> {
    Ok(ints(v)?.into_iter().map(|x| x as isize).collect())
}

fn usizes(v: &Value) -> Result<Vec<usize>, String> {
    ints(v)?
        .into_iter()
        .map(|x| usize::try_from(x).map_err(|_| format!("{x} is negative")))
        .collect()
}

fn list(v: &Value) -> Result<&Vec<Value>, String> {
    v.as_array()
        .ok_or_else(|| format!("expected a list, found {v}"))
}

fn opt_axes(v: &Value) -> Result<Option<Vec<isize>>, String> {
    if v.is_null() {
        Ok(None)
    } else {
        isizes(v).map(Some)
    }
}

fn opt_int(v: &Value) -> Result<Option<isize>, String> {
    if v.is_null() {
        Ok(None)
    } else {
        int(v).map(|x| Some(x as isize))
    }
}

/// A scalar operand of the category of `dtype` (bool, f32 or i32) from a
/// JSON number.
pub fn scalar_operand(dtype: DType, v: &Value) -> Result<Operand, String> {
    let x = v
        .as_f64()
        .ok_or_else(|| format!("expected a number, found {v}"))?;
    Ok(if dtype.is_bool() {
        (x != 0.0).into_operand()
    } else if dtype.is_float() {
        (x as f32).into_operand()
    } else {
        (x as i32).into_operand()
    })
}

/// An integer input of `shape` and `dtype` holding positions in
/// `lo..=hi`; with `unique_along = Some(axis)`, the positions along that
/// axis are distinct (a prefix of a permutation of `0..=hi`), so a
/// `scatter` through it writes each element at most once.
fn index_input(arg: &Value) -> Result<Tensor, String> {
    let shape = usizes(&arg["shape"])?;
    let dtype = dtype_named(arg["dtype"].as_str().unwrap_or("i64"))?;
    let (lo, hi) = (int(&arg["lo"])?, int(&arg["hi"])?);
    let mut rng = Rng::new(arg["seed"].as_u64().unwrap_or(0));
    let n: usize = shape.iter().product();
    let mut data: Vec<f64> = (0..n).map(|_| rng.int(lo, hi) as f64).collect();
    if let Some(axis) = arg["unique_along"].as_u64() {
        let axis = axis as usize;
        let len = *shape.get(axis).ok_or("unique_along past the rank")?;
        if len as i64 > hi + 1 {
            return Err(format!("{len} distinct positions in 0..={hi}"));
        }
        let inner: usize = shape[axis + 1..].iter().product();
        for outer in 0..n / (len * inner).max(1) {
            for j in 0..inner {
                let mut perm: Vec<i64> = (0..=hi).collect();
                for k in (1..perm.len()).rev() {
                    perm.swap(k, rng.int(0, k as i64) as usize);
                }
                for (a, &p) in perm.iter().take(len).enumerate() {
                    data[(outer * len + a) * inner + j] = p as f64;
                }
            }
        }
    }
    Ok(crate::data::tensor(dtype.scalar_type(), &shape, &data))
}

fn slices(v: &Value) -> Result<Vec<Slice>, String> {
    list(v)?
        .iter()
        .map(|s| {
            let start = opt_int(&s[0])?;
            let end = opt_int(&s[1])?;
            let mut sl = Slice::all().step(int(&s[2])? as isize);
            sl.start = start;
            sl.end = end;
            Ok(sl)
        })
        .collect()
}

/// Builds step `step` on the tensors of the earlier steps `nodes`. Besides
/// `input`, `index_input` and the `Tensor` methods of the same name, the
/// composite ops are `expand_new` (unsqueeze then expand), `safe_log`,
/// `safe_sqrt`, `safe_reciprocal` (of `|x| + 0.5`), `square` (`x * x`),
/// `gt0` (`x > 0`), `matmul_t` (`x @ xᵀ`), `chunk`/`split` (one part).
/// An error is a step that does not apply to its operands.
pub fn build(step: &Step, nodes: &[Tensor]) -> Result<Tensor, String> {
    let src: Vec<&Tensor> = step
        .src
        .iter()
        .map(|&i| nodes.get(i).ok_or_else(|| format!("no node t{i}")))
        .collect::<Result<_, _>>()?;
    let a = &step.arg;
    let x = || src.first().copied().ok_or("no operand".to_string());
    let y = || src.get(1).copied().ok_or("no second operand".to_string());
    let other = |x: &Tensor| -> Result<Operand, String> {
        match src.get(1) {
            Some(t) => Ok((*t).into_operand()),
            None => scalar_operand(x.dtype(), a),
        }
    };
    let r = match step.op.as_str() {
        "input" => {
            let dtype = dtype_named(a["dtype"].as_str().unwrap_or(""))?;
            let layout = layout_named(a["layout"].as_str().unwrap_or(""))?;
            let domain = domain_named(a["domain"].as_str().unwrap_or(""))?;
            let shape = usizes(&a["shape"])?;
            let mut rng = Rng::new(a["seed"].as_u64().unwrap_or(0));
            return Ok(input(&mut rng, dtype.scalar_type(), &shape, layout, domain));
        }
        "index_input" => return index_input(a),
        "realize" => return Ok(x()?.clone()),
        "reshape" => x()?.reshape(&isizes(a)?),
        "permute" => x()?.permute(&isizes(a)?),
        "transpose" => x()?.transpose(int(&a[0])? as isize, int(&a[1])? as isize),
        "expand_new" => x()?
            .unsqueeze(int(&a[0])? as isize)
            .and_then(|u| u.expand(&isizes(&a[1]).unwrap_or_default())),
        "broadcast_to" => x()?.broadcast_to(&usizes(a)?),
        "pad" => {
            let pads: Vec<(isize, isize)> = list(&a[0])?
                .iter()
                .map(|p| Ok((int(&p[0])? as isize, int(&p[1])? as isize)))
                .collect::<Result<_, String>>()?;
            let t = x()?;
            let v = a[1].as_f64().ok_or_else(|| format!("pad value {}", a[1]))?;
            if t.dtype().is_bool() {
                t.pad(&pads, v != 0.0)
            } else if t.dtype().is_float() {
                t.pad(&pads, v as f32)
            } else {
                t.pad(&pads, v as i32)
            }
        }
        "shrink" => {
            let b: Vec<(usize, usize)> = list(a)?
                .iter()
                .map(|p| Ok((int(&p[0])? as usize, int(&p[1])? as usize)))
                .collect::<Result<_, String>>()?;
            x()?.shrink(&b)
        }
        "slice" => x()?.slice(&slices(a)?),
        "flip" => x()?.flip(&isizes(a)?),
        "squeeze" => x()?.squeeze(int(a)? as isize),
        "unsqueeze" => x()?.unsqueeze(int(a)? as isize),
        "flatten" => x()?.flatten(int(&a[0])? as isize, int(&a[1])? as isize),
        "repeat" => x()?.repeat(&usizes(a)?),
        "cat" => Tensor::cat(&src, int(a)? as isize),
        "stack" => Tensor::stack(&src, int(a)? as isize),
        "chunk" | "split" => {
            let parts = if step.op == "chunk" {
                x()?.chunk(int(&a[0])? as usize, int(&a[1])? as isize)
            } else {
                x()?.split(&usizes(&a[0])?, int(&a[1])? as isize)
            };
            let parts = parts.map_err(|e| e.to_string())?;
            let k = int(&a[2])? as usize;
            let n = parts.len();
            return parts
                .into_iter()
                .nth(k)
                .ok_or_else(|| format!("part {k} of {n}"));
        }
        "neg" => x()?.neg(),
        "abs" => x()?.abs(),
        "sign" => x()?.sign(),
        "exp" => x()?.exp(),
        "safe_log" => x()?.abs().and_then(|t| t.add(0.5f32)?.log()),
        "safe_sqrt" => x()?.abs().and_then(|t| t.add(0.5f32)?.sqrt()),
        "safe_reciprocal" => x()?.abs().and_then(|t| t.add(0.5f32)?.reciprocal()),
        "tanh" => x()?.tanh(),
        "sigmoid" => x()?.sigmoid(),
        "relu" => x()?.relu(),
        "sin" => x()?.sin(),
        "floor" => x()?.floor(),
        "round" => x()?.round(),
        "gelu" => x()?.gelu(),
        "square" => x()?.mul(x()?),
        "logical_not" => x()?.logical_not(),
        "gt0" => x()?.gt(0),
        "add" => x()?.add(other(x()?)?),
        "sub" => x()?.sub(other(x()?)?),
        "mul" => x()?.mul(other(x()?)?),
        "div" => x()?.div(other(x()?)?),
        "maximum" => x()?.maximum(other(x()?)?),
        "minimum" => x()?.minimum(other(x()?)?),
        "floor_div" => x()?.floor_div(other(x()?)?),
        "remainder" => x()?.remainder(other(x()?)?),
        "lt" => x()?.lt(other(x()?)?),
        "eq" => x()?.eq(other(x()?)?),
        "ge" => x()?.ge(other(x()?)?),
        "ne" => x()?.ne(other(x()?)?),
        "logical_and" => x()?.logical_and(other(x()?)?),
        "logical_or" => x()?.logical_or(other(x()?)?),
        "logical_xor" => x()?.logical_xor(other(x()?)?),
        "where" => {
            let (t, o) = (y()?, src.get(2).map(|t| (*t).into_operand()));
            let o = match o {
                Some(o) => o,
                None => scalar_operand(t.dtype(), &a["scalar"])?,
            };
            if a["swap"].as_bool().unwrap_or(false) {
                x()?.where_(o, t)
            } else {
                x()?.where_(t, o)
            }
        }
        "clamp" => {
            let t = x()?;
            t.clamp(
                scalar_operand(t.dtype(), &a[0])?,
                scalar_operand(t.dtype(), &a[1])?,
            )
        }
        "cast" => x()?.cast(dtype_named(a.as_str().unwrap_or(""))?),
        "sum" | "max" | "min" | "mean" | "prod" | "any" | "all" | "logsumexp" => {
            let axes = opt_axes(&a[0])?;
            let keep = a[1].as_bool().unwrap_or(false);
            let t = x()?;
            let ax = axes.as_deref();
            match step.op.as_str() {
                "sum" => t.sum(ax, keep),
                "max" => t.max(ax, keep),
                "min" => t.min(ax, keep),
                "mean" => t.mean(ax, keep),
                "prod" => t.prod(ax, keep),
                "any" => t.any(ax, keep),
                "all" => t.all(ax, keep),
                _ => t.logsumexp(ax, keep),
            }
        }
        "argmax" => x()?.argmax(opt_int(a)?),
        "argmin" => x()?.argmin(opt_int(a)?),
        "cumsum" => x()?.cumsum(int(a)? as isize),
        "matmul" => x()?.matmul(y()?),
        "matmul_t" => {
            let t = x()?;
            t.transpose(-1, -2).and_then(|u| t.matmul(&u))
        }
        "softmax" => x()?.softmax(int(a)? as isize),
        "log_softmax" => x()?.log_softmax(int(a)? as isize),
        "gather" => x()?.gather(int(a)? as isize, y()?),
        "index_select" => x()?.index_select(int(a)? as isize, y()?),
        "scatter" => {
            let s = src.get(2).ok_or("no source operand")?;
            x()?.scatter(int(a)? as isize, y()?, s)
        }
        "scatter_add" => {
            let s = src.get(2).ok_or("no source operand")?;
            x()?.scatter_add(int(a)? as isize, y()?, s)
        }
        "index" => {
            let idx: Vec<Index> = list(a)?
                .iter()
                .map(|i| {
                    if let Some(k) = i.get("int") {
                        Ok(Index::Int(int(k)? as isize))
                    } else if let Some(s) = i.get("slice") {
                        Ok(Index::Slice(slices(&json!([s]))?.remove(0)))
                    } else if let Some(k) = i.get("tensor") {
                        let k = int(k)? as usize;
                        let t = src.get(k).ok_or("index tensor past the operands")?;
                        Ok(Index::Tensor((*t).clone()))
                    } else {
                        Err(format!("unknown index {i}"))
                    }
                })
                .collect::<Result<_, String>>()?;
            x()?.index(&idx)
        }
        other => return Err(format!("unknown op {other:?}")),
    };
    r.map_err(|e| e.to_string())
}
