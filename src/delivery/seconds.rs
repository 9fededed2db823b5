//! A delivery test's seconds while it runs (issue 22): each receiver hands the seconds it has
//! finished (first deliveries and their publish → receive latencies, 100 ms slots) to the
//! test's [`SharedTimeline`], and the calling thread hands them on with the engine's own rule
//! (`engine::seconds::SecondsOut`, a second once its grace has passed) to the run's
//! [`Observer`]: the journal (`record::journal`) and live metrics, as for any test. A killed
//! `--pubsub`/`--stream` run so leaves its finished seconds, and `/metrics` moves while it runs.
//!
//! Why handed by the receivers and not counted into a shared place per message: a receiver
//! keeps its own [`Tally`] (no lock per message) and takes the shared timeline's lock about once
//! a second, when its clock passes a second's end — a receiver wakes at least every 100 ms (its
//! read timeout, or a consumer thread's poll), well inside the hand-over's grace. A receiver drops
//! the seconds it handed over: the test's record is built from the shared timeline at its end
//! (`result::finish`), so a long test's memory does not grow with its receivers.
//! Every 250 ms the calling thread also reads the receivers' live counts (first deliveries and
//! their latency sum, one relaxed store each per delivery, next to the count they already kept)
//! and ticks the observer with them, as the engine's monitor ticks it with its workers' figures.

use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

use super::Live;
use super::tally::Tally;
use crate::engine::seconds::{GRACE, SecondsOut};
use crate::engine::{Observer, Snapshot, TICK};
use crate::metrics::{ErrorCounts, SLOT, SLOTS, SharedTimeline};

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
    /// Failed publishes by kind: an error reply's first word, or how the connection failed
    /// (`metrics::FAILURE_KINDS`), as a benchmark test counts its failures.
    pub failures: ErrorCounts,
    /// The first connection failure's text, and the reconnects (`-e`) tried and made.
    pub reason: Option<String>,
    pub reconnect_attempts: u64,
    pub reconnects: u64,
}

/// How often the calling thread looks for seconds to hand over while the test's threads run.
const POLL: Duration = Duration::from_millis(50);

/// The longest the seconds handed on wait for a publisher's (`Waiting::whole_until`).
const PUBLISHER_WAIT: Duration = Duration::from_secs(5);

impl Tally {
    /// Hands every second of this receiver's that ended before `now_ns` (since the test's
    /// origin) and was not handed yet.
    pub(super) fn hand(&mut self, now_ns: u64, to: &SharedTimeline) {
        self.hand_upto((now_ns / 1_000_000_000) as usize, to);
    }

    /// Hands everything left (the receiver has ended).
    pub(super) fn hand_rest(&mut self, to: &SharedTimeline) {
        self.hand_upto(usize::MAX, to);
    }

    /// Hands the seconds before `done` to the test's timeline and drops them here: the test's
    /// record is built from that timeline, so a receiver keeps only its seconds under way (a
    /// long test's receivers kept every second, 37 kB each, before). A second's full-precision
    /// part (a journal is written) goes with it; a delivery's latency is both its corrected
    /// and its uncorrected one (as the test's: `run::delivery`).
    fn hand_upto(&mut self, done: usize, to: &SharedTimeline) {
        let n = done
            .saturating_sub(self.handed)
            .min(self.timeline.seconds.len());
        if n > 0 {
            let mut shared = to.lock().unwrap_or_else(|e| e.into_inner());
            for (k, mut s) in self.timeline.seconds.drain(..n).enumerate() {
                if let Some(e) = s.exact.as_deref_mut() {
                    e.corrected.compact();
                    e.uncorrected.clone_from(&e.corrected);
                }
                shared.add_second(self.handed + k, &s);
            }
            self.handed += n;
        }
        if self.timeline.seconds.is_empty() && done != usize::MAX {
            // Nothing under way: the next delivery's second is counted from `done` on.
            self.handed = self.handed.max(done);
        }
    }
}

