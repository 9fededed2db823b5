//! The full report's lines for a `--pubsub`/`--stream` test, from its record block: what was
//! owed and what arrived (lost and duplicate messages named even when zero, since "every message
//! exactly once" is the question), fan-out or acks, receivers the server dropped and whether its
//! buffer limit did it, and the seconds (how far receivers fell behind, what the server held).

use std::io::{self, Write};

use crate::record::delivery::DeliveryRecord;

/// Writes the delivery block (after the test's latency report).
pub fn write_delivery(out: &mut impl Write, d: &DeliveryRecord) -> io::Result<()> {
    let rate = d
        .rate
        .map_or("as fast as possible".to_string(), |r| format!("at {r}/s"));
    let who = match (d.mode.as_str(), d.channels, d.subscribe.as_deref()) {
        ("pubsub", Some(c), Some(how)) => {
            format!("{} subscribers ({how}) on {c} channel(s)", d.receivers)
        }
        _ => format!("a consumer group of {}", d.receivers),
    };
    writeln!(out, "Delivery ({}):", d.mode)?;
    writeln!(
        out,
        "  {who}, {} publisher(s), {} messages of {} bytes {rate}",
        d.publishers, d.messages, d.payload_bytes
    )?;
    writeln!(
        out,
        "  published {} ({} failed); owed {} deliveries: delivered {}, lost {}, duplicates {}",
        d.published, d.publish_errors, d.expected, d.delivered, d.lost, d.duplicates
    )?;
    if d.foreign > 0 {
        writeln!(
            out,
            "  {} messages that were not this run's were ignored",
            d.foreign
        )?;
    }
    if let Some(f) = d.fanout
        && d.published > 0
    {
        writeln!(
            out,
            "  fan-out {:.1} receivers per message (as the server counted them)",
            f as f64 / d.published as f64
        )?;
    }
    if let Some(a) = d.acked {
        writeln!(out, "  acknowledged {a} (XACK)")?;
    }
    for x in &d.disconnects {
        writeln!(
            out,
            "  receiver {} disconnected at {:.1} s: {}",
            x.receiver, x.at_s, x.reason
        )?;
    }
    match d.buffer_limit_disconnections {
        Some(n) if n > 0 => writeln!(
            out,
            "  the server disconnected {n} client(s) for exceeding client-output-buffer-limit"
        )?,
        _ => {}
    }
    write_nodes(out, d)?;
    write_seconds(out, d)
}

/// `--cluster`: each node's part, and the slot moves followed.
fn write_nodes(out: &mut impl Write, d: &DeliveryRecord) -> io::Result<()> {
    if d.nodes.is_empty() {
        return Ok(());
    }
    let moved = d.moved.unwrap_or(0);
    let resubscribed = d.resubscribed.unwrap_or(0);
    if moved > 0 || resubscribed > 0 {
        writeln!(
            out,
            "  slots moved during the test: {moved} MOVED followed by the publishers, \
             {resubscribed} subscriber(s) subscribed again on the new node"
        )?;
    }
    writeln!(
        out,
        "  node                     channels  receivers  published  delivered"
    )?;
    for n in &d.nodes {
        writeln!(
            out,
            "  {:<24} {:>8} {:>10} {:>10} {:>10}",
            n.node, n.channels, n.receivers, n.published, n.delivered
        )?;
    }
    Ok(())
}

fn write_seconds(out: &mut impl Write, d: &DeliveryRecord) -> io::Result<()> {
    if d.seconds.is_empty() {
        return Ok(());
    }
    let stream = d.mode == "stream";
    let last = if stream {
        "pending (growth)   lag"
    } else {
        "output buffer"
    };
    writeln!(
        out,
        "  second  published  delivered  max latency  behind  {last}"
    )?;
    for s in &d.seconds {
        let latency = s
            .max_latency_us
            .map_or("-".to_string(), |us| format!("{:.3} ms", us / 1000.0));
        let tail = if stream {
            let dash = || "-".to_string();
            format!(
                "{:>7} ({:>+6})  {:>5}",
                s.pending.map_or_else(dash, |p| p.to_string()),
                s.pending_growth.map_or_else(dash, |g| format!("{g:+}")),
                s.server_lag.map_or_else(dash, |l| l.to_string()),
            )
        } else {
            s.output_buffer_bytes
                .map_or("-".to_string(), |b| format!("{b} B"))
        };
        writeln!(
            out,
            "  {:>6}  {:>9}  {:>9}  {:>11}  {:>6}  {tail}",
            s.second, s.published, s.delivered, latency, s.behind
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::delivery::{DeliverySecond, DisconnectRecord};

    #[test]
    fn the_block_names_losses_disconnections_and_the_buffer_limit() {
        let d = DeliveryRecord {
            mode: "pubsub".into(),
            receivers: 2,
            publishers: 1,
            channels: Some(1),
            subscribe: Some("channel".into()),
            messages: 100,
            published: 100,
            expected: 200,
            delivered: 150,
            lost: 50,
            fanout: Some(200),
            disconnects: vec![DisconnectRecord {
                receiver: 1,
                at_s: 1.5,
                reason: "closed".into(),
                ..DisconnectRecord::default()
            }],
            buffer_limit_disconnections: Some(1),
            seconds: vec![DeliverySecond {
                second: 0,
                behind: 40,
                output_buffer_bytes: Some(2048),
                ..DeliverySecond::default()
            }],
            ..DeliveryRecord::default()
        };
        let mut out = Vec::new();
        write_delivery(&mut out, &d).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("delivered 150, lost 50, duplicates 0"),
            "{text}"
        );
        assert!(text.contains("fan-out 2.0"), "{text}");
        assert!(
            text.contains("receiver 1 disconnected at 1.5 s: closed"),
            "{text}"
        );
        assert!(text.contains("client-output-buffer-limit"), "{text}");
        assert!(text.contains("2048 B"), "{text}");
    }

    #[test]
    fn a_cluster_run_lists_its_nodes_and_the_moves_it_followed() {
        use crate::record::delivery::DeliveryNode;
        let node = |name: &str, published| DeliveryNode {
            node: name.into(),
            channels: 2,
            receivers: 4,
            published,
            delivered: 2 * published,
        };
        let mut d = DeliveryRecord {
            mode: "pubsub".into(),
            nodes: vec![node("127.0.0.1:7000", 100), node("127.0.0.1:7001", 300)],
            moved: Some(0),
            resubscribed: Some(0),
            ..DeliveryRecord::default()
        };
        let text = |d: &DeliveryRecord| {
            let mut out = Vec::new();
            write_delivery(&mut out, d).unwrap();
            String::from_utf8(out).unwrap()
        };
        let quiet = text(&d);
        assert!(quiet.contains("node  "), "{quiet}");
        assert!(
            quiet.contains("  127.0.0.1:7001                  2          4        300        600"),
            "{quiet}"
        );
        assert!(!quiet.contains("slots moved"), "{quiet}");
        d.moved = Some(3);
        d.resubscribed = Some(2);
        let moved = text(&d);
        assert!(moved.contains("3 MOVED followed"), "{moved}");
        assert!(
            moved.contains("2 subscriber(s) subscribed again"),
            "{moved}"
        );
        d.nodes.clear();
        assert!(!text(&d).contains("node  "));
    }
}
