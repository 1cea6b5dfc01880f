//! [`Model`]: a loaded ONNX model, its declared inputs and outputs, and
//! [`Model::run`], which checks the caller's tensors against the declared
//! inputs and builds the outputs lazily.

use crate::data::DataDir;
use crate::error::{Error, Result};
use crate::exec::{run_graph, Values};
use crate::graph::Graph;
use crate::info::{Dim, ValueInfo};
use crate::proto::ModelProto;
use morok::{CallCache, Tensor};
use prost::Message;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The oldest default-domain opset the importer accepts.
pub const MIN_OPSET: i64 = 7;
/// The newest default-domain opset the importer knows (ONNX 1.19: opset 24).
pub const MAX_OPSET: i64 = 24;

/// A loaded ONNX model. [`Model::run`] builds its outputs lazily;
/// [`Model::call`] realizes them through a plan cached per input shape.
///
/// ```no_run
/// use morok::Tensor;
/// let model = morok_onnx::Model::load("model.onnx")?;
/// let x = Tensor::zeros(&[1, 3, 224, 224], morok::DType::F32);
/// let outputs = model.run(&[("input", &x)])?;
/// println!("{:?}", outputs[0].to_vec::<f32>());
/// # Ok::<(), morok_onnx::Error>(())
/// ```
pub struct Model {
    graph: Graph,
    opset: i64,
    producer: String,
    /// Compiled plans of [`Model::call`].
    plans: CallCache,
}

