//! Once a second during a delivery test: how far the receivers are behind (client side, from the
//! shared counters) and what the server holds for them (pub/sub: the largest subscriber output
//! buffer, `CLIENT LIST`'s `omem` of the clients subscribed; streams: the group's pending entries and lag,
//! `XINFO GROUPS`). Its own connection, so a slow reply delays a sample, never a delivery; a
//! server that refuses a command leaves that column empty.

use std::sync::atomic::Ordering;
use std::time::Duration;

use resp::Value;

use super::Live;
use super::block::{DeliverySecond, DisconnectRecord};
use crate::engine::ConnSetup;
use crate::engine::control::ControlConn;

/// What the monitor asks the server.
#[derive(Clone, Debug)]
pub(super) enum Probe<'a> {
    /// `CLIENT LIST TYPE pubsub` on every node, and each subscriber's node (index into the
    /// nodes watched) and `CLIENT ID` there (to see which the server dropped).
    PubSub {
        ids: &'a [std::sync::Mutex<super::subscribe::SubscriberId>],
    },
    /// `XINFO GROUPS key`, the group's name.
    Stream { key: Vec<u8>, group: Vec<u8> },
}

/// How often the server is asked: four times a row, so a subscriber dropped within a second is
/// placed within a quarter of one.
const PROBE_EVERY: Duration = Duration::from_millis(250);

/// Samples the servers (`nodes`: one, or each cluster node the test uses; a stream's probe
/// asks the first) every [`PROBE_EVERY`] and closes a row every second until `live.stop`;
/// `behind` says how far receivers are behind now. Returns the rows (the cumulative delivery
/// count turned into per-second ones; the publishers count their own seconds exactly) and the
/// subscribers the server dropped.
pub(super) fn watch(
    nodes: &[ConnSetup],
    live: &Live,
    probe: &Probe<'_>,
    behind: &dyn Fn() -> u64,
) -> (Vec<DeliverySecond>, Vec<DisconnectRecord>) {
    let open = |setup: &ConnSetup| {
        let mut c = super::connect::open(setup).ok()?;
        c.set_timeout(Duration::from_secs(1)).ok()?;
        Some(c)
    };
    let mut control: Vec<Option<ControlConn>> = nodes.iter().map(open).collect();
    let mut seen = Seen::default();
    let mut rows = Vec::new();
    let mut delivered = 0u64;
    for second in 0u32.. {
        let mut row = DeliverySecond {
            second,
            ..DeliverySecond::default()
        };
        for quarter in 1..=4u32 {
            let end = live.origin + PROBE_EVERY * (second * 4 + quarter);
            while std::time::Instant::now() < end && !live.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(10));
            }
            // A connection that failed (the server restarted) is opened again.
            for (c, setup) in control.iter_mut().zip(nodes) {
                if c.is_none() {
                    *c = open(setup);
                }
            }
            sample(&mut control, probe, live, &mut row, &mut seen);
            if live.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        let d: u64 = live
            .received
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .sum();
        row.delivered = d.saturating_sub(delivered);
        row.behind = behind();
        delivered = d.max(delivered);
        let stopped = live.stop.load(Ordering::Relaxed);
        // The last, partial row only when something happened in it.
        if !stopped || row.delivered > 0 {
            rows.push(row);
        }
        if stopped {
            break;
        }
    }
    (rows, seen.drops)
}

/// What the pub/sub probes have seen of each subscriber's connection.
#[derive(Default)]
struct Seen {
    /// The last output buffer seen, per subscriber.
    omem: Vec<Option<u64>>,
    /// The connection (`CLIENT ID`) last taken for dropped, per subscriber: a subscriber that
    /// reconnected (`-e`) can be dropped again.
    dropped: Vec<Option<u64>>,
    drops: Vec<DisconnectRecord>,
}

fn sample(
    nodes: &mut [Option<ControlConn>],
    probe: &Probe<'_>,
    live: &Live,
    row: &mut DeliverySecond,
    seen: &mut Seen,
) {
    match probe {
        Probe::PubSub { ids } => {
            let id_of = |i: usize| *ids[i].lock().unwrap_or_else(|e| e.into_inner());
            let before: Vec<_> = (0..ids.len()).map(id_of).collect();
            // Each node's clients, all of them: a subscriber whose channel's slot moved has
            // been unsubscribed by the server (gone from `TYPE pubsub`) but keeps its
            // connection until it has subscribed on the new node. A node that did not answer
            // is skipped this time.
            let mut lists: Vec<Option<Vec<ClientLine>>> = Vec::with_capacity(nodes.len());
            for slot in nodes.iter_mut() {
                let reply = slot
                    .as_mut()
                    .map(|c| c.call(&[b"CLIENT".as_slice(), b"LIST"]));
                if let Some(Err(_)) = reply {
                    *slot = None;
                }
                lists.push(
                    reply
                        .and_then(Result::ok)
                        .and_then(|r| Some(client_lines(r.as_str()?))),
                );
            }
            let subscribers = lists.iter().flatten().flatten().filter(|c| c.pubsub);
            let largest = subscribers.map(|c| c.omem).max();
            row.output_buffer_bytes = row.output_buffer_bytes.max(largest);
            seen.omem.resize(ids.len(), None);
            seen.dropped.resize(ids.len(), None);
            for (i, was) in before.into_iter().enumerate() {
                // Moved to another connection while the lists were read: next time.
                let Some((node, id)) = was.filter(|_| id_of(i) == was) else {
                    continue;
                };
                let Some(Some(clients)) = lists.get(node) else {
                    continue;
                };
                match clients.iter().find(|c| c.id == id) {
                    Some(c) => seen.omem[i] = Some(c.omem),
                    // Gone from the list: dropped, unless its subscriber had ended (it sets
                    // `finished` before closing, so a finished one is never taken for dropped).
                    None if !live.finished[i].load(Ordering::Acquire)
                        && seen.dropped[i] != Some(id) =>
                    {
                        seen.dropped[i] = Some(id);
                        seen.drops.push(dropped(i, live, seen.omem[i]));
                    }
                    None => {}
                }
            }
        }
        Probe::Stream { key, group } => {
            let Some(Some(c)) = nodes.first_mut() else {
                return;
            };
            if let Ok(reply) = c.call(&[b"XINFO".as_slice(), b"GROUPS", key]) {
                let (pending, lag) = group_figures(&reply, group);
                row.pending = pending;
                row.server_lag = lag;
            }
        }
    }
}

