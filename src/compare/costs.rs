//! What a connection and a key cost the server, side by side: the connection storms'
//! (`--connect-storm`) connects per second and stage latencies, and the memory per key of the
//! tests that measured it (`--fill`, `--memory-per-key`), beside the speed table; and what the
//! delivery tests (`--pubsub`, `--stream`) delivered, lost and duplicated, which a latency
//! column cannot say (a side that lost half its messages can look fast). `compare` prints these
//! tables after its own (text and Markdown); the HTML report draws them as tables. Respbench
//! records only.

use crate::record::delivery::DeliveryRecord;
use crate::record::memory::MemoryRecord;
use crate::record::storm::StormRecord;

use super::input::Input;

/// A side's storm and memory figures (from the first file that has each).
#[derive(Clone, Debug, Default)]
pub struct Costs {
    pub storm: Option<StormRecord>,
    /// Each test that measured memory per key, by test name, in record order.
    pub memory: Vec<(String, MemoryRecord)>,
    /// A `respbench replay` record's block (the HTML report's replay section).
    pub replay: Option<crate::record::replay::ReplayRecord>,
}

impl Costs {
    /// Adds a later file's figures where the side has none yet.
    pub fn absorb(&mut self, other: Costs) {
        if self.storm.is_none() {
            self.storm = other.storm;
        }
        if self.replay.is_none() {
            self.replay = other.replay;
        }
        for (name, m) in other.memory {
            if !self.memory.iter().any(|(n, _)| *n == name) {
                self.memory.push((name, m));
            }
        }
    }
}

/// One table: its title, column heads and rows of cells.
pub struct Table {
    pub title: &'static str,
    pub note: &'static str,
    pub head: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
}

/// The storm table (a row per side with a storm) and the memory table (a row per test and
/// side), each only when some side has its figures.
pub fn tables(inputs: &[Input]) -> Vec<Table> {
    let mut out = Vec::new();
    let storms: Vec<Vec<String>> = inputs
        .iter()
        .filter_map(|i| i.costs.storm.as_ref().map(|s| storm_row(&i.label, s)))
        .collect();
    if !storms.is_empty() {
        out.push(Table {
            title: "Connection storm",
            note: "connections that finished every stage; latencies in ms",
            head: vec![
                "side",
                "connects/s",
                "completed",
                "failed (server)",
                "failed (client)",
                "total p50",
                "total p99",
                "stages p50 / p99",
            ],
            rows: storms,
        });
    }
    let mut memory = Vec::new();
    for input in inputs {
        for (test, m) in &input.costs.memory {
            memory.push(memory_row(test, &input.label, m));
        }
    }
    if !memory.is_empty() {
        memory.sort_by(|a, b| a[0].cmp(&b[0]));
        out.push(Table {
            title: "Memory per key",
            note: "bytes per key added; overhead = used_memory per key less the key and value bytes",
            head: vec![
                "test", "side", "type", "keys added", "used_memory", "overhead", "rss",
                "dataset", "allocator", "server", "read",
            ],
            rows: memory,
        });
    }
    let delivery = delivery_rows(inputs);
    if !delivery.is_empty() {
        out.push(Table {
            title: "Message delivery",
            note: "counts summed over the repetitions; lost = owed and never delivered",
            head: vec![
                "test",
                "side",
                "mode",
                "receivers",
                "owed",
                "delivered",
                "lost",
                "duplicates",
                "acked",
                "dropped by server",
            ],
            rows: delivery,
        });
    }
    out
}

/// A row per delivery test and side: its repetitions' counts added up.
fn delivery_rows(inputs: &[Input]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for input in inputs {
        for test in &input.tests {
            let blocks: Vec<&DeliveryRecord> = test
                .samples
                .iter()
                .filter_map(|s| s.detail.as_ref()?.delivery.as_ref())
                .collect();
            let Some(first) = blocks.first() else {
                continue;
            };
            let sum = |f: fn(&DeliveryRecord) -> u64| blocks.iter().map(|d| f(d)).sum::<u64>();
            let acked: Option<u64> = blocks.iter().map(|d| d.acked).sum();
            let dropped: usize = blocks
                .iter()
                .map(|d| d.disconnects.iter().filter(|x| x.by_server).count())
                .sum();
            rows.push(vec![
                test.name.clone(),
                input.label.clone(),
                first.mode.clone(),
                first.receivers.to_string(),
                sum(|d| d.expected).to_string(),
                sum(|d| d.delivered).to_string(),
                sum(|d| d.lost).to_string(),
                sum(|d| d.duplicates).to_string(),
                acked.map_or("-".into(), |a| a.to_string()),
                dropped.to_string(),
            ]);
        }
    }
    rows.sort_by(|a, b| a[0].cmp(&b[0]));
    rows
}

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

