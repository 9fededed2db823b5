//! A latency histogram in nanoseconds: 1 ns to 1 hour at 3 significant figures.

use hdrhistogram::Histogram;

/// Highest trackable latency: one hour. Larger values are clamped (and still counted).
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// HDR histogram of latencies in nanoseconds. Recording is constant time and never allocates.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        // 1 ns lowest discernible value, 3 significant figures: bounds are static and valid.
        let inner = Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
            .unwrap_or_else(|_| unreachable!("static histogram bounds are valid"));
        Self { inner }
    }

    /// A histogram for one second of one test: the same range at 2 significant figures (1%),
    /// about a seventh of the memory of [`LatencyHistogram::new`] (tens of kB instead of
    /// hundreds), because a long run keeps one per second.
    pub fn coarse() -> Self {
        let inner = Histogram::new_with_bounds(1, MAX_LATENCY_NS, 2)
            .unwrap_or_else(|_| unreachable!("static histogram bounds are valid"));
        Self { inner }
    }

    /// Records one latency; values above [`MAX_LATENCY_NS`] are clamped, 0 becomes 1.
    #[inline]
    pub fn record(&mut self, latency_ns: u64) {
        self.inner.saturating_record(latency_ns.max(1));
    }

    /// Records one latency `count` times: exactly what `count` calls of [`Self::record`] do
    /// (the same clamping), in one step.
    #[inline]
    pub fn record_times(&mut self, latency_ns: u64, count: u64) {
        self.inner.saturating_record_n(latency_ns.max(1), count);
    }

    /// Records `count` requests with the same latency.
    #[inline]
    pub fn record_n(&mut self, latency_ns: u64, count: u64) {
        let v = latency_ns.clamp(1, MAX_LATENCY_NS);
        // Cannot fail: the value is within bounds.
        let _ = self.inner.record_n(v, count);
    }

    /// Adds all of `other`'s samples.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Cannot fail: both histograms have identical bounds.
        let _ = self.inner.add(&other.inner);
    }

    /// Takes away `other`'s samples (a part of this histogram's, with the same bounds).
    pub fn subtract(&mut self, other: &LatencyHistogram) {
        // Cannot fail: identical bounds, and `other` is a part of `self`.
        let _ = self.inner.subtract(&other.inner);
    }

    pub fn reset(&mut self) {
        self.inner.reset();
    }

    pub fn len(&self) -> u64 {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Smallest recorded value (0 when empty).
    pub fn min_ns(&self) -> u64 {
        if self.is_empty() { 0 } else { self.inner.min() }
    }

    /// Largest recorded value, as the highest value equivalent to it (0 when empty).
    pub fn max_ns(&self) -> u64 {
        if self.is_empty() { 0 } else { self.inner.max() }
    }

    pub fn mean_ns(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.inner.mean()
        }
    }

    /// Value at `percentile` (0..=100), as HdrHistogram's `value_at_percentile`.
    pub fn value_at_percentile_ns(&self, percentile: f64) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.inner.value_at_percentile(percentile)
        }
    }

    /// The underlying histogram, for report iteration.
    pub fn raw(&self) -> &Histogram<u64> {
        &self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_equals_recording_into_one() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for i in 0..10_000u64 {
            let v = (i * 7919) % 5_000_000 + 1;
            if i % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a.len(), all.len());
        for p in [0.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            assert_eq!(a.value_at_percentile_ns(p), all.value_at_percentile_ns(p));
        }
        assert_eq!(a.min_ns(), all.min_ns());
        assert_eq!(a.max_ns(), all.max_ns());
    }

    #[test]
    fn clamps_out_of_range_values() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        h.record(u64::MAX);
        assert_eq!(h.len(), 2);
        assert_eq!(h.min_ns(), 1);
        assert!(h.max_ns() >= MAX_LATENCY_NS);
    }
}
