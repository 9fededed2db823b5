//! `--stream`: producers `XADD` stamped entries to one stream (the run's own key, deleted and
//! created afresh with its consumer group), K consumers of one group read them with
//! `XREADGROUP … BLOCK` and `XACK` each batch. The group owes every entry to exactly one
//! consumer, so one tally is shared by all consumers (a lock per read batch): an entry delivered
//! twice, to any consumer, is a duplicate.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use resp::Value;

use super::conn::{self, Args, Command};
use super::monitor::{self, Probe};
use super::route::{Nodes, Router};
use super::seconds;
use super::tally::Tally;
use super::{DRAIN_IDLE, DRAIN_MAX, DeliveryResult, DeliverySpec, Disconnect, Live, Mode, stamp};
use crate::engine::control::{ControlConn, error_text};
use crate::engine::{ConnSetup, EngineError, Observer};

/// The consumer group's name.
const GROUP: &[u8] = b"respbench";
/// Entries per `XREADGROUP`.
const COUNT: &[u8] = b"128";
/// `XREADGROUP`'s `BLOCK`, ms: how often a consumer looks at the stop flags while idle.
const BLOCK_MS: &[u8] = b"100";
/// The field each entry's stamped payload is under.
const FIELD: &[u8] = b"m";

struct Add {
    key: Vec<u8>,
}

impl Command for Add {
    fn args<'a>(&'a self, _: u64, payload: &'a [u8]) -> (usize, Args<'a>) {
        (0, ([b"XADD", &self.key, b"*", FIELD, payload], 5))
    }
}

