//! Values for `__rand_int__` and `__rand_1st__`..`__rand_9th__`: random (per-worker RNG seeded
//! from `--seed`) or sequential (`--sequential`, process-wide counters so that a run with several
//! threads still covers the keyspace exactly once per lap).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::distribution::{KeyPattern, KeyRange, Sampler, parallel_slice, uniform_below};
use super::drift::KeyDrift;
use super::split::Share;

/// The largest keyspace: 12 decimal digits, the placeholder's width.
pub const MAX_KEYSPACE: u64 = 999_999_999_999;

/// Ten sequential counters: index 0 for `__rand_int__`, 1..=9 for `__rand_1st__`..`__rand_9th__`
/// (each has its own counter, as in the reference).
#[derive(Debug, Default)]
pub struct SequentialCounters {
    counters: [AtomicU64; 10],
    /// Parallel pattern: the next connection slice to hand out (each connection takes one the
    /// first time it fills a batch, so slices are distinct across workers without the engine
    /// having to know a connection's global index).
    next_slice: AtomicU64,
}

/// The parallel pattern's state in one worker: each connection's slice and its own counters.
#[derive(Clone, Debug)]
struct Parallel {
    /// How many slices the range is cut into (`-c`).
    slices: u64,
    /// Per connection (local index), once it has filled a batch.
    conns: Vec<Option<(KeyRange, [u64; 10])>>,
    /// The connection the next values are for ([`KeyGen::select_conn`]).
    current: usize,
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
    /// The lowest value (`--key-minimum`; values run over `min..keyspace`).
    min: u64,
    /// How random values are drawn (uniform unless `--key-pattern`/`--keys` said otherwise).
    sampler: Sampler,
    /// `min..keyspace` as a range, kept rather than rebuilt per draw.
    range: KeyRange,
    /// Which of the ways below a draw takes, chosen when the generator is set up.
    draw: Draw,
    /// In a sharded run (`--shard`, the load spec's `shard`), this process's share of the key
    /// range: counters walk only its part ([`KeyGen::in_shard`]).
    shard: Share,
    /// `--key-drift`: how the hot spot moves, and the test's start it counts intervals from.
    drift: Option<(KeyDrift, Instant)>,
}

/// How [`KeyGen::next`] draws, decided once (the keyspace, the pattern and the counters do not
/// change during a test), so a draw is one branch on this rather than a check of each.
#[derive(Clone, Debug)]
enum Draw {
    /// An empty keyspace: always 0, as the reference.
    Zero,
    /// The parallel pattern: each connection's slice, in order.
    Parallel(Parallel),
    /// `--sequential`: the shared counters over this shard's part.
    Sequential,
    /// Uniform over `range` (valkey-benchmark's only pattern).
    Uniform,
    /// Gaussian or Zipf over `range`.
    Sampled,
    /// `--key-drift`: the draw moved by the interval the clock is in.
    Drifting,
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
            slice_start: 0,
            slice_len: keyspace,
            min: 0,
            sampler: Sampler::Uniform,
            range: KeyRange { min: 0, max: 0 },
            draw: Draw::Zero,
            shard: Share::WHOLE,
            drift: None,
        }
        .in_shard(Share::WHOLE)
    }

    /// Draws with `pattern` over `min..keyspace` instead of uniformly over `0..keyspace`;
    /// `conns` is the number of parallel slices (`-c`). The plan has already checked the pattern
    /// against the range with [`Sampler::new`]; should it still fail, values stay uniform. A
    /// minimum at or above the keyspace is likewise refused by the plan and ignored here.
    pub fn with_pattern(mut self, pattern: KeyPattern, min: u64, conns: u64) -> Self {
        if min >= self.keyspace {
            return self;
        }
        self.min = min;
        self.sampler = Sampler::new(pattern, self.range()).unwrap_or(Sampler::Uniform);
        if pattern == KeyPattern::Parallel {
            self.draw = Draw::Parallel(Parallel {
                slices: conns.max(1),
                conns: Vec::new(),
                current: 0,
            });
        }
        let shard = self.shard;
        self.in_shard(shard)
    }

    /// The range values are drawn from (`min..=keyspace - 1`).
    fn range(&self) -> KeyRange {
        KeyRange {
            min: self.min,
            max: self.keyspace.max(1) - 1,
        }
    }

    /// Parallel pattern: the next values are for connection `conn` (the worker's index). The
    /// first call for a connection takes the next free slice of the range; every other pattern
    /// ignores it.
    #[inline]
    pub fn select_conn(&mut self, conn: usize) {
        if let Draw::Parallel(p) = &mut self.draw {
            p.current = conn;
        }
    }

    /// Sequential values over `shard`'s part of the key range only (the parts of all shards are
    /// disjoint and cover the range, so N shards together write each key once per lap). Kept, so
    /// a later [`KeyGen::with_pattern`] cuts its range the same way.
    pub fn in_shard(mut self, shard: Share) -> Self {
        self.shard = shard;
        let len = self.keyspace.saturating_sub(self.min);
        let part = shard.of(len);
        let (start, len) = (part.start + self.min, part.len);
        // A keyspace smaller than the shard count leaves some shards nothing; the plan refuses
        // that, and a one-key part keeps the arithmetic defined.
        (self.slice_start, self.slice_len) = (start, len.max(1));
        self.settle()
    }

    /// Chooses how draws are made, now that the range, pattern and counters are known.
    fn settle(mut self) -> Self {
        self.range = self.range();
        self.draw = match self.draw {
            Draw::Parallel(p) if self.keyspace > 0 => Draw::Parallel(p),
            _ if self.keyspace == 0 => Draw::Zero,
            _ if self.sequential.is_some() => Draw::Sequential,
            _ if self.drift.is_some() => Draw::Drifting,
            _ if matches!(self.sampler, Sampler::Uniform | Sampler::Counter) => Draw::Uniform,
            _ => Draw::Sampled,
        };
        self
    }

    /// Next value for counter `which` (0 = `__rand_int__`, n = `__rand_n..__`), in `0..keyspace`
    /// (always 0 for an empty keyspace, as the reference).
    #[inline]
    pub fn next(&mut self, which: usize) -> u64 {
        match &mut self.draw {
            Draw::Uniform => {
                self.range.min + uniform_below(&mut self.rng, self.range.max - self.range.min + 1)
            }
            Draw::Sampled => self.sampler.draw(&mut self.rng, self.range),
            Draw::Drifting => self.drifted(),
            Draw::Sequential => match &self.sequential {
                Some(c) => {
                    self.slice_start
                        + c.counters[which].fetch_add(1, Ordering::Relaxed) % self.slice_len
                }
                None => self.slice_start,
            },
            Draw::Parallel(p) => {
                let part = (self.slice_start, self.slice_len);
                next_parallel(p, part, self.sequential.as_deref(), which)
            }
            Draw::Zero => 0,
        }
    }
}

