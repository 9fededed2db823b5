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
