//! The beam search driver (`OptMode::Beam`): core enumerates and applies
//! opts ([`morok_core::search_actions`], [`morok_core::neighbours`], [`morok_core::apply_opts`]);
//! this driver builds and times candidates on a device, shows the search's
//! progress and keeps its results on disk.
//!
//! - [`search`]: the search over measured candidates ([`beam_search`]);
//! - [`measure`]: [`DeviceMeasure`], candidates built and timed on a
//!   [`Device`];
//! - [`cache`]: the on-disk cache of results, so a second process starts
//!   with the tuned kernel;
//! - [`beam_opts`]: the opts for one kernel (cached, else searched).

pub mod cache;
pub mod measure;
pub mod search;

pub use measure::DeviceMeasure;
pub use search::{beam_search, candidates_timed, searches_run, BeamResult, Measure};

use cache::BeamCache;
use morok_core::device::Device;
use morok_core::uop::UOp;
use morok_core::CompileOptions;
use morok_core::{apply_opts, optimize, BeamConfig, Opt, OptMode};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

static CACHE_HITS: AtomicUsize = AtomicUsize::new(0);

/// How many kernels took their opts from the on-disk beam cache in this
/// process (no search ran for them).
pub fn beam_cache_hits() -> usize {
    CACHE_HITS.load(Ordering::Relaxed)
}

/// The opts a beam search of `config` chooses for `ast` on `device`: the
/// ones cached for this kernel and device when an entry replays, else a
/// [`beam_search`] whose result is stored (in `beam/` under the device's
/// cache directory). If no candidate builds, the heuristics' opts (the
/// pipeline then reports why the kernel does not build).
pub fn beam_opts(ast: &Arc<UOp>, config: &BeamConfig, device: &dyn Device) -> Vec<Opt> {
    let target = device.target();
    let cache = device.cache_dir().map(|d| BeamCache::new(d.join("beam")));
    let key = BeamCache::key(ast, &device.identity(), config);
    if let Some(opts) = cache.as_ref().and_then(|c| c.load(&key)) {
        if apply_opts(ast, &opts, &target).is_ok() {
            CACHE_HITS.fetch_add(1, Ordering::Relaxed);
            return opts;
        }
    }
    let options = CompileOptions {
        mode: OptMode::Beam(*config),
    };
    let measure = DeviceMeasure::new(device, ast, options).with_compile_limit(config.compile_limit);
    match beam_search(ast, &target, config, &measure) {
        Ok(found) => {
            if let Some(c) = &cache {
                if let Err(e) = c.store(&key, &found.opts) {
                    tracing::warn!("storing a beam search result in {}: {e}", c.dir().display());
                }
            }
            found.opts
        }
        Err(_) => optimize(ast, &target),
    }
}
