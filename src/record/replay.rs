//! The record's `replay` block (`respbench replay` only): which trace was replayed and how, what
//! was skipped, and the schedule as it ran (due and actual sends per second, slip).
//!
//! Every field defaults, so records without the block (every other run) and older readers are
//! unaffected; `merge` keeps the first shard's block as it keeps its options.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `respbench replay`'s block of the record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplayRecord {
    /// The trace's file name (without its directory).
    pub trace: String,
    /// The trace's span in the window replayed, seconds (first to last entry).
    pub span_s: f64,
    /// `--speed` (`null`: `max`, no schedule).
    pub speed: Option<f64>,
    pub loops: u32,
    /// `--start`/`--end` in seconds into the trace (`null`: not given).
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    pub warmup_s: f64,
    /// `--shard I/N` as `I/N`.
    pub shard: Option<String>,
    /// Entries read, commands sent, connections opened, distinct clients of the trace.
    pub entries: u64,
    pub sent: u64,
    pub connections: u64,
    pub clients: u64,
    /// Skipped commands by name (`FLUSHALL`, `CONFIG SET`, `AUTH`).
    pub skipped: BTreeMap<String, u64>,
    /// Commands run by scripts (MONITOR's `[0 lua]`): not sent, their EVAL/FCALL was.
    pub from_scripts: u64,
    /// Entries that were not commands.
    pub raw: u64,
    pub outside_window: u64,
    pub other_shards: u64,
    pub selects_added: u64,
    /// Largest slip (actual send after intended), ms.
    pub max_slip_ms: f64,
    /// One row per second from the replay's start.
    pub seconds: Vec<ReplaySecond>,
}

/// One second of the schedule.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplaySecond {
    /// Commands whose intended time fell in this second.
    pub due: u64,
    /// Commands actually written in this second.
    pub sent: u64,
    /// Largest and mean slip of the commands written in this second, ms.
    pub slip_max_ms: f64,
    pub slip_mean_ms: f64,
    /// Commands written in each 100 ms of the second (ten entries).
    pub sent_slots: Vec<u64>,
}
