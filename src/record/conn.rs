//! The record's `options.connections` block: memtier's connection options a run was given
//! (issue 23: `--reconnect-interval`, the staircase ramp, `-4`/`-6`, `--connection-timeout`,
//! the start jitter, `--reconnect-backoff-factor`, `--max-reconnect-attempts`,
//! `--tls-protocols`), so a record says how its connections were made; absent when none was
//! given (records of earlier builds read the same way).

use serde::{Deserialize, Serialize};

use crate::engine::Family;
use crate::plan::RunPlan;

/// The options given, each absent when not.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConnectionOptions {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconnect_interval: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp: Option<RampRecord>,
    /// `ipv4` or `ipv6`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address_family: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_timeout_s: Option<f64>,
    /// `[min, max]` µs before each connection's set-up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_jitter_us: Option<[u64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconnect_backoff_factor: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_reconnect_attempts: Option<u32>,
    /// The TLS versions offered (`TLSv1.2`, `TLSv1.3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_versions: Option<Vec<String>>,
}

/// The staircase ramp, per thread.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RampRecord {
    pub start_per_thread: u32,
    pub step_per_thread: u32,
    pub step_s: f64,
}

/// The block for `plan`, `None` when it would be empty.
pub fn of(plan: &RunPlan) -> Option<ConnectionOptions> {
    let l = &plan.load;
    let c = ConnectionOptions {
        reconnect_interval: l.reconnect_interval,
        ramp: l.ramp.map(|r| RampRecord {
            start_per_thread: r.start,
            step_per_thread: r.step,
            step_s: r.every.as_secs_f64(),
        }),
        address_family: plan.family.map(|f| match f {
            Family::V4 => "ipv4".into(),
            Family::V6 => "ipv6".into(),
        }),
        connect_timeout_s: plan.connect_timeout.map(|d| d.as_secs_f64()),
        start_jitter_us: (l.conn_start_jitter_us.1 > 0)
            .then_some([l.conn_start_jitter_us.0, l.conn_start_jitter_us.1]),
        reconnect_backoff_factor: l.backoff_factor,
        max_reconnect_attempts: l.max_reconnect_attempts,
        tls_versions: plan
            .tls
            .as_ref()
            .and_then(|t| t.versions)
            .map(|(v12, v13)| {
                [(v12, "TLSv1.2"), (v13, "TLSv1.3")]
                    .into_iter()
                    .filter(|(on, _)| *on)
                    .map(|(_, name)| name.to_string())
                    .collect()
            }),
    };
    (c != ConnectionOptions::default()).then_some(c)
}
