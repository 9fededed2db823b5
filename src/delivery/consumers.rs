//! `--stream`'s consumers on a few threads (issue 33), as `--pubsub`'s subscribers are
//! (`subscribers.rs`): each thread holds its share of the consumer connections as non-blocking
//! sockets on one `mio` poll loop. A consumer is a small state machine over its socket: it sends
//! `XREADGROUP … BLOCK`, and on each reply counts the entries, then writes `XACK` for them and
//! its next `XREADGROUP` together (the replies come back in that order). A consumer costs its
//! socket, the bytes of a reply not yet whole and its encoded read command; the group's one
//! [`Tally`] is shared by every thread (a lock per reply), so an entry delivered twice, to any
//! consumer, is a duplicate — where a blocking thread per consumer capped `--stream` at 1,000.
//!
//! A consumer whose connection fails, or whose read gets an error reply (the stream's slot
//! moved, the group was deleted: it would come back at once on every call), ends, listed as a
//! [`DisconnectRecord`]; what was owed to the group is still delivered to the others.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use resp::Value;

use super::block::DisconnectRecord;
use super::tally::Tally;
use super::{DRAIN_IDLE, DRAIN_MAX, Live, stamp};
use crate::engine::conn::Stream;
use crate::engine::control::ControlConn;
use crate::engine::io_reason;

/// The consumer group's name.
pub(super) const GROUP: &[u8] = b"respbench";
/// Entries per `XREADGROUP`.
const COUNT: &[u8] = b"128";
/// `XREADGROUP`'s `BLOCK`, ms. The consumers' poll loops watch the stop flags themselves, so a
/// long block only spares the server an idle consumer's reads (1,500 consumers at 100 ms were
/// 15,000 empty reads a second).
const BLOCK_MS: &[u8] = b"1000";
/// The field each entry's stamped payload is under.
pub(super) const FIELD: &[u8] = b"m";

/// How long a loop waits for readiness before it looks at the stop flags.
const POLL: Duration = Duration::from_millis(100);
/// Bytes read from a socket at a time (the thread's one buffer).
const READ_CHUNK: usize = 64 * 1024;
/// Once the group has what it is owed, how long the consumers' last acknowledgements may take
/// before the thread ends regardless (a read still blocked is not waited for).
const CLOSING: Duration = Duration::from_secs(1);
/// A reply's buffer is given back down to this once drained.
const KEEP_PARTIAL: usize = 4 * 1024;

/// Entries added that no consumer has had yet.
pub(super) fn behind(live: &Live) -> u64 {
    let added = live.published[0].load(Ordering::Relaxed);
    let got: u64 = live
        .received
        .iter()
        .map(|a| a.load(Ordering::Relaxed))
        .sum();
    added.saturating_sub(got)
}

/// What every consumer thread shares.
pub(super) struct Group<'a> {
    pub live: &'a Live,
    pub tally: &'a Mutex<Tally>,
    pub key: &'a [u8],
}

/// A reply a consumer waits for, in the order its commands were sent.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Owed {
    Read,
    Ack,
}

/// One consumer on a thread.
struct Consumer {
    i: u32,
    /// `None` once it ended.
    stream: Option<Stream>,
    /// Its `XREADGROUP`, encoded once.
    read: Vec<u8>,
    /// Bytes of a reply not yet whole.
    partial: Vec<u8>,
    /// Bytes not yet written (the socket was full).
    out: Vec<u8>,
    owed: VecDeque<Owed>,
    /// Entries the server acknowledged (sum of `XACK` replies).
    acked: u64,
    /// First deliveries, and their latency sum, ns (the live progress).
    mine: u64,
    mine_ns: u64,
}

/// What one consumer thread measured: entries acknowledged, and the consumers that ended
/// early.
pub(super) struct Ended {
    pub acked: u64,
    pub disconnects: Vec<DisconnectRecord>,
}

/// Runs `conns` (each consumer's index and its connection, prepared and blocking) on one poll
/// loop until the group has every entry added after the last `XADD`, the drain limits, or a
/// signal.
pub(super) fn run(group: &Group<'_>, conns: Vec<(u32, ControlConn)>) -> Ended {
    let mut lp = Loop {
        group,
        poll: None,
        consumers: Vec::with_capacity(conns.len()),
        disconnects: Vec::new(),
        scratch: vec![0; READ_CHUNK],
        last: Instant::now(),
        closing: false,
    };
    lp.start(conns);
    lp.read_until_done();
    for c in &lp.consumers {
        group.live.finished[c.i as usize].store(true, Ordering::Release);
    }
    Ended {
        acked: lp.consumers.iter().map(|c| c.acked).sum(),
        disconnects: lp.disconnects,
    }
}

struct Loop<'g, 'a> {
    group: &'g Group<'a>,
    poll: Option<Poll>,
    consumers: Vec<Consumer>,
    disconnects: Vec<DisconnectRecord>,
    scratch: Vec<u8>,
    /// When the last first delivery arrived.
    last: Instant,
    /// The group has what it is owed: no more reads are sent.
    closing: bool,
}