/// A publisher's messages per second (`per_second`, by send time) and the deliveries they owe
/// handed to the test's timeline up to second `upto` (not included); `next` is the first not
/// handed yet. The lock is taken only when a second is due, about once a second.
pub(super) fn hand_published(p: &Published, next: &mut usize, upto: usize, to: &SharedTimeline) {
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

/// Publisher `index` is about to send with every message it sent before now acknowledged and
/// counted: its seconds before now's are handed to the test's timeline, and marked whole
/// (`Live::published_through`), so the journal hands them on with its publishes in them.
pub(super) fn publishing_at(p: &Published, next: &mut usize, live: &Live, index: u32) {
    let second = (live.now_ns() / 1_000_000_000) as usize;
    hand_published(p, next, second, &live.timeline);
    live.published_through[index as usize].store(second, Ordering::Release);
}

/// Publishes that failed (`n` of them, of kind `kind`: an index into `FAILURE_KINDS`, `None`
/// for an error reply), due at `at_ns` since the origin, into the test's timeline: its seconds'
/// and slots' failures, so the engine's outage rule (`metrics::outage`) finds a server that was
/// down in a delivery test as in any other.
pub(super) fn hand_failed(to: &SharedTimeline, at_ns: u64, kind: Option<usize>, n: u64) {
    let (second, slot) = slot_of(at_ns);
    let mut shared = to.lock().unwrap_or_else(|e| e.into_inner());
    let s = shared.second_mut(second);
    s.failed += n;
    s.slots[slot].failed += n;
    if let Some(k) = kind {
        s.lost[k] += n;
        s.slots[slot].lost += n;
    }
}

/// A connection reopened (`-e`) at `at_ns` since the origin: an attempt, and whether it
/// connected, in its slot (the outage's reconnect counts).
pub(super) fn hand_reconnect(to: &SharedTimeline, at_ns: u64, connected: bool) {
    let (second, slot) = slot_of(at_ns);
    let mut shared = to.lock().unwrap_or_else(|e| e.into_inner());
    let s = &mut shared.second_mut(second).slots[slot];
    s.reconnect_attempts += 1;
    s.reconnects += u64::from(connected);
}

fn slot_of(at_ns: u64) -> (usize, usize) {
    let slot = (at_ns % 1_000_000_000) / SLOT.as_nanos() as u64;
    (
        (at_ns / 1_000_000_000) as usize,
        (slot as usize).min(SLOTS - 1),
    )
}

/// The calling thread's side while the test's threads run: it hands over each finished second
/// (`out`) and, every [`TICK`], tells the observer how the test goes (`Observer::tick`, as the
/// engine's monitor does for its workers: live metrics' phase, connections and completed
/// counter, and the progress line), from the receivers' live counts. Without the ticks
/// `/metrics` would show the test as still warming up with no connection, its completed counter
/// moving only in whole seconds.
pub(super) struct Waiting<'a> {
    out: SecondsOut<'a>,
    live: &'a Live,
    publishers: u64,
    /// The last tick: when, and the deliveries and their latency sum then.
    at: Instant,
    counted: (u64, u64),
}

impl<'a> Waiting<'a> {
    pub(super) fn new(live: &'a Live, publishers: u32) -> Self {
        Self {
            out: SecondsOut {
                timeline: &live.timeline,
                measure_start: live.origin,
                next: 0,
                threads: Default::default(),
            },
            live,
            publishers: u64::from(publishers),
            at: live.origin,
            counted: (0, 0),
        }
    }

    /// The end of a test's threads: waits for the publishers (`Published` each, a default one
    /// for a publisher that panicked), marks the publishing done, waits for the receivers'
    /// loops (what each returned; none for one that panicked), then stops the rest (the
    /// monitor), handing on the finished seconds all along.
    pub(super) fn join<R>(
        mut self,
        publishers: Vec<ScopedJoinHandle<'_, Published>>,
        loops: Vec<ScopedJoinHandle<'_, R>>,
        observer: &mut dyn Observer,
    ) -> (Vec<Published>, Vec<R>) {
        self.wait(&|| publishers.iter().all(|h| h.is_finished()), observer);
        let published: Vec<_> = publishers
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect();
        self.live.publishing_done.store(true, Ordering::Relaxed);
        self.wait(&|| loops.iter().all(|h| h.is_finished()), observer);
        let ended: Vec<_> = loops.into_iter().filter_map(|h| h.join().ok()).collect();
        self.live.stop.store(true, Ordering::Relaxed);
        (published, ended)
    }

    /// Waits until `done()` says the threads it waits for have ended, handing each finished
    /// second to `observer` meanwhile, and a tick every [`TICK`].
    pub(super) fn wait(&mut self, done: &dyn Fn() -> bool, observer: &mut dyn Observer) {
        while !done() {
            let now = Instant::now();
            if now.duration_since(self.at) >= TICK {
                self.tick(now, observer);
            }
            self.out.hand(self.whole_until(now), observer);
            std::thread::sleep(POLL);
        }
    }

    /// Where the seconds handed on stop at `now`: the seconds every publisher has marked whole
    /// (`publishing_at`). Why: a second's publishes are a publisher's to hand over, its
    /// deliveries the receivers'; handed on after the grace alone, a second whose publisher was
    /// kept off the CPU for longer went into the journal without its publishes but with their
    /// deliveries, and a killed run's record then had more delivered than published. A
    /// publisher stuck longer than [`PUBLISHER_WAIT`] (a call to a frozen server) holds them
    /// back no longer: its late publishes are then the finished record's only.
    fn whole_until(&self, now: Instant) -> Instant {
        let through = self
            .live
            .published_through
            .iter()
            .map(|a| a.load(Ordering::Acquire))
            .min()
            .unwrap_or(usize::MAX);
        if through == usize::MAX || self.live.publishing_done.load(Ordering::Relaxed) {
            return now;
        }
        let whole = self.live.origin + Duration::from_secs(through as u64) + GRACE;
        let waited = now.checked_sub(PUBLISHER_WAIT).unwrap_or(now);
        now.min(whole.max(waited))
    }

