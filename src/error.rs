//! The error type of the public API.
//!
//! Every error names the op, what was wrong (shapes, dtypes or argument
//! values) and the location in the caller's source code where the failing
//! op was written (captured with `#[track_caller]`).

use morok_core::shape::ShapeError;
use std::panic::Location;

/// A failed tensor operation.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    /// A shape rule (broadcasting, matmul, reshape, axes) was violated.
    #[error("{source} at {location}")]
    Shape {
        /// The rule that was violated, with the op and the shapes involved.
        source: ShapeError,
        /// Where the op was written.
        location: &'static Location<'static>,
    },
    /// An operand has a dtype the op does not accept.
    #[error("{op}: {message} at {location}")]
    DType {
        /// The op that was asked for.
        op: String,
        /// What is wrong, naming the dtypes involved.
        message: String,
        /// Where the op was written.
        location: &'static Location<'static>,
    },
    /// An argument value is outside the op's domain (a zero step, a kernel
    /// larger than its input, ...).
    #[error("{op}: {message} at {location}")]
    Argument {
        /// The op that was asked for.
        op: String,
        /// What is wrong.
        message: String,
        /// Where the op was written.
        location: &'static Location<'static>,
    },
    /// Running the compiled graph or moving its data failed.
    #[error("{op}: {message} at {location}")]
    Runtime {
        /// The stage or op that failed (`realize`, `to_vec`, ...).
        op: String,
        /// What is wrong.
        message: String,
        /// Where the failing call was written.
        location: &'static Location<'static>,
    },
}

impl Error {
    /// A shape error located at the caller.
    #[track_caller]
    pub fn shape(source: ShapeError) -> Error {
        Error::Shape {
            source,
            location: Location::caller(),
        }
    }

    /// A dtype error located at the caller.
    #[track_caller]
    pub fn dtype(op: &str, message: impl Into<String>) -> Error {
        Error::DType {
            op: op.to_string(),
            message: message.into(),
            location: Location::caller(),
        }
    }

    /// An argument error located at the caller.
    #[track_caller]
    pub fn argument(op: &str, message: impl Into<String>) -> Error {
        Error::Argument {
            op: op.to_string(),
            message: message.into(),
            location: Location::caller(),
        }
    }

    /// A runtime error located at the caller.
    #[track_caller]
    pub fn runtime(op: &str, message: impl Into<String>) -> Error {
        Error::Runtime {
            op: op.to_string(),
            message: message.into(),
            location: Location::caller(),
        }
    }

    /// The op that failed.
    pub fn op(&self) -> &str {
        match self {
            Error::Shape { source, .. } => &source.op,
            Error::DType { op, .. } | Error::Argument { op, .. } | Error::Runtime { op, .. } => op,
        }
    }

    /// Where in the caller's source code the failing op was written.
    pub fn location(&self) -> &'static Location<'static> {
        match self {
            Error::Shape { location, .. }
            | Error::DType { location, .. }
            | Error::Argument { location, .. }
            | Error::Runtime { location, .. } => location,
        }
    }
}

/// Shorthand for results of the public API.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches the caller's location to a shape-rule result.
pub(crate) trait Located<T> {
    /// The value, or the shape error located at the caller.
    fn located(self) -> Result<T>;
}

impl<T> Located<T> for std::result::Result<T, ShapeError> {
    #[track_caller]
    fn located(self) -> Result<T> {
        match self {
            Ok(v) => Ok(v),
            Err(e) => Err(Error::shape(e)),
        }
    }
}
