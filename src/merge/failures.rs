//! The failure side of a merged test: requests lost by kind, reconnects and 100 ms slots in each
//! second, and the test's outages (issue 11's timeline).
//!
//! - Per-second counters (`lost` by kind, `reconnect_attempts`, `reconnects`) are **added** across
//!   the shards, like `completed` and `failed`.
//! - A merged second's ten `slots` are the shards' slots added slot by slot, kept only when
//!   every shard with requests in that second recorded its slots (a troubled second); when a
//!   shard had a quiet second there (no slots recorded), its completions cannot be placed in a
//!   slot, so the merged second has none rather than slots that do not add up to the second.
//!   Slots are placed by the rows' whole-second alignment (shards' starts differ by fractions of
//!   a second), so a merged slot is within that rounding.
//! - `outages` are the **union** of the shards' outages on the merged test's clock, not
//!   recomputed from merged slots (the slots are not all kept, and are aligned only to the
//!   second): each shard's outages are shifted by its exact start offset from the earliest
//!   shard, and outages that overlap are joined into one (earliest start, latest end, counts
//!   added, `until_end` if any was). An outage seen by one shard only is an outage of the
//!   merged run too: some of the load saw it.
//! - A cluster node's `lost` is added; its `outage` spans the shards' outages of that node on
//!   the merged clock (earliest start, latest end; no end if a shard saw none).

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde_json::{Map, Value, json};

/// The slot fields a row's slots hold.
const SLOT_FIELDS: [&str; 5] = [
    "completed",
    "failed",
    "lost",
    "reconnect_attempts",
    "reconnects",
];

/// Adds a shard row's `lost` (by kind) into the merged row `m`.
pub fn add_lost(m: &mut Map<String, Value>, row: &Value) {
    let mut lost: BTreeMap<String, u64> = m
        .get("lost")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
        .collect();
    for (k, v) in row["lost"].as_object().into_iter().flatten() {
        *lost.entry(k.clone()).or_default() += v.as_u64().unwrap_or(0);
    }
    m.insert("lost".into(), json!(lost));
}

/// Adds a shard row's slots into the merged row `m` (see the module comment). A shard row with
/// requests or reconnects but no slots spoils the merged row's slots (marked, then dropped by
/// [`finish_row`]).
pub fn add_slots(m: &mut Map<String, Value>, row: &Value) {
    let busy = ["completed", "failed", "reconnect_attempts"]
        .iter()
        .any(|k| row[*k].as_u64().unwrap_or(0) > 0);
    let Some(slots) = row["slots"].as_array() else {
        if busy {
            m.insert("slots_unplaced".into(), true.into());
        }
        return;
    };
    let mut sum: Vec<Map<String, Value>> = match m.get("slots").and_then(Value::as_array) {
        Some(have) => have.iter().filter_map(|s| s.as_object().cloned()).collect(),
        None => Vec::new(),
    };
    sum.resize_with(slots.len().max(sum.len()), || {
        SLOT_FIELDS
            .iter()
            .map(|f| ((*f).into(), 0u64.into()))
            .collect()
    });
    for (into, slot) in sum.iter_mut().zip(slots) {
        for f in SLOT_FIELDS {
            let n =
                into.get(f).and_then(Value::as_u64).unwrap_or(0) + slot[f].as_u64().unwrap_or(0);
            into.insert(f.into(), n.into());
        }
    }
    m.insert(
        "slots".into(),
        Value::Array(sum.into_iter().map(Value::Object).collect()),
    );
}

/// Drops the slots of a merged row that a quiet shard spoiled, and the marker.
pub fn finish_row(m: &mut Map<String, Value>) {
    if m.remove("slots_unplaced").is_some() {
        m.remove("slots");
    }
    for k in ["reconnect_attempts", "reconnects"] {
        m.entry(k).or_insert(0u64.into());
    }
    m.entry("lost").or_insert(json!({}));
}

/// One outage on the merged clock.
struct Span {
    start: f64,
    end: f64,
    counts: [u64; 4],
    until_end: bool,
}

/// The counts an outage carries, added when outages are joined.
const COUNTS: [&str; 4] = ["failed", "lost", "reconnect_attempts", "reconnects"];

