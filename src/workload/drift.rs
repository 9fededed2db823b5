//! Moving hot spots (`--key-drift`, issue 26 item 4): every key distribution of
//! `distribution.rs` is stationary, but real hot keys rotate (news, sessions, flash sales), and
//! that rotation is what stresses eviction and client-side caching. A drift moves where the
//! traffic lands as the test goes on, in whole intervals of `every`:
//!
//! - `Shift`: the Gaussian or Zipf draw is moved by `step` keys per interval, wrapping around
//!   the range, so the centre (the median, or Zipf's hottest key) walks through the keyspace and
//!   the shape stays the same.
//! - `HotSet`: draws are uniform over `keys` consecutive keys, and the whole set is replaced by
//!   the next `keys` keys every interval (wrapping), so no key stays hot for two intervals.
//!
//! The interval is counted from the test's start (`Instant` the worker is given), so every worker
//! of a process moves at the same moments; it is one clock read per drawn key, and nothing is
//! allocated. Pure arithmetic: the RNG and the clock are the caller's (`keys::KeyGen`).

use std::time::Duration;

use super::distribution::KeyRange;

/// How the hot spot moves (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyDrift {
    /// The Gaussian or Zipf draw moved by `step` keys every `every`.
    Shift { step: u64, every: Duration },
    /// Uniform over a set of `keys` keys, replaced by the next `keys` every `every`.
    HotSet { keys: u64, every: Duration },
}

impl KeyDrift {
    /// How often the hot spot moves.
    pub fn every(&self) -> Duration {
        match *self {
            KeyDrift::Shift { every, .. } | KeyDrift::HotSet { every, .. } => every,
        }
    }

    /// Which interval `elapsed` (since the test's start) falls in: 0 for the first `every`.
    #[inline]
    pub fn interval(&self, elapsed: Duration) -> u64 {
        let every = self.every().as_nanos().max(1);
        (elapsed.as_nanos() / every) as u64
    }

    /// How far interval `n` has moved the hot spot, in keys, within a range of `len` keys.
    #[inline]
    pub fn offset(&self, n: u64, len: u64) -> u64 {
        let per = match *self {
            KeyDrift::Shift { step, .. } => step,
            KeyDrift::HotSet { keys, .. } => keys,
        };
        ((u128::from(n) * u128::from(per)) % u128::from(len.max(1))) as u64
    }

    /// `value` (a draw in `range`) moved by `offset` keys, wrapping around the range.
    #[inline]
    pub fn moved(value: u64, offset: u64, range: KeyRange) -> u64 {
        let len = range.len();
        range.min + ((value - range.min) % len + offset) % len
    }

    /// The hot set's key for `pick` (uniform in `0..keys`) in interval `n`.
    #[inline]
    pub fn hot_key(&self, n: u64, pick: u64, range: KeyRange) -> u64 {
        Self::moved(
            range.min + pick % range.len(),
            self.offset(n, range.len()),
            range,
        )
    }

    /// The hot set's size (`HotSet`), else `None`.
    pub fn hot_keys(&self) -> Option<u64> {
        match *self {
            KeyDrift::HotSet { keys, .. } => Some(keys),
            KeyDrift::Shift { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    const RANGE: KeyRange = KeyRange {
        min: 100,
        max: 1099,
    };

    #[test]
    fn intervals_are_whole_periods_from_the_start() {
        let d = KeyDrift::Shift {
            step: 10,
            every: Duration::from_millis(500),
        };
        assert_eq!(d.interval(Duration::ZERO), 0);
        assert_eq!(d.interval(Duration::from_millis(499)), 0);
        assert_eq!(d.interval(Duration::from_millis(500)), 1);
        assert_eq!(d.interval(Duration::from_secs(10)), 20);
    }

    #[test]
    fn a_shift_moves_every_value_by_the_step_and_wraps() {
        let d = KeyDrift::Shift {
            step: 300,
            every: Duration::from_secs(1),
        };
        assert_eq!(KeyDrift::moved(100, d.offset(0, 1000), RANGE), 100);
        assert_eq!(KeyDrift::moved(100, d.offset(1, 1000), RANGE), 400);
        assert_eq!(KeyDrift::moved(900, d.offset(1, 1000), RANGE), 200);
        // Four steps of 300 in a range of 1000 are 200 past the start.
        assert_eq!(KeyDrift::moved(100, d.offset(4, 1000), RANGE), 300);
        for n in 0..50 {
            for v in [100, 555, 1099] {
                let m = KeyDrift::moved(v, d.offset(n, 1000), RANGE);
                assert!((100..=1099).contains(&m), "{v} in interval {n}: {m}");
            }
        }
        // No overflow for huge intervals and steps.
        let big = KeyDrift::Shift {
            step: u64::MAX / 3,
            every: Duration::from_secs(1),
        };
        assert!(big.offset(u64::MAX, 1000) < 1000);
    }

    #[test]
    fn each_interval_has_its_own_hot_set_and_they_do_not_overlap() {
        let d = KeyDrift::HotSet {
            keys: 10,
            every: Duration::from_secs(1),
        };
        let set = |n: u64| -> BTreeSet<u64> { (0..10).map(|p| d.hot_key(n, p, RANGE)).collect() };
        let mut seen = BTreeSet::new();
        for n in 0..100 {
            let s = set(n);
            assert_eq!(s.len(), 10, "interval {n}");
            assert!(s.is_disjoint(&seen), "interval {n} reuses a hot key");
            seen.extend(s);
        }
        // 100 intervals of 10 keys cover the 1000-key range exactly once; the next wraps.
        assert_eq!(seen.len(), 1000);
        assert_eq!(set(100), set(0));
        assert_eq!(d.hot_keys(), Some(10));
    }
}
