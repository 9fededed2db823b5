//! memtier's per-second `Time-Serie` of each row of `--json-out-file` (`Sets`, `Gets`, a
//! `--command`'s row, `Totals`): per second its count, bytes each way and latency from the
//! write (average and accumulated, ms), added up from the connections' seconds by command kind
//! (`record::client_seconds`, which memtier mode always keeps, as memtier keeps each client's
//! seconds). `Totals` adds the second's percentiles and maximum from the test's timeline
//! (`record::TimelineRow`, the whole test's per-second histogram).
//!
//! A command row's seconds carry no percentiles: respbench keeps a latency histogram per second
//! for the whole test, not per command (memtier keeps one per row). A row whose kind was folded
//! with another row's (more than `metrics::CONN_KINDS` commands) has no `Time-Serie` rather than
//! a share of another's.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::metrics::CONN_KINDS;
use crate::record::TestRecord;

/// The row each command kind of `t`'s connection seconds counts for (`None`: a folded kind that
/// holds several rows' commands). `by_line`: `--command-stats-breakdown=line`; `arbitrary`:
/// the `--command` table (no `Waits` row).
pub fn kind_rows(t: &TestRecord, by_line: bool, arbitrary: bool) -> Vec<Option<String>> {
    let row_of = |name: &str| -> String {
        if !arbitrary && (name == "WAIT" || name.starts_with("WAIT#")) {
            return "Waits".into();
        }
        let base = match by_line {
            true => name,
            false => name.split('#').next().unwrap_or(name),
        };
        super::stats::row_name(base)
    };
    if t.mix.is_empty() {
        return vec![Some(row_of(&t.name.to_ascii_uppercase()))];
    }
    let mut kinds: Vec<Option<String>> = Vec::with_capacity(CONN_KINDS);
    for (j, m) in t.mix.iter().enumerate() {
        let row = row_of(&m.name);
        if j < CONN_KINDS {
            kinds.push(Some(row));
        } else if kinds[CONN_KINDS - 1].as_deref() != Some(row.as_str()) {
            // Folded into the last kind with another row's command.
            kinds[CONN_KINDS - 1] = None;
        }
    }
    kinds
}

/// One second's sums over the kinds asked.
#[derive(Default)]
struct Sums {
    count: u64,
    latency_us: f64,
    rx: u64,
    tx: u64,
}

/// Per second, the sums of the kinds `take` accepts (`None` without connection seconds).
fn sums(t: &TestRecord, take: &dyn Fn(usize) -> bool) -> Option<BTreeMap<u64, Sums>> {
    let conns = t.client_seconds.as_ref()?;
    let mut out: BTreeMap<u64, Sums> = BTreeMap::new();
    for s in conns.iter().flat_map(|c| &c.seconds) {
        let e = out.entry(s.second).or_default();
        for k in (0..s.requests.len()).filter(|&k| take(k)) {
            e.count += s.requests[k];
            e.latency_us += s.latency_us.get(k).copied().unwrap_or(0.0);
            e.rx += s.rx_bytes.get(k).copied().unwrap_or(0);
            e.tx += s.tx_bytes.get(k).copied().unwrap_or(0);
        }
    }
    Some(out)
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// A second's entry from its sums.
fn entry(s: &Sums) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("Count".into(), json!(s.count));
    m.insert("Bytes RX".into(), json!(s.rx));
    m.insert("Bytes TX".into(), json!(s.tx));
    let ms = s.latency_us / 1000.0;
    m.insert("Accumulated Latency".into(), json!(ms.round() as u64));
    if s.count > 0 {
        m.insert("Average Latency".into(), json!(round3(ms / s.count as f64)));
    }
    m
}

/// The `Time-Serie` of row `row` of test `t`, whose kinds count for the rows `kinds` names.
pub fn row_series(t: &TestRecord, kinds: &[Option<String>], row: &str) -> Value {
    if row == "Totals" {
        return totals(t);
    }
    if kinds.iter().any(Option::is_none) {
        return Value::Object(Map::new());
    }
    let mine = |k: usize| kinds.get(k).is_some_and(|r| r.as_deref() == Some(row));
    let Some(by_second) = sums(t, &mine) else {
        return Value::Object(Map::new());
    };
    let mut m = Map::new();
    for second in seconds(t, &by_second) {
        let s = entry(by_second.get(&second).unwrap_or(&Sums::default()));
        m.insert(second.to_string(), Value::Object(s));
    }
    Value::Object(m)
}

/// The seconds a series has: the timeline's (so every row and `Totals` have the same ones),
/// or the connections' in a record without a timeline.
fn seconds(t: &TestRecord, by_second: &BTreeMap<u64, Sums>) -> Vec<u64> {
    match t.timeline.is_empty() {
        false => t.timeline.iter().map(|s| s.second as u64).collect(),
        true => by_second.keys().copied().collect(),
    }
}

