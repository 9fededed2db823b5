//! The record's `storm` block (`--connect-storm`): counts, connects per second, one histogram
//! per stage and one for the whole connection, failures by stage, kind and side, the client's
//! limits with the figure that ran out, and the server's connection counters and CPU from the
//! watch. Written by a run (`record.rs`), added up exactly by `merge` (`merge.rs`), drawn by
//! `compare` and the HTML report (`tables.rs`), rebuilt from a killed run's journal
//! (`recover.rs`), all through its `record::block::Block` impl (`kind.rs`), so that no reader of
//! records names the storm.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::FailKind;
use crate::metrics::{FAILURE_KINDS, LatencyHistogram};
use crate::record::document::{LatencySummary, ServerTestRecord};
use crate::record::hdr;
use crate::record::timeline::OutageRecord;

/// A connection storm, as the record keeps it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StormRecord {
    /// `-c`: concurrent openers.
    pub openers: u32,
    /// `--rps`: connections per second asked for; `None` is as fast as possible.
    pub target_rate: Option<u64>,
    /// `--tls-resume` was given (resumed handshakes are their own stage).
    pub tls_resume: bool,
    /// The command sent once per connection (its name only), if any.
    pub command: Option<String>,
    pub duration_s: f64,
    /// Connections begun, finished (every stage) and failed.
    pub attempted: u64,
    pub completed: u64,
    pub failed: u64,
    /// Finished connections per second of the storm.
    pub connects_per_s: f64,
    pub interrupted: bool,
    /// Each finished connection's total, measured on its own.
    pub total: StageRecord,
    /// Stages in the order they happen; only those the storm went through. Their `sum_ns` add
    /// up to `total.sum_ns` exactly.
    pub stages: Vec<StageRecord>,
    pub failures: Vec<StormFailure>,
    /// The failures by kind in the engine's words, as a test's `requests.errors` counts them
    /// (`connection refused` for a refused connect and for a server at `maxclients`,
    /// `connection reset`, `connection closed`, `timeout`, an error reply's first word): the
    /// same kinds whatever the mode. Absent in records before issue 33.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
    /// The outages in the storm's seconds, by the engine's rule and as a test's `outages`
    /// (`metrics::outage`: a stretch in which no connection completed and some failed, or one
    /// connection waited through a second or more of it). Absent in records before issue 33
    /// and in merged records (shards' seconds do not line up).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<OutageRecord>,
    /// Client-side limits met (ephemeral ports, open files), apart from the server's refusals.
    pub client_limits: Vec<ClientLimitRecord>,
    /// `total_connections_received` during the storm, from `INFO` before and after.
    pub connections_received: Option<u64>,
    /// `connected_clients` after the storm (connections left open on the server).
    pub connected_clients_after: Option<u64>,
    /// The server watch over the storm (CPU, `connected_clients` peak, `rejected_connections`).
    pub server: Vec<ServerTestRecord>,
}

/// One stage's (or the whole connection's) figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StageRecord {
    pub name: String,
    /// The exact sum of its times, ns (the histogram rounds; `merge` adds these).
    pub sum_ns: u64,
    pub latency_us: LatencySummary,
    /// HDR V2, compressed, base64 (as the tests' histograms).
    pub hdr: String,
}

/// Connections that failed in one stage the same way.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct StormFailure {
    pub stage: String,
    /// `refused`, `reset`, `closed`, `timeout`, `tls`, `maxclients`, `auth`, `err`,
    /// `local_ports`, `open_files`, …
    pub kind: String,
    /// `client` (a limit of the client's machine) or `server`.
    pub side: String,
    pub count: u64,
    /// The first such failure's message (secrets scrubbed), e.g. "ERR max number of clients
    /// reached".
    pub message: Option<String>,
}

/// A client-side limit the storm ran into.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientLimitRecord {
    pub kind: String,
    pub failures: u64,
    /// What ran out, e.g. "ephemeral ports 32768-60999 (28232 ports), 28100 sockets in
    /// TIME_WAIT".
    pub figure: String,
}

/// What the run knows beyond the storm's own result (in the journal's `begin` line too, without
/// the counters read after the storm).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StormContext {
    pub openers: u32,
    pub target_rate: Option<u64>,
    pub tls_resume: bool,
    pub command: Option<String>,
    pub connections_received: Option<u64>,
    pub connected_clients_after: Option<u64>,
}

/// The stages' names in the record, in the order they happen (`storm::Stage` names its stages
/// by these): the record's vocabulary, so a reader of records (`recover`, `merge`, `compare`)
/// needs nothing of the storm's runtime.
pub const STAGES: [&str; 8] = [
    "connect",
    "tls_full",
    "tls_resumed",
    "hello_auth",
    "select",
    "setup",
    "cluster_slots",
    "command",
];

