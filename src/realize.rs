//! Runs the compiler pipeline for a set of tensor-level roots (wired by the lead).

/// The materialized results of [`realize_graph`].
// Built by the pipeline once it is wired; the placeholder only fails.
#[allow(dead_code)]
pub(crate) struct Realized {
    /// One tensor-level UOp per root (a view of a BUFFER that is in storage),
    /// with the root's shape.
    pub outputs: Vec<std::sync::Arc<morok_core::UOp>>,
    /// The kernels that ran.
    pub kernels: Vec<crate::KernelInfo>,
}

/// Schedules, compiles and runs the graphs of `roots`.
#[track_caller]
pub(crate) fn realize_graph(
    roots: &[std::sync::Arc<morok_core::UOp>],
) -> Result<Realized, crate::Error> {
    Err(crate::Error::runtime(
        "realize",
        format!(
            "the compiler pipeline is not wired yet ({} root(s) left unrealized)",
            roots.len()
        ),
    ))
}
