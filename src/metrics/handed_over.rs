//! What a worker's whole-test histogram gained since its last hand-over, read from a narrow
//! band of its buckets instead of all of them (`metrics::ExactSecond`, for the journal).
//!
//! Why: a full-precision histogram ([`LatencyHistogram::new`]) has 33,792 counts. Taking a
//! second's part as "whole minus the last hand-over" with whole-histogram operations (copy,
//! subtract, add back, clear) cost about ten passes over two such histograms per worker per
//! second: about 4 M instructions, 3–5% of the instructions per request at `-P 1`
//! (`docs/performance.md`). A second's replies fall in a narrow band of buckets, and the
//! second's own coarse histogram (which the tally keeps anyway) knows that band's ends, so the
//! worker reads only those buckets. The total count says whether anything was recorded outside
//! the band (a value the coarse histogram did not see): then the rest of the whole histogram's
//! own min..max range is read too. So the part is exact whatever band it is given; a good band
//! only makes it cheap. The part is a list of `(bucket value, count)` pairs
//! ([`SparseHistogram`]), so the worker never clears or copies a 270 kB histogram either: the
//! journal's writer, on the main thread, turns it into a histogram.

use std::ops::Range;

use super::LatencyHistogram;

/// log2 of half the sub-buckets of [`LatencyHistogram::new`]'s layout: 3 significant figures
/// give 2,048 sub-buckets per bucket, lowest value 1 ns (unit magnitude 0). The tests check
/// [`index_of`] and [`value_of`] against hdrhistogram for every bucket.
const HALF_MAGNITUDE: u32 = 10;
const HALF: u64 = 1 << HALF_MAGNITUDE;
/// How many counts that layout has (1 ns to 1 hour: 33 half-buckets of 1,024).
pub const BUCKETS: usize = 33 * HALF as usize;

/// The index of the count that holds `v` (hdrhistogram's `index_for` for this layout).
#[inline]
fn index_of(v: u64) -> usize {
    let bucket = (64 - HALF_MAGNITUDE - 1) - (v | (2 * HALF - 1)).leading_zeros();
    let sub = v >> bucket;
    (((u64::from(bucket) + 1) << HALF_MAGNITUDE) + sub - HALF) as usize
}

/// The lowest value held by count `i` (hdrhistogram's `value_for` for this layout).
#[inline]
fn value_of(i: usize) -> u64 {
    let i = i as u64;
    match (i >> HALF_MAGNITUDE).checked_sub(1) {
        None => i,
        Some(bucket) => ((i & (HALF - 1)) + HALF) << bucket,
    }
}

/// How many pairs [`SparseHistogram::record_bounded`] lets pile up before it compacts them (a
/// compaction sorts them: about a dozen comparisons per value recorded).
const COMPACT_AT: usize = 4096;

/// A histogram's part as `(value, count)` pairs, one per bucket that gained (a value may appear
/// more than once: the parts of several histograms or workers are appended, and counts add up).
/// Values are in nanoseconds, in [`LatencyHistogram::new`]'s buckets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseHistogram {
    pairs: Vec<(u64, u64)>,
    /// [`SparseHistogram::record_bounded`] compacts when the pairs reach this many (0:
    /// [`COMPACT_AT`]): twice what the last compaction left, so values spread over more buckets
    /// than [`COMPACT_AT`] do not compact on every record (a sort per value).
    compact_at: usize,
}

impl SparseHistogram {
    /// `n` more at `value_ns` (recorded as [`LatencyHistogram::record_times`] does).
    pub fn record_n(&mut self, value_ns: u64, n: u64) {
        if n > 0 {
            self.pairs.push((value_ns, n));
        }
    }

    pub fn record(&mut self, value_ns: u64) {
        self.record_n(value_ns, 1);
    }

    /// Records `value_ns` once, keeping the pairs few: when they reach [`COMPACT_AT`] (or twice
    /// what the last compaction left), they are compacted in place
    /// ([`SparseHistogram::compact`]), so memory stays within twice the number of buckets the
    /// values fell in, whatever their count, each value costs an amortised constant, and
    /// nothing is allocated once the list has grown to that size (a direct tally's part:
    /// `metrics::SecondTally::direct`).
    pub fn record_bounded(&mut self, value_ns: u64) {
        // Clamped as a histogram records it, so the bucket is the one it would count in.
        let v = value_ns.clamp(1, super::histogram::MAX_LATENCY_NS);
        self.pairs.push((v, 1));
        if self.pairs.len() >= self.compact_at.max(COMPACT_AT) {
            self.compact();
            self.compact_at = 2 * self.pairs.len();
        }
    }

