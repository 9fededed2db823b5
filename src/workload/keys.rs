//! Values for `__rand_int__` and `__rand_1st__`..`__rand_9th__`: random (per-worker RNG seeded
//! from `--seed`) or sequential (`--sequential`, process-wide counters so that a run with several
//! threads still covers the keyspace exactly once per lap).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

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
    /// Sequential values run over `slice_start..slice_start + slice_len`: the whole keyspace, or
    /// in a sharded run this shard's part of it.
    slice_start: u64,
    slice_len: u64,
}

/// In a sharded run (`--shard`), this process's part of the keyspace for sequential counters:
/// `(index, count)`. Set once before the first test. Why a process-wide value: the engine builds
/// every worker's `KeyGen` from its `LoadSpec`, which knows nothing of shards; the shard is fixed
/// for the life of the process, so this is set-once configuration, not shared mutable state.
static SHARD_SLICE: OnceLock<(u64, u64)> = OnceLock::new();

/// Makes every sequential `KeyGen` built from now on walk shard `index` of `count`'s contiguous
/// part of the keyspace (the parts of all shards are disjoint and cover it, so N shards together
/// write each key once per lap). Only the first call counts.
pub fn set_shard_slice(index: u64, count: u64) {
    let _ = SHARD_SLICE.set((index, count.max(1)));
}

/// Shard `index` of `count`'s part `start..start + len` of `0..keyspace` (sizes differ by at most
/// one, larger parts first, like `plan::shard::Shard::part`).
pub fn shard_slice(keyspace: u64, index: u64, count: u64) -> (u64, u64) {
    let (base, rem) = (keyspace / count, keyspace % count);
    (index * base + index.min(rem), base + u64::from(index < rem))
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
        let (index, count) = SHARD_SLICE.get().copied().unwrap_or((0, 1));
        Self {
            keyspace,
            rng,
            sequential,
            slice_start: 0,
            slice_len: keyspace,
        }
        .in_shard(index, count)
    }

    /// Sequential values over shard `index` of `count`'s part of the keyspace only.
    pub fn in_shard(mut self, index: u64, count: u64) -> Self {
        let (start, len) = shard_slice(self.keyspace, index, count.max(1));
        // A keyspace smaller than the shard count leaves some shards nothing; the plan refuses
        // that, and a one-key part keeps the arithmetic defined.
        (self.slice_start, self.slice_len) = (start, len.max(1));
        self
    }

    /// Next value for counter `which` (0 = `__rand_int__`, n = `__rand_n..__`), in `0..keyspace`
    /// (always 0 for an empty keyspace, as the reference).
    #[inline]
    pub fn next(&mut self, which: usize) -> u64 {
        if self.keyspace == 0 {
            return 0;
        }
        match &self.sequential {
            Some(c) => {
                self.slice_start
                    + c.counters[which].fetch_add(1, Ordering::Relaxed) % self.slice_len
            }
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
    fn sharded_sequential_values_stay_in_the_shards_part_and_cover_it() {
        // 10 keys over 3 shards: 0..4, 4..7, 7..10; two laps each.
        let mut all = Vec::new();
        for index in 0..3 {
            let shared = Arc::new(SequentialCounters::default());
            let mut g = KeyGen::new(10, 0, 0, Some(shared)).in_shard(index, 3);
            let (start, len) = shard_slice(10, index, 3);
            let lap: Vec<u64> = (0..len).map(|_| g.next(0)).collect();
            assert_eq!(lap, (start..start + len).collect::<Vec<_>>());
            assert_eq!(g.next(0), start, "wraps within the part");
            all.extend(lap);
        }
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
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
