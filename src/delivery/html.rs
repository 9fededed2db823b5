//! A `--pubsub`/`--stream` test's delivery block in its section: per run, what was owed and
//! what arrived (lost and duplicates), fan-out or acks, the receivers the server dropped, and the
//! seconds (how far receivers fell behind, the server's output buffer or the group's pending
//! entries and lag). The latency charts above it are the test's own (send → first delivery).
//!
//! Owns: those tables. With repetitions it shows the first repetition's block (counts of
//! different runs do not make a median). Must not: compute anything the record does not hold.

use std::fmt::Write as _;

use super::block::DeliveryRecord;
use crate::html::esc;
use crate::record::block::Side;

/// The block of each run of the test whose record has one (`compare::html` finds them by the
/// block's kind); nothing when none does.
pub(super) fn table(s: &mut String, sides: &[(Side, &DeliveryRecord)]) {
    let runs: Vec<(&str, &DeliveryRecord)> = sides
        .iter()
        .map(|(side, d)| (side.label.as_str(), *d))
        .collect();
    if runs.is_empty() {
        return;
    }
    s.push_str("<h3>Delivery</h3><table class=\"delivery\"><tr><th>run</th><th>mode</th>");
    s.push_str("<th>receivers</th><th>published</th><th>owed</th><th>delivered</th>");
    s.push_str("<th>lost</th><th>duplicates</th><th>fan-out / acked</th>");
    s.push_str("<th>dropped by the server</th></tr>");
    for (label, d) in &runs {
        let per = match (d.fanout, d.acked) {
            (Some(f), _) if d.published > 0 => format!("{:.1}", f as f64 / d.published as f64),
            (_, Some(a)) => format!("{a} acked"),
            _ => "-".into(),
        };
        let dropped = d.disconnects.iter().filter(|x| x.by_server).count();
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{dropped}</td></tr>",
            esc(label),
            esc(&d.mode),
            d.receivers,
            d.published,
            d.expected,
            d.delivered,
            d.lost,
            d.duplicates,
            esc(&per)
        );
    }
    s.push_str("</table>");
    for (label, d) in runs {
        nodes(s, label, d);
        seconds(s, label, d);
    }
}

/// `--cluster`: one run's nodes, and the slot moves it followed.
fn nodes(s: &mut String, label: &str, d: &DeliveryRecord) {
    if d.nodes.is_empty() {
        return;
    }
    let _ = write!(
        s,
        "<h4>{} per node</h4><table class=\"delivery-nodes\"><tr><th>node</th>\
         <th>channels</th><th>receivers</th><th>published</th><th>delivered</th></tr>",
        esc(label)
    );
    for n in &d.nodes {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&n.node),
            n.channels,
            n.receivers,
            n.published,
            n.delivered
        );
    }
    s.push_str("</table>");
    let (moved, again) = (d.moved.unwrap_or(0), d.resubscribed.unwrap_or(0));
    if moved > 0 || again > 0 {
        let _ = write!(
            s,
            "<p class=\"note\">slots moved during the test: {moved} MOVED followed by the \
             publishers, {again} subscriber(s) subscribed again on the new node</p>"
        );
    }
}

/// One run's seconds.
fn seconds(s: &mut String, label: &str, d: &DeliveryRecord) {
    if d.seconds.is_empty() {
        return;
    }
    let stream = d.mode == "stream";
    let _ = write!(
        s,
        "<h4>{} per second</h4><table class=\"delivery-seconds\"><tr><th>second</th>\
         <th>published</th><th>delivered</th><th>max latency ms</th><th>behind</th>{}</tr>",
        esc(label),
        if stream {
            "<th>pending</th><th>pending growth</th><th>lag</th>"
        } else {
            "<th>largest output buffer B</th>"
        }
    );
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    for r in &d.seconds {
        let latency = r
            .max_latency_us
            .map_or("-".to_string(), |us| format!("{:.3}", us / 1e3));
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{latency}</td><td>{}</td>",
            r.second, r.published, r.delivered, r.behind
        );
        if stream {
            let growth = r
                .pending_growth
                .map_or("-".to_string(), |g| format!("{g:+}"));
            let _ = write!(
                s,
                "<td>{}</td><td>{growth}</td><td>{}</td>",
                opt(r.pending),
                opt(r.server_lag)
            );
        } else {
            let _ = write!(s, "<td>{}</td>", opt(r.output_buffer_bytes));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    for x in d.disconnects.iter() {
        let _ = write!(
            s,
            "<p class=\"note\">receiver {} disconnected at {:.1} s: {}</p>",
            x.receiver,
            x.at_s,
            esc(&x.reason)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::block::{DeliveryNode, DeliverySecond, DisconnectRecord};

    #[test]
    fn the_block_shows_counts_seconds_and_drops() {
        let d = DeliveryRecord {
            mode: "pubsub".into(),
            receivers: 2,
            published: 10,
            expected: 20,
            delivered: 15,
            lost: 5,
            fanout: Some(15),
            disconnects: vec![DisconnectRecord {
                receiver: 1,
                at_s: 0.5,
                reason: "closed by the server <x>".into(),
                by_server: true,
                output_buffer_bytes: Some(9),
                ..DisconnectRecord::default()
            }],
            seconds: vec![DeliverySecond {
                behind: 4,
                output_buffer_bytes: Some(4096),
                ..DeliverySecond::default()
            }],
            ..DeliveryRecord::default()
        };
        let side = Side {
            label: "run".into(),
            ..Side::default()
        };
        let mut s = String::new();
        table(&mut s, &[(side, &d)]);
        assert!(
            s.contains("<td>15</td><td>5</td><td>0</td><td>1.5</td><td>1</td>"),
            "{s}"
        );
        assert!(s.contains("<td>4096</td>"), "{s}");
        assert!(s.contains("closed by the server &lt;x&gt;"), "{s}");
        assert!(!s.contains("per node"), "{s}");
        let mut none = String::new();
        table(&mut none, &[]);
        assert!(none.is_empty());
    }

    #[test]
    fn a_cluster_runs_nodes_and_moves_are_a_table() {
        let d = DeliveryRecord {
            mode: "pubsub".into(),
            nodes: vec![DeliveryNode {
                node: "127.0.0.1:7000".into(),
                channels: 3,
                receivers: 6,
                published: 300,
                delivered: 600,
            }],
            moved: Some(1),
            resubscribed: Some(2),
            ..DeliveryRecord::default()
        };
        let mut s = String::new();
        nodes(&mut s, "run", &d);
        assert!(
            s.contains("<td>127.0.0.1:7000</td><td>3</td><td>6</td><td>300</td><td>600</td>"),
            "{s}"
        );
        assert!(s.contains("1 MOVED followed"), "{s}");
    }
}