/// The parallel pattern: the current connection's slice of this shard's part `(start, len)`, in
/// order.
fn next_parallel(
    p: &mut Parallel,
    (start, len): (u64, u64),
    shared: Option<&SequentialCounters>,
    which: usize,
) -> u64 {
    if p.conns.len() <= p.current {
        // Once per connection (the vector grows to the worker's connection count).
        p.conns.resize(p.current + 1, None);
    }
    let (slice, counters) = p.conns[p.current].get_or_insert_with(|| {
        let index = shared.map_or(p.current as u64, |c| {
            c.next_slice.fetch_add(1, Ordering::Relaxed)
        });
        let part = KeyRange {
            min: start,
            max: start + len - 1,
        };
        (parallel_slice(part, index, p.slices), [0; 10])
    });
    let n = counters[which];
    counters[which] += 1;
    Sampler::from_counter(n, *slice)
}

impl KeyGen {
    /// `--key-drift`: the hot spot moves with the time since `origin` (the test's start, the same
    /// for every worker). Counter-based patterns and an empty keyspace are left as they are (the
    /// plan refuses those combinations).
    pub fn with_drift(mut self, drift: Option<KeyDrift>, origin: Instant) -> Self {
        self.drift = drift.map(|d| (d, origin));
        self.settle()
    }

    /// One drifting draw: the pattern's value moved by the current interval's offset, or a key of
    /// the current hot set.
    #[inline]
    fn drifted(&mut self) -> u64 {
        let Some((drift, origin)) = self.drift else {
            return self.range.min;
        };
        let n = drift.interval(origin.elapsed());
        match drift.hot_keys() {
            Some(keys) => {
                let pick = uniform_below(&mut self.rng, keys.min(self.range.len()));
                drift.hot_key(n, pick, self.range)
            }
            None => {
                let v = self.sampler.draw(&mut self.rng, self.range);
                KeyDrift::moved(v, drift.offset(n, self.range.len()), self.range)
            }
        }
    }

    /// The part `--sequential` walks: its first value and length (this shard's part of
    /// `min..keyspace`), for walking it another way (cluster mode's per-node key lists).
    pub fn sequential_part(&self) -> (u64, u64) {
        (self.slice_start, self.slice_len)
    }

    /// A raw random number from this worker's generator (cluster slot picks).
    #[inline]
    pub fn random(&mut self) -> u64 {
        self.rng.next_u64()
    }
}

/// "00" to "99": two digits per step halves the divisions of writing a number.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Writes `value` as exactly 12 zero-padded decimal digits into `out[..12]` (the low 12 digits
/// of a larger value). Every placeholder of every request goes through here, so it writes two
/// 6-digit halves in 32-bit arithmetic, two digits at a time: 6 steps instead of 12 64-bit
/// divisions.
#[inline]
pub fn write_12_digits(out: &mut [u8], value: u64) {
    let (high, low) = out[..12].split_at_mut(6);
    write_6_digits(high, ((value / 1_000_000) % 1_000_000) as u32);
    write_6_digits(low, (value % 1_000_000) as u32);
}

