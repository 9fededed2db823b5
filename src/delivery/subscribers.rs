//! The `--pubsub` subscribers on a few threads (issue 33): each thread holds its share of the
//! subscriber connections as non-blocking sockets on one `mio` poll loop, as an engine worker
//! holds its connections, reads whatever pushes arrive and counts each message once per
//! subscriber. A subscriber costs its socket, its seen set (a bit per message of the run) and a
//! partial message between reads; the latency histogram and the seconds are the thread's (one
//! [`Tally`] for all its subscribers), so 10,000 subscribers take a few threads and tens of MB,
//! where a blocking thread with its own histograms each took about 380 kB a subscriber.
//!
//! A subscriber whose connection fails (the server restarted, `CLIENT KILL`, its output buffer
//! limit) is listed as a [`Disconnect`]; under `-e` it connects and subscribes again (backing
//! off from 50 ms to 1 s) until publishing ends, and the disconnect says when it was back.
//! `--slow-subscribers` read one message per pause on their own timers, never holding the
//! others. A sharded subscriber told `sunsubscribe` (its channel's slot moved) subscribes again
//! where the channel now lives (`subscribe::subscribe_following`).
//!
//! Each push is parsed into an owned `resp::Value`, as the blocking subscribers did: the cost
//! per delivery `bench/delivery-cost.sh` measures against the engine's per request.

use std::io::ErrorKind;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use resp::Value;

use super::connect::is_refusal;
use super::route::Nodes;
use super::seconds::hand_reconnect;
use super::subscribe::{
    SubscriberId, Subscription, is_sunsubscribe, message_payload, subscribe_following,
};
use super::tally::{Seen, Tally};
use super::{DRAIN_IDLE, DRAIN_MAX, Disconnect, Live, stamp};
use crate::engine::conn::Stream;
use crate::engine::{EngineError, io_reason, with_hint};

/// How long a loop waits for readiness before it looks at its timers and the stop flags.
const POLL: Duration = Duration::from_millis(100);
/// Bytes read from a socket at a time (the thread's one buffer).
const READ_CHUNK: usize = 64 * 1024;
/// A reconnecting subscriber's first and longest wait between attempts.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(50), Duration::from_secs(1));
/// A partial message's buffer is given back down to this once drained.
const KEEP_PARTIAL: usize = 4 * 1024;

/// What every subscriber thread shares.
pub(super) struct Plan<'a> {
    pub nodes: &'a Nodes,
    /// The test's shared state, set once every thread's subscribers are subscribed (its
    /// origin is the test's start: subscribing thousands takes a while).
    pub live: &'a OnceLock<Live>,
    /// Ctrl-C/SIGTERM, or another thread failed to subscribe: give up while subscribing.
    pub abort: &'a (dyn Fn() -> bool + Sync),
    /// Subscribers in all.
    pub receivers: usize,
    /// Each subscriber's node and `CLIENT ID`, as the monitor reads them.
    pub ids: &'a [Mutex<SubscriberId>],
    /// Each subscriber's moves to other nodes (sharded: its channel's slot moved), with its
    /// first deliveries before each.
    pub moves: &'a [Mutex<Vec<(String, u64)>>],
    /// What subscriber `i` subscribes to: `names[i % names.len()]`.
    pub verb: &'static [u8],
    pub names: &'a [Vec<u8>],
    /// `-e`: a subscriber whose connection fails connects again.
    pub keep_going: bool,
    /// Messages in the test (each seen set's size).
    pub messages: u64,
    /// `--slow-subscribers`: the first `n` pause this long after each message.
    pub slow: Option<(u32, Duration)>,
    /// Subscriber threads.
    pub threads: usize,
}

/// What one subscriber thread measured: its subscribers' figures together, and the
/// disconnects among them.
pub(super) struct Measured {
    pub tally: Tally,
    pub disconnects: Vec<Disconnect>,
    /// Reconnects (`-e`) tried, and those that subscribed again.
    pub reconnects: (u64, u64),
}

