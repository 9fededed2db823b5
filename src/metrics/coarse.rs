//! A second's coarse histogram in a test's timeline (`Second::latency`, `Second::client_delay`):
//! open while the workers add to it, packed once they are done with it.
//!
//! Why: a 2-significant-figure histogram from 1 ns to an hour is 4,608 counts, 37 kB, however
//! few values it holds, and a test keeps two a second for the record's per-second rows: a run's
//! memory grew by about 75 kB a second of test, 6.5 GB a day. A second's values rarely fill
//! more than a few hundred of those counts, so once the workers have handed a second over
//! (`Timeline::pack_older`) its counts are kept as HdrHistogram V2 uncompressed bytes
//! ([`LatencyHistogram::plain_v2`], the journal's form of the same histogram): about 1 kB. A
//! reader that wants its percentiles gets the histogram back ([`CoarseHistogram::histogram`]);
//! what it holds is the same counts, so every figure is the same. An empty one holds nothing.
//!
//! The workers never record into one: each tallies its second under way in a plain
//! [`LatencyHistogram`] (`SecondTally`), so the per-reply path has no branch for this.

use std::borrow::Cow;

use super::LatencyHistogram;

/// A second's coarse histogram ([`LatencyHistogram::coarse`]'s layout).
#[derive(Clone, Debug, Default)]
pub enum CoarseHistogram {
    #[default]
    Empty,
    /// Boxed: the histogram's own fields are a few hundred bytes, kept per second otherwise.
    Open(Box<LatencyHistogram>),
    Packed(Packed),
}

/// The counts as V2 uncompressed bytes, with what readers ask of every second without its
/// percentiles.
#[derive(Clone, Debug)]
pub struct Packed {
    v2: Box<[u8]>,
    len: u64,
    max_ns: u64,
}

impl CoarseHistogram {
    /// The histogram to add to, opened (unpacked) when it is not.
    pub fn open_mut(&mut self) -> &mut LatencyHistogram {
        if !matches!(self, CoarseHistogram::Open(_)) {
            let h = self.histogram().into_owned();
            *self = CoarseHistogram::Open(Box::new(h));
        }
        match self {
            CoarseHistogram::Open(h) => h,
            _ => unreachable!("opened above"),
        }
    }

    /// Records one value (off the workers' path: a delivery receiver's message, a test's).
    pub fn record(&mut self, ns: u64) {
        self.open_mut().record(ns);
    }

    /// Records `count` values of `ns` (a test's second).
    #[cfg(test)]
    pub fn record_n(&mut self, ns: u64, count: u64) {
        self.open_mut().record_n(ns, count);
    }

    /// Adds a worker's histogram of the second (nothing when it is empty).
    pub fn merge_histogram(&mut self, h: &LatencyHistogram) {
        if !h.is_empty() {
            self.open_mut().merge(h);
        }
    }

    /// Adds another second's.
    pub fn merge(&mut self, other: &CoarseHistogram) {
        match other {
            CoarseHistogram::Empty => {}
            CoarseHistogram::Open(h) => self.merge_histogram(h),
            CoarseHistogram::Packed(p) => {
                if self.is_empty() {
                    *self = other.clone();
                } else {
                    // The bytes are `plain_v2`'s, which `add_plain_v2` always reads.
                    self.open_mut().add_plain_v2(&p.v2);
                }
            }
        }
    }

    /// Adds its counts to `into` (a test's whole histogram: `record::journal`'s reader).
    pub fn add_to(&self, into: &mut LatencyHistogram) {
        match self {
            CoarseHistogram::Empty => {}
            CoarseHistogram::Open(h) => into.merge(h),
            CoarseHistogram::Packed(p) => {
                into.add_plain_v2(&p.v2);
            }
        }
    }

    /// Keeps the counts as bytes (an empty histogram as nothing).
    pub fn pack(&mut self) {
        if let CoarseHistogram::Open(h) = self {
            *self = if h.is_empty() {
                CoarseHistogram::Empty
            } else {
                CoarseHistogram::Packed(Packed {
                    v2: h.plain_v2().into_boxed_slice(),
                    len: h.len(),
                    max_ns: h.max_ns(),
                })
            };
        }
    }

