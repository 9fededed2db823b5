//! `--find-max`'s plan: the SLO parsed, the step's window and warmup, the starting rate (checked
//! before anything connects, exit 2; the options it cannot be combined with are in
//! `conflicts.rs`).

use std::time::Duration;

use crate::cli::Args;
use crate::engine::{ErrorPolicy, LoadSpec, Stop};
use crate::slo::Slo;

use super::Workload;

/// Each step's measured window unless `--step-duration` says otherwise: long enough for a p99.9
/// of a few thousand requests at modest rates, short enough that a search of ~8 steps takes
/// under a minute.
pub const DEFAULT_STEP: Duration = Duration::from_secs(5);

/// The warmup before each step unless `--warmup` says otherwise: fresh connections and a new
/// rate settle (the queue of the previous step is gone: every step opens new connections).
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(1);

/// The closed-loop probe's measured window when no `--rps` gives the start.
pub const PROBE: Duration = Duration::from_secs(1);

/// The search stops before starting a window after this long (with
/// [`slo::search::MAX_WINDOWS`] it bounds the run even with long windows).
///
/// [`slo::search::MAX_WINDOWS`]: crate::slo::search::MAX_WINDOWS
pub const TIME_BUDGET: Duration = Duration::from_secs(15 * 60);

/// What `--find-max` asks for.
#[derive(Clone, Debug)]
pub struct FindMaxPlan {
    pub slo: Slo,
    /// Each step's measured window.
    pub step: Duration,
    /// Not counted, before each step.
    pub warmup: Duration,
    /// `--rps`, when given: the first step's rate (no probe).
    pub start_rps: Option<u64>,
}

/// Checks `--find-max` against the rest of the line and adapts the load: steps stop by time,
/// and an SLO that bounds errors counts them instead of stopping at the first (as `-e`).
pub fn plan(
    args: &Args,
    workload: &Workload,
    load: &mut LoadSpec,
) -> Result<Option<FindMaxPlan>, String> {
    let Some(text) = &args.find_max else {
        return Ok(None);
    };
    let slo = Slo::parse(text)?;
    if let Workload::Suite(tests) = workload
        && tests.len() != 1
    {
        return Err(format!(
            "--find-max searches one test, and this run has {}: pick one with -t (e.g. -t get) or \
             give a command",
            tests.len()
        ));
    }
    let step = args.step_duration.unwrap_or(DEFAULT_STEP);
    let warmup = args.warmup.unwrap_or(DEFAULT_WARMUP);
    load.stop = Stop::After(step);
    load.warmup = warmup;
    if slo.bounds_errors() {
        load.on_error = ErrorPolicy::Count;
    }
    Ok(Some(FindMaxPlan {
        slo,
        step,
        warmup,
        start_rps: args.rps,
    }))
}
