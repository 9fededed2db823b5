//! What one receiver (a subscriber, or a consumer group's consumers together) saw: each message
//! number at most once counted as delivered, again as a duplicate; the delivery latency into an
//! HDR histogram; per second of the test, deliveries and the slowest one. The "seen" set is a
//! bitset over the run's message numbers (bounded by the plan: `-n` bits per receiver).

use crate::metrics::{LatencyHistogram, SLOT, SLOTS, Timeline};

/// The message numbers one receiver has had: a bit each over the run's `0..messages`.
#[derive(Clone, Debug, Default)]
pub struct Seen(Vec<u64>);

impl Seen {
    /// Room for message numbers `0..messages`.
    pub fn new(messages: u64) -> Self {
        Self(vec![0; messages.div_ceil(64) as usize])
    }

    /// Marks `number` had: `Some(true)` the first time, `Some(false)` again, `None` for a
    /// number beyond the run's.
    fn mark(&mut self, number: u64) -> Option<bool> {
        let (word, bit) = ((number / 64) as usize, 1u64 << (number % 64));
        let w = self.0.get_mut(word)?;
        let first = *w & bit == 0;
        *w |= bit;
        Some(first)
    }
}

/// A receiver's deliveries (or, on a subscriber thread, its subscribers' together: each
/// subscriber keeps only its [`Seen`] set, so a subscriber costs bits, not histograms).
#[derive(Clone, Debug)]
pub struct Tally {
    seen: Seen,
    /// First deliveries.
    pub delivered: u64,
    /// Messages delivered again (a number already seen).
    pub duplicates: u64,
    /// Payloads that were not a stamp of this run (or a number beyond it).
    pub foreign: u64,
    /// Send → receive of first deliveries, ns.
    pub latency: LatencyHistogram,
    /// Their sum, ns (the live progress's average: `seconds::Waiting`).
    pub latency_sum_ns: u64,
    /// Per second since the origin (with its 100 ms slots), as the engine's tests keep it, so
    /// the record's timeline and outages read a delivery test like any other: the seconds from
    /// `handed` on (those before went to the test's timeline: `seconds.rs`).
    pub timeline: Timeline,
    /// The seconds handed to the test's timeline and dropped here.
    pub(super) handed: usize,
    /// When the last first delivery arrived, ns since the origin.
    pub last_ns: u64,
    /// Whether each second keeps its deliveries' latencies at full precision too (a journal
    /// is written: [`Tally::keeping_exact`]).
    exact: bool,
}

impl Tally {
    /// Room for message numbers `0..messages`.
    pub fn new(messages: u64) -> Self {
        Self {
            seen: Seen::new(messages),
            delivered: 0,
            duplicates: 0,
            foreign: 0,
            latency: LatencyHistogram::new(),
            latency_sum_ns: 0,
            timeline: Timeline::default(),
            handed: 0,
            last_ns: 0,
            exact: false,
        }
    }

    /// `on`: each second also keeps its first deliveries' latencies at full precision (its
    /// `exact` part, a pair per delivery compacted in place by bucket:
    /// `SparseHistogram::record_bounded`), so a killed test's journal has the test's histogram
    /// exactly. Why not the difference of the whole histogram between seconds, as a worker's:
    /// that keeps a copy of its counts (270 kB) per receiver, and a test may have hundreds.
    pub fn keeping_exact(mut self, on: bool) -> Self {
        self.exact = on;
        self
    }

    /// A message that was not a stamp of this run, received at `now_ns`.
    pub fn stranger(&mut self, now_ns: u64) {
        self.foreign += 1;
        self.pushed(now_ns);
    }

    /// Every message received counts as a push in its second (the test's `pushes.messages`).
    /// A message whose second was handed over already (a consumer of a group whose clock
    /// lagged another's) counts in the first second not handed.
    fn pushed(&mut self, now_ns: u64) -> &mut crate::metrics::Second {
        let index = (now_ns / 1_000_000_000) as usize;
        let second = self.timeline.second_mut(index.saturating_sub(self.handed));
        second.pushes.get_or_insert_default().messages += 1;
        second
    }

