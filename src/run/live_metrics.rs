//! Where the run meets live metrics (`crate::live`, `--metrics-listen`, memtier's
//! `--statsd-host`): listening (or resolving the StatsD host) before the run starts, telling the
//! endpoint and the StatsD sink when a test begins and ends, lingering after the run. Kept apart
//! so the test loop gains one line per event.

use std::sync::atomic::{AtomicBool, Ordering};

use super::console::Console;
use crate::engine::Stop;
use crate::live::{self, Endpoint, RunShape, Statsd};
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

/// memtier's `--statsd-host`: the sink, its host resolved (a name that does not resolve is the
/// one-line usage message, exit 2, before anything connects).
pub(super) fn statsd(plan: &RunPlan) -> Result<Option<Statsd>, String> {
    let Some(args) = &plan.statsd else {
        return Ok(None);
    };
    let threads = plan.load.workers.max(1) as u64;
    let shape = RunShape {
        threads,
        clients: u64::from(plan.load.clients) / threads,
        requests: match plan.load.stop {
            Stop::Requests(n) => Some(n),
            _ => None,
        },
        secs: match plan.load.stop {
            Stop::After(d) => Some(d.as_secs_f64()),
            _ => None,
        },
    };
    Statsd::open(args, shape, &super::secrets(plan)).map(Some)
}

/// A test begins: its name and the server watch's samplers go to the endpoint; the StatsD sink
/// annotates the run's start (`run`: memtier's run number under `--run-count`).
pub(super) fn test_started(console: &mut Console, title: &str, watch: Option<&TestWatch>) {
    if let Some(feed) = &console.live {
        feed.test_started(title, watch.map(TestWatch::feeds).unwrap_or_default());
    }
    let run = console.memtier.as_ref().map_or(1, |m| m.run);
    if let Some(s) = &mut console.statsd {
        s.test_started(run);
    }
}

/// A test ended: the endpoint's counters become its exact totals, and so do the StatsD
/// counters' sums.
pub(super) fn test_ended(console: &mut Console, result: &TestResult) {
    if let Some(feed) = &console.live {
        feed.test_ended(result);
    }
    if let Some(s) = &mut console.statsd {
        s.test_ended(result);
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
