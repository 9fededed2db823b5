//! The pieces of a test's record that the blocks of the modes share with it: a latency summary,
//! one server's figures over a test and a gauge's range. Apart from `document.rs`, which
//! re-exports them, so a mode's block (`storm.rs`) and the server figures' builder
//! (`server.rs`) can use them without importing the whole document that holds their blocks.

use serde::{Deserialize, Serialize};

use crate::metrics::LatencyHistogram;
use crate::watch::{CommandTime, ServerCounters, ServerInterval};

/// Latency figures in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencySummary {
    pub count: u64,
    pub avg: f64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub max: f64,
}

impl LatencySummary {
    pub fn of(h: &LatencyHistogram) -> Self {
        let us = |ns: u64| ns as f64 / 1000.0;
        let at = |p: f64| us(h.value_at_percentile_ns(p));
        Self {
            count: h.len(),
            avg: h.mean_ns() / 1000.0,
            min: us(h.min_ns()),
            p50: at(50.0),
            p90: at(90.0),
            p95: at(95.0),
            p99: at(99.0),
            p99_9: at(99.9),
            p99_99: at(99.99),
            max: us(h.max_ns()),
        }
    }
}

/// One server during one test.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerTestRecord {
    pub address: String,
    /// Process CPU over the test (first to last sample), percent of one core.
    pub cpu_pct: Option<f64>,
    /// Main thread CPU over the test, where the server reports it.
    pub main_thread_cpu_pct: Option<f64>,
    /// The busiest second's limiting CPU (main thread where reported).
    pub peak_second_cpu_pct: Option<f64>,
    /// The limiting CPU (main thread where reported) over the full one-second intervals only,
    /// without the partial last one (the load winding down); what the verdict uses. `null`
    /// for a test shorter than a second.
    pub steady_cpu_pct: Option<f64>,
    /// The share of the test's wall time the server spent executing the test's commands
    /// (commandstats Δusec / wall), percent: shows saturation even when other processes take
    /// CPU from the server; understates it for small commands (I/O is not included).
    pub command_busy_pct: Option<f64>,
    pub used_memory: Option<Range>,
    pub used_memory_rss: Option<Range>,
    pub connected_clients_peak: Option<u64>,
    /// Counted over the test (each watch connection's span, added).
    #[serde(flatten)]
    pub counters: ServerCounters,
    /// A fork (RDB save, AOF rewrite) ran during the test.
    pub fork_seen: bool,
    /// The server was not answering the watch at the end, or the watch lost it for a while
    /// (`watch_gaps`): figures are partial.
    pub partial: bool,
    /// Times the watch lost the server (a restart, a failover) and reconnected during the test:
    /// the seconds between have no figures in `seconds` or the timeline (never made up).
    pub watch_gaps: u32,
    /// Per interval between samples (about one second each).
    pub seconds: Vec<ServerInterval>,
    /// The server's own time for the test's commands (from `INFO commandstats`).
    pub commands: Vec<CommandTime>,
    /// Calls-weighted over `commands`.
    pub usec_per_call: Option<f64>,
    /// The server's own latency percentiles for the test's commands (`INFO latencystats`, Redis
    /// 7+ and Valkey), cumulative since its stats were last reset: they cover more than this
    /// test. Absent where the server does not publish them and in records of earlier builds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency_percentiles: Vec<crate::watch::commandstats::CommandLatency>,
}

/// A gauge over a test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Range {
    pub start: u64,
    pub peak: u64,
    pub end: u64,
}