    /// The histogram, unpacked when packed: for a reader that wants percentiles (read them all
    /// from one call: each unpacks).
    pub fn histogram(&self) -> Cow<'_, LatencyHistogram> {
        match self {
            CoarseHistogram::Open(h) => Cow::Borrowed(h),
            CoarseHistogram::Empty => Cow::Owned(LatencyHistogram::coarse()),
            CoarseHistogram::Packed(p) => {
                let mut h = LatencyHistogram::coarse();
                h.add_plain_v2(&p.v2);
                Cow::Owned(h)
            }
        }
    }

    /// The counts as V2 uncompressed bytes (the journal's form), borrowed when packed.
    pub fn plain_v2(&self) -> Cow<'_, [u8]> {
        match self {
            CoarseHistogram::Packed(p) => Cow::Borrowed(&p.v2),
            _ => Cow::Owned(self.histogram().plain_v2()),
        }
    }

    pub fn len(&self) -> u64 {
        match self {
            CoarseHistogram::Empty => 0,
            CoarseHistogram::Open(h) => h.len(),
            CoarseHistogram::Packed(p) => p.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Largest value, as the highest value equivalent to it (0 when empty).
    pub fn max_ns(&self) -> u64 {
        match self {
            CoarseHistogram::Empty => 0,
            CoarseHistogram::Open(h) => h.max_ns(),
            CoarseHistogram::Packed(p) => p.max_ns,
        }
    }

    /// What it keeps on the heap, bytes (the counts of an open one, the bytes of a packed one):
    /// what the tests measure a long timeline by.
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        match self {
            CoarseHistogram::Empty => 0,
            CoarseHistogram::Open(h) => {
                std::mem::size_of::<LatencyHistogram>() + h.raw().distinct_values() * 8
            }
            CoarseHistogram::Packed(p) => p.v2.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second of `n` values spread like a loaded server's (tens of µs to tens of ms).
    fn second(n: u64, seed: u64) -> LatencyHistogram {
        let mut h = LatencyHistogram::coarse();
        let mut x = seed;
        for _ in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let spread = (x >> 33) % 1_000;
            h.record(20_000 + spread * spread * 40);
        }
        h
    }

    #[test]
    fn a_packed_second_gives_every_figure_the_open_one_gave() {
        let open = second(50_000, 7);
        let mut c = CoarseHistogram::default();
        c.merge_histogram(&open);
        c.pack();
        assert!(matches!(c, CoarseHistogram::Packed(_)));
        assert_eq!((c.len(), c.max_ns()), (open.len(), open.max_ns()));
        let back = c.histogram();
        for p in [0.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            assert_eq!(
                back.value_at_percentile_ns(p),
                open.value_at_percentile_ns(p)
            );
        }
        assert_eq!(back.mean_ns(), open.mean_ns());
        assert_eq!(c.plain_v2().as_ref(), open.plain_v2().as_slice());
    }

    #[test]
    fn a_packed_second_is_a_small_part_of_an_open_one() {
        let mut c = CoarseHistogram::default();
        c.merge_histogram(&second(50_000, 3));
        let open = c.heap_bytes();
        c.pack();
        // 4,608 counts of 8 bytes open; the values fill a few hundred of them.
        assert!(open >= 36_000, "{open}");
        assert!(c.heap_bytes() < 2_500, "{}", c.heap_bytes());
        let mut empty = CoarseHistogram::default();
        empty.merge_histogram(&LatencyHistogram::coarse());
        empty.pack();
        assert_eq!(empty.heap_bytes(), 0);
    }

    #[test]
    fn adding_to_a_packed_second_adds_to_its_counts() {
        let (a, b) = (second(1_000, 1), second(2_000, 2));
        let mut all = a.clone();
        all.merge(&b);
        let mut c = CoarseHistogram::default();
        c.merge_histogram(&a);
        c.pack();
        c.merge_histogram(&b);
        let mut packed_b = CoarseHistogram::default();
        packed_b.merge_histogram(&b);
        packed_b.pack();
        let mut d = CoarseHistogram::default();
        d.merge_histogram(&a);
        d.pack();
        d.merge(&packed_b);
        for h in [c.histogram(), d.histogram()] {
            assert_eq!(h.len(), all.len());
            for p in [1.0, 50.0, 99.0, 100.0] {
                assert_eq!(h.value_at_percentile_ns(p), all.value_at_percentile_ns(p));
            }
        }
    }

    /// A long test's timeline, as its workers hand seconds over: what it keeps grows by the
    /// seconds' values, every figure the record reads is what the open seconds gave, and a
    /// worker idle for seconds that hands an old second over late is added and packed again.
    #[test]
    fn a_long_timeline_keeps_its_seconds_packed_and_exact() {
        use crate::metrics::{OPEN_SECONDS, SecondTally, SharedTimeline};
        use std::time::{Duration, Instant};
        const SECONDS: u64 = 600;
        let shared = SharedTimeline::default();
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut busy = SecondTally::new(start, shared.clone());
        let mut idle = SecondTally::new(start, shared.clone());
        let mut whole = LatencyHistogram::coarse();
        let mut x = 11u64;
        idle.success(at(5), 77_000);
        whole.record(77_000);
        for sec in 0..SECONDS {
            for k in 0..200 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let ns = 30_000 + ((x >> 33) % 4_000) * ((x >> 20) % 300);
                busy.success(at(sec * 1_000 + k * 5), ns);
                busy.client_delay(at(sec * 1_000 + k * 5), ns / 10);
                whole.record(ns);
            }
        }
        // The idle worker's second 0, handed over ten minutes late (its next reply).
        idle.success(at(SECONDS * 1_000 - 10), 5_000);
        whole.record(5_000);
        busy.flush();
        idle.flush();
        let t = shared.lock().unwrap();
        let packed = t
            .seconds
            .iter()
            .filter(|s| matches!(s.latency, CoarseHistogram::Packed(_)))
            .count();
        // The newest second and the OPEN_SECONDS before it stay open.
        assert_eq!(packed, t.seconds.len() - 1 - OPEN_SECONDS);
        assert!(
            matches!(t.seconds[0].latency, CoarseHistogram::Packed(_)),
            "second 0 packed again after the late hand-over"
        );
        let per_second = t.bytes() / t.seconds.len();
        // Open, two histograms a second were 74 kB.
        assert!(per_second < 4_000, "{per_second} bytes a second");
        let mut sum = LatencyHistogram::coarse();
        for s in &t.seconds {
            s.latency.add_to(&mut sum);
        }
        assert_eq!(t.seconds[0].latency.len(), 201);
        assert_eq!(sum.len(), whole.len());
        for p in [50.0, 99.0, 99.99, 100.0] {
            assert_eq!(
                sum.value_at_percentile_ns(p),
                whole.value_at_percentile_ns(p)
            );
        }
    }
}