    /// Counts message `number`, sent at `sent_ns` and received at `now_ns` (both since the
    /// origin). Returns whether it was its first delivery.
    pub fn receive(&mut self, number: u64, sent_ns: u64, now_ns: u64) -> bool {
        let mut seen = std::mem::take(&mut self.seen);
        let first = self.receive_in(&mut seen, number, sent_ns, now_ns);
        self.seen = seen;
        first
    }

    /// [`Tally::receive`] for a receiver whose seen set is its own (`seen`), its figures added
    /// to this tally's.
    pub fn receive_in(&mut self, seen: &mut Seen, number: u64, sent_ns: u64, now_ns: u64) -> bool {
        match seen.mark(number) {
            None => {
                self.stranger(now_ns);
                return false;
            }
            Some(false) => {
                self.duplicates += 1;
                self.pushed(now_ns);
                return false;
            }
            Some(true) => {}
        }
        self.delivered += 1;
        self.last_ns = self.last_ns.max(now_ns);
        let ns = now_ns.saturating_sub(sent_ns);
        self.latency.record(ns.max(1));
        self.latency_sum_ns = self.latency_sum_ns.saturating_add(ns);
        let exact = self.exact;
        let second = self.pushed(now_ns);
        second.completed += 1;
        second.latency.record(ns.max(1));
        if exact {
            let part = second.exact.get_or_insert_with(Default::default);
            part.corrected.record_bounded(ns.max(1));
        }
        let slot = ((now_ns % 1_000_000_000) / SLOT.as_nanos() as u64) as usize;
        let slot = &mut second.slots[slot.min(SLOTS - 1)];
        slot.completed += 1;
        slot.waited_ns = slot.waited_ns.max(ns);
        true
    }

    /// Adds another receiver's figures (the seen sets are not merged: each receiver is counted
    /// against its own expectation), and its seconds not handed over yet (none once a
    /// receiver has ended: `Tally::hand_rest` hands them all to the test's timeline).
    pub fn merge_figures(&mut self, other: &Tally) {
        self.delivered += other.delivered;
        self.duplicates += other.duplicates;
        self.foreign += other.foreign;
        self.latency.merge(&other.latency);
        self.latency_sum_ns = self.latency_sum_ns.saturating_add(other.latency_sum_ns);
        self.last_ns = self.last_ns.max(other.last_ns);
        self.timeline.merge(&other.timeline);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_deliveries_duplicates_and_strangers_are_told_apart() {
        let mut t = Tally::new(100);
        assert!(t.receive(5, 0, 1_000));
        assert!(!t.receive(5, 0, 2_000));
        assert!(t.receive(99, 10, 1_500_000_000));
        assert!(!t.receive(200, 0, 1));
        assert_eq!((t.delivered, t.duplicates, t.foreign), (2, 1, 1));
        assert_eq!(t.latency.len(), 2);
        let seconds = &t.timeline.seconds;
        assert_eq!(seconds.len(), 2);
        assert_eq!(seconds[0].completed, 1);
        assert_eq!(seconds[1].slots[5].completed, 1);
        assert_eq!(seconds[1].slots[5].waited_ns, 1_499_999_990);
        let mut sum = Tally::new(100);
        sum.merge_figures(&t);
        sum.merge_figures(&t);
        assert_eq!((sum.delivered, sum.duplicates), (4, 2));
        assert_eq!(sum.timeline.seconds[1].completed, 2);
        assert!(
            sum.timeline
                .check_totals(&{
                    let mut r = crate::metrics::TestResult::empty(
                        "t",
                        None,
                        crate::metrics::Outcome::Completed,
                    );
                    r.completed = 4;
                    r.latency = sum.latency.clone();
                    r
                })
                .is_ok()
        );
    }
}
