//! Values for `__rand_int__` and `__rand_1st__`..`__rand_9th__`: random (per-worker RNG seeded
//! from `--seed`) or sequential (`--sequential`, process-wide counters so that a run with several
//! threads still covers the keyspace exactly once per lap).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::distribution::uniform_below;

/// The largest keyspace: 12 decimal digits, the placeholder's width.
pub const MAX_KEYSPACE: u64 = 999_999_999_999;

/// Ten sequential counters: index 0 for `__rand_int__`, 1..=9 for `__rand_1st__`..`__rand_9th__`
/// (each has its own counter, as in the reference).
#[derive(Debug, Default)]
pub struct SequentialCounters {
    counters: [AtomicU64; 10],
}

/// Draws placeholder values for one worker.
#[derive(Clone, Debug)]
pub struct KeyGen {
    keyspace: u64,
    rng: Xoshiro256PlusPlus,
    sequential: Option<Arc<SequentialCounters>>,
}

impl KeyGen {
    /// `seed` is the run's seed; `stream` distinguishes workers so that each has its own sequence
    /// and a run with the same seed and thread count repeats exactly.
    pub fn new(
        keyspace: u64,
        seed: u64,
        stream: u64,
        sequential: Option<Arc<SequentialCounters>>,
    ) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        for _ in 0..stream {
            rng.jump();
        }
        Self {
            keyspace,
            rng,
            sequential,
        }
    }

    /// Next value for counter `which` (0 = `__rand_int__`, n = `__rand_n..__`), in `0..keyspace`
    /// (always 0 for an empty keyspace, as the reference).
    #[inline]
    pub fn next(&mut self, which: usize) -> u64 {
        if self.keyspace == 0 {
            return 0;
        }
        match &self.sequential {
            Some(c) => c.counters[which].fetch_add(1, Ordering::Relaxed) % self.keyspace,
            None => uniform_below(&mut self.rng, self.keyspace),
        }
    }
}

impl KeyGen {
    /// A raw random number from this worker's generator (cluster slot picks).
    #[inline]
    pub fn random(&mut self) -> u64 {
        self.rng.next_u64()
    }
}

/// Writes `value` as exactly 12 zero-padded decimal digits into `out[..12]`.
#[inline]
pub fn write_12_digits(out: &mut [u8], mut value: u64) {
    for slot in out[..12].iter_mut().rev() {
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_values_stay_in_range_and_cover_it() {
        let mut g = KeyGen::new(10, 42, 0, None);
        let mut seen = [false; 10];
        for _ in 0..1000 {
            let v = g.next(0);
            assert!(v < 10);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn same_seed_same_sequence_other_stream_differs() {
        let a: Vec<u64> = {
            let mut g = KeyGen::new(1_000_000, 7, 0, None);
            (0..20).map(|_| g.next(0)).collect()
        };
        let b: Vec<u64> = {
            let mut g = KeyGen::new(1_000_000, 7, 0, None);
            (0..20).map(|_| g.next(0)).collect()
        };
        let c: Vec<u64> = {
            let mut g = KeyGen::new(1_000_000, 7, 1, None);
            (0..20).map(|_| g.next(0)).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn sequential_counters_are_shared_and_independent_per_placeholder() {
        let shared = Arc::new(SequentialCounters::default());
        let mut g1 = KeyGen::new(5, 0, 0, Some(shared.clone()));
        let mut g2 = KeyGen::new(5, 0, 1, Some(shared));
        assert_eq!(
            [g1.next(0), g2.next(0), g1.next(0), g1.next(3)],
            [0, 1, 2, 0]
        );
        for _ in 0..2 {
            g2.next(0);
        }
        assert_eq!(g1.next(0), 0, "wraps modulo the keyspace");
    }

    #[test]
    fn empty_keyspace_gives_zero_and_max_keyspace_fits_12_digits() {
        assert_eq!(KeyGen::new(0, 1, 0, None).next(0), 0);
        let mut buf = [0u8; 12];
        write_12_digits(&mut buf, MAX_KEYSPACE);
        assert_eq!(&buf, b"999999999999");
        write_12_digits(&mut buf, 42);
        assert_eq!(&buf, b"000000000042");
    }
}
