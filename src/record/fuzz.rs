//! The record's `fuzz` block (`--fuzz` runs only): what was sent, how the server answered, and
//! whether it survived; with a crash or hang, the log and the reducer's reproducer. Every field
//! defaults, so records of other runs (and older ones) read as before.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A fuzz run's facts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FuzzRecord {
    /// The seed every client's stream came from (`--seed` replays it).
    #[serde(default)]
    pub seed: u64,
    /// The modes beyond valid commands: `malformed-commands`, `config-commands`.
    #[serde(default)]
    pub modes: Vec<String>,
    #[serde(default)]
    pub clients: u32,
    /// Commands the server's table offered after the exclusions.
    #[serde(default)]
    pub commands_in_table: u64,
    /// Everything sent (commands and malformed framing), all clients.
    #[serde(default)]
    pub commands_sent: u64,
    #[serde(default)]
    pub seconds: f64,
    #[serde(default)]
    pub commands_per_sec: f64,
    /// Replies that were not errors.
    #[serde(default)]
    pub ok_replies: u64,
    /// Error replies by their first word (`ERR`, `WRONGTYPE`…), plus `timeout` and
    /// `disconnected`.
    #[serde(default)]
    pub errors_by_kind: BTreeMap<String, u64>,
    /// The server's `INFO errorstats` at the end (`errorstat_ERR` → count), when it answered.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_errorstats: BTreeMap<String, u64>,
    /// `survived`, `crashed` or `hung`.
    #[serde(default)]
    pub verdict: String,
    /// Why a crash or hang was decided (the connect error, the PING timeout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Each client's last command before the crash or hang (redacted), with its log number.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_sent: Vec<LastSent>,
    /// The fuzz log directory (`--fuzz-log`, or a temporary one for the reducer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_dir: Option<String>,
    /// The reducer's result, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<ReproducerRecord>,
}

/// A client's last command.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LastSent {
    #[serde(default)]
    pub client: String,
    #[serde(default)]
    pub seq: u64,
    #[serde(default)]
    pub command: String,
}

/// The reducer's answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReproducerRecord {
    /// The replayable trace of the reproducer (absent when the log did not reproduce).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Entries in the reproducer, and in the log it came from.
    #[serde(default)]
    pub entries: u64,
    #[serde(default)]
    pub from_entries: u64,
    /// Replays (server restarts) it took.
    #[serde(default)]
    pub attempts: u32,
    #[serde(default)]
    pub seconds: f64,
    /// A bound (attempts or time) ended the reduction: maybe not minimal.
    #[serde(default)]
    pub bounded: bool,
}