/// The union of the shards' outages (see the module comment), in time order.
pub fn outages(tests: &[&Value], starts: &[Option<SystemTime>]) -> Value {
    let base = starts.iter().flatten().min().copied();
    let mut spans: Vec<Span> = Vec::new();
    for (test, start) in tests.iter().zip(starts) {
        let shift = match (base, start) {
            (Some(b), Some(s)) => s.duration_since(b).map_or(0.0, |d| d.as_secs_f64()),
            _ => 0.0,
        };
        for o in test["outages"].as_array().into_iter().flatten() {
            let f = |k: &str| o[k].as_f64().unwrap_or(0.0);
            spans.push(Span {
                start: f("start_s") + shift,
                end: f("end_s") + shift,
                counts: COUNTS.map(|k| o[k].as_u64().unwrap_or(0)),
                until_end: o["until_end"].as_bool().unwrap_or(false),
            });
        }
    }
    spans.sort_by(|a, b| a.start.total_cmp(&b.start));
    let mut joined: Vec<Span> = Vec::new();
    for s in spans {
        match joined.last_mut() {
            Some(last) if s.start <= last.end => {
                last.end = last.end.max(s.end);
                for (a, b) in last.counts.iter_mut().zip(s.counts) {
                    *a += b;
                }
                last.until_end |= s.until_end;
            }
            _ => joined.push(s),
        }
    }
    let tenth = |x: f64| (x * 10.0).round() / 10.0;
    joined
        .iter()
        .map(|s| {
            let mut o = json!({
                "start_s": tenth(s.start),
                "end_s": tenth(s.end),
                "duration_s": tenth(s.end - s.start),
                "until_end": s.until_end,
            });
            for (k, n) in COUNTS.iter().zip(s.counts) {
                o[*k] = n.into();
            }
            o
        })
        .collect()
}

/// Adds each merged cluster node's `lost` and `outage` (see the module comment) from the
/// shards' nodes of the same address.
pub fn node_outages(nodes: &mut Value, tests: &[&Value], starts: &[Option<SystemTime>]) {
    let base = starts.iter().flatten().min().copied();
    for node in nodes.as_array_mut().into_iter().flatten() {
        let addr = node["address"].clone();
        let (mut lost, mut start, mut end, mut open) = (0u64, None::<f64>, None::<f64>, false);
        for (test, st) in tests.iter().zip(starts) {
            let shift = match (base, st) {
                (Some(b), Some(s)) => s.duration_since(b).map_or(0.0, |d| d.as_secs_f64()),
                _ => 0.0,
            };
            for n in test["nodes"].as_array().into_iter().flatten() {
                if n["address"] != addr {
                    continue;
                }
                lost += n["lost"].as_u64().unwrap_or(0);
                let o = &n["outage"];
                let Some(s) = o["start_s"].as_f64() else {
                    continue;
                };
                start = Some(start.map_or(s + shift, |x: f64| x.min(s + shift)));
                match o["end_s"].as_f64() {
                    Some(e) => end = Some(end.map_or(e + shift, |x: f64| x.max(e + shift))),
                    None => open = true,
                }
            }
        }
        let tenth = |x: f64| (x * 10.0).round() / 10.0;
        node["lost"] = lost.into();
        node["outage"] = match start {
            None => Value::Null,
            Some(s) => {
                let e = if open { None } else { end };
                let last = tests
                    .iter()
                    .filter_map(|t| t["duration_s"].as_f64())
                    .fold(0.0, f64::max);
                json!({"start_s": tenth(s), "end_s": e.map(tenth),
                       "duration_s": tenth(e.unwrap_or(last.max(s)) - s)})
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timestamp::parse_time;

    #[test]
    fn a_nodes_lost_requests_add_and_its_outage_spans_the_shards() {
        let node =
            |lost: u64, outage: Value| json!({"address": "n1", "lost": lost, "outage": outage});
        let a = json!({"duration_s": 10.0, "nodes": [node(5, json!({"start_s": 2.0, "end_s": 3.0, "duration_s": 1.0}))]});
        let b = json!({"duration_s": 10.0, "nodes": [node(4, json!({"start_s": 2.5, "end_s": null, "duration_s": 7.5}))]});
        let starts = [
            parse_time("2026-01-01T00:00:00Z"),
            parse_time("2026-01-01T00:00:01Z"),
        ];
        let mut merged = json!([{"address": "n1"}]);
        node_outages(&mut merged, &[&a, &b], &starts);
        assert_eq!(merged[0]["lost"], 9);
        // b's outage starts at 3.5 s on the merged clock and never ends.
        assert_eq!(
            merged[0]["outage"],
            json!({"start_s": 2.0, "end_s": null, "duration_s": 8.0})
        );
        let mut quiet = json!([{"address": "n2"}]);
        node_outages(&mut quiet, &[&a, &b], &starts);
        assert_eq!(quiet[0]["outage"], Value::Null);
        assert_eq!(quiet[0]["lost"], 0);
    }
}