fn storm_row(label: &str, s: &StormRecord) -> Vec<String> {
    let client: u64 = s.client_limits.iter().map(|l| l.failures).sum();
    let stages: Vec<String> = s
        .stages
        .iter()
        .map(|st| {
            format!(
                "{} {}/{}",
                st.name,
                ms(st.latency_us.p50),
                ms(st.latency_us.p99)
            )
        })
        .collect();
    vec![
        label.to_string(),
        format!("{:.1}", s.connects_per_s),
        s.completed.to_string(),
        s.server_failures().to_string(),
        client.to_string(),
        ms(s.total.latency_us.p50),
        ms(s.total.latency_us.p99),
        stages.join(", "),
    ]
}

fn memory_row(test: &str, label: &str, m: &MemoryRecord) -> Vec<String> {
    let per = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    vec![
        test.to_string(),
        label.to_string(),
        m.data_type.clone(),
        m.keys_added.to_string(),
        per(m.used_memory.bytes_per_key),
        per(m.used_memory.overhead_per_key),
        per(m.used_memory_rss.bytes_per_key),
        per(m.used_memory_dataset.as_ref().and_then(|d| d.bytes_per_key)),
        m.allocator.clone(),
        m.server_version.clone(),
        if m.read.starts_with("after rehashing") {
            "rehashed".into()
        } else if m.read.starts_with("after used_memory") {
            "steady".into()
        } else {
            "still rehashing".into()
        },
    ]
}

/// The tables as aligned text (empty without any).
pub fn text(inputs: &[Input]) -> String {
    let mut s = String::new();
    for t in tables(inputs) {
        let widths: Vec<usize> = (0..t.head.len())
            .map(|c| {
                t.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([t.head[c].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        s.push_str(&format!("\n{} ({})\n", t.title, t.note));
        let line = |cells: Vec<&str>| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            format!("  {}\n", padded.join("  ").trim_end())
        };
        s.push_str(&line(t.head.clone()));
        for r in &t.rows {
            s.push_str(&line(r.iter().map(String::as_str).collect()));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::input::{Detail, Format, Sample, Test};
    use crate::record::delivery::DisconnectRecord;

    fn side(label: &str, reps: &[(u64, u64, bool)]) -> Input {
        let samples = reps
            .iter()
            .map(|&(expected, delivered, dropped)| Sample {
                detail: Some(Box::new(Detail {
                    delivery: Some(DeliveryRecord {
                        mode: "pubsub".into(),
                        receivers: 10,
                        expected,
                        delivered,
                        lost: expected - delivered,
                        disconnects: vec![DisconnectRecord {
                            by_server: dropped,
                            ..DisconnectRecord::default()
                        }],
                        ..DeliveryRecord::default()
                    }),
                    ..Detail::default()
                })),
                ..Sample::default()
            })
            .collect();
        Input {
            label: label.into(),
            files: vec![],
            format: Format::Respbench,
            server: None,
            facts: vec![],
            find_max: None,
            problems: vec![],
            costs: Costs::default(),
            tests: vec![Test {
                name: "PUBLISH -> SUBSCRIBE".into(),
                samples,
            }],
        }
    }

    #[test]
    fn delivery_counts_are_a_table_per_side_summed_over_repetitions() {
        let a = side("valkey", &[(100, 100, false), (100, 100, false)]);
        let b = side("redis", &[(100, 60, true), (100, 100, false)]);
        let text = text(&[a, b]);
        assert!(text.contains("Message delivery ("), "{text}");
        let row = |side: &str| {
            text.lines()
                .find(|l| l.contains(side))
                .unwrap_or_else(|| panic!("no {side} row: {text}"))
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            row("valkey"),
            "PUBLISH -> SUBSCRIBE valkey pubsub 10 200 200 0 0 - 0"
        );
        assert_eq!(
            row("redis"),
            "PUBLISH -> SUBSCRIBE redis pubsub 10 200 160 40 0 - 1"
        );
    }

    #[test]
    fn no_delivery_test_no_table() {
        let mut a = side("x", &[]);
        a.tests[0].samples.push(Sample::default());
        assert!(!text(&[a]).contains("Message delivery"));
    }
}