    /// One pair per bucket: each value moved to its bucket's lowest value (which a histogram
    /// records in the same bucket, as [`SparseHistogram::by_index`] reads it), in order, counts
    /// added. In place: no allocation.
    pub fn compact(&mut self) {
        for p in &mut self.pairs {
            p.0 = value_of(index_of(p.0.max(1)).min(BUCKETS - 1));
        }
        self.pairs.sort_unstable_by_key(|p| p.0);
        self.pairs.dedup_by(|cur, prev| {
            let same = cur.0 == prev.0;
            if same {
                prev.1 += cur.1;
            }
            same
        });
    }

    /// Appends `other`'s pairs.
    pub fn add(&mut self, other: &SparseHistogram) {
        self.pairs.extend_from_slice(&other.pairs);
    }

    /// Empties it, keeping its memory (the worker's part is refilled every second).
    pub fn clear(&mut self) {
        self.pairs.clear();
    }

    /// How many values it holds.
    pub fn len(&self) -> u64 {
        self.pairs.iter().map(|p| p.1).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Its counts by bucket index of [`LatencyHistogram::new`]'s layout, in index order, one
    /// entry per bucket: what the journal encodes (`record::hdr::encode_sparse`) without
    /// building a histogram. Values past the last bucket count in it, as recording clamps them.
    pub fn by_index(&self) -> Vec<(usize, u64)> {
        self.by_index_with(&mut DenseCounts::default())
    }

    /// [`SparseHistogram::by_index`], added up in `dense` (left as it was given: all zero).
    /// Why not a sort: a second's part is every worker's run of pairs one after another
    /// (thousands each, a node's part as many again in cluster mode), and putting them in order
    /// was the largest part of the journal writer's work a second; adding them up in place and
    /// reading the counts back between the lowest and highest bucket is linear.
    pub fn by_index_with(&self, dense: &mut DenseCounts) -> Vec<(usize, u64)> {
        let (mut lo, mut hi) = (BUCKETS, 0);
        for &(x, n) in &self.pairs {
            let i = index_of(x.max(1)).min(BUCKETS - 1);
            dense.0[i] += n;
            (lo, hi) = (lo.min(i), hi.max(i));
        }
        let mut v = Vec::with_capacity(self.pairs.len());
        if lo <= hi {
            for (i, n) in dense.0[lo..=hi].iter_mut().enumerate() {
                if *n > 0 {
                    v.push((lo + i, *n));
                    *n = 0;
                }
            }
        }
        v
    }

    /// As a full-precision histogram (the record's form).
    pub fn to_histogram(&self) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for &(v, n) in &self.pairs {
            // `record_times`, not `record_n`: the last bucket's value is past the clamp.
            h.record_times(v, n);
        }
        h
    }
}

/// A count per bucket of [`LatencyHistogram::new`]'s layout, all zero between uses: where
/// [`SparseHistogram::by_index_with`] adds a part up (the journal's writer keeps one for the
/// run, 270 kB).
#[derive(Clone, Debug)]
pub struct DenseCounts(Vec<u64>);

impl Default for DenseCounts {
    fn default() -> Self {
        DenseCounts(vec![0; BUCKETS])
    }
}

/// A histogram's counts as of the last hand-over, to take what it gained since.
#[derive(Clone, Debug)]
pub struct HandedOver {
    /// Count by bucket index, as the histogram held it at the last hand-over.
    counts: Vec<u64>,
    /// Their sum: the histogram's `len` then.
    total: u64,
}

impl Default for HandedOver {
    fn default() -> Self {
        Self {
            counts: vec![0; BUCKETS],
            total: 0,
        }
    }
}

impl HandedOver {
    /// Adds to `out` what `whole` gained since the last call, and remembers `whole`'s counts.
    /// `band` (`[low, high]` ns) is where the gain is expected (the second's coarse
    /// histogram's min and max); a gain outside it is found too, at the cost of reading the
    /// rest of `whole`'s range. `whole` only ever gains (a worker's recording histogram).
    pub fn take(&mut self, whole: &LatencyHistogram, band: (u64, u64), out: &mut SparseHistogram) {
        let gained = whole.len().saturating_sub(self.total);
        if gained == 0 {
            return;
        }
        let last = self.counts.len() - 1;
        let all = index_of(whole.min_ns()).min(last)..index_of(whole.max_ns()).min(last) + 1;
        let lo = index_of(band.0).clamp(all.start, all.end);
        let hi = (index_of(band.1).min(last) + 1).clamp(lo, all.end);
        let mut found = self.read(whole, lo..hi, out);
        if found < gained {
            found += self.read(whole, all.start..lo, out);
            found += self.read(whole, hi..all.end, out);
        }
        debug_assert_eq!(
            found, gained,
            "every gained value lies in the histogram's range"
        );
        self.total = whole.len();
    }

