//! The two distribution listings of the full report, as HdrHistogram_c's iterators produce them.
//!
//! valkey-benchmark prints "Latency by percentile distribution" with HdrHistogram_c's percentile
//! iterator (`hdr_iter_percentile_init(.., 1)`) and "Cumulative distribution of latencies" with its
//! linear iterator (`hdr_iter_linear_init(.., 100)`, step raised to 1000 once past 2 ms). The Rust
//! `hdrhistogram` crate's iterators are ports of the Java library and differ in when they stop and
//! which value they report, so this module re-implements the C state machines (described on
//! [`PercentileIter`] and [`LinearIter`]) over the crate's public bucket accessors.
//!
//! Owns: the iteration order, the values/counts reported and valkey-benchmark's print rules.
//! Must not: format text (see `format.rs`) or depend on the histogram's unit beyond the
//! `LINEAR_*` constants (which are in nanoseconds, like `LatencyHistogram`).

use hdrhistogram::Histogram;

/// One step of an iterator: what a distribution line needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Step {
    /// The percentile iterated to (percentile iterator) or `cumulative / total * 100` (linear).
    pub percentile: f64,
    /// Highest value equivalent to the bucket the iterator stands on (histogram units).
    pub highest_equivalent: u64,
    /// Number of recorded values up to and including that bucket.
    pub cumulative: u64,
}

/// A cursor over the histogram's counts array, index by index, as `struct hdr_iter` walks it.
///
/// The crate does not expose "value at index", but consecutive indices cover consecutive,
/// non-overlapping value ranges, so the value of index `i + 1` is `next_non_equivalent(value(i))`
/// and the count of index `i` is `count_at(value(i))`.
struct BucketCursor<'a> {
    h: &'a Histogram<u64>,
    /// `counts_len`: number of indices.
    len: usize,
    /// `counts_index`; `None` is the C iterator's initial `-1`.
    index: Option<usize>,
    /// Lowest value of the current bucket (`iter->value`); 0 before the first move.
    value: u64,
    /// `iter->highest_equivalent_value`; 0 before the first move.
    highest: u64,
    /// Count in the current bucket (`iter->count`).
    count: u64,
    /// Counts of all buckets up to the current one (`iter->cumulative_count`).
    cumulative: u64,
    /// `iter->total_count`.
    total: u64,
}

impl<'a> BucketCursor<'a> {
    fn new(h: &'a Histogram<u64>) -> Self {
        Self {
            h,
            len: h.distinct_values(),
            index: None,
            value: 0,
            highest: 0,
            count: 0,
            cumulative: 0,
            total: h.len(),
        }
    }

    /// C `has_next`: some recorded values lie beyond the current bucket.
    fn has_next(&self) -> bool {
        self.cumulative < self.total
    }

    /// The current index is past the last bucket (`counts_index >= counts_len`).
    fn past_end(&self) -> bool {
        self.index.is_some_and(|i| i >= self.len)
    }

    /// C `peek_next_value_from_index`: the lowest value of the next index.
    fn peek_next_value(&self) -> u64 {
        match self.index {
            None => 0,
            Some(_) => self.h.next_non_equivalent(self.value),
        }
    }

    /// C `move_next`: steps to the next index; `false` (leaving the other fields as they were)
    /// when that index is past the last bucket.
    fn move_next(&mut self) -> bool {
        let next_index = self.index.map_or(0, |i| i + 1);
        if next_index >= self.len {
            self.index = Some(next_index);
            return false;
        }
        let value = self.peek_next_value();
        self.index = Some(next_index);
        self.value = value;
        self.count = self.h.count_at(value);
        self.cumulative = self.cumulative.saturating_add(self.count);
        self.highest = self.h.highest_equivalent(value);
        true
    }

    /// C `basic_iter_next`: moves only while recorded values remain.
    fn basic_next(&mut self) -> bool {
        if !self.has_next() || self.past_end() {
            return false;
        }
        self.move_next();
        true
    }

    fn step(&self, percentile: f64) -> Step {
        Step {
            percentile,
            highest_equivalent: self.highest,
            cumulative: self.cumulative,
        }
    }
}

