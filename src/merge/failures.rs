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

use std::time::SystemTime;

use crate::record::document::{NodeOutageRecord, NodeRecord, TestRecord};
use crate::record::timeline::{OutageRecord, SlotRow, TimelineRow};

/// Adds a shard row's slots into the merged row `m` (see the module comment). A shard row with
/// requests or reconnects but no slots spoils the merged row's slots: `unplaced` is set, and the
/// caller drops them once every shard is added.
pub fn add_slots(m: &mut TimelineRow, unplaced: &mut bool, row: &TimelineRow) {
    let busy = row.completed > 0 || row.failed > 0 || row.reconnect_attempts > 0;
    let Some(slots) = &row.slots else {
        *unplaced |= busy;
        return;
    };
    let sum = m.slots.get_or_insert_with(Vec::new);
    if sum.len() < slots.len() {
        sum.resize_with(slots.len(), SlotRow::default);
    }
    for (into, slot) in sum.iter_mut().zip(slots) {
        // Saturating: a corrupt slot (bounded by nothing but its row) must not wrap.
        into.completed = into.completed.saturating_add(slot.completed);
        into.failed = into.failed.saturating_add(slot.failed);
        into.lost = into.lost.saturating_add(slot.lost);
        into.reconnect_attempts = into
            .reconnect_attempts
            .saturating_add(slot.reconnect_attempts);
        into.reconnects = into.reconnects.saturating_add(slot.reconnects);
        // The longest of the shards' longest: exact, as a maximum is.
        into.max_us = match (into.max_us, slot.max_us) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
}

/// Seconds from the earliest start (`base`) to `start`; 0 when either is unknown.
fn offset(base: Option<SystemTime>, start: Option<SystemTime>) -> f64 {
    match (base, start) {
        (Some(b), Some(s)) => s.duration_since(b).map_or(0.0, |d| d.as_secs_f64()),
        _ => 0.0,
    }
}

/// Tenths of a second, as the record writes outages.
fn tenth(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The union of the shards' outages (see the module comment), in time order.
pub fn outages(tests: &[&TestRecord], starts: &[Option<SystemTime>]) -> Vec<OutageRecord> {
    let base = starts.iter().flatten().min().copied();
    let mut spans: Vec<OutageRecord> = Vec::new();
    for (test, start) in tests.iter().zip(starts) {
        let shift = offset(base, *start);
        for o in &test.outages {
            spans.push(OutageRecord {
                start_s: o.start_s + shift,
                end_s: o.end_s + shift,
                ..o.clone()
            });
        }
    }
    spans.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    let mut joined: Vec<OutageRecord> = Vec::new();
    for s in spans {
        match joined.last_mut() {
            Some(last) if s.start_s <= last.end_s => {
                last.end_s = last.end_s.max(s.end_s);
                last.failed = last.failed.saturating_add(s.failed);
                last.lost = last.lost.saturating_add(s.lost);
                last.reconnect_attempts =
                    last.reconnect_attempts.saturating_add(s.reconnect_attempts);
                last.reconnects = last.reconnects.saturating_add(s.reconnects);
                last.until_end |= s.until_end;
            }
            _ => joined.push(s),
        }
    }
    for o in &mut joined {
        o.duration_s = tenth(o.end_s - o.start_s);
        o.start_s = tenth(o.start_s);
        o.end_s = tenth(o.end_s);
    }
    joined
}

/// Adds each merged cluster node's `lost` and `outage` (see the module comment) from the
/// shards' nodes of the same address.
pub fn node_outages(
    nodes: &mut [NodeRecord],
    tests: &[&TestRecord],
    starts: &[Option<SystemTime>],
) {
    let base = starts.iter().flatten().min().copied();
    let last = tests.iter().map(|t| t.duration_s).fold(0.0, f64::max);
    for node in nodes {
        let (mut lost, mut start, mut end, mut open) = (0u64, None::<f64>, None::<f64>, false);
        for (test, st) in tests.iter().zip(starts) {
            let shift = offset(base, *st);
            for n in test.nodes.iter().filter(|n| n.address == node.address) {
                lost = lost.saturating_add(n.lost);
                let Some(o) = &n.outage else {
                    continue;
                };
                let s = o.start_s + shift;
                start = Some(start.map_or(s, |x: f64| x.min(s)));
                match o.end_s {
                    Some(e) => end = Some(end.map_or(e + shift, |x: f64| x.max(e + shift))),
                    None => open = true,
                }
            }
        }
        node.lost = lost;
        node.outage = start.map(|s| {
            let e = if open { None } else { end };
            NodeOutageRecord {
                start_s: tenth(s),
                end_s: e.map(tenth),
                duration_s: tenth(e.unwrap_or(last.max(s)) - s),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timestamp::parse_time;

    #[test]
    fn a_nodes_lost_requests_add_and_its_outage_spans_the_shards() {
        let node = |lost: u64, outage: NodeOutageRecord| NodeRecord {
            address: "n1".into(),
            lost,
            outage: Some(outage),
            ..NodeRecord::default()
        };
        let test = |n: NodeRecord| TestRecord {
            duration_s: 10.0,
            nodes: vec![n],
            ..TestRecord::default()
        };
        let a = test(node(
            5,
            NodeOutageRecord {
                start_s: 2.0,
                end_s: Some(3.0),
                duration_s: 1.0,
            },
        ));
        let b = test(node(
            4,
            NodeOutageRecord {
                start_s: 2.5,
                end_s: None,
                duration_s: 7.5,
            },
        ));
        let starts = [
            parse_time("2026-01-01T00:00:00Z"),
            parse_time("2026-01-01T00:00:01Z"),
        ];
        let named = |a: &str| NodeRecord {
            address: a.into(),
            ..NodeRecord::default()
        };
        let mut merged = [named("n1")];
        node_outages(&mut merged, &[&a, &b], &starts);
        assert_eq!(merged[0].lost, 9);
        // b's outage starts at 3.5 s on the merged clock and never ends.
        let o = merged[0].outage.as_ref().unwrap();
        assert_eq!((o.start_s, o.end_s, o.duration_s), (2.0, None, 8.0));
        let mut quiet = [named("n2")];
        node_outages(&mut quiet, &[&a, &b], &starts);
        assert!(quiet[0].outage.is_none());
        assert_eq!(quiet[0].lost, 0);
    }
}