    /// [`HandedOver::take`] for a histogram whose values are some of those another part
    /// gained (`among`: a cluster node's latencies are its worker's, bucket for bucket): only
    /// the buckets `among` names are read, until the whole gain is found; the rest of `whole`'s
    /// range only when it is not (a node's replies that waited for the next cluster hand-over
    /// lie in an earlier second's buckets), so the part is exact whatever `among` holds.
    pub fn take_among(
        &mut self,
        whole: &LatencyHistogram,
        among: &SparseHistogram,
        out: &mut SparseHistogram,
    ) {
        let gained = whole.len().saturating_sub(self.total);
        if gained == 0 {
            return;
        }
        let raw = whole.raw();
        let last = self.counts.len() - 1;
        let mut found = 0;
        for &(v, _) in &among.pairs {
            if found == gained {
                break;
            }
            let i = index_of(v.max(1)).min(last);
            let at = value_of(i);
            let now = raw.count_at(at);
            let was = &mut self.counts[i];
            if now > *was {
                out.pairs.push((at, now - *was));
                found += now - *was;
                *was = now;
            }
        }
        if found < gained {
            let all = index_of(whole.min_ns()).min(last)..index_of(whole.max_ns()).min(last) + 1;
            found += self.read(whole, all, out);
        }
        debug_assert_eq!(
            found, gained,
            "every gained value lies in the histogram's range"
        );
        self.total = whole.len();
    }

