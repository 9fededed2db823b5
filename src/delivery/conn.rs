//! The delivery modes' connections and the publisher loop both modes share: open a blocking
//! connection with the run's prefix (AUTH, SELECT, HELLO 3 as every benchmark connection), then
//! publish this publisher's part of the messages at its part of the rate, each stamped just
//! before it is sent.

use std::sync::atomic::Ordering;
use std::time::Duration;

use resp::Value;

use super::route::Router;
use super::seconds::{Published, hand_failed, hand_published, hand_reconnect, publishing_at};
use super::{DeliverySpec, Live, stamp};
use crate::engine::{EngineError, is_maxclients};
use crate::metrics::FAILURE_KINDS;
use crate::workload::split::even_part;

/// How late (past its due time at `--rps`) a message may be sent after a reconnect; older
/// ones failed while the server could not be reached.
const SKIP_LATE: Duration = Duration::from_millis(100);

/// The index of `connection refused` in `FAILURE_KINDS`.
fn refused_kind() -> usize {
    FAILURE_KINDS
        .iter()
        .position(|k| *k == "connection refused")
        .unwrap_or(FAILURE_KINDS.len() - 1)
}

/// A reconnecting publisher's first and longest wait between attempts.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(50), Duration::from_secs(1));

/// The kind of a failed publish (index into `FAILURE_KINDS`), from its error's text: the
/// control connection's errors carry the socket's reason, not its `io::ErrorKind`.
fn failure_kind(e: &EngineError) -> usize {
    let text = e.to_string();
    let kind = if text.contains("no reply within") {
        "timeout"
    } else if text.contains("reset") || text.contains("Broken pipe") {
        "connection reset"
    } else if text.contains("closed") {
        "connection closed"
    } else if text.contains("refused") {
        "connection refused"
    } else {
        "connection error"
    };
    FAILURE_KINDS
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(FAILURE_KINDS.len() - 1)
}

/// Opens the publisher's connections again, backing off, until they are up, the test stops, or
/// (at `--rps`) the publisher's last message is past due at `until_ns`: a server that never comes
/// back must not hold the run.
fn reconnect(router: &mut Router<'_>, live: &Live, out: &mut Published, until_ns: Option<u64>) {
    let mut wait = BACKOFF.0;
    while !live.stopping() && until_ns.is_none_or(|u| live.now_ns() < u) {
        std::thread::sleep(wait);
        out.reconnect_attempts += 1;
        let ok = router.reopen().is_ok();
        hand_reconnect(&live.timeline, live.now_ns(), ok);
        if ok {
            out.reconnects += 1;
            return;
        }
        wait = (wait * 2).min(BACKOFF.1);
    }
}

/// Under `-e`, after a failure of `kind`: the connections opened again (or given up once the
/// last message is past due), and the messages due meanwhile failed too, each in its own slot.
/// Returns the next message's index.
fn go_on(
    spec: &DeliverySpec,
    live: &Live,
    router: &mut Router<'_>,
    out: &mut Published,
    kind: usize,
    (mut k, len): (u64, u64),
    due_ns: &dyn Fn(u64) -> Option<u64>,
) -> u64 {
    let late = SKIP_LATE.as_nanos() as u64;
    reconnect(router, live, out, due_ns(len).map(|d| d + late));
    let _ = router.set_timeout(spec.timeout);
    while k < len && due_ns(k).is_some_and(|d| d + late <= live.now_ns()) {
        out.failed(live, kind, 1, due_ns(k).unwrap_or(0));
        k += 1;
    }
    k
}

impl Published {
    /// `n` publishes failed by a connection failure of `kind` (index into `FAILURE_KINDS`),
    /// due at `at_ns` since the origin.
    fn failed(&mut self, live: &Live, kind: usize, n: u64, at_ns: u64) {
        self.errors += n;
        self.failures.record_kind(FAILURE_KINDS[kind], n);
        hand_failed(&live.timeline, at_ns, Some(kind), n);
    }
}

/// How a publisher sends message `number`: the command's arguments around the payload, and the
/// channel (index into `Live::published`) it counts under.
pub(super) trait Command {
    /// The channel index and up to [`MAX_ARGS`] arguments (the count used).
    fn args<'a>(&'a self, number: u64, payload: &'a [u8]) -> (usize, Args<'a>);
}

