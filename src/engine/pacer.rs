//! Pacing for `--rps`: the schedule a worker's sends follow.

use std::time::{Duration, Instant};

/// The `--rps` schedule of one worker: slot k is due at `start + k / rate`.
pub(super) struct Pacer {
    pub(super) start: Instant,
    pub(super) interval_ns: f64,
    pub(super) slot: u64,
}

impl Pacer {
    pub(super) fn next_due(&self) -> Instant {
        self.start + Duration::from_nanos((self.slot as f64 * self.interval_ns) as u64)
    }
}
