//! The per-second timeline of a test: completed and failed requests and the latency of each
//! second of the measured phase, from every worker.
//!
//! Why it is built this way: a worker tallies the second under way in its own [`SecondTally`]
//! (no lock, no allocation per request) and hands it to the test's [`SharedTimeline`] when a reply
//! lands in a later second and when it stops, so the lock is taken about once per second per
//! worker, and memory holds one merged histogram per second of the test, not one per worker.
//! A request belongs to the second in which its reply arrived (counted from the start of the
//! measured phase); the sums over the seconds equal the test's totals ([`Timeline::check_totals`]).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{LatencyHistogram, TestResult};

/// One second of a test.
#[derive(Clone, Debug)]
pub struct Second {
    /// Replies that were not errors.
    pub completed: u64,
    /// Error replies.
    pub failed: u64,
    /// Corrected latency of this second's completed requests (nanoseconds, 2 significant
    /// figures: [`LatencyHistogram::coarse`]).
    pub latency: LatencyHistogram,
}

impl Default for Second {
    fn default() -> Self {
        Self {
            completed: 0,
            failed: 0,
            latency: LatencyHistogram::coarse(),
        }
    }
}

impl Second {
    fn is_empty(&self) -> bool {
        self.completed == 0 && self.failed == 0
    }

    fn add(&mut self, other: &Second) {
        self.completed += other.completed;
        self.failed += other.failed;
        self.latency.merge(&other.latency);
    }

    fn clear(&mut self) {
        self.completed = 0;
        self.failed = 0;
        self.latency.reset();
    }
}

/// A test's seconds, index = second since the start of the measured phase.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    pub seconds: Vec<Second>,
}

/// The timeline the workers of one test add their seconds to.
pub type SharedTimeline = Arc<Mutex<Timeline>>;

impl Timeline {
    /// The entry of second `index`, created (with the ones before it) when first reached.
    pub fn second_mut(&mut self, index: usize) -> &mut Second {
        if self.seconds.len() <= index {
            self.seconds.resize_with(index + 1, Second::default);
        }
        &mut self.seconds[index]
    }

    /// Adds another timeline, second by second.
    pub fn merge(&mut self, other: &Timeline) {
        for (i, s) in other.seconds.iter().enumerate() {
            self.second_mut(i).add(s);
        }
    }

    /// `Ok` when the seconds add up to the test's totals: completed, error replies, and the
    /// corrected histogram's count.
    pub fn check_totals(&self, r: &TestResult) -> Result<(), String> {
        let completed: u64 = self.seconds.iter().map(|s| s.completed).sum();
        let failed: u64 = self.seconds.iter().map(|s| s.failed).sum();
        let recorded: u64 = self.seconds.iter().map(|s| s.latency.len()).sum();
        let mut wrong = Vec::new();
        if completed != r.completed {
            wrong.push(format!("completed {completed} != {}", r.completed));
        }
        if failed != r.errors.total() {
            wrong.push(format!("failed {failed} != {}", r.errors.total()));
        }
        if recorded != r.latency.len() {
            wrong.push(format!("latencies {recorded} != {}", r.latency.len()));
        }
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(format!("timeline sums differ: {}", wrong.join(", ")))
        }
    }
}

/// One worker's second under way.
#[derive(Debug)]
pub struct SecondTally {
    /// The start of the measured phase: second 0 begins here.
    start: Instant,
    index: usize,
    /// When second `index` ends: the per-reply check is one comparison with it.
    boundary: Instant,
    current: Second,
    shared: SharedTimeline,
}

impl SecondTally {
    pub fn new(start: Instant, shared: SharedTimeline) -> Self {
        Self {
            start,
            index: 0,
            boundary: start + Duration::from_secs(1),
            current: Second::default(),
            shared,
        }
    }

    /// A measured reply that completed a request at `now` with corrected latency `latency_ns`.
    #[inline]
    pub fn success(&mut self, now: Instant, latency_ns: u64) {
        self.at(now);
        self.current.completed += 1;
        self.current.latency.record(latency_ns);
    }

    /// A measured error reply at `now`.
    #[inline]
    pub fn failure(&mut self, now: Instant) {
        self.failures(now, 1);
    }

    /// `n` measured requests failed at `now` (error replies, or a timeout or lost connection
    /// that failed a whole batch at once).
    #[inline]
    pub fn failures(&mut self, now: Instant, n: u64) {
        self.at(now);
        self.current.failed += n;
    }

    /// Moves to the second `now` falls in, handing over the one that ended.
    #[inline]
    fn at(&mut self, now: Instant) {
        if now >= self.boundary {
            self.next_second(now);
        }
    }

    /// Out of line: once a second per worker.
    #[cold]
    fn next_second(&mut self, now: Instant) {
        self.flush();
        let secs = now.saturating_duration_since(self.start).as_secs();
        self.index = secs as usize;
        self.boundary = self.start + Duration::from_secs(secs + 1);
    }

    /// Hands the second under way to the shared timeline (the worker calls it when it stops).
    pub fn flush(&mut self) {
        if self.current.is_empty() {
            return;
        }
        let mut t = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        t.second_mut(self.index).add(&self.current);
        drop(t);
        self.current.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_from_several_workers_add_up_by_second() {
        let shared = SharedTimeline::default();
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut a = SecondTally::new(start, shared.clone());
        let mut b = SecondTally::new(start, shared.clone());
        a.success(at(10), 1_000);
        b.success(at(20), 2_000);
        a.failure(at(900));
        a.success(at(1_100), 3_000); // second 1: second 0 handed over
        b.success(at(2_500), 4_000); // b skips second 1
        a.flush();
        b.flush();
        a.flush(); // nothing left: no double count
        let t = shared.lock().unwrap();
        let counts: Vec<(u64, u64, u64)> = t
            .seconds
            .iter()
            .map(|s| (s.completed, s.failed, s.latency.len()))
            .collect();
        assert_eq!(counts, [(2, 1, 2), (1, 0, 1), (1, 0, 1)]);
        assert!(t.seconds[2].latency.max_ns() >= 3_960 && t.seconds[2].latency.max_ns() <= 4_040);
    }

    #[test]
    fn totals_check_catches_a_lost_second() {
        use crate::metrics::Outcome;
        let mut r = TestResult::empty("SET", None, Outcome::Completed);
        let mut t = Timeline::default();
        for sec in 0..3usize {
            for k in 0..(10 * (sec as u64 + 1)) {
                t.second_mut(sec).latency.record(50_000 + k);
                t.second_mut(sec).completed += 1;
                r.latency.record(50_000 + k);
                r.completed += 1;
            }
        }
        t.second_mut(1).failed += 2;
        r.errors.record(b"ERR a");
        r.errors.record(b"ERR b");
        assert_eq!(t.check_totals(&r), Ok(()));
        let mut lost = t.clone();
        lost.seconds.pop();
        let e = lost.check_totals(&r).unwrap_err();
        assert!(
            e.contains("completed 30 != 60") && e.contains("latencies"),
            "{e}"
        );
    }
}