/// `Totals`: every kind's sums, and the timeline's percentiles and maximum of the second.
fn totals(t: &TestRecord) -> Value {
    let by_second = sums(t, &|_| true);
    let mut m = Map::new();
    for s in &t.timeline {
        let mut e = match by_second.as_ref().and_then(|b| b.get(&(s.second as u64))) {
            Some(sums) => entry(sums),
            None => {
                let mut e = Map::new();
                e.insert("Count".into(), json!(s.completed));
                e
            }
        };
        e.insert("Max Latency".into(), json!(round3(s.max_us / 1000.0)));
        e.insert("p50.00".into(), json!(round3(s.p50_us / 1000.0)));
        e.insert("p99.00".into(), json!(round3(s.p99_us / 1000.0)));
        m.insert(s.second.to_string(), Value::Object(e));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::client_seconds::{ClientSecondRow, ClientSecondsRecord};
    use crate::record::document::MixRecord;
    use crate::record::timeline::TimelineRow;

    fn second(second: u64, requests: [u64; CONN_KINDS], latency_us: f64) -> ClientSecondRow {
        ClientSecondRow {
            second,
            requests: requests.to_vec(),
            latency_us: requests.iter().map(|&n| n as f64 * latency_us).collect(),
            rx_bytes: requests.iter().map(|&n| n * 5).collect(),
            tx_bytes: requests.iter().map(|&n| n * 30).collect(),
            ..ClientSecondRow::default()
        }
    }

    fn test(names: &[&str]) -> TestRecord {
        TestRecord {
            mix: (names.iter())
                .map(|n| MixRecord {
                    name: n.to_string(),
                    ..MixRecord::default()
                })
                .collect(),
            timeline: (0..2)
                .map(|s| TimelineRow {
                    second: s,
                    completed: 7,
                    p50_us: 100.0,
                    p99_us: 200.0,
                    max_us: 300.0,
                    ..TimelineRow::default()
                })
                .collect(),
            client_seconds: Some(vec![
                ClientSecondsRecord {
                    thread: 0,
                    client: 0,
                    seconds: vec![
                        second(0, [2, 1, 4, 0], 500.0),
                        second(1, [1, 0, 0, 0], 250.0),
                    ],
                },
                ClientSecondsRecord {
                    thread: 1,
                    client: 0,
                    seconds: vec![second(0, [2, 0, 0, 0], 1500.0)],
                },
            ]),
            ..TestRecord::default()
        }
    }

    #[test]
    fn lines_of_one_command_add_up_in_their_rows_series() {
        let t = test(&["SET", "SET#2", "GET", "GET#2"]);
        let kinds = kind_rows(&t, false, true);
        assert_eq!(
            kinds,
            [
                Some("Sets".into()),
                Some("Sets".into()),
                Some("Gets".into()),
                Some("Gets".into())
            ]
        );
        let sets = row_series(&t, &kinds, "Sets");
        // Second 0: kinds 0 and 1 of both connections: 2 + 1 + 2 requests.
        assert_eq!(sets["0"]["Count"], 5);
        assert_eq!(sets["0"]["Bytes RX"], 25);
        assert_eq!(sets["0"]["Bytes TX"], 150);
        // (3 × 0.5 ms + 2 × 1.5 ms) / 5
        assert_eq!(sets["0"]["Average Latency"], 0.9);
        assert_eq!(sets["1"]["Count"], 1);
        let gets = row_series(&t, &kinds, "Gets");
        assert_eq!(gets["0"]["Count"], 4);
        assert_eq!(gets["1"]["Count"], 0);
        assert!(gets["1"].get("Average Latency").is_none());
        let totals = row_series(&t, &kinds, "Totals");
        assert_eq!(totals["0"]["Count"], 9);
        assert_eq!(totals["0"]["p99.00"], 0.2);
        assert!(totals["0"]["Average Latency"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn by_line_each_line_is_its_own_row_and_a_folded_kind_has_no_rows() {
        let t = test(&["SET", "SET#2", "GET", "GET#2"]);
        let kinds = kind_rows(&t, true, true);
        assert_eq!(row_series(&t, &kinds, "Set#2s")["0"]["Count"], 1);
        let many = test(&["SET", "GET", "INCR", "HSET", "LPUSH"]);
        let kinds = kind_rows(&many, false, true);
        assert_eq!(kinds[3], None);
        assert_eq!(row_series(&many, &kinds, "Sets"), json!({}));
        assert_eq!(row_series(&many, &kinds, "Totals")["0"]["Count"], 9);
    }
}