    /// The test's figures so far: its first deliveries (the test's completions) and their
    /// latency, and its connections, of which those that ended (a receiver done or dropped by
    /// the server, the publishers once publishing is over) are not up.
    fn tick(&mut self, now: Instant, observer: &mut dyn Observer) {
        let sum = |v: &[AtomicU64]| v.iter().map(|a| a.load(Ordering::Relaxed)).sum::<u64>();
        let (completed, latency) = (sum(&self.live.received), sum(&self.live.latency_ns));
        let ended = self
            .live
            .finished
            .iter()
            .filter(|f| f.load(Ordering::Relaxed))
            .count() as u64;
        let published = self.live.publishing_done.load(Ordering::Relaxed);
        observer.tick(&Snapshot {
            warming_up: false,
            measured_secs: now.duration_since(self.live.origin).as_secs_f64(),
            measured_completed: completed,
            measured_latency_sum_ns: latency,
            interval_completed: completed.saturating_sub(self.counted.0),
            interval_latency_sum_ns: latency.saturating_sub(self.counted.1),
            interval_secs: now.duration_since(self.at).as_secs_f64(),
            measured_bytes: 0,
            interval_bytes: 0,
            connections: self.live.received.len() as u64 + self.publishers,
            connections_down: ended + if published { self.publishers } else { 0 },
            // A message is known lost only when the test ends.
            in_flight: None,
        });
        self.at = now;
        self.counted = (completed, latency);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_handed_on_once_every_publisher_has_marked_them_whole() {
        use std::sync::Arc;
        use std::sync::atomic::AtomicBool;
        let live = Live::new(vec![1], (2, 1), Arc::new(AtomicBool::new(false)), false);
        let w = Waiting::new(&live, 2);
        let at = |ms: u64| live.origin + Duration::from_millis(ms);
        let through = |a: usize, b: usize| {
            live.published_through[0].store(a, Ordering::Release);
            live.published_through[1].store(b, Ordering::Release);
        };
        // Publisher 1 was kept off the CPU: its second 1 is not whole yet.
        through(3, 1);
        assert_eq!(w.whole_until(at(3_500)), at(1_000) + GRACE);
        through(3, 3);
        assert_eq!(w.whole_until(at(3_500)), at(3_000) + GRACE);
        assert_eq!(w.whole_until(at(3_100)), at(3_100), "never later than now");
        // Stuck for longer than the wait (a frozen server): it holds them back no more.
        through(3, 1);
        assert_eq!(w.whole_until(at(9_000)), at(9_000) - PUBLISHER_WAIT);
        through(usize::MAX, usize::MAX);
        assert_eq!(w.whole_until(at(3_500)), at(3_500), "publishing is over");
    }

    #[test]
    fn each_receiver_second_reaches_the_shared_timeline_once() {
        let shared = SharedTimeline::default();
        let (mut a, mut b) = (Tally::new(100), Tally::new(100));
        a.receive(0, 0, 100);
        a.receive(1, 0, 1_100_000_000);
        b.receive(0, 0, 200);
        // Second 0 has ended for both; a's second 1 is still under way.
        a.hand(1_200_000_000, &shared);
        b.hand(1_200_000_000, &shared);
        a.hand(1_300_000_000, &shared);
        assert_eq!(
            a.timeline.seconds.len(),
            1,
            "a keeps only its second under way"
        );
        assert!(b.timeline.seconds.is_empty());
        {
            let t = shared.lock().unwrap();
            assert_eq!(t.seconds.len(), 1);
            assert_eq!(t.seconds[0].completed, 2);
            assert_eq!(t.seconds[0].latency.len(), 2);
        }
        a.receive(2, 1_000_000_000, 1_500_000_000);
        // b's clock passed second 2 with nothing in it; a late delivery is counted in the
        // first second b has not handed.
        b.hand(2_100_000_000, &shared);
        b.receive(1, 0, 1_900_000_000);
        a.hand_rest(&shared);
        b.hand_rest(&shared);
        let t = shared.lock().unwrap();
        assert_eq!(t.seconds.len(), 3);
        let per_second: Vec<u64> = t.seconds.iter().map(|s| s.completed).collect();
        assert_eq!(per_second, [2, 2, 1]);
        let total: u64 = t.seconds.iter().map(|s| s.completed).sum();
        assert_eq!(total, a.delivered + b.delivered);
    }
}
