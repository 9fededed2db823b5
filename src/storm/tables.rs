//! The storm's tables in `compare` and the HTML report ([`Block::tables`]): its speed and
//! stages side by side, its failures by stage and kind, the client-side limits, the server's
//! side.
//!
//! [`Block::tables`]: crate::record::block::Block::tables

use super::block::StormRecord;
use crate::record::block::Table;

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// The storm's tables, each only when some side has its figures: the speed and stages, the
/// failures by stage and kind, the client-side limits with the figure that ran out, and the
/// server's side (its counters and CPU).
pub fn tables(storms: &[(String, &StormRecord)]) -> Vec<Table> {
    if storms.is_empty() {
        return Vec::new();
    }
    let mut out = vec![Table {
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
        rows: storms.iter().map(|(l, s)| storm_row(l, s)).collect(),
    }];
    out.extend(storm_failure_tables(storms));
    out.extend(storm_server_table(storms));
    out
}

/// The failures by stage and kind, and the client-side limits with the figure that ran out.
fn storm_failure_tables(storms: &[(String, &StormRecord)]) -> Vec<Table> {
    let mut out = Vec::new();
    let failures: Vec<Vec<String>> = storms
        .iter()
        .flat_map(|(l, s)| {
            s.failures.iter().map(move |f| {
                vec![
                    l.clone(),
                    f.stage.clone(),
                    f.kind.clone(),
                    f.side.clone(),
                    f.count.to_string(),
                    f.message.clone().unwrap_or_else(|| "-".into()),
                ]
            })
        })
        .collect();
    if !failures.is_empty() {
        out.push(Table {
            title: "Storm failures",
            note: "failed connections by stage and kind; by client: a limit of the client's \
                   machine, not the server",
            head: vec!["side", "stage", "kind", "by", "count", "first message"],
            rows: failures,
        });
    }
    let limits: Vec<Vec<String>> = storms
        .iter()
        .flat_map(|(l, s)| {
            s.client_limits.iter().map(move |c| {
                vec![
                    l.clone(),
                    c.kind.clone(),
                    c.failures.to_string(),
                    c.figure.clone(),
                ]
            })
        })
        .collect();
    if !limits.is_empty() {
        out.push(Table {
            title: "Storm client-side limits",
            note: "what ran out on the client's machine (apart from the server's refusals)",
            head: vec!["side", "limit", "failures", "the figure that ran out"],
            rows: limits,
        });
    }
    out
}

/// The server's side of each storm that read it: its counters and the watch's figures.
fn storm_server_table(storms: &[(String, &StormRecord)]) -> Option<Table> {
    let server: Vec<Vec<String>> = storms
        .iter()
        .filter(|(_, s)| {
            s.connections_received.is_some()
                || s.connected_clients_after.is_some()
                || !s.server.is_empty()
        })
        .map(|(l, s)| storm_server_row(l, s))
        .collect();
    (!server.is_empty()).then(|| Table {
        title: "Storm server side",
        note: "INFO before and after, and the server watch: rejected_connections summed \
                   over the watched servers, CPU (% of a core) and connected_clients peak the \
                   busiest server's",
        head: vec![
            "side",
            "connections received",
            "connected_clients after",
            "rejected_connections",
            "connected_clients peak",
            "server CPU %",
        ],
        rows: server,
    })
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

/// A storm's server side: `-` for a figure not read (`--no-server-stats`, a refused `INFO`).
fn storm_server_row(label: &str, s: &StormRecord) -> Vec<String> {
    let count = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let watched = !s.server.is_empty();
    let rejected = watched.then(|| {
        s.server
            .iter()
            .map(|w| w.counters.rejected_connections)
            .sum::<u64>()
    });
    let peak = s
        .server
        .iter()
        .filter_map(|w| w.connected_clients_peak)
        .max();
    let cpu = s
        .server
        .iter()
        .filter_map(|w| w.cpu_pct)
        .fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.max(c))));
    vec![
        label.to_string(),
        count(s.connections_received),
        count(s.connected_clients_after),
        count(rejected),
        count(peak),
        cpu.map_or("-".into(), |c| format!("{c:.1}")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::costs::tests::table;
    use crate::compare::costs::text;
    use crate::compare::input::{Format, Input};

    fn storm_side(label: &str, storms: Vec<StormRecord>) -> Input {
        let runs = storms
            .iter()
            .map(|s| {
                let mut b = crate::record::block::Blocks::default();
                b.put(s);
                b
            })
            .collect();
        Input {
            costs: crate::compare::input::Costs {
                runs,
                ..crate::compare::input::Costs::default()
            },
            ..crate::compare::fixtures::input(label, Format::Respbench, vec![])
        }
    }

    #[test]
    fn a_storms_failures_limits_and_server_side_are_tables() {
        use crate::record::document::ServerTestRecord;
        use crate::storm::block::{ClientLimitRecord, StormFailure};
        let watched = |cpu: f64, rejected: u64, peak: u64| {
            let mut w = ServerTestRecord {
                cpu_pct: Some(cpu),
                connected_clients_peak: Some(peak),
                ..ServerTestRecord::default()
            };
            w.counters.rejected_connections = rejected;
            w
        };
        let refused = StormRecord {
            attempted: 20,
            failed: 20,
            failures: vec![
                StormFailure {
                    stage: "command".into(),
                    kind: "maxclients".into(),
                    side: "server".into(),
                    count: 14,
                    message: Some("ERR max number of clients reached".into()),
                },
                StormFailure {
                    stage: "connect".into(),
                    kind: "local_ports".into(),
                    side: "client".into(),
                    count: 6,
                    message: None,
                },
            ],
            client_limits: vec![ClientLimitRecord {
                kind: "local_ports".into(),
                failures: 6,
                figure: "ephemeral ports 40000-40005 (6 ports), 6 sockets in TIME_WAIT".into(),
            }],
            connections_received: Some(15),
            connected_clients_after: Some(3),
            // A cluster's two nodes: rejections add up, CPU and the peak are the busiest's.
            server: vec![watched(12.5, 10, 3), watched(40.0, 4, 2)],
            ..StormRecord::default()
        };
        let quiet = StormRecord {
            completed: 5,
            ..StormRecord::default()
        };
        let text = text(&[
            storm_side("a", vec![quiet.clone()]),
            storm_side("b", vec![refused, quiet]),
        ]);
        // A side of two runs (comma-separated files) has a row per run.
        let speed = table(&text, "Connection storm");
        let names: Vec<String> = speed.iter().map(|r| r[..2].join(" ")).collect();
        assert_eq!(names, ["a 0.0", "b #1", "b #2"], "{text}");
        let failures = table(&text, "Storm failures");
        assert_eq!(
            failures[0],
            [
                "b",
                "#1",
                "command",
                "maxclients",
                "server",
                "14",
                "ERR",
                "max",
                "number",
                "of",
                "clients",
                "reached"
            ],
            "{text}"
        );
        assert_eq!(
            failures[1],
            ["b", "#1", "connect", "local_ports", "client", "6", "-"],
            "{text}"
        );
        let limits = table(&text, "Storm client-side limits");
        assert_eq!(
            limits[0][..5],
            ["b", "#1", "local_ports", "6", "ephemeral"],
            "{text}"
        );
        assert!(
            text.contains("40000-40005 (6 ports), 6 sockets in TIME_WAIT"),
            "{text}"
        );
        let server = table(&text, "Storm server side");
        assert_eq!(
            server.len(),
            1,
            "only the storm with server figures: {text}"
        );
        assert_eq!(
            server[0],
            ["b", "#1", "15", "3", "14", "3", "40.0"],
            "{text}"
        );
    }
}
