//! The record's `fuzz` block (`--fuzz` runs only): what was sent, how the server answered, and
//! whether it survived; with a crash or hang, the log and the reducer's reproducer. Every field
//! defaults, so records of other runs (and older ones) read as before. Held by the record
//! through [`Block`] (`record::block`): a killed fuzz run's block is rebuilt from its journal
//! here; a fuzz run is not merged (it has no shards) nor drawn in `compare`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::record::block::{self, Block, Recovered, Side, Table};

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
    /// Error replies by their first word (`ERR`, `WRONGTYPE`…), plus `timeout`,
    /// `disconnected` and `connection refused` (a server at `maxclients`).
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

impl Block for FuzzRecord {
    const KEY: &'static str = "fuzz";
    const AT: u8 = block::RUN;
    /// The block's head: seed, modes, clients, the table's commands, the log.
    type Head = FuzzRecord;

    /// A fuzz run is not a benchmark: a merged record has no fuzz block.
    fn merge(_: &[(&str, Option<&Self>)]) -> Result<Option<Self>, String> {
        Ok(None)
    }

    fn tables(_: &[(Side, &Self)]) -> Vec<Table> {
        Vec::new()
    }

    /// A killed fuzz run's block: its head as the `begin` line holds it, and from the seconds'
    /// sums the commands sent (each client counts its writes), the replies that were not errors
    /// (the completed ones), and the errors by kind (the seconds' error words, and their
    /// requests lost without a reply by kind: `timeout`, `connection refused`, the rest `disconnected`, as the clients
    /// name them). Its verdict is `survived`, as a Ctrl-C's while the server answered: a crash or
    /// hang stops the clients and the run writes its record.
    fn recover(head: FuzzRecord, sums: &Recovered) -> Option<Self> {
        let sent = sums.issued.unwrap_or(0);
        let mut errors: BTreeMap<String, u64> = BTreeMap::new();
        for (word, n) in &sums.errors {
            *errors.entry(word.clone()).or_default() += n;
        }
        for (kind, n) in sums.lost.iter().filter(|(_, n)| *n > 0) {
            let name = match *kind {
                "timeout" => "timeout",
                "connection refused" => "connection refused",
                _ => "disconnected",
            };
            *errors.entry(name.to_string()).or_default() += n;
        }
        Some(FuzzRecord {
            commands_sent: sent,
            seconds: sums.seconds as f64,
            commands_per_sec: sent as f64 / sums.seconds as f64,
            ok_replies: sums.completed,
            errors_by_kind: errors,
            verdict: "survived".into(),
            ..head
        })
    }
}