/// Subscriber `i`, gone from the server's client list while it was still reading.
fn dropped(i: usize, live: &Live, omem: Option<u64>) -> DisconnectRecord {
    let last = omem.map_or(String::new(), |b| {
        format!("; its output buffer was last seen at {b} bytes")
    });
    DisconnectRecord {
        receiver: i as u32,
        at_s: live.origin.elapsed().as_secs_f64(),
        reason: format!(
            "closed by the server (gone from CLIENT LIST while still subscribed{last})"
        ),
        by_server: true,
        output_buffer_bytes: omem,
        reconnected_at_s: None,
    }
}

/// One `CLIENT LIST` line's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct ClientLine {
    pub id: u64,
    pub omem: u64,
    /// Subscribed to something (`flags` has `P`).
    pub pubsub: bool,
}

/// Each `CLIENT LIST` line that has an `id` and an `omem`.
pub(super) fn client_lines(text: &str) -> Vec<ClientLine> {
    text.lines()
        .filter_map(|line| {
            let field = |name: &str| {
                line.split(' ')
                    .find_map(|f| f.strip_prefix(name))
                    .and_then(|v| v.parse::<u64>().ok())
            };
            let flags = line.split(' ').find_map(|f| f.strip_prefix("flags="));
            Some(ClientLine {
                id: field("id=")?,
                omem: field("omem=")?,
                pubsub: flags.is_some_and(|f| f.contains('P')),
            })
        })
        .collect()
}

/// `pending` and `lag` of `group` in an `XINFO GROUPS` reply (RESP2 flat arrays or RESP3 maps).
pub(super) fn group_figures(reply: &Value, group: &[u8]) -> (Option<u64>, Option<u64>) {
    let Value::Array(groups) = reply else {
        return (None, None);
    };
    for g in groups {
        let pairs: Vec<(&Value, &Value)> = match g {
            Value::Array(flat) => flat
                .chunks(2)
                .filter_map(|p| Some((p.first()?, p.get(1)?)))
                .collect(),
            Value::Map(m) => m.iter().map(|(k, v)| (k, v)).collect(),
            _ => continue,
        };
        let field = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k.as_str() == Some(name))
                .map(|(_, v)| *v)
        };
        let is_ours = field("name").and_then(Value::as_str).map(str::as_bytes) == Some(group);
        if is_ours {
            let int = |v: Option<&Value>| match v {
                Some(Value::Integer(n)) => u64::try_from(*n).ok(),
                _ => None,
            };
            return (int(field("pending")), int(field("lag")));
        }
    }
    (None, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_output_buffer_is_found_in_client_list() {
        let text = "id=3 addr=127.0.0.1:1 flags=P omem=0 tot-mem=100 cmd=subscribe\n\
                    id=4 addr=127.0.0.1:2 flags=P omem=81920 tot-mem=9 cmd=subscribe\n\
                    id=5 addr=127.0.0.1:3 flags=N omem=0 tot-mem=9 cmd=client|list\n";
        let line = |id, omem, pubsub| ClientLine { id, omem, pubsub };
        assert_eq!(
            client_lines(text),
            [line(3, 0, true), line(4, 81920, true), line(5, 0, false)]
        );
        assert!(client_lines("").is_empty());
    }

    #[test]
    fn a_groups_pending_and_lag_are_read_in_both_protocols() {
        let bulk = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let flat = Value::Array(vec![Value::Array(vec![
            bulk("name"),
            bulk("g"),
            bulk("pending"),
            Value::Integer(7),
            bulk("lag"),
            Value::Integer(3),
        ])]);
        assert_eq!(group_figures(&flat, b"g"), (Some(7), Some(3)));
        assert_eq!(group_figures(&flat, b"other"), (None, None));
        let map = Value::Array(vec![Value::Map(vec![
            (bulk("name"), bulk("g")),
            (bulk("pending"), Value::Integer(1)),
            (bulk("lag"), Value::Null),
        ])]);
        assert_eq!(group_figures(&map, b"g"), (Some(1), None));
    }
}