impl Model {
    /// Reads and prepares the model in `path` (external-data files are
    /// looked up beside it).
    pub fn load(path: impl AsRef<Path>) -> Result<Model> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Model::parse(&bytes, DataDir(path.parent()))
    }

    /// Prepares the model encoded in `bytes` (it cannot use external data).
    pub fn from_bytes(bytes: &[u8]) -> Result<Model> {
        Model::parse(bytes, DataDir(None))
    }

    fn parse(bytes: &[u8], dir: DataDir<'_>) -> Result<Model> {
        let proto = ModelProto::decode(bytes)
            .map_err(|e| Error::Malformed(format!("not an ONNX protobuf: {e}")))?;
        let graph = proto
            .graph
            .as_ref()
            .ok_or_else(|| Error::Malformed("the model has no graph".into()))?;
        let mut opset = None;
        for import in &proto.opset_import {
            let domain = import.domain.as_deref().unwrap_or("");
            if domain.is_empty() || domain == "ai.onnx" {
                opset = import.version;
            }
        }
        let opset = match opset {
            Some(v) if (1..=MAX_OPSET).contains(&v) => v,
            Some(v) => {
                return Err(Error::Unsupported {
                    node: "model".into(),
                    op: "opset_import".into(),
                    reason: format!("default-domain opset {v} (known: 1 to {MAX_OPSET})"),
                })
            }
            None if proto.ir_version.unwrap_or(0) < 3 => 1,
            // A model of other domains only: its nodes are unsupported by
            // domain; default-domain nodes (if any) are read at the newest.
            None => MAX_OPSET,
        };
        let graph = Graph::prepare(graph, &HashSet::new(), dir)?;
        Ok(Model {
            graph,
            opset,
            producer: proto.producer_name.unwrap_or_default(),
            plans: CallCache::new(),
        })
    }

    /// The inputs a caller supplies (graph inputs without an initializer).
    pub fn inputs(&self) -> &[ValueInfo] {
        &self.graph.inputs
    }

    /// The outputs, in the order [`Model::run`] returns them.
    pub fn outputs(&self) -> &[ValueInfo] {
        &self.graph.outputs
    }

    /// The default-domain opset the model imports.
    pub fn opset(&self) -> i64 {
        self.opset
    }

    /// The tool that wrote the model (`producer_name`).
    pub fn producer(&self) -> &str {
        &self.producer
    }

    /// Builds the outputs for `inputs` (name, tensor), in the order of
    /// [`Model::outputs`]. The result is lazy: realize or read it to run.
    /// Every input without an initializer must be given, with the
    /// declared dtype and rank; fixed dims must match and named dims must
    /// agree across inputs. Initializers that are also graph inputs may be
    /// overridden.
    pub fn run(&self, inputs: &[(&str, &Tensor)]) -> Result<Vec<Tensor>> {
        let mut values: Values = HashMap::new();
        let mut named: HashMap<&str, usize> = HashMap::new();
        for (name, tensor) in inputs {
            let declared = self
                .graph
                .all_inputs
                .iter()
                .find(|i| i.name == *name)
                .ok_or_else(|| Error::Input {
                    name: name.to_string(),
                    message: format!(
                        "the model has no such input (inputs: {})",
                        self.graph
                            .inputs
                            .iter()
                            .map(|i| i.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })?;
            check_input(declared, tensor, &mut named)?;
            if values.insert(name.to_string(), (*tensor).clone()).is_some() {
                return Err(Error::Input {
                    name: name.to_string(),
                    message: "given twice".into(),
                });
            }
        }
        for declared in &self.graph.inputs {
            if !values.contains_key(&declared.name) {
                return Err(Error::Input {
                    name: declared.name.clone(),
                    message: format!("missing ({})", declared.type_name),
                });
            }
        }
        run_graph(&self.graph, values, self.opset)
    }

    /// How many [`Model::call`]s ran a cached plan (no graph built).
    pub fn warm_calls(&self) -> usize {
        self.plans.warm_calls()
    }

    /// [`Model::run`], realized, through a plan cached per input shape
    /// and dtype ([`morok::CallCache`], the kernel macros' call-site
    /// cache): the first call with new shapes builds the graph, schedules
    /// and compiles it; later calls only launch its kernels on the new
    /// inputs (no graph is built). A model whose graph depends on its
    /// inputs' values (an `If` on input data, a shape read from an input)
    /// is built on every call, with the same results. The cache needs
    /// exactly the declared inputs, each realized; other calls (initializer
    /// overrides, lazy inputs) run [`Model::run`] and realize it.
    #[track_caller]
    pub fn call(&self, inputs: &[(&str, &Tensor)]) -> Result<Vec<Tensor>> {
        // The arguments in declared order, so the plan's argument
        // positions mean the same inputs on every call.
        let ordered: Option<Vec<&Tensor>> = (inputs.len() == self.graph.inputs.len())
            .then(|| {
                self.graph
                    .inputs
                    .iter()
                    .map(|d| inputs.iter().find(|(n, _)| *n == d.name).map(|(_, t)| *t))
                    .collect()
            })
            .flatten();
        let Some(args) = ordered else {
            let outputs = self.run(inputs)?;
            let refs: Vec<&Tensor> = outputs.iter().collect();
            return Ok(Tensor::realize_all(&refs)?);
        };
        self.plans.call(&args, |args| {
            let named: Vec<(&str, &Tensor)> = self
                .graph
                .inputs
                .iter()
                .map(|d| d.name.as_str())
                .zip(args.iter().copied())
                .collect();
            self.run(&named)
        })
    }
}

/// Checks `tensor` against the declared input, binding named dims.
fn check_input<'a>(
    declared: &'a ValueInfo,
    tensor: &Tensor,
    named: &mut HashMap<&'a str, usize>,
) -> Result<()> {
    let fail = |message: String| Error::Input {
        name: declared.name.clone(),
        message,
    };
    if let Some(err) = tensor.error() {
        return Err(fail(format!("the tensor carries an error: {err}")));
    }
    match declared.dtype {
        Some(dtype) if dtype != tensor.dtype() => {
            return Err(fail(format!(
                "dtype {} where the model declares {}",
                tensor.dtype(),
                declared.type_name
            )))
        }
        None => {
            return Err(Error::Unsupported {
                node: declared.name.clone(),
                op: "input".into(),
                reason: format!("input type {}", declared.type_name),
            })
        }
        _ => {}
    }
    let Some(dims) = &declared.shape else {
        return Ok(());
    };
    let shape = tensor.shape();
    let spelled = || {
        dims.iter()
            .map(Dim::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if dims.len() != shape.len() {
        return Err(fail(format!(
            "shape {shape:?} where the model declares [{}]",
            spelled()
        )));
    }
    for (dim, &size) in dims.iter().zip(shape) {
        match dim {
            Dim::Fixed(n) if *n != size => {
                return Err(fail(format!(
                    "shape {shape:?} where the model declares [{}]",
                    spelled()
                )))
            }
            Dim::Named(n) => {
                let bound = *named.entry(n.as_str()).or_insert(size);
                if bound != size {
                    return Err(fail(format!(
                        "dim {n} is {size} here but {bound} in another input"
                    )));
                }
            }
            _ => {}
        }
    }
    Ok(())
}
