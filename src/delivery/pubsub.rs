//! `--pubsub`: N subscribers (channels, patterns or sharded channels; RESP2 arrays or RESP3
//! pushes alike) on a few threads' event loops (`subscribers.rs`), each confirmed subscribed
//! before the first message is published; publishers send `-n` stamped messages round the
//! channels; each subscriber counts every message once and notes when its connection fails or
//! the server drops it. Subscriber `i` listens to channel `i mod C`, so a message on channel `k`
//! is owed to every subscriber of `k`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::block::{DeliverySecond, DisconnectRecord};
use super::conn::{self, Args, Command};
use super::monitor::{self, Probe};
use super::route::{Nodes, Router};
use super::seconds;
use super::subscribe::SubscriberId;
use super::subscribers;
use super::tally::Tally;
use super::{DeliveryResult, DeliverySpec, Live, Mode};
use crate::engine::{EngineError, Observer};
use crate::watch::Info;

/// The pub/sub mode's names and commands.
struct Names {
    channels: Vec<Vec<u8>>,
    publish: &'static [u8],
}

impl Names {
    fn new(spec: &DeliverySpec, channels: u32, sharded: bool) -> Names {
        Names {
            channels: (0..channels).map(|k| spec.channel(k)).collect(),
            publish: if sharded { b"SPUBLISH" } else { b"PUBLISH" },
        }
    }
}

impl Command for Names {
    fn args<'a>(&'a self, number: u64, payload: &'a [u8]) -> (usize, Args<'a>) {
        let k = (number % self.channels.len() as u64) as usize;
        let ch = self.channels[k].as_slice();
        (k, ([self.publish, ch, payload, b"", b""], 3))
    }
}

/// The pub/sub test: subscribers subscribed on their threads, then the publishers, the monitor
/// and the seconds' hand-over until every message is delivered or owed for good.
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
    let names = Names::new(spec, channels, sharded);
    let (verb, listen) = subscription(&names.channels, patterns, sharded);
    // Subscriber i listens to channel i mod C: each message owes a delivery to each of them.
    let fanout = fanout(subscribers, channels);
    let ids: Vec<Mutex<SubscriberId>> = (0..subscribers).map(|_| Mutex::new(None)).collect();
    let moves: Vec<Mutex<Vec<(String, u64)>>> = ids.iter().map(|_| Mutex::default()).collect();
    let (cell, failed) = (OnceLock::new(), AtomicBool::new(false));
    let abort = || failed.load(Ordering::Relaxed) || interrupted.load(Ordering::Relaxed);
    let plan = subscribers::Plan {
        nodes,
        live: &cell,
        abort: &abort,
        receivers: subscribers as usize,
        ids: &ids,
        moves: &moves,
        verb,
        names: &listen,
        keep_going: spec.keep_going,
        messages: spec.messages,
        slow,
        threads: spec.threads.clamp(1, subscribers as usize),
    };
    let exact = observer.exact_seconds();
    let before = buffer_limit_disconnections(nodes);
    let (published, measured, (rows, drops)) = std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        let loops: Vec<_> = (0..plan.threads)
            .map(|t| {
                let (tx, plan) = (tx.clone(), &plan);
                s.spawn(move || subscribers::run(plan, t, &tx))
            })
            .collect();
        drop(tx);
        // Every subscriber subscribed, and every publisher connected, before the first message.
        let pubs = match ready(&rx, plan.threads, spec.publishers, nodes) {
            Ok(pubs) => pubs,
            Err(e) => {
                failed.store(true, Ordering::Relaxed);
                loops.into_iter().for_each(|h| drop(h.join()));
                return Err(e);
            }
        };
        let live = cell.get_or_init(|| {
            Live::new(
                fanout,
                (spec.publishers, subscribers as usize),
                interrupted.clone(),
                exact,
            )
        });
        let behind = move || behind(live, subscribers, channels);
        let probe = Probe::PubSub { ids: &ids };
        let monitor = s.spawn(move || monitor::watch(&nodes.setups, live, &probe, &behind));
        let publishers: Vec<_> = pubs
            .into_iter()
            .enumerate()
            .map(|(i, mut c)| {
                let names = &names;
                s.spawn(move || conn::publish(spec, live, &mut c, i as u32, names))
            })
            .collect();
        let waiting = seconds::Waiting::new(live, spec.publishers);
        let (published, measured) = waiting.join(publishers, loops, observer);
        Ok((published, measured, monitor.join().unwrap_or_default()))
    })?;
    let live = cell.get().expect("set before the test ran");
    let after = buffer_limit_disconnections(nodes);
    let mut result = gather(
        spec,
        (nodes, subscribers, channels),
        live,
        &moves,
        (&published, measured, rows, drops),
    );
    result.block.buffer_limit_disconnections = before.zip(after).map(|(b, a)| a.saturating_sub(b));
    Ok(result)
}

/// How many messages the subscriber furthest behind has yet to receive.
fn behind(live: &Live, subscribers: u32, channels: u32) -> u64 {
    (0..subscribers as usize)
        .map(|i| {
            let owed = live.published[i % channels as usize].load(Ordering::Relaxed);
            owed.saturating_sub(live.received[i].load(Ordering::Relaxed))
        })
        .max()
        .unwrap_or(0)
}

