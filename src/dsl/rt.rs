//! Run-time support of the generated code: argument checks against a
//! kernel's static signature, seeds, and safetensors I/O. Not a public
//! API: only the macros' expansions name it.

pub use super::plan::CallSite;
use crate::{Error, Result, ScalarType, Tensor};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use smallvec::SmallVec;
use std::panic::Location;
use std::path::Path;

/// The values of a signature's dim names, in name order (inline for up to
/// four names: a warm call allocates nothing for them).
pub type DimValues = SmallVec<[usize; 4]>;

/// A dim of a declared parameter type.
#[derive(Clone, Copy, Debug)]
pub enum DimSpec {
    /// A literal size.
    Lit(usize),
    /// The signature's name number `i`.
    Name(usize),
}

/// A declared parameter.
#[derive(Debug)]
pub struct ParamSpec {
    /// Its name.
    pub name: &'static str,
    /// Its element type.
    pub dtype: ScalarType,
    /// Its dims.
    pub dims: &'static [DimSpec],
}

/// A kernel's signature, as the macro saw it.
#[derive(Debug)]
pub struct Signature {
    /// The kernel's name (`kernel!` for closures).
    pub kernel: &'static str,
    /// The dim names, in order of first appearance.
    pub names: &'static [&'static str],
    /// The parameters.
    pub params: &'static [ParamSpec],
    /// Values fixed by the attribute (`#[morok::kernel(B = 32)]`), by name
    /// number (empty: none fixed).
    pub fixed: &'static [Option<usize>],
}

fn declared(p: &ParamSpec, names: &[&str]) -> String {
    let dims: Vec<String> = p
        .dims
        .iter()
        .map(|d| match d {
            DimSpec::Lit(n) => n.to_string(),
            DimSpec::Name(i) => names.get(*i).copied().unwrap_or("?").to_string(),
        })
        .collect();
    format!("{}[{}]", p.dtype, dims.join(", "))
}

