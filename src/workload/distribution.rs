//! Key distributions: how a placeholder's value is drawn from the key range, for caches whose
//! traffic is not uniform. memtier_benchmark's key patterns, by its letters: `R` uniform random
//! (valkey-benchmark's only one), `S` sequential, `G` Gaussian around a median, `Z` Zipf (a few
//! hot keys, a long tail), `P` parallel (each connection its own slice of the range, in order).
//!
//! Pure sampling: the per-worker RNG is the caller's (seeded from `--seed`, one stream per
//! worker), so a run repeats exactly. Every draw is O(1) and allocates nothing: the Gaussian uses
//! `rand_distr`'s ziggurat, the Zipf its rejection sampler (no table of the key range's
//! probabilities, which for 10⁹ keys would not fit in memory). Sequential and parallel draws need
//! shared or per-connection counters and are the caller's (`keys::KeyGen`); this module maps a
//! counter value into the range the same way for them.

use rand_core::RngCore;
use rand_distr::{Distribution, Normal, Zipf};

use super::split::even_part;

/// The inclusive range of values a placeholder takes (`-r N` is `0..=N-1`; memtier's
/// `--key-minimum`/`--key-maximum` set both ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyRange {
    pub min: u64,
    pub max: u64,
}

impl KeyRange {
    /// How many values the range holds (at least 1).
    pub fn len(&self) -> u64 {
        self.max - self.min + 1
    }

    /// Never true: a range holds at least its minimum (kept for clippy's `len` convention).
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// How values are drawn, as the user asked (see the module comment for the letters).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyPattern {
    Uniform,
    Sequential,
    /// `median` and `stddev` in key units; memtier's defaults are the middle of the range and a
    /// sixth of its width (so ±3σ spans it).
    Gaussian {
        median: Option<f64>,
        stddev: Option<f64>,
    },
    /// Rank `k` (1 = the hottest key, the range's minimum) has probability ∝ 1/k^exponent.
    Zipf {
        exponent: f64,
    },
    Parallel,
}

/// Why a pattern cannot be sampled over a range: one line for the user (exit 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError(pub String);

/// A pattern prepared for a range: what a worker draws from.
#[derive(Clone, Debug)]
pub enum Sampler {
    Uniform,
    Gaussian(Normal<f64>),
    Zipf(Zipf<f64>),
    /// Sequential and parallel: the value comes from a counter ([`Sampler::from_counter`]).
    Counter,
}

/// How many times a Gaussian draw outside the range is drawn again before it is clamped; the
/// chance of needing that many is negligible unless the median sits far outside the range.
const GAUSSIAN_TRIES: usize = 16;

impl Sampler {
    /// Checks the pattern's parameters against the range.
    pub fn new(pattern: KeyPattern, range: KeyRange) -> Result<Self, PatternError> {
        match pattern {
            KeyPattern::Uniform => Ok(Sampler::Uniform),
            KeyPattern::Sequential | KeyPattern::Parallel => Ok(Sampler::Counter),
            KeyPattern::Gaussian { median, stddev } => {
                let width = (range.max - range.min) as f64;
                let median = median.unwrap_or(range.min as f64 + width / 2.0);
                let stddev = stddev.unwrap_or((width / 6.0).max(1.0));
                if !(stddev.is_finite() && stddev > 0.0) {
                    return Err(PatternError(format!(
                        "--key-stddev {stddev}: expected a number greater than 0"
                    )));
                }
                if !(range.min as f64..=range.max as f64).contains(&median) {
                    return Err(PatternError(format!(
                        "--key-median {median}: outside the key range {}..={}",
                        range.min, range.max
                    )));
                }
                let normal = Normal::new(median, stddev)
                    .map_err(|e| PatternError(format!("Gaussian key pattern: {e}")))?;
                Ok(Sampler::Gaussian(normal))
            }
            KeyPattern::Zipf { exponent } => {
                if !(exponent.is_finite() && exponent > 0.0 && exponent <= 5.0) {
                    return Err(PatternError(format!(
                        "--key-zipf-exp {exponent}: expected a number greater than 0 and at most \
                         5 (about 1 is typical of caches)"
                    )));
                }
                let zipf = Zipf::new(range.len() as f64, exponent)
                    .map_err(|e| PatternError(format!("Zipf key pattern: {e}")))?;
                Ok(Sampler::Zipf(zipf))
            }
        }
    }