/// The deliveries each channel's message owes: subscriber `i` listens to channel `i mod C`.
fn fanout(subscribers: u32, channels: u32) -> Vec<u64> {
    (0..u64::from(channels))
        .map(|k| {
            (0..u64::from(subscribers))
                .filter(|i| i % u64::from(channels) == k)
                .count() as u64
        })
        .collect()
}

/// Waits until every subscriber thread has subscribed its subscribers, then connects the
/// publishers: nothing is published before all are ready.
fn ready<'n>(
    rx: &std::sync::mpsc::Receiver<Result<(), EngineError>>,
    threads: usize,
    publishers: u32,
    nodes: &'n Nodes,
) -> Result<Vec<Router<'n>>, EngineError> {
    (0..threads)
        .map(|_| rx.recv().unwrap_or_else(|_| Err(lost_thread())))
        .collect::<Result<Vec<()>, _>>()?;
    (0..publishers).map(|_| Router::open(nodes)).collect()
}

/// The test's result from what the publishers, the subscriber threads and the monitor measured:
/// each subscriber's deliveries by node (as it moved), the disconnects with the server's view
/// of them, the reconnects.
fn gather(
    spec: &DeliverySpec,
    (nodes, subscribers, channels): (&Nodes, u32, u32),
    live: &Live,
    moves: &[Mutex<Vec<(String, u64)>>],
    (published, measured, rows, drops): (
        &[seconds::Published],
        Vec<subscribers::Measured>,
        Vec<DeliverySecond>,
        Vec<DisconnectRecord>,
    ),
) -> DeliveryResult {
    let parts: Vec<Vec<(String, u64)>> = (0..subscribers as usize)
        .map(|i| {
            let start = &nodes.names[nodes.of_name[i % channels as usize]];
            let moves = moves[i].lock().unwrap_or_else(|e| e.into_inner());
            parts_of(start, &moves, live.received[i].load(Ordering::Relaxed))
        })
        .collect();
    let per_node = super::result::per_node(nodes, published, &parts);
    let owed = |i: usize| live.published[i % channels as usize].load(Ordering::Relaxed);
    let expected = (0..subscribers as usize).map(owed).sum();
    let mut disconnects = Vec::new();
    let mut received = Vec::with_capacity(measured.len());
    let mut reconnects = (0, 0);
    for m in measured {
        disconnects.extend(m.disconnects);
        reconnects = (reconnects.0 + m.reconnects.0, reconnects.1 + m.reconnects.1);
        received.push(Some((m.tally, None)));
    }
    with_servers_view(&mut disconnects, drops);
    received.extend(
        disconnects
            .into_iter()
            .map(|d| Some((Tally::new(0), Some(d)))),
    );
    let mut result = super::result::finish(spec, live, published, received, rows, expected);
    result.block.fanout = Some(published.iter().map(|p| p.reply_sum).sum());
    result.block.nodes = per_node;
    result.reconnect_attempts += reconnects.0;
    result.reconnects += reconnects.1;
    result
}

fn lost_thread() -> EngineError {
    EngineError::Other("a subscriber thread ended before subscribing".into())
}

/// The subscription verb, and what subscriber `i` listens to (`listen[i mod C]`): channel
/// `{prefix}{k}:ch`, or as a pattern `{prefix}{k}:c*` (matching only channel k).
fn subscription(
    channels: &[Vec<u8>],
    patterns: bool,
    sharded: bool,
) -> (&'static [u8], Vec<Vec<u8>>) {
    let verb: &'static [u8] = match (patterns, sharded) {
        (true, _) => b"PSUBSCRIBE",
        (_, true) => b"SSUBSCRIBE",
        _ => b"SUBSCRIBE",
    };
    let listen = channels
        .iter()
        .map(|c| {
            let mut name = c.clone();
            if patterns {
                name.pop();
                name.push(b'*');
            }
            name
        })
        .collect();
    (verb, listen)
}

/// Adds the server's view (`drops`: subscribers gone from `CLIENT LIST` while still reading)
/// to the subscribers' own: a drop the subscriber saw too (its connection failed within a
/// second or so of it) takes the server's reason and last output buffer; one it did not see
/// (it still had buffered messages to read when the test ended) is listed as the server's.
fn with_servers_view(disconnects: &mut Vec<DisconnectRecord>, drops: Vec<DisconnectRecord>) {
    for d in drops {
        let near = disconnects.iter_mut().find(|own| {
            own.receiver == d.receiver
                && !own.reason.starts_with("closed by the server")
                && (own.at_s - d.at_s).abs() < 1.5
        });
        match near {
            Some(own) => {
                own.by_server = true;
                own.output_buffer_bytes = d.output_buffer_bytes;
                own.reason = format!("{} ({})", d.reason, own.reason);
            }
            None => disconnects.push(d),
        }
    }
    disconnects.sort_by(|a, b| a.at_s.total_cmp(&b.at_s).then(a.receiver.cmp(&b.receiver)));
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

/// The servers' `client_output_buffer_limit_disconnections` (Redis 7.0+, Valkey) added over
/// the nodes, or `None` when one does not report it.
fn buffer_limit_disconnections(nodes: &Nodes) -> Option<u64> {
    nodes
        .setups
        .iter()
        .map(|setup| {
            let mut c = super::connect::open(setup).ok()?;
            // A figure sampled after the test: a server frozen for good must not hold the run.
            c.set_timeout(std::time::Duration::from_secs(1)).ok()?;
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
}
