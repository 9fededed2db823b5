//! What the caller of a running test sees of it: the [`Observer`] it implements (Ctrl-C, the
//! progress line, each completed second) and the [`Snapshot`] of live figures it is handed every
//! [`TICK`]. Apart from the monitor that calls it, so that `seconds` (which hands each second to
//! it) and the monitor (which hands seconds over through `seconds`) do not import each other.

use std::time::Duration;

use crate::metrics::{Second, Signal};

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
    /// Bytes of a mix's measured requests with their replies so far, and in the last interval
    /// (memtier's progress KB/sec and StatsD `bytes_sec`; 0 without a mix).
    pub measured_bytes: u64,
    pub interval_bytes: u64,
    /// The test's connections, and those down or being reopened after a failure (`-e`): for
    /// live metrics (`crate::live`).
    pub connections: u64,
    pub connections_down: u64,
    /// Measured requests written and neither answered nor failed yet: what would be unanswered
    /// were the test to end now (live metrics judge an outage under way with it). `None` where
    /// the loop does not count them.
    pub in_flight: Option<u64>,
}

/// The caller's side of a running test: Ctrl-C and the progress line.
pub trait Observer {
    /// True once the user asked to stop.
    fn interrupted(&self) -> bool;
    /// Which signal asked to stop, once [`Observer::interrupted`] says so (for the report).
    fn signal(&self) -> Signal {
        Signal::Interrupt
    }
    /// Called every 250 ms with live figures.
    fn tick(&mut self, snapshot: &Snapshot);
    /// Second `index` of the measured phase is over (`engine::seconds`): every second once, in
    /// order, empty ones too. The journal writes it; the default ignores it.
    fn second(&mut self, _index: usize, _second: &Second) {}
    /// Whether the seconds handed to [`Observer::second`] carry their full-precision histograms
    /// (`metrics::ExactSecond`, for the journal). Taking them costs each worker a read of part
    /// of its histograms once a second, so only an observer that writes them asks.
    fn exact_seconds(&self) -> bool {
        false
    }
}

/// Progress interval, as the reference.
pub const TICK: Duration = Duration::from_millis(250);