    /// One value in `range`, drawn with `rng` (the uniform, Gaussian and Zipf patterns).
    #[inline]
    pub fn draw<R: RngCore>(&self, rng: &mut R, range: KeyRange) -> u64 {
        match self {
            Sampler::Uniform | Sampler::Counter => range.min + uniform_below(rng, range.len()),
            Sampler::Gaussian(normal) => {
                let (lo, hi) = (range.min as f64, range.max as f64);
                let mut x = normal.sample(rng);
                for _ in 1..GAUSSIAN_TRIES {
                    if (lo - 0.5..hi + 0.5).contains(&x) {
                        break;
                    }
                    x = normal.sample(rng);
                }
                (x.round().clamp(lo, hi)) as u64
            }
            Sampler::Zipf(zipf) => {
                // Ranks come back as whole numbers in 1..=len.
                let rank = zipf.sample(rng) as u64;
                range.min + rank.clamp(1, range.len()) - 1
            }
        }
    }

    /// The value for counter value `n` (sequential and parallel patterns): the range, in order,
    /// lap after lap.
    #[inline]
    pub fn from_counter(n: u64, range: KeyRange) -> u64 {
        range.min + n % range.len()
    }
}

/// Uniform value in `0..bound` without modulo bias (Lemire's multiply-and-reject).
#[inline]
///
/// The threshold needs a 64-bit division, so it is computed only when the low half is below
/// `bound` (the threshold is smaller than `bound`, so above it nothing is rejected): the draws
/// are the same as always computing it, without a `div` per key.
pub fn uniform_below<R: RngCore>(rng: &mut R, bound: u64) -> u64 {
    let mut m = u128::from(rng.next_u64()) * u128::from(bound);
    if (m as u64) < bound {
        let threshold = bound.wrapping_neg() % bound;
        while (m as u64) < threshold {
            m = u128::from(rng.next_u64()) * u128::from(bound);
        }
    }
    (m >> 64) as u64
}

/// The slice of `range` that connection `conn` of `conns` walks under the parallel pattern: the
/// range cut into `conns` contiguous parts as equal as possible ([`even_part`]), so that together
/// they cover it exactly once. More connections than keys share the one-key slices round-robin.
pub fn parallel_slice(range: KeyRange, conn: u64, conns: u64) -> KeyRange {
    let conns = conns.max(1).min(range.len());
    let part = even_part(range.len(), conn % conns, conns);
    KeyRange {
        min: range.min + part.start,
        max: range.min + part.start + part.len - 1,
    }
}