/// One subscriber on a thread.
struct Sub {
    i: u32,
    /// Its channel's index.
    k: usize,
    stream: Option<Stream>,
    /// Bytes of a message not yet whole.
    partial: Vec<u8>,
    counts: Counts,
    /// `--slow-subscribers`: its pause, and when it reads next.
    pause: Option<Duration>,
    resume_at: Instant,
    /// Down: when it tries again, and its wait after that.
    retry: Option<(Instant, Duration)>,
}

/// A subscriber's deliveries.
struct Counts {
    i: usize,
    seen: Seen,
    delivered: u64,
    latency_ns: u64,
}

impl Counts {
    /// Counts `v` (a delivery, a duplicate, a stranger, or not a message); whether it was the
    /// server's `sunsubscribe`.
    fn on(&mut self, v: &Value, tally: &mut Tally, live: &Live) -> bool {
        let now = live.now_ns();
        match message_payload(v).map(stamp::read) {
            Some(Some((sent, number))) => {
                if tally.receive_in(&mut self.seen, number, sent, now) {
                    self.delivered += 1;
                    self.latency_ns = self.latency_ns.saturating_add(now.saturating_sub(sent));
                    live.received[self.i].store(self.delivered, Ordering::Relaxed);
                    live.latency_ns[self.i].store(self.latency_ns, Ordering::Relaxed);
                }
                false
            }
            Some(None) => {
                tally.stranger(now);
                false
            }
            None => is_sunsubscribe(v),
        }
    }
}

