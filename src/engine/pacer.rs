//! Pacing for `--rps`: when a worker's next send is due.
//!
//! The schedule is fixed in advance (`start + k / rate` for the k-th command) rather than derived
//! from when replies arrive, so a slow server cannot slow the offered load: a send time that
//! passes while no connection is free keeps its time, and the wait is charged to the request
//! (coordinated omission corrected). Later arrival processes (Poisson, steps) replace how the
//! k-th time is computed, not how the worker uses it.

use std::time::{Duration, Instant};

/// The `--rps` schedule of one worker: its k-th command is due at `start + k / rate`.
pub(super) struct Pacer {
    start: Instant,
    interval_ns: f64,
    /// Commands already given a send time (the k of the next one).
    scheduled: u64,
}

impl Pacer {
    /// A schedule of `rate` commands per second from `start`.
    pub(super) fn new(start: Instant, rate: f64) -> Self {
        Self {
            start,
            interval_ns: 1e9 / rate.max(1e-9),
            scheduled: 0,
        }
    }

    /// When the next command is due.
    pub(super) fn next_due(&self) -> Instant {
        self.start + Duration::from_nanos((self.scheduled as f64 * self.interval_ns) as u64)
    }

    /// Gives the next `commands` commands their send times (a batch goes at the first one's).
    pub(super) fn advance(&mut self, commands: u64) {
        self.scheduled += commands;
    }
}
