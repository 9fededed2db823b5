//! memtier's `--client-stats` in the record: each load connection's seconds (`metrics::
//! ConnSeconds`) as the test ran them, so memtier mode writes its per-client CSV files from the
//! record like its other outputs. Present only for a run that asked for them; older records
//! lack the field and still read.

use serde::{Deserialize, Serialize};

use crate::metrics::{CONN_KINDS, ConnSeconds};

/// One connection of a test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientSecondsRecord {
    /// Its worker thread (memtier's thread), from 0.
    pub thread: usize,
    /// Its index among the thread's connections (memtier's client), from 0.
    pub client: usize,
    pub seconds: Vec<ClientSecondRow>,
}

/// One second of one connection; each list is by command kind: the test's `commands` in order
/// (a mix's commands; later ones folded into the last kept), or the test's one command.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientSecondRow {
    /// Seconds since the start of the measured phase.
    pub second: u64,
    /// Replies (errors included).
    pub requests: Vec<u64>,
    /// Their summed latency from the write of their batch, µs.
    pub latency_us: Vec<f64>,
    /// Reply bytes received.
    pub rx_bytes: Vec<u64>,
    /// Request bytes written (a mix's commands); absent in records of earlier builds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tx_bytes: Vec<u64>,
    /// What the replies found: values (memtier's hits; absent in records of earlier builds,
    /// whose non-nil replies were hits) and nils (its misses), an `MGET`'s one per key.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hits: Vec<u64>,
    pub nils: Vec<u64>,
    pub errors: Vec<u64>,
}

/// The record's connections from the test's timeline, by thread then client; `None` when none
/// were kept.
pub fn of(connections: &[ConnSeconds]) -> Option<Vec<ClientSecondsRecord>> {
    if connections.is_empty() {
        return None;
    }
    let mut out: Vec<ClientSecondsRecord> = connections
        .iter()
        .map(|c| ClientSecondsRecord {
            thread: c.worker,
            client: c.conn,
            seconds: c
                .rows
                .iter()
                .map(|r| ClientSecondRow {
                    second: r.second,
                    requests: r.requests.to_vec(),
                    latency_us: r.latency_ns.iter().map(|&ns| ns as f64 / 1e3).collect(),
                    rx_bytes: r.rx_bytes.to_vec(),
                    tx_bytes: r.tx_bytes.to_vec(),
                    hits: r.hits.to_vec(),
                    nils: r.nils.to_vec(),
                    errors: r.errors.to_vec(),
                })
                .collect(),
        })
        .collect();
    out.sort_by_key(|c| (c.thread, c.client));
    debug_assert!(
        out.iter()
            .all(|c| c.seconds.iter().all(|s| s.requests.len() == CONN_KINDS))
    );
    Some(out)
}