/// Parses whole values from `buf`, at most `max`, each to `f`; the bytes used and the values,
/// or the protocol error.
fn consume(buf: &[u8], max: usize, f: &mut dyn FnMut(&Value)) -> Result<(usize, usize), String> {
    let (mut used, mut values) = (0, 0);
    while values < max {
        match Value::parse(&buf[used..]) {
            Ok(Some((v, n))) => {
                used += n;
                values += 1;
                f(&v);
            }
            Ok(None) => break,
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok((used, values))
}

/// One subscriber thread.
struct Loop<'p, 'a> {
    plan: &'p Plan<'a>,
    live: &'p Live,
    poll: Poll,
    subs: Vec<Sub>,
    tally: Tally,
    disconnects: Vec<Disconnect>,
    scratch: Vec<u8>,
    /// When the last first delivery arrived.
    last: Instant,
    /// Reconnects tried, and made.
    reconnects: (u64, u64),
}

/// Subscriber thread `t`: subscribes its share (subscriber `i` for `i mod threads == t`),
/// says so on `ready` (or the error that stopped it), waits for `plan.go`, then reads until
/// its subscribers have what they are owed, the drain limits, or a signal.
pub(super) fn run(plan: &Plan<'_>, t: usize, ready: &Sender<Result<(), EngineError>>) -> Measured {
    let nothing = || Measured {
        tally: Tally::new(0),
        disconnects: Vec::new(),
        reconnects: (0, 0),
    };
    let (poll, subs, refused) = match subscribed(plan, t) {
        Ok(parts) => {
            let _ = ready.send(Ok(()));
            parts
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return nothing();
        }
    };
    let live = loop {
        if let Some(live) = plan.live.get() {
            break live;
        }
        if (plan.abort)() {
            return nothing();
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let mut lp = Loop {
        plan,
        live,
        poll,
        subs,
        tally: Tally::new(0).keeping_exact(live.exact()),
        // Subscribers refused at the start (`-e`): down from the start, each listed as dropped
        // with its reason, and subscribed when a retry gets in.
        disconnects: refused
            .into_iter()
            .map(|(i, reason)| Disconnect {
                receiver: i,
                at_s: 0.0,
                reason,
                by_server: false,
                output_buffer_bytes: None,
                reconnected_at_s: None,
            })
            .collect(),
        scratch: vec![0; READ_CHUNK],
        last: Instant::now(),
        reconnects: (0, 0),
    };
    lp.read_until_done();
    for s in &lp.subs {
        live.finished[s.i as usize].store(true, Ordering::Release);
    }
    lp.tally.hand_rest(&live.timeline);
    Measured {
        tally: lp.tally,
        disconnects: lp.disconnects,
        reconnects: lp.reconnects,
    }
}

/// Thread `t`'s subscribers, each subscribed and on the thread's poll, and those a server at
/// `maxclients` refused under `-e` (down, to try again with the others' backoff once the test
/// runs: the run goes on with the subscribers it has), with the refusal. Without `-e` a refusal
/// ends the run, its one line naming the server's `maxclients`.
fn subscribed(plan: &Plan<'_>, t: usize) -> Result<Refused, EngineError> {
    let io = |e: std::io::Error| EngineError::Io(format!("subscriber thread: {e}"));
    let poll = Poll::new().map_err(io)?;
    let mut subs = Vec::new();
    let mut refused = Vec::new();
    for i in (t..plan.receivers).step_by(plan.threads) {
        let pause = plan.slow.and_then(|(n, p)| (i < n as usize).then_some(p));
        let mut sub = Sub {
            i: i as u32,
            k: i % plan.names.len(),
            stream: None,
            partial: Vec::new(),
            counts: Counts {
                i,
                seen: Seen::new(plan.messages),
                delivered: 0,
                latency_ns: 0,
            },
            pause,
            resume_at: Instant::now(),
            retry: None,
        };
        match connect(plan, &poll, &mut sub, subs.len()) {
            Ok(()) => {}
            Err(e) if plan.keep_going && is_refusal(&e) => {
                sub.retry = Some((Instant::now() + BACKOFF.0, BACKOFF.0 * 2));
                refused.push((sub.i, e.to_string()));
            }
            Err(e) if is_refusal(&e) => return Err(with_hint(e)),
            Err(e) => return Err(e),
        }
        subs.push(sub);
        if (plan.abort)() {
            break;
        }
    }
    Ok((poll, subs, refused))
}

/// A subscriber thread's poll, its subscribers, and those refused at the start (index, why).
type Refused = (Poll, Vec<Sub>, Vec<(u32, String)>);

/// Connects subscriber `sub` and subscribes it, from its channel's first node (following
/// `MOVED` for a sharded channel), and puts it on `poll` as `slot`.
fn connect(plan: &Plan<'_>, poll: &Poll, sub: &mut Sub, slot: usize) -> Result<(), EngineError> {
    let to = Subscription {
        verb: plan.verb,
        name: &plan.names[sub.k],
    };
    let start = plan.nodes.of_name[sub.k];
    let (c, node, name, id) = subscribe_following(plan.nodes, start, to)?;
    let (blocking, rest) = c.into_parts();
    let failed = |e: std::io::Error| EngineError::Io(format!("{name}: {}", io_reason(&e)));
    let mut stream = blocking.into_nonblocking().map_err(failed)?;
    poll.registry()
        .register(&mut stream, Token(slot), Interest::READABLE)
        .map_err(failed)?;
    sub.stream = Some(stream);
    sub.partial = rest;
    let i = sub.i as usize;
    *plan.ids[i].lock().unwrap_or_else(|e| e.into_inner()) = node.zip(id);
    // Where it is now, for the record's per-node deliveries.
    let mut moves = plan.moves[i].lock().unwrap_or_else(|e| e.into_inner());
    let was = moves
        .last()
        .map_or(&plan.nodes.names[start], |(n, _)| n)
        .clone();
    if was != name {
        moves.push((name, sub.counts.delivered));
    }
    Ok(())
}

impl Loop<'_, '_> {
    fn connect(&mut self, slot: usize) -> Result<(), EngineError> {
        connect(self.plan, &self.poll, &mut self.subs[slot], slot)
    }

    fn read_until_done(&mut self) {
        let live = self.live;
        let mut events = Events::with_capacity(1024);
        let mut done_at: Option<Instant> = None;
        loop {
            self.tally.hand(live.now_ns(), &live.timeline);
            if live.stopping() {
                return;
            }
            if live.publishing_done.load(Ordering::Relaxed) {
                let since = *done_at.get_or_insert_with(Instant::now);
                if self.all_delivered()
                    || since.elapsed() > DRAIN_MAX
                    || self.last.max(since).elapsed() > DRAIN_IDLE
                {
                    return;
                }
            }
            let wait = self.timers(done_at.is_none());
            if let Err(e) = self.poll.poll(&mut events, Some(wait))
                && e.kind() != ErrorKind::Interrupted
            {
                return;
            }
            for ev in events.iter() {
                let slot = ev.token().0;
                if self.subs.get(slot).is_some_and(|s| s.pause.is_none()) {
                    self.read(slot, usize::MAX);
                }
            }
        }
    }

    /// Whether every subscriber that is up has what its channel was sent.
    fn all_delivered(&self) -> bool {
        let live = self.live;
        self.subs.iter().all(|s| {
            s.stream.is_none() || s.counts.delivered >= live.published[s.k].load(Ordering::Relaxed)
        })
    }

    /// Slow subscribers' reads and down subscribers' reconnects that are due (`reconnect`:
    /// publishing goes on), and how long the poll may wait for the next.
    fn timers(&mut self, reconnect: bool) -> Duration {
        let now = Instant::now();
        let mut wait = POLL;
        for slot in 0..self.subs.len() {
            let (pause, resume_at, retry) = {
                let s = &self.subs[slot];
                (s.pause, s.resume_at, s.retry)
            };
            if let Some((at, backoff)) = retry {
                if !reconnect {
                    self.subs[slot].retry = None;
                } else if at <= now {
                    self.reconnect(slot, backoff);
                } else {
                    wait = wait.min(at - now);
                }
            }
            if let Some(p) = pause
                && self.subs[slot].stream.is_some()
            {
                if resume_at <= now {
                    // One message per pause; with none there, it looks again a pause later.
                    self.read(slot, 1);
                    self.subs[slot].resume_at = Instant::now() + p;
                    wait = wait.min(p);
                } else {
                    wait = wait.min(resume_at - now);
                }
            }
        }
        wait.max(Duration::from_millis(1))
    }

    fn reconnect(&mut self, slot: usize, backoff: Duration) {
        let result = self.connect(slot);
        self.reconnects.0 += 1;
        self.reconnects.1 += u64::from(result.is_ok());
        hand_reconnect(&self.live.timeline, self.live.now_ns(), result.is_ok());
        match result {
            Ok(()) => {
                let sub = &mut self.subs[slot];
                sub.retry = None;
                let back = self.live.origin.elapsed().as_secs_f64();
                let i = sub.i;
                if let Some(d) = self.disconnects.iter_mut().rev().find(|d| d.receiver == i) {
                    d.reconnected_at_s = Some(back);
                }
                // What it may have had with its confirmation.
                self.read(slot, usize::MAX);
            }
            Err(_) => {
                let next = (backoff * 2).min(BACKOFF.1);
                self.subs[slot].retry = Some((Instant::now() + backoff, next));
            }
        }
    }

    /// Reads subscriber `slot` (at most `max` values: a slow subscriber's one) until its socket
    /// is drained; the values counted.
    fn read(&mut self, slot: usize, max: usize) -> usize {
        let mut moved = false;
        // What is buffered first: a slow subscriber reads its socket only when it has no whole
        // message left.
        let mut counted = match self.take(slot, max, &mut moved, 0) {
            Ok(n) => n,
            Err(e) => return self.fail(slot, e, false),
        };
        while counted < max {
            let Loop { subs, scratch, .. } = &mut *self;
            let Some(stream) = subs[slot].stream.as_mut() else {
                break;
            };
            let n = match stream.read(scratch) {
                Ok(0) => {
                    let reason = "the server closed the connection".to_string();
                    return counted + self.fail(slot, reason, true);
                }
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return counted + self.fail(slot, io_reason(&e), true),
            };
            match self.take(slot, max - counted, &mut moved, n) {
                Ok(c) => counted += c,
                Err(e) => return counted + self.fail(slot, e, false),
            }
            // Read on to `WouldBlock` even after a short read: a close that came with the last
            // messages brings no readiness edge of its own, and would go unseen.
        }
        if moved {
            self.follow(slot);
        }
        counted
    }

    /// Counts up to `max` whole values of subscriber `slot`'s partial message followed by
    /// `fresh` bytes just read into the thread's buffer; keeps the rest as its partial message.
    /// `moved`: set when one was the server's `sunsubscribe`.
    fn take(
        &mut self,
        slot: usize,
        max: usize,
        moved: &mut bool,
        fresh: usize,
    ) -> Result<usize, String> {
        let live = self.live;
        let Loop {
            subs,
            tally,
            scratch,
            last,
            ..
        } = self;
        let sub = &mut subs[slot];
        let before = sub.counts.delivered;
        let mut on = |v: &Value| *moved |= sub.counts.on(v, tally, live);
        let data = &scratch[..fresh];
        // Straight from the thread's buffer when nothing is pending, so a subscriber keeps only
        // the tail of a message cut by the read.
        let malformed = |e: String| format!("malformed reply: {e}");
        let values = if sub.partial.is_empty() {
            let (used, values) = consume(data, max, &mut on).map_err(malformed)?;
            sub.partial.extend_from_slice(&data[used..]);
            values
        } else {
            sub.partial.extend_from_slice(data);
            let (used, values) = consume(&sub.partial, max, &mut on).map_err(malformed)?;
            sub.partial.drain(..used);
            values
        };
        if sub.partial.is_empty() && sub.partial.capacity() > KEEP_PARTIAL {
            sub.partial.shrink_to(KEEP_PARTIAL);
        }
        if sub.counts.delivered > before {
            *last = Instant::now();
        }
        Ok(values)
    }

    /// A sharded subscriber told `sunsubscribe`: subscribed again where its channel lives now.
    fn follow(&mut self, slot: usize) {
        let live = self.live;
        self.drop_connection(slot);
        match self.connect(slot) {
            Ok(()) => {
                live.resubscribed.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                let reason = format!("its channel's slot moved and it could not follow: {e}");
                self.fail(slot, reason, false);
            }
        }
    }

    fn drop_connection(&mut self, slot: usize) {
        let sub = &mut self.subs[slot];
        if let Some(mut s) = sub.stream.take() {
            let _ = self.poll.registry().deregister(&mut s);
        }
        sub.partial = Vec::new();
        let i = sub.i as usize;
        *self.plan.ids[i].lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Subscriber `slot`'s connection failed for `reason` (`by_server`: the server closed or
    /// reset it): listed, and under `-e` tried again. Returns 0 (nothing more counted).
    fn fail(&mut self, slot: usize, reason: String, by_server: bool) -> usize {
        let plan = self.plan;
        self.drop_connection(slot);
        let sub = &mut self.subs[slot];
        self.disconnects.push(Disconnect {
            receiver: sub.i,
            at_s: self.live.origin.elapsed().as_secs_f64(),
            reason,
            by_server,
            output_buffer_bytes: None,
            reconnected_at_s: None,
        });
        if plan.keep_going && !self.live.publishing_done.load(Ordering::Relaxed) {
            sub.retry = Some((Instant::now() + BACKOFF.0, BACKOFF.0 * 2));
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_values_are_taken_and_a_cut_one_is_left() {
        let two = b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\na\r\n>3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nb\r\n";
        let cut = &two[..two.len() - 3];
        let mut seen = Vec::new();
        let mut f = |v: &Value| seen.push(message_payload(v).map(<[u8]>::to_vec));
        let first = b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\na\r\n".len();
        assert_eq!(consume(cut, usize::MAX, &mut f), Ok((first, 1)));
        assert_eq!(consume(two, 1, &mut f), Ok((first, 1)));
        assert_eq!(consume(two, usize::MAX, &mut f), Ok((two.len(), 2)));
        assert_eq!(seen.len(), 4);
        assert_eq!(seen[3].as_deref(), Some(b"b".as_slice()));
        assert!(consume(b"?oops\r\n", usize::MAX, &mut |_| {}).is_err());
    }
}
