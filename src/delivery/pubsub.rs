//! `--pubsub`: N subscribers (channels, patterns or sharded channels; RESP2 arrays or RESP3
//! pushes alike), each confirmed subscribed before the first message is published; publishers
//! send `-n` stamped messages round the channels; each subscriber counts every message once
//! (`Tally`) and notes when the server drops it. Subscriber `i` listens to channel `i mod C`, so
//! a message on channel `k` is owed to every subscriber of `k`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use resp::Value;

use super::conn::{self, Args, Command};
use super::connect;
use super::monitor::{self, Probe};
use super::resubscribe::{Follow, is_sunsubscribe};
use super::route::{Nodes, Router};
use super::seconds;
use super::subscribe::{SubscriberId, subscribe};
use super::tally::Tally;
use super::{DRAIN_IDLE, DeliveryResult, DeliverySpec, Disconnect, Live, Mode, stamp};
use crate::engine::control::ControlConn;
use crate::engine::{EngineError, Observer};
use crate::watch::Info;

/// The most receivers wait after the last publish (a slow subscriber's backlog is counted as
/// lost beyond it, so the run stays bounded).
pub(super) const DRAIN_MAX: Duration = Duration::from_secs(3);

/// The pub/sub mode's names and commands.
struct Names {
    channels: Vec<Vec<u8>>,
    publish: &'static [u8],
}

impl Command for Names {
    fn args<'a>(&'a self, number: u64, payload: &'a [u8]) -> (usize, Args<'a>) {
        let k = (number % self.channels.len() as u64) as usize;
        let ch = self.channels[k].as_slice();
        (k, ([self.publish, ch, payload, b"", b""], 3))
    }
}

