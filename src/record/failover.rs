//! The record's failover blocks: `sentinel` (the primary found through Sentinels and every switch
//! seen while the run went on) and `counters` (the lost-writes check of `--check-counters`).
//! Both are absent from runs that did not ask for them.

use serde::{Deserialize, Serialize};

/// `--sentinel`: who was asked, what they said, and each failover seen.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SentinelRecord {
    /// `--primary-name`.
    pub primary_name: String,
    /// The Sentinels given (`host:port`), in order.
    pub sentinels: Vec<String>,
    /// The primary at the start (`host:port`).
    pub initial: String,
    pub switches: Vec<SwitchRecord>,
}

/// One `+switch-master` seen by the watcher (or a move found when it re-subscribed).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SwitchRecord {
    /// Wall clock, RFC 3339 with microseconds.
    pub at: String,
    /// Seconds from the start of `test` (from the run's start when `test` is null: between
    /// tests).
    pub offset_s: f64,
    /// The test under way.
    pub test: Option<String>,
    pub from: String,
    pub to: String,
}

/// `--check-counters`: one INCR test's acknowledged increments against the counters' values.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CounterRecord {
    pub test: String,
    /// The counters' keys (a `SCAN MATCH` pattern).
    pub pattern: String,
    /// INCRs answered with an integer (acknowledged).
    pub acknowledged: u64,
    /// INCRs sent but not acknowledged (error replies, failed or unanswered): each may or may not
    /// have been applied.
    pub unacknowledged: u64,
    /// Sum of the counters before the test and after it (read on the primary of the moment).
    pub before: i64,
    pub after: i64,
    /// `after - before`.
    pub found: i64,
    /// Acknowledged increments missing: at least `lost_min`, at most `lost_max` (the
    /// unacknowledged ones that were applied anyway make up for lost ones in the sum).
    pub lost_min: u64,
    pub lost_max: u64,
}