/// `value` (below 1,000,000) as 6 zero-padded digits into `out[..6]`.
#[inline]
fn write_6_digits(out: &mut [u8], mut value: u32) {
    for pair in out[..6].chunks_exact_mut(2).rev() {
        let at = (value % 100) as usize * 2;
        pair.copy_from_slice(&DIGIT_PAIRS[at..at + 2]);
        value /= 100;
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
            let share = Share { index, count: 3 };
            let mut g = KeyGen::new(10, 0, 0, Some(shared)).in_shard(share);
            let part = share.of(10);
            let (start, len) = (part.start, part.len);
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

    #[test]
    fn twelve_digits_match_formatting_for_many_values() {
        let mut g = Xoshiro256PlusPlus::seed_from_u64(12);
        let edges = [
            0,
            9,
            10,
            99,
            100,
            999_999,
            1_000_000,
            1_000_001,
            123_456_789_012,
        ];
        let random = (0..10_000).map(|_| g.next_u64() % (MAX_KEYSPACE + 1));
        let mut buf = [b'x'; 14];
        for v in edges.into_iter().chain(random) {
            write_12_digits(&mut buf[1..], v);
            assert_eq!(&buf[1..13], format!("{v:012}").as_bytes(), "{v}");
            assert_eq!((buf[0], buf[13]), (b'x', b'x'), "only 12 bytes written");
        }
        // Above 12 digits: the low 12, as the digit-by-digit loop wrote them.
        write_12_digits(&mut buf[1..], 7_000_000_000_042);
        assert_eq!(&buf[1..13], b"000000000042");
    }

    #[test]
    fn parallel_walks_one_slice_per_connection_in_order() {
        use crate::workload::distribution::KeyPattern;
        let shared = Arc::new(SequentialCounters::default());
        let mut a =
            KeyGen::new(20, 0, 0, Some(shared.clone())).with_pattern(KeyPattern::Parallel, 10, 2);
        let mut b = KeyGen::new(20, 0, 1, Some(shared)).with_pattern(KeyPattern::Parallel, 10, 2);
        let draw = |g: &mut KeyGen, conn: usize, n: usize| -> Vec<u64> {
            g.select_conn(conn);
            (0..n).map(|_| g.next(0)).collect()
        };
        // Range 10..20 in two slices: the first connection to fill takes 10..15, the next 15..20.
        assert_eq!(draw(&mut a, 3, 3), [10, 11, 12]);
        assert_eq!(draw(&mut b, 0, 6), [15, 16, 17, 18, 19, 15]);
        assert_eq!(
            draw(&mut a, 3, 3),
            [13, 14, 10],
            "its own counter, wrapping in its slice"
        );
    }

    #[test]
    fn a_drift_moves_the_draws_with_the_time_since_the_origin() {
        use crate::workload::drift::KeyDrift;
        use std::time::Duration;
        let hour = Duration::from_secs(3600);
        let hot = Some(KeyDrift::HotSet {
            keys: 10,
            every: hour,
        });
        let now = Instant::now();
        // Interval 0 (the test just started) and interval 2 (two hours ago): whole hours, so
        // the interval cannot change while the test draws.
        let mut first = KeyGen::new(1000, 1, 0, None).with_drift(hot, now);
        assert!((0..500).all(|_| first.next(0) < 10));
        if let Some(two_hours_ago) = now.checked_sub(2 * hour) {
            let mut third = KeyGen::new(1000, 1, 0, None).with_drift(hot, two_hours_ago);
            assert!((0..500).all(|_| (20..30).contains(&third.next(0))));
            let shift = Some(KeyDrift::Shift {
                step: 100,
                every: hour,
            });
            // Zipf with a steep exponent: rank 1 (the range's minimum) moved by two steps.
            let mut zipf = KeyGen::new(1000, 1, 0, None)
                .with_pattern(KeyPattern::Zipf { exponent: 3.0 }, 0, 1)
                .with_drift(shift, two_hours_ago);
            let at_200 = (0..1000).filter(|_| zipf.next(0) == 200).count();
            assert!(
                at_200 > 700,
                "{at_200} of 1000 draws on the moved hottest key"
            );
        }
    }

    #[test]
    fn patterns_draw_within_the_range_and_repeat_with_the_seed() {
        use crate::workload::distribution::SEEDED_PATTERNS;
        let draws = |pattern, seed| -> Vec<u64> {
            let mut g = KeyGen::new(1000, seed, 0, None).with_pattern(pattern, 900, 1);
            (0..500).map(|_| g.next(0)).collect()
        };
        for p in SEEDED_PATTERNS {
            let v = draws(p, 1);
            assert!(v.iter().all(|x| (900..1000).contains(x)), "{p:?}");
            assert_eq!(v, draws(p, 1), "{p:?}");
            assert_ne!(v, draws(p, 2), "{p:?}");
        }
        // Uniform over 0..N is the same sequence as before key patterns existed.
        let mut old = KeyGen::new(1000, 3, 0, None);
        let mut new = KeyGen::new(1000, 3, 0, None).with_pattern(KeyPattern::Uniform, 0, 1);
        assert!((0..100).all(|_| old.next(0) == new.next(0)));
    }
}