/// HdrHistogram_c's percentile iterator (`hdr_iter_percentile_init`, `percentile_iter_next`).
///
/// Algorithm replicated, with `ticks_per_half_distance = t` and `target` starting at 0.0:
/// 1. If no recorded values lie beyond the current bucket (`cumulative >= total`), yield once more
///    with percentile 100.0 and the current bucket's value and count, then stop.
/// 2. Otherwise walk the buckets (starting at the first one). At a bucket with a non-zero count
///    where `target <= 100.0 * cumulative / total`, yield `(target, highest_equivalent(bucket),
///    cumulative)` and advance `target` by `100 / (t * 2^(trunc(log2(100 / (100 - target))) + 1))`,
///    staying on the same bucket for the next call, so several targets can be yielded at one
///    bucket. The floating-point expressions are evaluated in the same order as in C.
///
/// With `t = 1` the targets are 0, 50, 75, 87.5, 93.75, … (halving the remaining distance to 100).
/// Because step 1 is checked first, once the bucket holding the last recorded value has been
/// reached only one target is yielded there, followed by the final 100.0 step.
///
/// For an empty histogram this yields a single step (100.0, 0, 0), as the C iterator does.
pub(crate) struct PercentileIter<'a> {
    cur: BucketCursor<'a>,
    ticks_per_half_distance: u32,
    target: f64,
    percentile: f64,
    seen_last_value: bool,
}

impl<'a> PercentileIter<'a> {
    pub(crate) fn new(h: &'a Histogram<u64>, ticks_per_half_distance: u32) -> Self {
        Self {
            cur: BucketCursor::new(h),
            ticks_per_half_distance,
            target: 0.0,
            percentile: 0.0,
            seen_last_value: false,
        }
    }

    /// The distance from `target` to the next target.
    fn increment(&self, target: f64) -> f64 {
        // C: temp = (int64_t)(log(100 / (100.0 - p)) / log(2)) + 1;
        //    half_distance = (int64_t) pow(2, (double) temp);
        //    ticks = ticks_per_half_distance * half_distance;  p += 100.0 / ticks;
        // `as` saturates where C would be undefined (p == 100 gives +inf); the step then
        // becomes negligible instead of panicking.
        let temp =
            (((100.0 / (100.0 - target)).ln() / std::f64::consts::LN_2) as i64).saturating_add(1);
        let half_distance = 2f64.powi(temp.clamp(0, 1023) as i32) as i64;
        let ticks = i64::from(self.ticks_per_half_distance).saturating_mul(half_distance);
        100.0 / ticks as f64
    }
}

impl Iterator for PercentileIter<'_> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        if !self.cur.has_next() {
            if self.seen_last_value {
                return None;
            }
            self.seen_last_value = true;
            self.percentile = 100.0;
            return Some(self.cur.step(self.percentile));
        }
        if self.cur.index.is_none() && !self.cur.basic_next() {
            return None;
        }
        loop {
            let current = (100.0 * self.cur.cumulative as f64) / self.cur.total as f64;
            if self.cur.count != 0 && self.target <= current {
                self.percentile = self.target;
                self.target += self.increment(self.target);
                return Some(self.cur.step(self.percentile));
            }
            if !self.cur.basic_next() {
                // Only reachable if `target` overshot 100 through rounding; C then reports
                // the previous percentile with the current bucket, and so do we.
                return Some(self.cur.step(self.percentile));
            }
        }
    }
}

/// HdrHistogram_c's linear iterator (`hdr_iter_linear_init`, `iter_linear_next`) with a step
/// that can be changed between calls (`hdr_iter_linear_set_value_units_per_bucket`).
///
/// Algorithm replicated: `level` starts at `step`. Each call continues while recorded values lie
/// beyond the current bucket, or the next bucket starts above `lowest_equivalent(level)`. It walks
/// the buckets (every bucket, empty or not) until the current bucket's lowest value is
/// `>= lowest_equivalent(level)`, i.e. it stands on the bucket containing `level`, and yields that
/// bucket's highest equivalent value and the cumulative count, then advances `level` by the
/// *current* step. A changed step therefore takes effect from the level after the one already
/// scheduled. `percentile` in the yielded step is `cumulative / total * 100` (computed in that
/// order, as valkey-benchmark does); it is NaN for an empty histogram, which yields nothing.
pub(crate) struct LinearIter<'a> {
    cur: BucketCursor<'a>,
    step: u64,
    level: u64,
    level_lowest_equivalent: u64,
}