pub(super) fn run(
    spec: &DeliverySpec,
    nodes: &Nodes,
    interrupted: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<DeliveryResult, EngineError> {
    let Mode::PubSub {
        subscribers,
        channels,
        patterns,
        sharded,
        slow,
    } = spec.mode
    else {
        unreachable!("pubsub::run is for --pubsub")
    };
    let names = Names {
        channels: (0..channels).map(|k| spec.channel(k)).collect(),
        publish: if sharded { b"SPUBLISH" } else { b"PUBLISH" },
    };
    let (subs, ids) = subscribe_all(nodes, &names, subscribers, patterns, sharded)?;
    let mut pubs = (0..spec.publishers)
        .map(|_| Router::open(nodes))
        .collect::<Result<Vec<_>, _>>()?;
    let before = buffer_limit_disconnections(nodes);
    // Subscriber i listens to channel i mod C: each message owes a delivery to each of them.
    let fanout = (0..u64::from(channels))
        .map(|k| {
            (0..u64::from(subscribers))
                .filter(|i| i % u64::from(channels) == k)
                .count() as u64
        })
        .collect();
    let exact = observer.exact_seconds();
    let live = Live::new(fanout, subscribers as usize, interrupted, exact);
    let behind = || {
        (0..subscribers as usize)
            .map(|i| {
                let owed = live.published[i % channels as usize].load(Ordering::Relaxed);
                owed.saturating_sub(live.received[i].load(Ordering::Relaxed))
            })
            .max()
            .unwrap_or(0)
    };
    let ids: Vec<Mutex<SubscriberId>> = ids.into_iter().map(Mutex::new).collect();
    let moves: Vec<Mutex<Vec<(String, u64)>>> = ids.iter().map(|_| Mutex::default()).collect();
    let probe = Probe::PubSub { ids: &ids };
    let (published, mut received, (rows, drops)) = std::thread::scope(|s| {
        let monitor = s.spawn(|| monitor::watch(&nodes.setups, &live, &probe, &behind));
        let receivers: Vec<_> = subs
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let live = &live;
                let wait = slow.and_then(|(n, p)| (i < n as usize).then_some(p));
                let k = i % channels as usize;
                // Sharded: follow the channel when its slot moves (`resubscribe.rs`).
                let follow = sharded.then(|| Follow {
                    nodes,
                    channel: &names.channels[k],
                    id: &ids[i],
                    moves: &moves[i],
                });
                let me = Receiver {
                    live,
                    i: i as u32,
                    k,
                    messages: spec.messages,
                    pause: wait,
                    follow,
                };
                s.spawn(move || {
                    let mut end = receive(c, &me);
                    end.0.hand_rest(&live.timeline);
                    live.finished[i].store(true, Ordering::Release);
                    end
                })
            })
            .collect();
        let publishers: Vec<_> = pubs
            .iter_mut()
            .enumerate()
            .map(|(i, c)| {
                let (live, names) = (&live, &names);
                s.spawn(move || conn::publish(spec, live, c, i as u32, names))
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
        waiting.wait(&|| receivers.iter().all(|h| h.is_finished()), observer);
        let received: Vec<_> = receivers.into_iter().map(|h| h.join().ok()).collect();
        live.stop.store(true, Ordering::Relaxed);
        (published, received, monitor.join().unwrap_or_default())
    });
    let after = buffer_limit_disconnections(nodes);
    let parts: Vec<Vec<(String, u64)>> = (0..subscribers as usize)
        .map(|i| {
            let start = &nodes.names[nodes.of_name[i % channels as usize]];
            let moves = moves[i].lock().unwrap_or_else(|e| e.into_inner());
            parts_of(start, &moves, live.received[i].load(Ordering::Relaxed))
        })
        .collect();
    let per_node = super::result::per_node(nodes, &published, &parts);
    let owed = |i: usize| live.published[i % channels as usize].load(Ordering::Relaxed);
    let expected = (0..subscribers as usize).map(owed).sum();
    // The server's view first: a subscriber it dropped may have read on for a while.
    for d in drops {
        if let Some(Some((_, end))) = received.get_mut(d.receiver as usize) {
            *end = Some(d);
        }
    }
    let mut result = super::result::finish(&live, &published, received, rows, expected);
    result.fanout = Some(published.iter().map(|p| p.reply_sum).sum());
    result.buffer_limit_disconnections = before.zip(after).map(|(b, a)| a.saturating_sub(b));
    result.nodes = per_node;
    Ok(result)
}

/// Every subscriber connected and confirmed subscribed (subscriber `i` to channel `i mod C`,
/// on that channel's node), with its node and `CLIENT ID` there.
fn subscribe_all(
    nodes: &Nodes,
    names: &Names,
    subscribers: u32,
    patterns: bool,
    sharded: bool,
) -> Result<(Vec<ControlConn>, Vec<SubscriberId>), EngineError> {
    let (verb, glob): (&[u8], bool) = match (patterns, sharded) {
        (true, _) => (b"PSUBSCRIBE", true),
        (_, true) => (b"SSUBSCRIBE", false),
        _ => (b"SUBSCRIBE", false),
    };
    let mut subs = Vec::with_capacity(subscribers as usize);
    let mut ids = Vec::with_capacity(subscribers as usize);
    for i in 0..subscribers as usize {
        let mut name = names.channels[i % names.channels.len()].clone();
        if glob {
            // `{prefix}{k}:ch` matched as `{prefix}{k}:c*`: only channel k.
            name.pop();
            name.push(b'*');
        }
        let node = nodes.of_name[i % names.channels.len()];
        let (c, id) = subscribe(&nodes.setups[node], verb, &name)?;
        subs.push(c);
        ids.push(id.map(|id| (node, id)));
    }
    Ok((subs, ids))
}

/// A subscriber's deliveries by node: from `start`, then each node it moved to (`moves`: the
/// node, and its deliveries before the move), up to `total`.
fn parts_of(start: &str, moves: &[(String, u64)], total: u64) -> Vec<(String, u64)> {
    let mut out = Vec::with_capacity(moves.len() + 1);
    let (mut node, mut from) = (start.to_string(), 0);
    for (next, at) in moves {
        out.push((std::mem::replace(&mut node, next.clone()), at - from));
        from = *at;
    }
    out.push((node, total - from));
    out
}

/// One subscriber's part: which it is, its channel, and how it reads.
struct Receiver<'a> {
    live: &'a Live,
    i: u32,
    /// Its channel's index.
    k: usize,
    /// Messages in the test (the tally's size).
    messages: u64,
    /// `--slow-subscribers`: its pause after each message.
    pause: Option<Duration>,
    /// Sharded: how it follows its channel to another node.
    follow: Option<Follow<'a>>,
}

/// The payload of a `message`/`smessage`/`pmessage` (array or push); `None` for anything else.
pub(super) fn message_payload(v: &Value) -> Option<&[u8]> {
    let (Value::Array(items) | Value::Push(items)) = v else {
        return None;
    };
    let at = match items.first()?.as_str()? {
        "message" | "smessage" => 2,
        "pmessage" => 3,
        _ => return None,
    };
    match items.get(at)? {
        Value::BulkString(b) => Some(b),
        _ => None,
    }
}

