//! The `Totals` row's per-second `Time-Serie` in memtier's `--json-out-file`: per second its
//! count, bytes each way and latency from the write (average and accumulated, ms), added up
//! from the connections' seconds (`record::client_seconds`, which memtier mode always keeps, as
//! memtier keeps each client's seconds), with the second's percentiles and maximum from the
//! test's timeline (`record::TimelineRow`, the whole test's per-second histogram).
//!
//! The command rows' `Time-Serie` stays empty: memtier's suite reads percentiles, min and max
//! in every row's seconds (`tests_oss_simple_flow.py`), and respbench keeps a latency
//! histogram per second for the whole test only, not per command; a row's seconds without
//! them would be read as broken rather than partial.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::record::TestRecord;

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

/// `Totals`' series: every kind's sums, and the timeline's percentiles and maximum of the
/// second.
pub fn totals(t: &TestRecord) -> Value {
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
    use crate::metrics::CONN_KINDS;
    use crate::record::client_seconds::{ClientSecondRow, ClientSecondsRecord};
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

    #[test]
    fn totals_seconds_add_every_connections_kinds_with_the_timelines_percentiles() {
        let t = TestRecord {
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
        };
        let ts = totals(&t);
        assert_eq!(ts["0"]["Count"], 9);
        assert_eq!(ts["0"]["Bytes RX"], 45);
        assert_eq!(ts["0"]["Bytes TX"], 270);
        // (7 × 0.5 ms + 2 × 1.5 ms) / 9
        assert_eq!(ts["0"]["Average Latency"], 0.722);
        assert_eq!(ts["0"]["p99.00"], 0.2);
        assert_eq!(ts["1"]["Count"], 1);
        // Without connection seconds (a record of an earlier build): the timeline's count.
        let old = TestRecord {
            client_seconds: None,
            ..t
        };
        assert_eq!(totals(&old)["1"]["Count"], 7);
        assert!(totals(&old)["1"].get("Average Latency").is_none());
    }
}