/// The patterns that draw at random from the seed, for the tests of whatever draws keys with
/// them (the same seed must give the same keys).
#[cfg(test)]
pub(crate) const SEEDED_PATTERNS: [KeyPattern; 3] = [
    KeyPattern::Uniform,
    KeyPattern::Zipf { exponent: 1.0 },
    KeyPattern::Gaussian {
        median: None,
        stddev: None,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn rng() -> Xoshiro256PlusPlus {
        Xoshiro256PlusPlus::seed_from_u64(20261123)
    }

    fn draws(pattern: KeyPattern, range: KeyRange, n: usize) -> Vec<u64> {
        let s = Sampler::new(pattern, range).unwrap();
        let mut r = rng();
        (0..n).map(|_| s.draw(&mut r, range)).collect()
    }

    /// Pearson's chi-square statistic of `counts` against `expected` probabilities.
    fn chi_square(counts: &[u64], expected: &[f64]) -> f64 {
        let n: u64 = counts.iter().sum();
        counts
            .iter()
            .zip(expected)
            .map(|(&c, &p)| {
                let e = p * n as f64;
                (c as f64 - e).powi(2) / e
            })
            .sum()
    }

    #[test]
    fn uniform_fits_and_stays_in_range() {
        let range = KeyRange { min: 100, max: 119 };
        let v = draws(KeyPattern::Uniform, range, 200_000);
        let mut counts = [0u64; 20];
        for x in &v {
            assert!((100..=119).contains(x));
            counts[(x - 100) as usize] += 1;
        }
        // 19 degrees of freedom: the 0.999 quantile is 43.8.
        let chi = chi_square(&counts, &[0.05; 20]);
        assert!(chi < 43.8, "chi-square {chi}");
    }

    #[test]
    fn same_seed_same_sequence() {
        let range = KeyRange { min: 0, max: 999 };
        for p in SEEDED_PATTERNS {
            assert_eq!(draws(p, range, 100), draws(p, range, 100), "{p:?}");
        }
    }

    #[test]
    fn zipf_top_key_share_and_rank_frequency_slope_match_theory() {
        let range = KeyRange { min: 0, max: 9_999 };
        for s in [0.8, 1.0, 1.2] {
            let n = 400_000;
            let v = draws(KeyPattern::Zipf { exponent: s }, range, n);
            let mut counts = vec![0u64; 10_000];
            for x in v {
                counts[x as usize] += 1;
            }
            let harmonic: f64 = (1..=10_000).map(|k| 1.0 / (k as f64).powf(s)).sum();
            let top = counts[0] as f64 / n as f64;
            let expected = 1.0 / harmonic;
            assert!(
                (top - expected).abs() < 0.05 * expected,
                "s={s}: top key share {top}, theory {expected}"
            );
            // Least squares of ln(count) on ln(rank) over ranks 1..=100: the slope is -s.
            let pts: Vec<(f64, f64)> = (1..=100)
                .map(|k| ((k as f64).ln(), (counts[k - 1] as f64).ln()))
                .collect();
            let mx = pts.iter().map(|p| p.0).sum::<f64>() / 100.0;
            let my = pts.iter().map(|p| p.1).sum::<f64>() / 100.0;
            let slope = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
                / pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
            assert!((slope + s).abs() < 0.08, "s={s}: slope {slope}");
        }
    }

    #[test]
    fn gaussian_mean_spread_and_range() {
        let range = KeyRange {
            min: 0,
            max: 60_000,
        };
        let v = draws(
            KeyPattern::Gaussian {
                median: Some(30_000.0),
                stddev: Some(5_000.0),
            },
            range,
            200_000,
        );
        let n = v.len() as f64;
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
        let sd = (v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((mean - 30_000.0).abs() < 50.0, "mean {mean}");
        assert!((sd - 5_000.0).abs() < 50.0, "sd {sd}");
        // Within one standard deviation: 68.27% for a normal distribution.
        let within = v
            .iter()
            .filter(|&&x| (25_000..=35_000).contains(&x))
            .count() as f64
            / n;
        assert!((within - 0.6827).abs() < 0.005, "{within}");
        // Defaults: the middle and a sixth of the width, all draws in range.
        let narrow = KeyRange { min: 10, max: 70 };
        let v = draws(
            KeyPattern::Gaussian {
                median: None,
                stddev: None,
            },
            narrow,
            50_000,
        );
        assert!(v.iter().all(|x| (10..=70).contains(x)));
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        assert!((mean - 40.0).abs() < 0.5, "{mean}");
    }

    #[test]
    fn bad_parameters_are_one_line() {
        let range = KeyRange { min: 0, max: 9 };
        for exponent in [0.0, -1.0, 5.5, f64::NAN] {
            let e = Sampler::new(KeyPattern::Zipf { exponent }, range).unwrap_err();
            assert!(e.0.starts_with("--key-zipf-exp "), "{e:?}");
        }
        let e = Sampler::new(
            KeyPattern::Gaussian {
                median: Some(50.0),
                stddev: None,
            },
            range,
        )
        .unwrap_err();
        assert!(e.0.contains("outside the key range 0..=9"), "{e:?}");
        let e = Sampler::new(
            KeyPattern::Gaussian {
                median: None,
                stddev: Some(0.0),
            },
            range,
        )
        .unwrap_err();
        assert!(e.0.starts_with("--key-stddev 0"), "{e:?}");
    }

    #[test]
    fn parallel_slices_partition_the_range() {
        for (len, conns) in [(10u64, 3u64), (100, 7), (5, 8), (1, 1), (1_000_003, 50)] {
            let range = KeyRange {
                min: 7,
                max: 7 + len - 1,
            };
            let mut next = range.min;
            for c in 0..conns.min(len) {
                let s = parallel_slice(range, c, conns);
                assert_eq!(s.min, next, "contiguous ({len}, {conns})");
                assert!(s.len() >= len / conns && s.len() <= len / conns + 1);
                next = s.max + 1;
            }
            assert_eq!(next, range.max + 1, "covers the range ({len}, {conns})");
        }
        let r = KeyRange { min: 0, max: 4 };
        assert_eq!(
            (0..7)
                .map(|n| Sampler::from_counter(n, r))
                .collect::<Vec<_>>(),
            [0, 1, 2, 3, 4, 0, 1]
        );
    }
}