/// Subscriber `i`'s loop (listening to channel `k`): until it has everything its channel was
/// sent, the drain limits after the last publish, a signal, or the server drops it.
/// Its finished seconds go to the test's timeline as its clock passes them (`Tally::hand`).
fn receive(mut c: ControlConn, me: &Receiver<'_>) -> (Tally, Option<Disconnect>) {
    let (live, i, k, pause) = (me.live, me.i, me.k, me.pause);
    let mut tally = Tally::new(me.messages).keeping_exact(live.exact());
    let mut last = Instant::now();
    let mut done_at: Option<Instant> = None;
    loop {
        tally.hand(live.now_ns(), &live.timeline);
        if live.interrupted.load(Ordering::Relaxed) {
            return (tally, None);
        }
        if live.publishing_done.load(Ordering::Relaxed) {
            let since = *done_at.get_or_insert_with(Instant::now);
            let owed = live.published[k].load(Ordering::Relaxed);
            if tally.delivered >= owed
                || since.elapsed() > DRAIN_MAX
                || last.max(since).elapsed() > DRAIN_IDLE
            {
                return (tally, None);
            }
        }
        match c.wait_next() {
            Ok(Some(v)) if me.follow.is_some() && is_sunsubscribe(&v) => {
                let Some(follow) = &me.follow else { continue };
                if let Err(e) = follow.resubscribe(&mut c, live, tally.delivered) {
                    let gone = Disconnect {
                        receiver: i,
                        at_s: live.origin.elapsed().as_secs_f64(),
                        reason: format!("its channel's slot moved and it could not follow: {e}"),
                        by_server: false,
                        output_buffer_bytes: None,
                    };
                    return (tally, Some(gone));
                }
            }
            Ok(Some(v)) => {
                match message_payload(&v).map(stamp::read) {
                    Some(Some((sent, number))) if tally.receive(number, sent, live.now_ns()) => {
                        live.received[i as usize].store(tally.delivered, Ordering::Relaxed);
                        live.latency_ns[i as usize].store(tally.latency_sum_ns, Ordering::Relaxed);
                        last = Instant::now();
                    }
                    // A duplicate (counted by `receive`), or not a message.
                    Some(Some(_)) | None => {}
                    Some(None) => tally.stranger(live.now_ns()),
                }
                if let Some(p) = pause {
                    std::thread::sleep(p);
                }
            }
            Ok(None) => {}
            Err(e) => {
                let at_s = live.origin.elapsed().as_secs_f64();
                let reason = e.to_string();
                let gone = Disconnect {
                    receiver: i,
                    at_s,
                    reason,
                    by_server: false,
                    output_buffer_bytes: None,
                };
                return (tally, Some(gone));
            }
        }
    }
}

/// The servers' `client_output_buffer_limit_disconnections` (Redis 7.0+, Valkey) added over
/// the nodes, or `None` when one does not report it.
fn buffer_limit_disconnections(nodes: &Nodes) -> Option<u64> {
    nodes
        .setups
        .iter()
        .map(|setup| {
            let mut c = connect::open(setup).ok()?;
            let reply = c.call(&[b"INFO".as_slice(), b"stats"]).ok()?;
            Info::new(reply.as_str()?).u64("client_output_buffer_limit_disconnections")
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_subscribers_deliveries_are_split_by_node() {
        let moves = [("b:2".to_string(), 40), ("c:3".to_string(), 70)];
        assert_eq!(
            parts_of("a:1", &moves, 100),
            [("a:1".into(), 40), ("b:2".into(), 30), ("c:3".into(), 30)]
        );
        assert_eq!(parts_of("a:1", &[], 5), [("a:1".into(), 5)]);
    }

    #[test]
    fn message_payloads_are_found_in_every_shape() {
        let bulk = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let m = Value::Array(vec![bulk("message"), bulk("ch"), bulk("p1")]);
        let pm = Value::Push(vec![bulk("pmessage"), bulk("c*"), bulk("ch"), bulk("p2")]);
        let sm = Value::Push(vec![bulk("smessage"), bulk("ch"), bulk("p3")]);
        let sub = Value::Push(vec![bulk("subscribe"), bulk("ch"), Value::Integer(1)]);
        assert_eq!(message_payload(&m), Some(b"p1".as_slice()));
        assert_eq!(message_payload(&pm), Some(b"p2".as_slice()));
        assert_eq!(message_payload(&sm), Some(b"p3".as_slice()));
        assert_eq!(message_payload(&sub), None);
        assert_eq!(message_payload(&Value::Integer(1)), None);
    }
}