pub(super) fn run(
    spec: &DeliverySpec,
    nodes: &Nodes,
    interrupted: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<DeliveryResult, EngineError> {
    let Mode::Stream { consumers } = spec.mode else {
        unreachable!("stream::run is for --stream")
    };
    let add = Add {
        key: spec.stream_key(),
    };
    // The stream's node (in a cluster, the primary owning its key's slot): the group, the
    // consumers and the producers all go there.
    let setup = &nodes.setups[nodes.of_name[0]];
    let mut control = super::connect::open(setup)?;
    prepare(&mut control, &add.key, setup)?;
    let mut readers = (0..consumers)
        .map(|_| super::connect::open(setup))
        .collect::<Result<Vec<_>, _>>()?;
    let mut producers = (0..spec.publishers)
        .map(|_| Router::open(nodes))
        .collect::<Result<Vec<_>, _>>()?;
    // Each entry is owed to one consumer of the group.
    let exact = observer.exact_seconds();
    let live = Live::new(
        vec![1],
        (spec.publishers, consumers as usize),
        interrupted,
        exact,
    );
    let tally = Tally::new(spec.messages).keeping_exact(live.exact());
    let shared = Mutex::new(tally);
    let behind = || {
        let added = live.published[0].load(Ordering::Relaxed);
        let got: u64 = live
            .received
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .sum();
        added.saturating_sub(got)
    };
    let probe = Probe::Stream {
        key: add.key.clone(),
        group: GROUP.to_vec(),
    };
    let (published, ends, (rows, _)) = std::thread::scope(|s| {
        let monitor =
            s.spawn(|| monitor::watch(std::slice::from_ref(setup), &live, &probe, &behind));
        let consumers: Vec<_> = readers
            .iter_mut()
            .enumerate()
            .map(|(i, c)| {
                let (live, shared, key) = (&live, &shared, add.key.as_slice());
                s.spawn(move || {
                    let end = consume(c, live, shared, key, i as u32);
                    live.finished[i].store(true, Ordering::Release);
                    end
                })
            })
            .collect();
        let publishers: Vec<_> = producers
            .iter_mut()
            .enumerate()
            .map(|(i, c)| {
                let (live, add) = (&live, &add);
                s.spawn(move || conn::publish(spec, live, c, i as u32, add))
            })
            .collect();
        let mut waiting = seconds::Waiting::new(&live, spec.publishers);
        let ended = || publishers.iter().all(|h| h.is_finished());
        waiting.wait(&ended, observer);
        let published: Vec<_> = publishers
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect();
        live.publishing_done.store(true, Ordering::Relaxed);
        waiting.wait(&|| consumers.iter().all(|h| h.is_finished()), observer);
        let ends: Vec<_> = consumers.into_iter().map(|h| h.join().ok()).collect();
        live.stop.store(true, Ordering::Relaxed);
        (published, ends, monitor.join().unwrap_or_default())
    });
    let mut tally = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    tally.hand_rest(&live.timeline);
    let acked = ends.iter().flatten().map(|(a, _)| a).sum();
    let disconnects = ends.into_iter().flatten().filter_map(|(_, d)| d);
    let mut received = vec![Some((tally, None))];
    received.extend(disconnects.map(|d| Some((Tally::new(0), Some(d)))));
    let expected = live.published[0].load(Ordering::Relaxed);
    let home = &nodes.names[nodes.of_name[0]];
    let parts: Vec<Vec<(String, u64)>> = (0..consumers as usize)
        .map(|i| vec![(home.clone(), live.received[i].load(Ordering::Relaxed))])
        .collect();
    let per_node = super::result::per_node(nodes, &published, &parts);
    let mut result = super::result::finish(&live, &published, received, rows, expected);
    result.acked = Some(acked);
    result.nodes = per_node;
    Ok(result)
}

/// The stream afresh: the run's own key deleted, then created with the group at its end.
fn prepare(c: &mut ControlConn, key: &[u8], setup: &ConnSetup) -> Result<(), EngineError> {
    let fail = |what: &str, e: String| {
        EngineError::Other(format!("{}: {what} failed: {e}", setup.target.display()))
    };
    if let Some(e) = error_text(&c.call(&[b"DEL".as_slice(), key])?) {
        return Err(fail("DEL of the stream", e));
    }
    let create = [
        b"XGROUP".as_slice(),
        b"CREATE",
        key,
        GROUP,
        b"$",
        b"MKSTREAM",
    ];
    if let Some(e) = error_text(&c.call(&create)?) {
        return Err(fail("XGROUP CREATE", e));
    }
    Ok(())
}

/// Consumer `i`'s loop: read, count, acknowledge, until everything added is delivered after the
/// last `XADD`, the drain limits, a signal, or a failed connection. Returns the entries it
/// acknowledged and how it ended.
fn consume(
    c: &mut ControlConn,
    live: &Live,
    shared: &Mutex<Tally>,
    key: &[u8],
    i: u32,
) -> (u64, Option<Disconnect>) {
    let name = format!("c{i}").into_bytes();
    let read = [
        b"XREADGROUP".as_slice(),
        b"GROUP",
        GROUP,
        &name,
        b"COUNT",
        COUNT,
        b"BLOCK",
        BLOCK_MS,
        b"STREAMS",
        key,
        b">",
    ];
    // This consumer's first deliveries and their latency sum (the live progress).
    let (mut acked, mut mine, mut mine_ns) = (0u64, 0u64, 0u64);
    let mut last = Instant::now();
    let mut done_at: Option<Instant> = None;
    loop {
        if live.interrupted.load(Ordering::Relaxed) {
            return (acked, None);
        }
        if live.publishing_done.load(Ordering::Relaxed) {
            let since = *done_at.get_or_insert_with(Instant::now);
            let added = live.published[0].load(Ordering::Relaxed);
            let got: u64 = live
                .received
                .iter()
                .map(|a| a.load(Ordering::Relaxed))
                .sum();
            if got >= added || since.elapsed() > DRAIN_MAX || last.max(since).elapsed() > DRAIN_IDLE
            {
                return (acked, None);
            }
        }
        let reply = match c.call(&read) {
            // An error reply (the stream's slot moved away, the group was deleted) would come
            // back at once on every call: the consumer ends with it rather than spin.
            Ok(Value::Error(e)) => {
                let reason = format!("XREADGROUP failed: {}", String::from_utf8_lossy(&e));
                return (acked, Some(gone(live, i, reason)));
            }
            Ok(r) => r,
            Err(e) => return (acked, Some(gone(live, i, e.to_string()))),
        };
        // The ids are acknowledged straight from the reply (borrowed, not copied).
        let found = entries(&reply);
        let mut ack: Vec<&[u8]> = Vec::with_capacity(3 + found.len());
        ack.extend([b"XACK".as_slice(), key, GROUP]);
        let now = live.now_ns();
        {
            let mut guard = shared.lock().unwrap_or_else(|e| e.into_inner());
            let tally = &mut *guard;
            // The seconds the group has finished, to the test's timeline (`seconds.rs`).
            tally.hand(now, &live.timeline);
            for &(id, payload) in &found {
                ack.push(id);
                match stamp::read(payload) {
                    Some((sent, number)) if tally.receive(number, sent, now) => {
                        mine += 1;
                        mine_ns = mine_ns.saturating_add(now.saturating_sub(sent));
                        last = Instant::now();
                    }
                    // A duplicate (counted by `receive`).
                    Some(_) => {}
                    None => tally.stranger(now),
                }
            }
        }
        live.received[i as usize].store(mine, Ordering::Relaxed);
        live.latency_ns[i as usize].store(mine_ns, Ordering::Relaxed);
        if ack.len() > 3 {
            match c.call(&ack) {
                Ok(Value::Integer(n)) => acked += n.max(0) as u64,
                Ok(_) => {}
                Err(e) => return (acked, Some(gone(live, i, e.to_string()))),
            }
        }
    }
}

fn gone(live: &Live, i: u32, reason: String) -> Disconnect {
    Disconnect {
        receiver: i,
        at_s: live.origin.elapsed().as_secs_f64(),
        reason,
        by_server: false,
        output_buffer_bytes: None,
        reconnected_at_s: None,
    }
}

/// Each entry's id and its [`FIELD`] value in an `XREADGROUP` reply: RESP2
/// `[[key, [[id, [f, v, …]], …]]]` or RESP3 `{key: [[id, [f, v, …]], …]}`; a timeout is null.
pub(super) fn entries(reply: &Value) -> Vec<(&[u8], &[u8])> {
    let streams: Vec<&Value> = match reply {
        Value::Array(per_key) => per_key
            .iter()
            .filter_map(|s| match s {
                Value::Array(kv) => kv.get(1),
                _ => None,
            })
            .collect(),
        Value::Map(pairs) => pairs.iter().map(|(_, v)| v).collect(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for list in streams {
        let Value::Array(list) = list else { continue };
        for entry in list {
            let Value::Array(e) = entry else { continue };
            let (Some(Value::BulkString(id)), Some(Value::Array(fields))) = (e.first(), e.get(1))
            else {
                continue;
            };
            let value = fields.chunks(2).find_map(|p| match p {
                [Value::BulkString(f), Value::BulkString(v)] if f == FIELD => Some(v.as_slice()),
                _ => None,
            });
            if let Some(v) = value {
                out.push((id.as_slice(), v));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_in_both_protocols_and_a_timeout_is_none() {
        let bulk = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let entry = |id: &str, v: &str| {
            Value::Array(vec![bulk(id), Value::Array(vec![bulk("m"), bulk(v)])])
        };
        let list = Value::Array(vec![entry("1-0", "a"), entry("1-1", "b")]);
        let resp2 = Value::Array(vec![Value::Array(vec![bulk("s"), list.clone()])]);
        let resp3 = Value::Map(vec![(bulk("s"), list)]);
        let want: Vec<(&[u8], &[u8])> = vec![(b"1-0", b"a"), (b"1-1", b"b")];
        assert_eq!(entries(&resp2), want);
        assert_eq!(entries(&resp3), want);
        assert!(entries(&Value::Null).is_empty());
    }
}