    /// Reads buckets `r` of `whole`: each one's gain to `out`, its count remembered. Returns the
    /// sum of the gains.
    fn read(
        &mut self,
        whole: &LatencyHistogram,
        r: Range<usize>,
        out: &mut SparseHistogram,
    ) -> u64 {
        let raw = whole.raw();
        let mut found = 0;
        for (i, was) in r.clone().zip(&mut self.counts[r]) {
            let v = value_of(i);
            let now = raw.count_at(v);
            if now > *was {
                out.pairs.push((v, now - *was));
                found += now - *was;
                *was = now;
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_hdrhistograms_for_every_bucket() {
        let h = LatencyHistogram::new();
        let raw = h.raw();
        let n = raw.distinct_values();
        assert_eq!(n, BUCKETS);
        for i in 1..n {
            let v = value_of(i);
            assert_eq!(index_of(v), i, "bucket {i}");
            assert_eq!(raw.lowest_equivalent(v), v, "bucket {i} starts at {v}");
            if i + 1 < n {
                assert_eq!(raw.next_non_equivalent(v), value_of(i + 1), "bucket {i}");
                assert_eq!(index_of(value_of(i + 1) - 1), i, "bucket {i}'s last value");
            }
        }
    }

    /// Records `values` into `whole` and returns what the hand-over took, as a histogram.
    fn take(
        whole: &mut LatencyHistogram,
        base: &mut HandedOver,
        values: &[u64],
        band: (u64, u64),
    ) -> LatencyHistogram {
        for &v in values {
            whole.record(v);
        }
        let mut out = SparseHistogram::default();
        base.take(whole, band, &mut out);
        out.to_histogram()
    }

    /// The difference `after - before`, with hdrhistogram's own subtraction.
    fn difference(after: &LatencyHistogram, before: &LatencyHistogram) -> LatencyHistogram {
        let mut d = after.clone();
        d.subtract(before);
        d
    }

    fn same(a: &LatencyHistogram, b: &LatencyHistogram) {
        assert_eq!(a.len(), b.len());
        let (a, b) = (a.raw(), b.raw());
        let pairs = |h: &hdrhistogram::Histogram<u64>| -> Vec<(u64, u64)> {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        };
        assert_eq!(pairs(a), pairs(b));
        assert_eq!((a.min(), a.max()), (b.min(), b.max()));
    }

    #[test]
    fn each_part_is_the_difference_sparse_wide_and_outside_the_band() {
        let mut whole = LatencyHistogram::new();
        let mut base = HandedOver::default();
        // Sparse and wide: 1 ns to past the one-hour clamp, a few values per decade.
        let wide: Vec<u64> = (0..20)
            .map(|k| 10u64.pow(k / 2) * if k % 2 == 0 { 1 } else { 3 })
            .chain([u64::MAX, 0])
            .collect();
        let dense: Vec<u64> = (0..50_000u64)
            .map(|k| 40_000 + (k * 7919) % 900_000)
            .collect();
        let seconds: [(&[u64], (u64, u64)); 5] = [
            (&dense, (40_000, 940_000)),
            (&wide, (1, u64::MAX)),
            // A band that misses most of the second's values: found all the same.
            (&wide, (1_000, 2_000)),
            (&dense[..10], (5, 6)),
            (&[], (0, 0)),
        ];
        let mut sum = LatencyHistogram::new();
        for (values, band) in seconds {
            let before = whole.clone();
            let got = take(&mut whole, &mut base, values, band);
            same(&got, &difference(&whole, &before));
            sum.merge(&got);
        }
        same(&sum, &whole);
    }

    /// A node's part taken among its worker's buckets is the difference too: when the node's
    /// values are some of the worker's, and when some lie elsewhere (an earlier second's).
    #[test]
    fn a_part_taken_among_anothers_buckets_is_the_difference() {
        let mut worker = LatencyHistogram::new();
        let mut node = LatencyHistogram::new();
        let (mut worker_base, mut node_base) = (HandedOver::default(), HandedOver::default());
        let mut sum = LatencyHistogram::new();
        for (second, earlier) in [(0u64, false), (1, true), (2, false)] {
            let before = node.clone();
            for k in 0..3_000u64 {
                let v = 50_000 + second * 10_000 + (k * 7919) % 400_000;
                worker.record(v);
                if k % 3 == 0 {
                    node.record(v);
                }
            }
            if earlier {
                // Gained before the last hand-over that saw the node: not among this second's.
                node.record(3);
                node.record(9_000_000_000);
            }
            let mut among = SparseHistogram::default();
            worker_base.take(&worker, (0, u64::MAX), &mut among);
            let mut out = SparseHistogram::default();
            node_base.take_among(&node, &among, &mut out);
            let got = out.to_histogram();
            same(&got, &difference(&node, &before));
            sum.merge(&got);
        }
        same(&sum, &node);
    }

    #[test]
    fn a_parts_pairs_add_up_in_any_order() {
        let mut a = SparseHistogram::default();
        a.record_n(1_000, 3);
        a.record(5);
        let mut b = SparseHistogram::default();
        b.record_n(1_000, 2);
        b.record_n(7, 0);
        a.add(&b);
        assert_eq!(a.len(), 6);
        let h = a.to_histogram();
        assert_eq!((h.len(), h.raw().count_at(1_000), h.min_ns()), (6, 5, 5));
        a.record_n(u64::MAX, 2);
        a.record(0);
        let by_index = a.by_index();
        assert_eq!(by_index.len(), 4, "{by_index:?}");
        assert_eq!(by_index[0], (1, 1), "0 ns counts as 1 ns, as recorded");
        assert_eq!(
            by_index[2],
            (index_of(1_000), 5),
            "one entry per bucket, counts added"
        );
        assert_eq!(by_index[3], (BUCKETS - 1, 2), "past the last bucket: in it");
        // Added up in one dense array, used again: the same, and the array left all zero.
        let mut dense = DenseCounts::default();
        assert_eq!(a.by_index_with(&mut dense), by_index);
        assert!(dense.0.iter().all(|&n| n == 0));
        assert_eq!(a.by_index_with(&mut dense), by_index);
        assert!(
            SparseHistogram::default()
                .by_index_with(&mut dense)
                .is_empty()
        );
        a.clear();
        assert!(a.is_empty());
    }

    #[test]
    fn values_recorded_one_by_one_stay_few_pairs_and_read_as_the_whole_histogram() {
        let mut part = SparseHistogram::default();
        let mut whole = LatencyHistogram::new();
        // 100,000 values in a few thousand buckets, the extremes too.
        for k in 0..100_000u64 {
            let v = 20_000 + (k * 7_919) % 3_000_000;
            part.record_bounded(v);
            whole.record(v);
        }
        for v in [0, 1, u64::MAX] {
            part.record_bounded(v);
            whole.record_times(v, 1);
        }
        // Compacted as it went (within twice the buckets the values fell in), but not on every
        // value: about 7,000 buckets here, more than COMPACT_AT, once took a sort per value.
        let buckets_hit = whole.raw().iter_recorded().count();
        assert!(buckets_hit > COMPACT_AT, "{buckets_hit}");
        assert!(
            part.compact_at > COMPACT_AT,
            "the threshold grew with the buckets"
        );
        assert!(
            part.pairs.len() <= 2 * buckets_hit,
            "compacted as it went: {} pairs",
            part.pairs.len()
        );
        part.compact();
        let buckets: Vec<u64> = part.pairs.iter().map(|p| p.0).collect();
        assert!(
            buckets.windows(2).all(|w| w[0] < w[1]),
            "one pair per bucket"
        );
        assert_eq!(part.len(), whole.len());
        let h = part.to_histogram();
        for p in [0.0, 1.0, 50.0, 99.0, 99.99, 100.0] {
            assert_eq!(
                h.value_at_percentile_ns(p),
                whole.value_at_percentile_ns(p),
                "p{p}"
            );
        }
        assert_eq!(part.by_index(), {
            let mut all = SparseHistogram::default();
            for v in whole.raw().iter_recorded() {
                all.record_n(v.value_iterated_to(), v.count_at_value());
            }
            all.by_index()
        });
    }
}