impl<'a> LinearIter<'a> {
    pub(crate) fn new(h: &'a Histogram<u64>, step: u64) -> Self {
        Self {
            cur: BucketCursor::new(h),
            step,
            level: step,
            level_lowest_equivalent: h.lowest_equivalent(step),
        }
    }

    /// Changes the step used after the level already scheduled.
    pub(crate) fn set_step(&mut self, step: u64) {
        self.step = step;
    }

    /// C `next_value_greater_than_reporting_level_upper_bound`.
    fn next_bucket_above_level(&self) -> bool {
        !self.cur.past_end() && self.cur.peek_next_value() > self.level_lowest_equivalent
    }

    fn current(&self) -> Step {
        let percentile = (self.cur.cumulative as f64 / self.cur.total as f64) * 100.0;
        self.cur.step(percentile)
    }
}

impl Iterator for LinearIter<'_> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        if !(self.cur.has_next() || self.next_bucket_above_level()) {
            return None;
        }
        loop {
            if self.cur.value >= self.level_lowest_equivalent {
                let step = self.current();
                self.level = self.level.saturating_add(self.step);
                self.level_lowest_equivalent = self.cur.h.lowest_equivalent(self.level);
                return Some(step);
            }
            if !self.cur.move_next() {
                return Some(self.current());
            }
        }
    }
}

/// Linear step of "Cumulative distribution of latencies" up to 2 ms: 100 µs, in nanoseconds.
pub(crate) const LINEAR_FINE_STEP: u64 = 100_000;
/// Linear step once a reported bucket lies beyond 2 ms: 1000 µs, in nanoseconds.
pub(crate) const LINEAR_COARSE_STEP: u64 = 1_000_000;
/// The switch point between the two steps (2 ms), in nanoseconds.
pub(crate) const LINEAR_SWITCH_ABOVE: u64 = 2_000_000;

/// The lines of "Latency by percentile distribution:", after valkey-benchmark's print rule: a
/// step is printed when its cumulative count differs from the previous step's (the first step
/// always is) or equals the total. Empty for an empty histogram (the C iterator would yield one
/// "100.000% <= 0.000 ... (cumulative count 0)" line there; we print nothing).
pub(crate) fn percentile_lines(h: &Histogram<u64>) -> Vec<Step> {
    if h.is_empty() {
        return Vec::new();
    }
    let total = h.len();
    let mut previous: Option<u64> = None;
    let mut lines = Vec::new();
    for step in PercentileIter::new(h, 1) {
        if previous != Some(step.cumulative) || step.cumulative == total {
            lines.push(step);
        }
        previous = Some(step.cumulative);
    }
    lines
}

