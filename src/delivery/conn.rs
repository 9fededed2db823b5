//! The publisher loop both delivery modes share, on connections opened by `connect::open`:
//! publish this publisher's part of the messages at its part of the rate, each stamped just
//! before it is sent.

use std::sync::atomic::Ordering;
use std::time::Duration;

use resp::Value;

use super::route::Router;
use super::{DeliverySpec, Live, stamp};
use crate::metrics::SharedTimeline;
use crate::workload::split::even_part;

/// What one publisher did.
#[derive(Clone, Debug, Default)]
pub(super) struct Published {
    pub acked: u64,
    pub errors: u64,
    /// Sum of the integer replies (`PUBLISH`: receivers counted by the server).
    pub reply_sum: u64,
    /// Acknowledged messages by the second they were sent in (their stamp), so the record's
    /// per-second publish counts are exact rather than sampled; and the deliveries they owe
    /// (`Live::fanout`), by the same second.
    pub per_second: Vec<u64>,
    pub owed: Vec<u64>,
    /// Acknowledged messages per node (`host:port`), as the publisher's router sent them.
    pub per_node: Vec<(String, u64)>,
    /// `MOVED` replies followed (a slot that migrated during the test).
    pub moved: u64,
}

/// A publisher's messages per second (`per_second`, by send time) and the deliveries they owe
/// handed to the test's timeline up to second `upto` (not included); `next` is the first not
/// handed yet. The lock is taken only when a second is due, about once a second.
fn hand_published(p: &Published, next: &mut usize, upto: usize, to: &SharedTimeline) {
    let upto = upto.min(p.per_second.len());
    if upto <= *next {
        return;
    }
    let mut shared = to.lock().unwrap_or_else(|e| e.into_inner());
    for i in *next..upto {
        let second = shared.second_mut(i);
        second.published += p.per_second[i];
        second.owed += p.owed[i];
    }
    *next = upto;
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
/// done or stopped, each to its name's node (`route::Router`). A connection that fails ends
/// the loop (what was left counts as errors).
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
    // The seconds handed to the test's timeline (`conn::hand_published`).
    let mut handed = 0;
    for k in 0..part.len {
        if live.stopping() {
            out.errors += part.len - k;
            break;
        }
        if let Some(rate) = rate {
            let offset = u128::from(k) * 1_000_000_000 / u128::from(rate);
            let due = start + Duration::from_nanos(offset as u64);
            let now = std::time::Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        let number = part.start + k;
        let sent_ns = live.now_ns();
        stamp::write(&mut payload, sent_ns, number);
        let (channel, (args, n)) = command.args(number, &payload);
        match router.call(channel, &args[..n]) {
            Ok((_, Value::Error(_))) => out.errors += 1,
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
            Err(_) => {
                out.errors += part.len - k;
                break;
            }
        }
    }
    hand_published(&out, &mut handed, usize::MAX, &live.timeline);
    out.moved = router.moved;
    out.per_node = router
        .addrs
        .iter()
        .cloned()
        .zip(router.acked.clone())
        .collect();
    out
}