impl Loop<'_, '_> {
    /// Each connection non-blocking on the thread's poll, its first read sent.
    fn start(&mut self, conns: Vec<(u32, ControlConn)>) {
        let poll = match Poll::new() {
            Ok(p) => p,
            Err(e) => {
                for (i, _) in conns {
                    self.gone(i, format!("consumer thread: {}", io_reason(&e)));
                }
                return;
            }
        };
        for (i, c) in conns {
            let name = format!("c{i}").into_bytes();
            let key = self.group.key;
            let args = [
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
            let mut read = Vec::new();
            resp::encode_command(&mut read, &args);
            let (blocking, partial) = c.into_parts();
            let slot = self.consumers.len();
            let stream = blocking.into_nonblocking().and_then(|mut s| {
                poll.registry()
                    .register(&mut s, Token(slot), Interest::READABLE)
                    .map(|()| s)
            });
            self.consumers.push(Consumer {
                i,
                stream: None,
                read,
                partial,
                out: Vec::new(),
                owed: VecDeque::with_capacity(2),
                acked: 0,
                mine: 0,
                mine_ns: 0,
            });
            match stream {
                Ok(s) => self.consumers[slot].stream = Some(s),
                Err(e) => self.gone(i, io_reason(&e)),
            }
        }
        self.poll = Some(poll);
        for slot in 0..self.consumers.len() {
            if self.consumers[slot].stream.is_some() {
                self.ask(slot);
            }
        }
    }

    /// Whether the group has what it is owed after the last `XADD`, or the drain limits passed.
    fn owed_done(&self, done_at: Instant) -> bool {
        behind(self.group.live) == 0
            || done_at.elapsed() > DRAIN_MAX
            || self.last.max(done_at).elapsed() > DRAIN_IDLE
    }

    fn read_until_done(&mut self) {
        let live = self.group.live;
        let Some(mut poll) = self.poll.take() else {
            return;
        };
        let mut events = Events::with_capacity(1024);
        let (mut done_at, mut closed_at): (Option<Instant>, Option<Instant>) = (None, None);
        loop {
            // The seconds the group has finished, to the test's timeline, at least every poll
            // (`seconds.rs`: an idle consumer's read may block a second).
            let now = live.now_ns();
            (self.group.tally.lock().unwrap_or_else(|e| e.into_inner())).hand(now, &live.timeline);
            if live.interrupted.load(Ordering::Relaxed) || live.stop.load(Ordering::Relaxed) {
                break;
            }
            if live.publishing_done.load(Ordering::Relaxed) {
                let since = *done_at.get_or_insert_with(Instant::now);
                if !self.closing && self.owed_done(since) {
                    self.closing = true;
                }
            }
            if self.closing {
                let at = *closed_at.get_or_insert_with(Instant::now);
                let waiting = self
                    .consumers
                    .iter()
                    .any(|c| c.stream.is_some() && c.owed.contains(&Owed::Ack));
                if !waiting || at.elapsed() > CLOSING {
                    break;
                }
            }
            if self.consumers.iter().all(|c| c.stream.is_none()) {
                break;
            }
            if let Err(e) = poll.poll(&mut events, Some(POLL))
                && e.kind() != ErrorKind::Interrupted
            {
                break;
            }
            for ev in events.iter() {
                let slot = ev.token().0;
                if slot >= self.consumers.len() {
                    continue;
                }
                if ev.is_writable() {
                    self.flush(slot, &poll);
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.receive(slot, &poll);
                }
            }
        }
        self.poll = Some(poll);
    }

    /// Sends consumer `slot`'s next read (none once closing).
    fn ask(&mut self, slot: usize) {
        if self.closing {
            return;
        }
        let c = &mut self.consumers[slot];
        c.out.extend_from_slice(&c.read);
        c.owed.push_back(Owed::Read);
        if let Some(poll) = self.poll.take() {
            self.flush(slot, &poll);
            self.poll = Some(poll);
        }
    }

    /// Writes what consumer `slot` has pending; waits for writability when the socket is full.
    fn flush(&mut self, slot: usize, poll: &Poll) {
        let c = &mut self.consumers[slot];
        let Some(stream) = c.stream.as_mut() else {
            return;
        };
        let mut written = 0;
        let result = loop {
            if written == c.out.len() {
                break Ok(());
            }
            match stream.write(&c.out[written..]) {
                Ok(0) => break Err("the server closed the connection".to_string()),
                Ok(n) => written += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break Ok(()),
                Err(e) => break Err(io_reason(&e)),
            }
        };
        c.out.drain(..written);
        let interest = if c.out.is_empty() {
            Interest::READABLE
        } else {
            Interest::READABLE | Interest::WRITABLE
        };
        let again = poll.registry().reregister(stream, Token(slot), interest);
        match (result, again) {
            (Err(reason), _) => self.fail(slot, reason, poll),
            (_, Err(e)) => self.fail(slot, io_reason(&e), poll),
            _ => {}
        }
    }

    /// Reads consumer `slot`'s socket to `WouldBlock` and handles each whole reply.
    fn receive(&mut self, slot: usize, poll: &Poll) {
        loop {
            let Loop {
                consumers, scratch, ..
            } = &mut *self;
            let c = &mut consumers[slot];
            let Some(stream) = c.stream.as_mut() else {
                return;
            };
            match stream.read(scratch) {
                Ok(0) => {
                    self.handle(slot, poll);
                    return self.fail(slot, "the server closed the connection".into(), poll);
                }
                Ok(n) => c.partial.extend_from_slice(&scratch[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return self.fail(slot, io_reason(&e), poll),
            }
        }
        self.handle(slot, poll);
    }

    /// Handles consumer `slot`'s whole replies, then sends what they call for.
    fn handle(&mut self, slot: usize, poll: &Poll) {
        let mut used = 0;
        let mut ask = false;
        loop {
            let c = &mut self.consumers[slot];
            if c.stream.is_none() {
                return;
            }
            let v = match Value::parse(&c.partial[used..]) {
                Ok(Some((v, n))) => {
                    used += n;
                    v
                }
                Ok(None) => break,
                Err(e) => {
                    let reason = format!("malformed reply: {e}");
                    return self.fail(slot, reason, poll);
                }
            };
            match (c.owed.front().copied(), v) {
                // Not a reply (a RESP3 push).
                (_, Value::Push(_)) => {}
                (Some(Owed::Ack), v) => {
                    c.owed.pop_front();
                    if let Value::Integer(n) = v {
                        c.acked += n.max(0) as u64;
                    }
                }
                (Some(Owed::Read), Value::Error(e)) => {
                    let reason = format!("XREADGROUP failed: {}", String::from_utf8_lossy(&e));
                    return self.fail(slot, reason, poll);
                }
                (Some(Owed::Read), v) => {
                    c.owed.pop_front();
                    self.count(slot, &v);
                    ask = true;
                }
                (None, _) => {
                    let reason = "a reply to no command".to_string();
                    return self.fail(slot, reason, poll);
                }
            }
        }
        let c = &mut self.consumers[slot];
        c.partial.drain(..used);
        if c.partial.is_empty() && c.partial.capacity() > KEEP_PARTIAL {
            c.partial.shrink_to(KEEP_PARTIAL);
        }
        if ask && !self.closing {
            let c = &mut self.consumers[slot];
            c.out.extend_from_slice(&c.read);
            c.owed.push_back(Owed::Read);
        }
        if !self.consumers[slot].out.is_empty() {
            self.flush(slot, poll);
        }
    }

    /// Counts an `XREADGROUP` reply's entries for consumer `slot` and queues their `XACK`.
    fn count(&mut self, slot: usize, reply: &Value) {
        let live = self.group.live;
        let found = entries(reply);
        if found.is_empty() {
            return;
        }
        let c = &mut self.consumers[slot];
        let now = live.now_ns();
        let mut ids: Vec<&[u8]> = Vec::with_capacity(3 + found.len());
        ids.extend([b"XACK".as_slice(), self.group.key, GROUP]);
        let before = c.mine;
        {
            let mut guard = self.group.tally.lock().unwrap_or_else(|e| e.into_inner());
            let tally = &mut *guard;
            // The seconds the group has finished, to the test's timeline (`seconds.rs`).
            tally.hand(now, &live.timeline);
            for &(id, payload) in &found {
                ids.push(id);
                match stamp::read(payload) {
                    Some((sent, number)) if tally.receive(number, sent, now) => {
                        c.mine += 1;
                        c.mine_ns = c.mine_ns.saturating_add(now.saturating_sub(sent));
                    }
                    // A duplicate (counted by `receive`).
                    Some(_) => {}
                    None => tally.stranger(now),
                }
            }
        }
        if c.mine > before {
            self.last = Instant::now();
        }
        live.received[c.i as usize].store(c.mine, Ordering::Relaxed);
        live.latency_ns[c.i as usize].store(c.mine_ns, Ordering::Relaxed);
        resp::encode_command(&mut c.out, &ids);
        c.owed.push_back(Owed::Ack);
    }

    /// Consumer `slot` ends for `reason`: listed, its socket closed.
    fn fail(&mut self, slot: usize, reason: String, poll: &Poll) {
        let c = &mut self.consumers[slot];
        let Some(mut s) = c.stream.take() else {
            return;
        };
        let _ = poll.registry().deregister(&mut s);
        c.partial = Vec::new();
        c.out = Vec::new();
        c.owed.clear();
        let i = c.i;
        self.gone(i, reason);
    }

    fn gone(&mut self, i: u32, reason: String) {
        self.disconnects.push(DisconnectRecord {
            receiver: i,
            at_s: self.group.live.origin.elapsed().as_secs_f64(),
            reason,
            by_server: false,
            output_buffer_bytes: None,
            reconnected_at_s: None,
        });
    }
}

/// Each entry's id and its [`FIELD`] value in an `XREADGROUP` reply: RESP2
/// `[[key, [[id, [f, v, …]], …]]]` or RESP3 `{key: [[id, [f, v, …]], …]}`; a timeout is null.
fn entries(reply: &Value) -> Vec<(&[u8], &[u8])> {
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
