//! Where the run meets live metrics (`crate::live`, `--metrics-listen`): listening before the
//! run starts, telling the endpoint when a test begins and ends, lingering after the run. Kept
//! apart so the test loop gains one line per event.

use std::sync::atomic::{AtomicBool, Ordering};

use super::console::Console;
use crate::live::{self, Endpoint};
use crate::metrics::TestResult;
use crate::plan::RunPlan;
use crate::watch::TestWatch;

/// Listens on `--metrics-listen`, if given; the error is the one-line usage message (exit 2).
pub(super) fn listen(plan: &RunPlan) -> Result<Option<Endpoint>, String> {
    let Some(addr) = plan.metrics_listen else {
        return Ok(None);
    };
    let shard = plan.shard.as_ref().map(|s| (s.shard.index, s.shard.count));
    Endpoint::listen(addr, live::shard_labels(shard)).map(Some)
}

/// A test begins: its name and the server watch's samplers go to the endpoint.
pub(super) fn test_started(console: &Console, title: &str, watch: Option<&TestWatch>) {
    if let Some(feed) = &console.live {
        feed.test_started(title, watch.map(TestWatch::feeds).unwrap_or_default());
    }
}

/// A test ended: the endpoint's counters become its exact totals.
pub(super) fn test_ended(console: &Console, result: &TestResult) {
    if let Some(feed) = &console.live {
        feed.test_ended(result);
    }
}

/// After the record is written: `--metrics-linger`, then the endpoint closes. A second Ctrl-C
/// ends the process anyway (`main`); a first one that arrives during the linger ends it too.
pub(super) fn finish(plan: &RunPlan, live: Option<Endpoint>, interrupted: &AtomicBool) {
    let Some(endpoint) = live else { return };
    let already = interrupted.load(Ordering::Relaxed);
    let quit = || !already && interrupted.load(Ordering::Relaxed);
    endpoint.finish(plan.metrics_linger, &quit);
}
