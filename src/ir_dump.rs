//! `MOROK_DEBUG=ir`: prints the IR the compiler stages emit as `tracing`
//! events on target `morok::ir` (the core crate does no I/O itself).

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Installs a global subscriber that writes `morok::ir` events to stderr
/// (does nothing if the application installed its own).
pub(crate) fn install() {
    let filter = Targets::new().with_target("morok::ir", tracing::Level::TRACE);
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .without_time();
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(filter)
        .try_init();
}
