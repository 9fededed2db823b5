//! The record's `replay` block (`respbench replay` only): which trace was replayed and how, what
//! was skipped, and the schedule as it ran (due and actual sends per second, slip).
//!
//! Every field defaults, so records without the block (every other run) and older readers are
//! unaffected; `merge` adds the shards' blocks ([`merged`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `respbench replay`'s block of the record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplayRecord {
    /// The trace's file name (without its directory); several traces' names joined by `, `.
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
    /// What the filter and the schedule did to the trace's entries besides sending them (in
    /// the record as fields of the block).
    #[serde(flatten)]
    pub filtered: Filtered,
    /// Largest slip (actual send after intended), ms.
    pub max_slip_ms: f64,
    /// One row per second from the replay's start.
    pub seconds: Vec<ReplaySecond>,
    /// `--cluster`: how the commands were routed (`null` without `--cluster`, and in records
    /// written before it existed).
    pub cluster: Option<ReplayCluster>,
}

/// What the filter and the schedule did to a trace's entries besides sending them: those not
/// sent, by why, and the `SELECT`s added. The schedule counts into it (`schedule::Counts`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Filtered {
    /// Skipped commands by name (`FLUSHALL`, `CONFIG SET`, `AUTH`).
    pub skipped: BTreeMap<String, u64>,
    /// Commands run by scripts (MONITOR's `[0 lua]`): not sent, their EVAL/FCALL was.
    pub from_scripts: u64,
    /// Entries that were not commands (malformed framing in a fuzz log).
    pub raw: u64,
    /// Outside `--start`/`--end`.
    pub outside_window: u64,
    /// Clients of other shards (`--shard`).
    pub other_shards: u64,
    /// `SELECT`s the replay added because a connection's database differed from the entry's
    /// (folded clients, or a capture that began after a client's own `SELECT`).
    pub selects_added: u64,
}

/// `replay --cluster`: each command went to the primary owning its keys' slot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplayCluster {
    /// Commands scheduled to each primary (`host:port`), from the slot map read at the start.
    pub routed: BTreeMap<String, u64>,
    /// Commands whose keys fall in more than one slot (the server would answer CROSSSLOT): not
    /// sent, by command name.
    pub crossslot: BTreeMap<String, u64>,
    /// MULTI/EXEC blocks whose keys span slots: skipped whole, and the commands they held.
    pub multi_across_slots: u64,
    pub multi_commands_skipped: u64,
    /// `-MOVED` and `-ASK` replies followed (the command sent again to the node named).
    pub moved: u64,
    pub ask: u64,
}

impl ReplayCluster {
    /// Two shards' routing added up.
    fn add(&mut self, b: &ReplayCluster) {
        for (k, v) in &b.routed {
            *self.routed.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &b.crossslot {
            *self.crossslot.entry(k.clone()).or_default() += v;
        }
        self.multi_across_slots += b.multi_across_slots;
        self.multi_commands_skipped += b.multi_commands_skipped;
        self.moved += b.moved;
        self.ask += b.ask;
    }
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

/// The block of a merged replay (`respbench merge` of `--shard` replays): what each shard sent
/// and opened added, second by second; what every shard read alike (the trace, its entries,
/// skips and script lines, since each shard reads the whole trace) taken from the first.
/// `None` when no input has a block.
pub fn merged<'a>(blocks: impl Iterator<Item = &'a ReplayRecord>) -> Option<ReplayRecord> {
    let mut out: Option<ReplayRecord> = None;
    for b in blocks {
        let Some(o) = out.as_mut() else {
            out = Some(ReplayRecord {
                shard: None,
                filtered: Filtered {
                    other_shards: 0,
                    ..b.filtered.clone()
                },
                ..b.clone()
            });
            continue;
        };
        o.sent += b.sent;
        o.connections += b.connections;
        o.clients += b.clients;
        o.filtered.selects_added += b.filtered.selects_added;
        o.max_slip_ms = o.max_slip_ms.max(b.max_slip_ms);
        match (&mut o.cluster, &b.cluster) {
            (Some(x), Some(y)) => x.add(y),
            (None, Some(y)) => o.cluster = Some(y.clone()),
            _ => {}
        }
        if o.seconds.len() < b.seconds.len() {
            o.seconds.resize(b.seconds.len(), ReplaySecond::default());
        }
        for (x, y) in o.seconds.iter_mut().zip(&b.seconds) {
            // The mean of the union: each side's mean weighted by its sends.
            let sent = x.sent + y.sent;
            if sent > 0 {
                x.slip_mean_ms =
                    (x.slip_mean_ms * x.sent as f64 + y.slip_mean_ms * y.sent as f64) / sent as f64;
            }
            x.due += y.due;
            x.sent = sent;
            x.slip_max_ms = x.slip_max_ms.max(y.slip_max_ms);
            if x.sent_slots.len() < y.sent_slots.len() {
                x.sent_slots.resize(y.sent_slots.len(), 0);
            }
            for (a, b) in x.sent_slots.iter_mut().zip(&y.sent_slots) {
                *a += b;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_shards_add_their_cluster_routing() {
        let shard = |node: &str, n: u64, ask: u64| ReplayRecord {
            sent: n,
            cluster: Some(ReplayCluster {
                routed: [(node.to_string(), n)].into_iter().collect(),
                crossslot: [("MSET".to_string(), 1)].into_iter().collect(),
                multi_across_slots: 1,
                multi_commands_skipped: 3,
                moved: 0,
                ask,
            }),
            ..Default::default()
        };
        let (a, b) = (shard("a:1", 5, 1), shard("b:2", 7, 2));
        let m = merged([&a, &b].into_iter()).unwrap();
        assert_eq!(m.sent, 12);
        let c = m.cluster.unwrap();
        assert_eq!(c.routed.values().sum::<u64>(), 12);
        assert_eq!(c.routed.len(), 2);
        assert_eq!(c.crossslot["MSET"], 2);
        assert_eq!((c.multi_across_slots, c.multi_commands_skipped), (2, 6));
        assert_eq!(c.ask, 3);
        // A record from before `--cluster` existed reads with no cluster part.
        let old: ReplayRecord = serde_json::from_str(r#"{"trace":"t","sent":3}"#).unwrap();
        assert_eq!(old.cluster, None);
    }
}