/// The most arguments a publishing command has (`XADD key * m payload`).
pub(super) const MAX_ARGS: usize = 5;

/// A command's arguments without a heap allocation per message.
pub(super) type Args<'a> = ([&'a [u8]; MAX_ARGS], usize);

/// Publisher `index`'s loop: its part of the message numbers, at its part of the rate, until
/// done or stopped, each to its name's node (`route::Router`). A connection that fails fails
/// its message; under `-e` (`DeliverySpec::keep_going`) the publisher reconnects and goes on,
/// the messages due while it could not (at `--rps`) counted as failed of the same kind, else
/// it ends (what was left counts as failed).
pub(super) fn publish(
    spec: &DeliverySpec,
    live: &Live,
    router: &mut Router<'_>,
    index: u32,
    command: &dyn Command,
) -> Published {
    let part = even_part(spec.messages, u64::from(index), u64::from(spec.publishers));
    let rate = spec.rate.map(|r| {
        even_part(r, u64::from(index), u64::from(spec.publishers))
            .len
            .max(1)
    });
    let mut out = Published::default();
    let mut payload = stamp::payload(spec.payload);
    let start = live.origin;
    // The seconds handed to the test's timeline (`seconds::hand_published`).
    let mut handed = 0;
    let due_ns = |k: u64| rate.map(|r| (u128::from(k) * 1_000_000_000 / u128::from(r)) as u64);
    let mut k = 0;
    if let Err(e) = router.set_timeout(spec.timeout) {
        out.reason = Some(e.to_string());
        let kind = failure_kind(&e);
        out.failed(live, kind, part.len, live.now_ns());
        k = part.len;
    }
    while k < part.len {
        // Ctrl-C/SIGTERM: the messages not sent yet are not failures (the record has how many
        // were asked for).
        if live.stopping() {
            break;
        }
        if let Some(offset) = due_ns(k) {
            let due = start + Duration::from_nanos(offset);
            let now = std::time::Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        // Every message sent before now is acknowledged (one call at a time) and counted.
        publishing_at(&out, &mut handed, live, index);
        let number = part.start + k;
        let sent_ns = live.now_ns();
        stamp::write(&mut payload, sent_ns, number);
        let (channel, (args, n)) = command.args(number, &payload);
        k += 1;
        let mut failed = None;
        match router.call(channel, &args[..n]) {
            Ok((_, Value::Error(e))) if !is_maxclients(&e) => {
                out.errors += 1;
                out.failures.record(&e);
                hand_failed(&live.timeline, sent_ns, None, 1);
            }
            // A server at `maxclients` takes the connection, then refuses it with this error
            // on its first command: a refused connection, as the engine counts it.
            Ok((_, Value::Error(e))) => {
                let refused = EngineError::Io(String::from_utf8_lossy(&e).into_owned());
                out.reason.get_or_insert_with(|| refused.to_string());
                failed = Some(refused_kind());
            }
            Ok((node, reply)) => {
                out.acked += 1;
                router.acked[node] += 1;
                if let Value::Integer(n) = reply {
                    out.reply_sum += n.max(0) as u64;
                }
                live.published[channel].fetch_add(1, Ordering::Relaxed);
                let second = (sent_ns / 1_000_000_000) as usize;
                if out.per_second.len() <= second {
                    out.per_second.resize(second + 1, 0);
                    out.owed.resize(second + 1, 0);
                }
                out.per_second[second] += 1;
                out.owed[second] += live.fanout[channel];
                hand_published(&out, &mut handed, second, &live.timeline);
            }
            Err(e) => {
                out.reason.get_or_insert_with(|| e.to_string());
                failed = Some(failure_kind(&e));
            }
        }
        if let Some(kind) = failed {
            out.failed(live, kind, 1, sent_ns);
            if !spec.keep_going {
                out.failed(live, kind, part.len - k, live.now_ns());
                break;
            }
            k = go_on(spec, live, router, &mut out, kind, (k, part.len), &due_ns);
        }
    }
    hand_published(&out, &mut handed, usize::MAX, &live.timeline);
    live.published_through[index as usize].store(usize::MAX, Ordering::Release);
    out.moved = router.moved;
    out.per_node = router
        .addrs
        .iter()
        .cloned()
        .zip(router.acked.clone())
        .collect();
    out
}