impl Signature {
    /// Checks the arguments' dtypes, ranks and literal dims and binds every
    /// dim name to one value; the values in name order. An error names the
    /// parameter, the dim and both values.
    #[track_caller]
    pub fn bind(&self, args: &[&Tensor]) -> Result<DimValues> {
        // Per name: its value, and the parameter and axis it came from.
        type Seen<'p> = Option<(usize, &'p str, usize)>;
        let mut values: SmallVec<[Seen<'_>; 4]> = smallvec::smallvec![None; self.names.len()];
        let location = Location::caller();
        let fail = |message: String| Error::Argument {
            op: self.kernel.to_string(),
            message,
            location,
        };
        for (p, t) in self.params.iter().zip(args) {
            if let Some(e) = t.error() {
                return Err(e.clone());
            }
            // Formatted only for an error: a warm call checks and moves on.
            let want = || declared(p, self.names);
            if t.dtype().scalar_type() != p.dtype || t.dtype().is_vector() {
                return Err(fail(format!(
                    "parameter `{}` holds {} elements but the signature says {}",
                    p.name,
                    t.dtype().scalar_type(),
                    want()
                )));
            }
            let shape = t.shape();
            if shape.len() != p.dims.len() {
                return Err(fail(format!(
                    "parameter `{}` has {} axes {shape:?} but the signature says {}",
                    p.name,
                    shape.len(),
                    want()
                )));
            }
            for (axis, (d, &v)) in p.dims.iter().zip(shape).enumerate() {
                match *d {
                    DimSpec::Lit(n) if n != v => {
                        return Err(fail(format!(
                            "parameter `{}` dim {axis} is {v} but the signature says {n} ({})",
                            p.name,
                            want()
                        )))
                    }
                    DimSpec::Lit(_) => {}
                    DimSpec::Name(i) => match values.get(i).copied().flatten() {
                        Some((old, who, at)) if old != v => {
                            return Err(fail(format!(
                                "dim `{}` is {old} in parameter `{who}` (dim {at}) but {v} in parameter `{}` (dim {axis})",
                                self.names[i], p.name
                            )))
                        }
                        Some(_) => {}
                        None => {
                            if let Some(slot) = values.get_mut(i) {
                                *slot = Some((v, p.name, axis));
                            }
                        }
                    },
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            if let (Some((n, who, at)), Some(Some(want))) = (v, self.fixed.get(i)) {
                if n != want {
                    return Err(fail(format!(
                        "dim `{}` is {n} in parameter `{who}` (dim {at}) but the kernel fixes it to {want}",
                        self.names[i]
                    )));
                }
            }
        }
        Ok(values
            .into_iter()
            .map(|v| v.map_or(0, |(n, _, _)| n))
            .collect())
    }

    /// Whether every dim is known before a call: each is a literal or
    /// fixed by the attribute (the kernel can be compiled ahead of time).
    pub fn is_fixed(&self) -> bool {
        (0..self.names.len()).all(|i| matches!(self.fixed.get(i), Some(Some(_))))
    }

    /// The shape of every parameter with the fixed values, if
    /// [`Signature::is_fixed`].
    pub fn fixed_shapes(&self) -> Option<Vec<Vec<usize>>> {
        self.params
            .iter()
            .map(|p| {
                p.dims
                    .iter()
                    .map(|d| match *d {
                        DimSpec::Lit(n) => Some(n),
                        DimSpec::Name(i) => self.fixed.get(i).copied().flatten(),
                    })
                    .collect()
            })
            .collect()
    }
}

/// The seed of layer `index` of a model seeded with `seed` (SplitMix64
/// of both, so neighbouring seeds give unrelated streams).
pub fn layer_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A file error of `op` naming the file, located at `location`.
fn io_error(
    op: &str,
    path: &Path,
    what: impl std::fmt::Display,
    location: &'static Location<'static>,
) -> Error {
    Error::Runtime {
        op: op.to_string(),
        message: format!("{}: {what}", path.display()),
        location,
    }
}

/// Writes `params` (f32 tensors) to a safetensors file.
#[track_caller]
pub fn save_safetensors(path: &Path, params: &[(String, Tensor)]) -> Result<()> {
    let location = Location::caller();
    let mut data = Vec::with_capacity(params.len());
    for (name, t) in params {
        let values = t.to_vec::<f32>()?;
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        data.push((name.clone(), t.shape().to_vec(), bytes));
    }
    let views: Vec<(String, TensorView<'_>)> = data
        .iter()
        .map(|(n, s, b)| {
            TensorView::new(Dtype::F32, s.clone(), b)
                .map(|v| (n.clone(), v))
                .map_err(|e| {
                    io_error(
                        "save_safetensors",
                        path,
                        format!("tensor `{n}`: {e}"),
                        location,
                    )
                })
        })
        .collect::<Result<_>>()?;
    safetensors::serialize_to_file(views, None, path)
        .map_err(|e| io_error("save_safetensors", path, e, location))
}

/// An opened safetensors file that parameters are read from by name.
pub struct ParamFile {
    path: std::path::PathBuf,
    bytes: Vec<u8>,
}

impl ParamFile {
    /// Reads the whole file.
    #[track_caller]
    pub fn open(path: &Path) -> Result<ParamFile> {
        let location = Location::caller();
        let bytes =
            std::fs::read(path).map_err(|e| io_error("load_safetensors", path, e, location))?;
        SafeTensors::deserialize(&bytes)
            .map_err(|e| io_error("load_safetensors", path, e, location))?;
        Ok(ParamFile {
            path: path.to_path_buf(),
            bytes,
        })
    }

    /// The f32 tensor `name` of shape `shape`; an error names the file and
    /// the tensor.
    #[track_caller]
    pub fn take(&self, name: &str, shape: &[usize]) -> Result<Tensor> {
        let location = Location::caller();
        let fail = |what: String| {
            io_error(
                "load_safetensors",
                &self.path,
                format!("tensor `{name}`: {what}"),
                location,
            )
        };
        let st = SafeTensors::deserialize(&self.bytes).map_err(|e| fail(e.to_string()))?;
        let view = st.tensor(name).map_err(|_| fail("missing".into()))?;
        if view.dtype() != Dtype::F32 {
            return Err(fail(format!(
                "holds {:?} elements, the model expects F32",
                view.dtype()
            )));
        }
        if view.shape() != shape {
            return Err(fail(format!(
                "has shape {:?}, the model expects {shape:?}",
                view.shape()
            )));
        }
        let values: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Tensor::from_vec(values, shape)?.realize()
    }
}
