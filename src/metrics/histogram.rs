//! A latency histogram in nanoseconds: 1 ns to 1 hour at 3 significant figures.

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2Serializer};

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

    /// The histogram as HdrHistogram V2 *uncompressed* bytes: a few instructions per count up
    /// to its highest value, where the deflate of the record's encoding costs hundreds of
    /// thousands of instructions; every HdrHistogram decoder reads it, and
    /// [`LatencyHistogram::add_plain_v2`] reads it visiting only the counts it names. A
    /// second's coarse histogram is about 1 kB this way instead of 37 kB of counts.
    pub fn plain_v2(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        // Writing into a Vec cannot fail for respbench's bounds (the serializer fails only on
        // I/O or on counts above 2^63).
        let _ = V2Serializer::new().serialize(&self.inner, &mut bytes);
        bytes
    }

    /// Adds an uncompressed V2 histogram ([`LatencyHistogram::plain_v2`]: the journal's, a packed
    /// second's in the timeline, `record::hdr::encode_sparse`'s) of lowest value 1 and 2 or 3
    /// significant figures, straight from its counts, as `record::hdr::add` would: each at its
    /// bucket's highest value. `false` (nothing added) for any other bytes, which
    /// hdrhistogram's own decoder reads.
    ///
    /// Why: the decoder builds a histogram of the encoded bounds (33,792 counts for one hour at 3
    /// figures) and `hdr::add` then walks every count; a day's journal has two or more parts a second,
    /// and reading it spent most of its time there. This visits only the buckets the bytes name.
    pub fn add_plain_v2(&mut self, bytes: &[u8]) -> bool {
        let be32 = |at: usize| {
            bytes
                .get(at..at + 4)
                .map(|b| u32::from_be_bytes(b.try_into().unwrap_or_default()))
        };
        let be64 = |at: usize| {
            bytes
                .get(at..at + 8)
                .map(|b| u64::from_be_bytes(b.try_into().unwrap_or_default()))
        };
        let half_magnitude = match (be32(0), be32(8), be32(12), be64(16)) {
            (Some(0x1c84_9313), Some(0), Some(3), Some(1)) => 10,
            (Some(0x1c84_9313), Some(0), Some(2), Some(1)) => 7,
            _ => return false,
        };
        let Some(payload) = be32(4).and_then(|n| bytes.get(40..40 + n as usize)) else {
            return false;
        };
        // Decoded first, so a payload that ends mid-number adds nothing (hdrhistogram's decoder then
        // says what is wrong).
        let mut counts = Vec::new();
        let (mut at, mut index) = (0, 0u64);
        while at < payload.len() {
            let Some((v, used)) = zig_zag_read(&payload[at..]) else {
                return false;
            };
            at += used;
            if v < 0 {
                index += v.unsigned_abs();
            } else {
                if v > 0 {
                    counts.push((index, v as u64));
                }
                index += 1;
            }
        }
        for (i, n) in counts {
            self.record_n(highest_of(i, half_magnitude), n);
        }
        true
    }

    /// The underlying histogram, for report iteration.
    pub fn raw(&self) -> &Histogram<u64> {
        &self.inner
    }
}

/// The highest value held by count `i` of a layout of lowest value 1 and `2^half_magnitude`
/// sub-buckets per half bucket (hdrhistogram's `highest_equivalent(value_for(i))`).
fn highest_of(i: u64, half_magnitude: u32) -> u64 {
    let half = 1u64 << half_magnitude;
    match (i >> half_magnitude).checked_sub(1) {
        None => i,
        Some(bucket) if bucket < 63 => {
            let low = ((i & (half - 1)) + half).saturating_mul(1 << bucket);
            low.saturating_add((1 << bucket) - 1)
        }
        Some(_) => u64::MAX,
    }
}

/// One ZigZag LEB128-64b9B number (HdrHistogram V2's: the ninth byte holds eight bits) and how
/// many bytes it took; `None` when the bytes end first.
fn zig_zag_read(bytes: &[u8]) -> Option<(i64, usize)> {
    let mut v = 0u64;
    for (k, &b) in bytes.iter().enumerate().take(9) {
        if k == 8 {
            v |= u64::from(b) << 56;
            return Some((((v >> 1) as i64) ^ -((v & 1) as i64), 9));
        }
        v |= u64::from(b & 0x7f) << (7 * k);
        if b & 0x80 == 0 {
            return Some((((v >> 1) as i64) ^ -((v & 1) as i64), k + 1));
        }
    }
    None
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
