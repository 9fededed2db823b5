//! The monitor: what the main thread watches while workers run (progress figures, Ctrl-C, a
//! worker's failure).

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Duration;

/// Live figures for the progress line, read by the main thread every 250 ms.
#[derive(Clone, Copy, Debug, Default)]
pub struct Snapshot {
    /// Still in `--warmup`.
    pub warming_up: bool,
    /// Seconds since the measured phase began (0 while warming up).
    pub measured_secs: f64,
    /// Non-error replies counted in the measured phase.
    pub measured_completed: u64,
    /// Sum of their corrected latencies.
    pub measured_latency_sum_ns: u64,
    /// Replies (warmup included) and their latency sum in the last interval.
    pub interval_completed: u64,
    pub interval_latency_sum_ns: u64,
    pub interval_secs: f64,
}

/// The caller's side of a running test: Ctrl-C and the progress line.
pub trait Observer {
    /// True once the user asked to stop.
    fn interrupted(&self) -> bool;
    /// Called every 250 ms with live figures.
    fn tick(&mut self, snapshot: &Snapshot);
}

/// Progress interval, as the reference.
pub const TICK: Duration = Duration::from_millis(250);

/// Per-worker live counters, written by one worker and read by the main thread.
#[repr(align(128))]
#[derive(Debug, Default)]
pub(crate) struct Live {
    pub(super) all_completed: AtomicU64,
    pub(super) all_latency_sum_ns: AtomicU64,
    pub(super) measured_completed: AtomicU64,
    pub(super) measured_latency_sum_ns: AtomicU64,
    pub(super) failed: AtomicBool,
}
