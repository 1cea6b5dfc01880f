//! The error type of the ONNX importer.
//!
//! Errors about a node name the node (its `name`, or its position and first
//! output when it has none) and its op type, so that a failing model points
//! at the part of the graph that is wrong.

/// A failed load or run of an ONNX model.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bytes are not a well-formed ONNX model (bad protobuf, missing
    /// graph, a tensor whose data does not match its dims, ...).
    #[error("onnx: malformed model: {0}")]
    Malformed(String),
    /// Reading a model or external-data file failed.
    #[error("onnx: cannot read {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// The graph's structure is wrong at a node (a cycle, an input no one
    /// produces, an attribute of the wrong kind, ...).
    #[error("onnx: node {node} ({op}): {message}")]
    Node {
        /// The node.
        node: String,
        /// Its op type.
        op: String,
        /// What is wrong.
        message: String,
    },
    /// A node uses an op, opset, attribute value or dtype Morok does not
    /// support.
    #[error("onnx: node {node} ({op}): unsupported: {reason}")]
    Unsupported {
        /// The node.
        node: String,
        /// Its op type.
        op: String,
        /// Why it is not supported.
        reason: String,
    },
    /// An input passed to [`crate::Model::run`] is unknown, missing or of
    /// the wrong dtype or shape.
    #[error("onnx: input {name}: {message}")]
    Input {
        /// The input's name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A tensor op built for a node failed (shapes, dtypes, arguments).
    #[error("onnx: node {node} ({op}): {source}")]
    Op {
        /// The node.
        node: String,
        /// Its op type.
        op: String,
        /// The tensor API's error.
        source: Box<morok::Error>,
    },
}

/// A tensor error outside any node: realizing or reading a model's
/// outputs ([`crate::Model::call`]).
impl From<morok::Error> for Error {
    fn from(e: morok::Error) -> Error {
        Error::Op {
            node: "outputs".into(),
            op: "realize".into(),
            source: Box::new(e),
        }
    }
}

impl Error {
    /// Whether the error is an unsupported op, dtype or attribute value
    /// (as opposed to a malformed model or a wrong result).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, Error::Unsupported { .. })
    }
}

/// Shorthand for results of the importer.
pub type Result<T, E = Error> = std::result::Result<T, E>;
