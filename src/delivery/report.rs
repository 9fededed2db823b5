//! The full report's lines for a `--pubsub`/`--stream` test, from its record block: what was
//! owed and what arrived (lost and duplicate messages named even when zero, since "every message
//! exactly once" is the question), fan-out or acks, receivers the server dropped and whether its
//! buffer limit did it, and the seconds (how far receivers fell behind, what the server held).

use std::io::{self, Write};

use super::block::DeliveryRecord;

/// Writes the delivery block (after the test's latency report).
pub(super) fn write_delivery(out: &mut impl Write, d: &DeliveryRecord) -> io::Result<()> {
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
    writeln!(out, "  {}", operations(d))?;
    for x in &d.disconnects {
        let back = x
            .reconnected_at_s
            .map_or(String::new(), |s| format!("; subscribed again at {s:.1} s"));
        writeln!(
            out,
            "  receiver {} disconnected at {:.1} s: {}{back}",
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

/// The test's operations by their names: publishes (or `XADD`s) and deliveries, each per second
/// over the seconds it published in (a delivery test's "requests" above are its deliveries).
fn operations(d: &DeliveryRecord) -> String {
    let publish = if d.mode == "stream" {
        "XADDs"
    } else {
        "publishes"
    };
    let span = d.seconds.iter().filter(|s| s.published > 0).count().max(1) as f64;
    let delivered: u64 = d.seconds.iter().map(|s| s.delivered).sum();
    format!(
        "operations: {} {publish} ({:.0} per second published in), {} deliveries ({:.0} per second)",
        d.published,
        d.published as f64 / span,
        d.delivered,
        delivered as f64 / (d.seconds.len().max(1) as f64),
    )
}

/// What held the test back, judged from its own figures, not the request/response verdict's:
/// receivers that fell behind or were dropped (the subscribers' or the server's fan-out), or
/// publishers short of the rate asked (their round trips), or the rate asked itself; "can't
/// tell" when the figures say neither clearly.
pub(super) fn own_limit(d: &DeliveryRecord) -> String {
    let dropped = d.disconnects.iter().filter(|x| x.by_server).count();
    let behind = d.seconds.iter().map(|s| s.behind).max().unwrap_or(0);
    if d.publish_errors > 0 && d.published == 0 {
        return "the server: no publish succeeded".into();
    }
    if d.lost > 0 || dropped > 0 {
        return format!(
            "the receivers: {} deliveries lost, {dropped} dropped by the server, up to {behind} messages behind",
            d.lost
        );
    }
    // Seconds wholly inside the publishing (not its first or last, which are partial).
    let full: Vec<u64> = d
        .seconds
        .iter()
        .filter(|s| s.published > 0)
        .map(|s| s.published)
        .collect();
    let inner = full.get(1..full.len().saturating_sub(1)).unwrap_or(&[]);
    match d.rate {
        Some(rate) if !inner.is_empty() => {
            let slowest = inner.iter().copied().min().unwrap_or(0);
            if slowest as f64 >= 0.95 * rate as f64 {
                format!("the rate asked (--rps {rate}): published at it, every receiver kept up")
            } else if (slowest as f64) < 0.8 * rate as f64 {
                format!(
                    "the publishers: {slowest} messages in their slowest second of {rate}/s asked (each waits for its reply)"
                )
            } else {
                "can't tell (published near, not at, the rate asked)".into()
            }
        }
        None if !inner.is_empty() => {
            "the publishers' round trips (no --rps: each publisher waits for its reply); every receiver kept up"
                .into()
        }
        _ => "can't tell (too short to judge: under three seconds of publishing)".into(),
    }
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
    use crate::delivery::block::{DeliverySecond, DisconnectRecord};

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
        use crate::delivery::block::DeliveryNode;
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

    #[test]
    fn a_delivery_test_is_limited_by_its_own_figures() {
        let second = |published, behind| DeliverySecond {
            published,
            behind,
            ..DeliverySecond::default()
        };
        let mut d = DeliveryRecord {
            mode: "pubsub".into(),
            rate: Some(100),
            published: 400,
            seconds: (0..4).map(|_| second(100, 0)).collect(),
            ..DeliveryRecord::default()
        };
        assert!(own_limit(&d).starts_with("the rate asked (--rps 100)"));
        d.seconds = (0..4).map(|_| second(50, 0)).collect();
        assert!(own_limit(&d).starts_with("the publishers: 50 messages"));
        d.seconds = (0..4).map(|_| second(90, 0)).collect();
        assert!(own_limit(&d).starts_with("can't tell"));
        d.lost = 7;
        assert!(own_limit(&d).starts_with("the receivers: 7 deliveries lost"));
        d.lost = 0;
        d.seconds.truncate(2);
        assert!(own_limit(&d).starts_with("can't tell (too short"));
        assert!(operations(&d).starts_with("operations: 400 publishes"));
    }
}