/// The side a failure kind is on in the record: `client` for a limit of the client's machine
/// (ephemeral ports, open files), `server` for the rest (refusals, resets, error replies).
pub fn side_of(kind: &str) -> &'static str {
    match kind {
        "local_ports" | "open_files" => "client",
        _ => "server",
    }
}

/// A failure kind of the storm's (`message`: the first such failure's) as the engine counts a
/// failed request (`engine::FailKind`, `metrics::FAILURE_KINDS`; an error reply by its first
/// word), so a storm's failures by kind read as every other mode's: a server at `maxclients`
/// refuses the connection as a refused connect does.
pub fn engine_kind(kind: &str, message: Option<&str>) -> String {
    let lost = match kind {
        "refused" | "maxclients" => FailKind::Refused,
        "reset" => FailKind::Reset,
        "closed" => FailKind::Closed,
        "timeout" => FailKind::Timeout,
        "auth" | "loading" | "err" | "error" => {
            let word = message.and_then(|m| m.split_whitespace().next());
            return word.unwrap_or("ERR").to_string();
        }
        _ => FailKind::Other,
    };
    FAILURE_KINDS[lost as usize].to_string()
}

impl StageRecord {
    /// A stage's figures: its histogram and the exact sum of its times (ns).
    pub fn of(name: &str, hist: &LatencyHistogram, sum_ns: u128, keep_hdr: bool) -> Self {
        Self {
            name: name.into(),
            sum_ns: u64::try_from(sum_ns).unwrap_or(u64::MAX),
            latency_us: LatencySummary::of(hist),
            hdr: if keep_hdr {
                hdr::encode(hist)
            } else {
                String::new()
            },
        }
    }
}

impl StormRecord {
    /// [`StormRecord::errors`] from the failures by stage and kind (`message`: the first
    /// message of a stage and kind, when kept).
    pub fn errors_of<'a>(
        failures: impl Iterator<Item = (&'a str, u64, Option<&'a str>)>,
    ) -> BTreeMap<String, u64> {
        let mut by = BTreeMap::new();
        for (kind, n, message) in failures {
            *by.entry(engine_kind(kind, message)).or_default() += n;
        }
        by
    }

    /// Refusals by the server (every failure not on the client's side).
    pub fn server_failures(&self) -> u64 {
        self.failures
            .iter()
            .filter(|f| f.side == "server")
            .map(|f| f.count)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Document;

    /// The block goes where the record's `storm` field was (before `verify`), written as its
    /// type writes it, and a record read back writes it again byte for byte.
    #[test]
    fn the_block_is_written_and_read_back_as_the_field_was() {
        let storm = StormRecord {
            openers: 3,
            command: Some("ping".into()),
            completed: 7,
            connects_per_s: 0.1,
            stages: vec![StageRecord {
                name: "connect".into(),
                ..StageRecord::default()
            }],
            connected_clients_after: Some(4),
            ..StormRecord::default()
        };
        let mut doc = Document {
            verify: Some(Default::default()),
            ..Document::default()
        };
        doc.blocks.put(&storm);
        let compact = serde_json::to_string(&doc).unwrap();
        let field = format!(
            ",\"storm\":{},\"verify\":",
            serde_json::to_string(&storm).unwrap()
        );
        assert!(compact.contains(&field), "{compact}");
        let pretty = serde_json::to_string_pretty(&doc).unwrap();
        let back = Document::read(serde_json::from_str(&pretty).unwrap()).unwrap();
        assert_eq!(serde_json::to_string_pretty(&back).unwrap(), pretty);
        let read: StormRecord = back.blocks.block().unwrap();
        assert_eq!(
            serde_json::to_string(&read).unwrap(),
            serde_json::to_string(&storm).unwrap()
        );
    }

    /// A storm's failure kinds in the engine's words: a server at `maxclients` refuses as a
    /// refused connect does, an error reply counts by its first word.
    #[test]
    fn failures_by_kind_are_the_engines() {
        let errors = StormRecord::errors_of(
            [
                ("refused", 3, None),
                ("maxclients", 2, Some("ERR max number of clients reached")),
                ("timeout", 1, None),
                ("reset", 1, None),
                ("auth", 4, Some("WRONGPASS invalid username-password pair")),
                ("err", 1, None),
                ("tls", 1, None),
            ]
            .into_iter(),
        );
        let want: BTreeMap<String, u64> = [
            ("connection refused", 5),
            ("timeout", 1),
            ("connection reset", 1),
            ("WRONGPASS", 4),
            ("ERR", 1),
            ("connection error", 1),
        ]
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
        assert_eq!(errors, want);
    }

    #[test]
    fn a_malformed_block_is_not_a_record() {
        let value = serde_json::json!({ "tests": [], "storm": { "completed": "seven" } });
        let e = Document::read(value).unwrap_err();
        assert!(e.contains("storm") && e.contains("invalid type"), "{e}");
    }
}
