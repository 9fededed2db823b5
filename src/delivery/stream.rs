//! `--stream`: producers `XADD` stamped entries to one stream (the run's own key, deleted and
//! created afresh with its consumer group), K consumers of one group read them with
//! `XREADGROUP … BLOCK` and `XACK` each batch, on a few threads' poll loops (`consumers.rs`). The group owes every entry to exactly one
//! consumer, so one tally is shared by all consumers (a lock per read batch): an entry delivered
//! twice, to any consumer, is a duplicate.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use resp::Value;

use super::conn::{self, Args, Command};
use super::consumers;
use super::monitor::{self, Probe};
use super::route::{Nodes, Router};
use super::seconds;
use super::tally::Tally;
use super::{DeliveryResult, DeliverySpec, Live, Mode};
use crate::engine::control::{ControlConn, error_text};
use crate::engine::{ConnSetup, EngineError, Observer};

/// The consumer group's name.
pub(super) const GROUP: &[u8] = b"respbench";
/// Entries per `XREADGROUP`.
pub(super) const COUNT: &[u8] = b"128";
/// `XREADGROUP`'s `BLOCK`, ms. The consumers' poll loops watch the stop flags themselves, so a
/// long block only spares the server an idle consumer's reads (1,500 consumers at 100 ms were
/// 15,000 empty reads a second).
pub(super) const BLOCK_MS: &[u8] = b"1000";
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
    let readers = (0..consumers)
        .map(|_| super::connect::open(setup))
        .collect::<Result<Vec<_>, _>>()?;
    let mut producers = (0..spec.publishers)
        .map(|_| Router::open(nodes))
        .collect::<Result<Vec<_>, _>>()?;
    // Each entry is owed to one consumer of the group.
    let exact = observer.exact_seconds();
    let live = Live::new(vec![1], consumers as usize, interrupted, exact);
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
    let threads = spec.threads.clamp(1, consumers as usize);
    let mut shares: Vec<Vec<(u32, ControlConn)>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, c) in readers.into_iter().enumerate() {
        shares[i % threads].push((i as u32, c));
    }
    let group = consumers::Group {
        live: &live,
        tally: &shared,
        key: &add.key,
    };
    let (published, ends, (rows, _)) = std::thread::scope(|s| {
        let monitor =
            s.spawn(|| monitor::watch(std::slice::from_ref(setup), &live, &probe, &behind));
        let loops: Vec<_> = shares
            .into_iter()
            .map(|share| {
                let group = &group;
                s.spawn(move || consumers::run(group, share))
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
        waiting.wait(&|| loops.iter().all(|h| h.is_finished()), observer);
        let ends: Vec<_> = loops.into_iter().filter_map(|h| h.join().ok()).collect();
        live.stop.store(true, Ordering::Relaxed);
        (published, ends, monitor.join().unwrap_or_default())
    });
    let mut tally = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    tally.hand_rest(&live.timeline);
    let acked = ends.iter().map(|e| e.acked).sum();
    let disconnects = ends.into_iter().flat_map(|e| e.disconnects);
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