/// The lines of "Cumulative distribution of latencies:": the linear iterator in
/// [`LINEAR_FINE_STEP`]s, switched to [`LINEAR_COARSE_STEP`] after the first step whose bucket
/// value exceeds [`LINEAR_SWITCH_ABOVE`] (checked on every step, printed or not), with the same
/// print rule as [`percentile_lines`].
///
/// Stops after the first line that reaches the total. (The C iterator can go on yielding further
/// levels that fall inside the last bucket when buckets are wider than the step, each printed as
/// an identical "100.000%" line; we print that line once.) Empty for an empty histogram.
pub(crate) fn cumulative_lines(h: &Histogram<u64>) -> Vec<Step> {
    if h.is_empty() {
        return Vec::new();
    }
    let total = h.len();
    let mut previous: Option<u64> = None;
    let mut lines = Vec::new();
    let mut iter = LinearIter::new(h, LINEAR_FINE_STEP);
    while let Some(step) = iter.next() {
        if previous != Some(step.cumulative) || step.cumulative == total {
            lines.push(step);
        }
        if step.cumulative >= total {
            break;
        }
        if step.highest_equivalent > LINEAR_SWITCH_ABOVE {
            iter.set_step(LINEAR_COARSE_STEP);
        }
        previous = Some(step.cumulative);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::LatencyHistogram;

    fn hist(values_ns: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for &v in values_ns {
            h.record(v);
        }
        h
    }

    fn triples(steps: &[Step]) -> Vec<(f64, u64, u64)> {
        steps
            .iter()
            .map(|s| (s.percentile, s.highest_equivalent, s.cumulative))
            .collect()
    }

    /// 1..=10 µs, one each. In a 1 ns / 3-significant-figure histogram the buckets are 1 ns wide
    /// below 2048 ns, 2 ns to 4096, 4 ns to 8192 and 8 ns to 16384, giving the highest
    /// equivalent values below. Each bucket adds 10 percentage points:
    /// target 0 -> first bucket (10%); 50 -> 5 µs (50%); 75 -> 8 µs (80%); 87.5 -> 9 µs (90%);
    /// 93.75 -> 10 µs (100%); then the final 100.0 step.
    #[test]
    fn percentile_iterator_on_ten_values() {
        let h = hist(&(1..=10).map(|us| us * 1000).collect::<Vec<_>>());
        let steps: Vec<Step> = PercentileIter::new(h.raw(), 1).collect();
        assert_eq!(
            triples(&steps),
            vec![
                (0.0, 1000, 1),
                (50.0, 5003, 5),
                (75.0, 8003, 8),
                (87.5, 9007, 9),
                (93.75, 10007, 10),
                (100.0, 10007, 10),
            ]
        );
        // All have distinct counts or reach the total, so all are printed.
        assert_eq!(percentile_lines(h.raw()), steps);
    }

    /// Several targets fall in one bucket: they are all yielded, but only the first is printed.
    /// 3 values at 1 µs and 1 at 2 µs: the first bucket holds 75%, so targets 0, 50 and 75 are
    /// yielded there; 87.5 is reached at the last bucket, then 100.
    #[test]
    fn percentile_iterator_stays_on_a_bucket_and_prints_on_change() {
        let h = hist(&[1000, 1000, 1000, 2000]);
        let steps: Vec<Step> = PercentileIter::new(h.raw(), 1).collect();
        assert_eq!(
            triples(&steps),
            vec![
                (0.0, 1000, 3),
                (50.0, 1000, 3),
                (75.0, 1000, 3),
                (87.5, 2000, 4),
                (100.0, 2000, 4),
            ]
        );
        assert_eq!(
            triples(&percentile_lines(h.raw())),
            vec![(0.0, 1000, 3), (87.5, 2000, 4), (100.0, 2000, 4)]
        );
    }

    /// A single value: target 0 at its bucket (which reaches the total), then 100.
    #[test]
    fn percentile_iterator_single_value() {
        let h = hist(&[123_456]);
        let he = h.raw().highest_equivalent(123_456);
        let steps: Vec<Step> = PercentileIter::new(h.raw(), 1).collect();
        assert_eq!(triples(&steps), vec![(0.0, he, 1), (100.0, he, 1)]);
    }

    /// The C iterator yields (100, 0, 0) for an empty histogram; the report prints nothing.
    #[test]
    fn percentile_iterator_empty() {
        let h = LatencyHistogram::new();
        let steps: Vec<Step> = PercentileIter::new(h.raw(), 1).collect();
        assert_eq!(triples(&steps), vec![(100.0, 0, 0)]);
        assert!(percentile_lines(h.raw()).is_empty());
        assert!(cumulative_lines(h.raw()).is_empty());
    }

    /// With 100 000 values and a sparse tail the printed percentiles are exactly those of the reference
    /// output (001_*.txt): 0, 50, 75, … 99.999 (at 2^-17 of the rest), then 100.
    #[test]
    fn percentile_labels_match_reference_for_a_continuous_distribution() {
        // Pareto-like: 100 µs .. 5 s, the top ~1000 values each in a bucket of their own.
        let values: Vec<u64> = (0..100_000u64)
            .map(|i| 10_000_100_000 / (100_001 - i))
            .collect();
        let h = hist(&values);
        let lines = percentile_lines(h.raw());
        let labels: Vec<String> = lines
            .iter()
            .map(|s| format!("{:3.3}", s.percentile))
            .collect();
        let expected = [
            "0.000", "50.000", "75.000", "87.500", "93.750", "96.875", "98.438", "99.219",
            "99.609", "99.805", "99.902", "99.951", "99.976", "99.988", "99.994", "99.997",
            "99.998", "99.999", "100.000",
        ];
        assert_eq!(labels, expected);
        let last = lines.last().unwrap();
        assert_eq!(last.cumulative, 100_000);
        assert_eq!(lines[lines.len() - 2].cumulative, 100_000);
        assert_eq!(last.highest_equivalent, h.max_ns());
    }

    /// Linear iteration over 50, 150 and 350 µs: levels 100, 200, 300 and 400 µs. The level
    /// 300 µs adds nothing and is not printed; the walk stops at the level reaching the total.
    #[test]
    fn linear_iterator_and_print_rule() {
        let h = hist(&[50_000, 150_000, 350_000]);
        let he = |v| h.raw().highest_equivalent(v);
        let steps: Vec<Step> = LinearIter::new(h.raw(), LINEAR_FINE_STEP).collect();
        let c: Vec<(u64, u64)> = steps
            .iter()
            .map(|s| (s.highest_equivalent, s.cumulative))
            .collect();
        assert_eq!(
            c,
            vec![
                (he(100_000), 1),
                (he(200_000), 2),
                (he(300_000), 2),
                (he(400_000), 3)
            ]
        );
        let lines = cumulative_lines(h.raw());
        let c: Vec<(u64, u64)> = lines
            .iter()
            .map(|s| (s.highest_equivalent, s.cumulative))
            .collect();
        assert_eq!(
            c,
            vec![(he(100_000), 1), (he(200_000), 2), (he(400_000), 3)]
        );
        assert_eq!(lines[0].percentile, 1.0 / 3.0 * 100.0);
        assert_eq!(lines[2].percentile, 100.0);
    }

    /// The first level is printed even when nothing is below it (previous count starts unset).
    #[test]
    fn linear_first_line_always_printed() {
        let h = hist(&[450_000]);
        let lines = cumulative_lines(h.raw());
        let c: Vec<(u64, u64)> = lines
            .iter()
            .map(|s| (s.highest_equivalent, s.cumulative))
            .collect();
        let he = |v| h.raw().highest_equivalent(v);
        assert_eq!(c, vec![(he(100_000), 0), (he(500_000), 1)]);
        assert_eq!(lines[0].percentile, 0.0);
    }

    /// Past 2 ms the step becomes 1 ms, starting after the level already scheduled: levels
    /// …, 1.9, 2.0 (first value > 2 ms: switch), 2.1 (already scheduled), 3.1, 4.1, 5.1 ms.
    #[test]
    fn linear_step_switches_after_two_milliseconds() {
        let values: Vec<u64> = (0..60u64).map(|i| 50_000 + i * 90_000).collect(); // to 5.36 ms
        let h = hist(&values);
        let levels: Vec<u64> = cumulative_lines(h.raw())
            .iter()
            .map(|s| s.highest_equivalent)
            .collect();
        let mut expected: Vec<u64> = (1..=21u64).map(|i| i * 100_000).collect();
        expected.extend([3_100_000, 4_100_000, 5_100_000, 6_100_000]);
        let expected: Vec<u64> = expected
            .into_iter()
            .map(|v| h.raw().highest_equivalent(v))
            .collect();
        assert_eq!(levels, expected);
    }

    /// Wide buckets (latencies of seconds are in buckets wider than 1 ms): the C iterator
    /// would yield several levels inside the last bucket; we stop at the first.
    #[test]
    fn linear_stops_at_total_even_with_wide_buckets() {
        let h = hist(&[3_000_000_000]);
        let lines = cumulative_lines(h.raw());
        let last = lines.last().unwrap();
        assert_eq!(last.cumulative, 1);
        assert_eq!(lines.iter().filter(|s| s.cumulative == 1).count(), 1);
        // The C iterator itself goes on inside the same bucket.
        let mut it = LinearIter::new(h.raw(), LINEAR_COARSE_STEP);
        let first_total = it.by_ref().find(|s| s.cumulative == 1).unwrap();
        let next = it.next().unwrap();
        assert_eq!(next.highest_equivalent, first_total.highest_equivalent);
        assert_eq!(next.cumulative, 1);
    }

    /// The target sequence itself: 100 * (1 - 2^-n).
    #[test]
    fn percentile_targets_halve_the_remaining_distance() {
        let h = hist(&[1]);
        let it = PercentileIter::new(h.raw(), 1);
        let mut p = 0.0;
        for n in 1..=40 {
            p += it.increment(p);
            assert_eq!(p, 100.0 * (1.0 - 0.5f64.powi(n)), "n = {n}");
        }
        let it2 = PercentileIter::new(h.raw(), 2);
        assert_eq!(it2.increment(0.0), 25.0);
        assert!(it.increment(100.0) >= 0.0);
    }
}
