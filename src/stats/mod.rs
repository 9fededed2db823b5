//! Is a difference between two sides a finding or noise, and how big is it? An effect size with
//! a 95% confidence interval, and a judgement read off the interval.
//!
//! **The method** (the reasons are in docs/compare.md, "How a change is judged"):
//!
//! - *With repetitions on both sides* (at least 2 each): Welch's interval on the logarithms of
//!   the repetitions' figures. Each repetition is one number (its rps, its p99); its logarithm
//!   makes the effect a ratio (`+16.5%`), makes a slow outlier repetition weigh less than in raw
//!   figures, and matches how run-to-run noise behaves (proportional, not additive). Welch does
//!   not assume the two sides are equally noisy (a Valkey with io-threads and a Redis without
//!   are not). At 3 against 3 it has about 4 degrees of freedom, so the interval is wide: that is
//!   the honest price of three repetitions, and where the simulation (`stats/simulation.rs`)
//!   shows it still finds a 10% change on a quiet machine.
//! - *With one run on a side*: the seconds of a run are not independent (a slow second is
//!   usually followed by another), so they are grouped into [`BLOCKS`] consecutive blocks and
//!   Welch's interval is taken over the blocks' means. That measures only how much a run wobbles
//!   inside itself, never how much two runs of the same server differ, so such a finding is
//!   marked "within-run evidence only" and is not a finding (no green, no red).
//! - *Otherwise* (one run without per-second figures, such as `--csv` output): no interval;
//!   "can't tell".
//!
//! **The judgement**: an interval that excludes zero is a finding (better or worse by the
//! metric's direction); one that spans zero is "within the noise", unless either of its ends
//! reaches past a change of [`NOISY_PCT`] (as a ratio, either way): then "too noisy to tell". An
//! interval that allows a 30% gain cannot say "no difference", however close its other end is.

#[cfg(test)]
mod simulation;
mod student;

/// The confidence of every interval.
pub const CONFIDENCE: f64 = 0.95;

/// An interval that spans zero and whose either end reaches past a ratio of 1 + NOISY_PCT/100
/// (above +20%) or its inverse (below 1/1.2 − 1 = −16.7%) says nothing useful: "too noisy to
/// tell" rather than "within the noise", which would read as "no difference". Either end, not
/// both: `[-18%, +100%]` allows a doubling. In ratios, not percents, so that swapping the sides
/// (`[lo, hi]` becomes `[1/(1+hi)−1, 1/(1+lo)−1]`) never changes the verdict.
pub const NOISY_PCT: f64 = 20.0;

/// How many blocks a single run's seconds are grouped into.
pub const BLOCKS: usize = 4;

/// The fewest whole seconds per block: shorter blocks' means are too correlated for the
/// interval to hold its confidence (see the simulation).
pub const MIN_BLOCK_SECONDS: usize = 5;

/// Where an interval's spread came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// Repetitions on both sides: run-to-run noise is in the interval.
    Repetitions,
    /// Blocks of seconds within single runs: run-to-run noise is not.
    WithinRun,
    /// Paired blocks run alternately (`respbench ab`): each pair shares the machine's state,
    /// so the slow part of its noise cancels in the pair's ratio.
    Pairs,
}

impl Evidence {
    pub fn name(self) -> &'static str {
        match self {
            Evidence::Repetitions => "repetitions",
            Evidence::WithinRun => "within-run",
            Evidence::Pairs => "paired blocks",
        }
    }
}

/// An effect and its interval, as changes in percent of the base.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The point estimate: the ratio of geometric means, minus one, in percent.
    pub pct: f64,
    /// The interval's ends, in percent (`lo ≤ pct ≤ hi`).
    pub lo: f64,
    pub hi: f64,
    pub evidence: Evidence,
}

impl Estimate {
    /// The interval contains no change.
    pub fn excludes_zero(&self) -> bool {
        self.lo > 0.0 || self.hi < 0.0
    }

    /// Spans zero and could hide a change past [`NOISY_PCT`] (as a ratio) one way or the other.
    pub fn too_wide(&self) -> bool {
        let bound = (NOISY_PCT / 100.0).ln_1p();
        let ln = |p: f64| (p / 100.0).ln_1p();
        !self.excludes_zero() && (ln(self.lo) < -bound || ln(self.hi) > bound)
    }
}

/// Welch's interval for mean(ln y) − mean(ln x), as a change of y against x in percent; `None`
/// without two positive figures on each side.
pub fn from_repetitions(base: &[f64], other: &[f64]) -> Option<Estimate> {
    welch_log(base, other, Evidence::Repetitions)
}

/// The interval from single runs' seconds (`base` and `other`: one figure per whole second, in
/// order): Welch over the means of [`BLOCKS`] consecutive blocks; `None` when a side has fewer
/// than `BLOCKS × MIN_BLOCK_SECONDS` seconds. Seconds that do not fill a block are dropped from
/// the start (the warm-up end of a run).
pub fn from_seconds(base: &[f64], other: &[f64]) -> Option<Estimate> {
    let (b, o) = (block_means(base)?, block_means(other)?);
    let mut e = welch_log(&b, &o, Evidence::WithinRun)?;
    // Neighbouring blocks still share a little correlation (a slow stretch spans a border):
    // widen the interval by what that costs under an AR(1) model of the seconds.
    let rho = lag1(base).max(lag1(other));
    let len = base.len().min(other.len()) / BLOCKS;
    let widen = block_inflation(rho, len).sqrt();
    let ln = |p: f64| (p / 100.0).ln_1p();
    let pct = |l: f64| (l.exp() - 1.0) * 100.0;
    let mid = ln(e.pct);
    e.lo = pct(mid - (mid - ln(e.lo)) * widen);
    e.hi = pct(mid + (ln(e.hi) - mid) * widen);
    Some(e)
}

/// The paired interval (`respbench ab`): `base[i]` and `other[i]` were measured side by side
/// (neighbouring blocks of one round); Student's t interval of the mean of ln(other/base), as a
/// change of `other` against `base` in percent, with n − 1 degrees of freedom. `None` without two
/// pairs of positive figures (a pair with a zero is dropped: a ratio needs both).
pub fn from_pairs(base: &[f64], other: &[f64]) -> Option<Estimate> {
    from_pairs_at(base, other, CONFIDENCE)
}

/// [`from_pairs`] at another `confidence` (0.5 < c < 1): each of several intervals read
/// together takes a higher one, so that all of them hold together at [`CONFIDENCE`]
/// ([`joint_confidence`]).
pub fn from_pairs_at(base: &[f64], other: &[f64], confidence: f64) -> Option<Estimate> {
    let d: Vec<f64> = base
        .iter()
        .zip(other)
        .filter(|(b, o)| **b > 0.0 && **o > 0.0)
        .map(|(b, o)| (o / b).ln())
        .collect();
    if d.len() < 2 {
        return None;
    }
    let (m, var) = mean_var(&d);
    let half = student::quantile(0.5 + confidence / 2.0, d.len() as f64 - 1.0)
        * (var / d.len() as f64).sqrt();
    let pct = |l: f64| (l.exp() - 1.0) * 100.0;
    Some(Estimate {
        pct: pct(m),
        lo: pct(m - half),
        hi: pct(m + half),
        evidence: Evidence::Pairs,
    })
}

/// The confidence each of `comparisons` intervals needs so that all of them hold together at
/// [`CONFIDENCE`] (Bonferroni: 1 − 0.05/m). An answer that reads eight intervals at 95 % each
/// would call something in an A/A run better or worse about a third of the time; read jointly,
/// at most one A/A run in twenty shows any finding at all.
pub fn joint_confidence(comparisons: usize) -> f64 {
    1.0 - (1.0 - CONFIDENCE) / comparisons.max(1) as f64
}

/// The lag-1 autocorrelation of a run's log seconds, clipped to [0, 0.9] (a negative one would
/// narrow the interval, which nothing here trusts).
fn lag1(seconds: &[f64]) -> f64 {
    let l: Vec<f64> = seconds
        .iter()
        .filter(|&&x| x > 0.0)
        .map(|x| x.ln())
        .collect();
    if l.len() < 3 {
        return 0.0;
    }
    let m = l.iter().sum::<f64>() / l.len() as f64;
    let var: f64 = l.iter().map(|x| (x - m) * (x - m)).sum();
    if var <= 0.0 {
        return 0.0;
    }
    let cov: f64 = l.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
    (cov / var).clamp(0.0, 0.9)
}

/// How much the variance of the mean of [`BLOCKS`] block means (blocks of `len` seconds) exceeds
/// what their sample variance suggests, when seconds are AR(1) with lag-1 correlation `rho`:
/// adjacent block means correlate by `r`, the mean's variance grows by 1 + 2r(B−1)/B and the
/// sample variance shrinks by 1 − 2r/B.
fn block_inflation(rho: f64, len: usize) -> f64 {
    let l = len as f64;
    // Covariance of adjacent blocks and variance of one block, in units of σ²/L².
    let (mut cov, mut var) = (0.0, l);
    for k in 1..(2 * len) {
        let pairs = if k <= len { k } else { 2 * len - k } as f64;
        cov += pairs * rho.powi(k as i32);
        if k < len {
            var += 2.0 * (l - k as f64) * rho.powi(k as i32);
        }
    }
    let r = cov / var;
    let b = BLOCKS as f64;
    (1.0 + 2.0 * r * (b - 1.0) / b) / (1.0 - 2.0 * r / b)
}

fn block_means(seconds: &[f64]) -> Option<Vec<f64>> {
    let len = seconds.len() / BLOCKS;
    if len < MIN_BLOCK_SECONDS {
        return None;
    }
    let skip = seconds.len() - len * BLOCKS;
    Some(
        seconds[skip..]
            .chunks(len)
            .map(|c| c.iter().sum::<f64>() / c.len() as f64)
            .collect(),
    )
}

fn welch_log(base: &[f64], other: &[f64], evidence: Evidence) -> Option<Estimate> {
    let logs = |v: &[f64]| -> Option<Vec<f64>> {
        (v.len() >= 2 && v.iter().all(|&x| x > 0.0 && x.is_finite()))
            .then(|| v.iter().map(|x| x.ln()).collect())
    };
    let (x, y) = (logs(base)?, logs(other)?);
    let (mx, vx) = mean_var(&x);
    let (my, vy) = mean_var(&y);
    let (nx, ny) = (x.len() as f64, y.len() as f64);
    let (ax, ay) = (vx / nx, vy / ny);
    let se2 = ax + ay;
    let d = my - mx;
    let half = if se2 > 0.0 {
        // Welch–Satterthwaite degrees of freedom.
        let df = se2 * se2 / (ax * ax / (nx - 1.0) + ay * ay / (ny - 1.0));
        student::quantile(0.5 + CONFIDENCE / 2.0, df) * se2.sqrt()
    } else {
        0.0 // Every repetition identical on both sides: the difference is exact.
    };
    let pct = |l: f64| (l.exp() - 1.0) * 100.0;
    Some(Estimate {
        pct: pct(d),
        lo: pct(d - half),
        hi: pct(d + half),
        evidence,
    })
}

/// Mean and unbiased variance.
fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, var)
}

/// The largest distance of a sample from `median`, in percent of it: how far repetitions
/// strayed. `None` for one sample or a zero median (no spread to speak of).
pub fn spread_pct(samples: &[f64], median: f64) -> Option<f64> {
    (samples.len() > 1 && median != 0.0).then(|| {
        samples
            .iter()
            .map(|v| (v - median).abs())
            .fold(0.0, f64::max)
            / median.abs()
            * 100.0
    })
}

/// The median (the mean of the middle two for an even count).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_matches_a_hand_computation() {
        // ln of base: 0, ln 1.1, ln 1.2; other: the same shifted by ln 1.5.
        let base = [1.0, 1.1, 1.2];
        let other: Vec<f64> = base.iter().map(|v| v * 1.5).collect();
        let e = from_repetitions(&base, &other).unwrap();
        assert!((e.pct - 50.0).abs() < 1e-9, "{e:?}");
        // Equal variances and n: df = 4; se = sqrt(2 s² / 3).
        let l: Vec<f64> = base.iter().map(|v: &f64| v.ln()).collect();
        let (_, s2) = mean_var(&l);
        let half = 2.776_445 * (2.0 * s2 / 3.0).sqrt();
        assert!(((e.hi / 100.0 + 1.0).ln() - (1.5f64.ln() + half)).abs() < 1e-5);
        assert!(((e.lo / 100.0 + 1.0).ln() - (1.5f64.ln() - half)).abs() < 1e-5);
        assert!(e.excludes_zero() && !e.too_wide());
        assert_eq!(e.evidence, Evidence::Repetitions);
    }

    #[test]
    fn pairs_match_a_hand_computation() {
        // ln ratios 0.1, 0.2, 0.3: mean 0.2, s = 0.1, df 2, t = 4.302653.
        let base = [10.0, 20.0, 30.0];
        let other: Vec<f64> = [0.1f64, 0.2, 0.3]
            .iter()
            .zip(base)
            .map(|(l, b)| b * l.exp())
            .collect();
        let e = from_pairs(&base, &other).unwrap();
        let half = 4.302_653 * 0.1 / 3f64.sqrt();
        assert!(((e.pct / 100.0).ln_1p() - 0.2).abs() < 1e-9, "{e:?}");
        assert!(
            ((e.lo / 100.0).ln_1p() - (0.2 - half)).abs() < 1e-5,
            "{e:?}"
        );
        assert!(
            ((e.hi / 100.0).ln_1p() - (0.2 + half)).abs() < 1e-5,
            "{e:?}"
        );
        assert_eq!(e.evidence, Evidence::Pairs);
        // A pair with a zero is dropped; one pair left is no interval.
        assert!(from_pairs(&[1.0, 0.0], &[2.0, 3.0]).is_none());
    }

    #[test]
    fn overlapping_sides_span_zero() {
        let e = from_repetitions(
            &[100., 103., 98., 101., 99.],
            &[102., 97., 100.5, 104., 98.5],
        )
        .unwrap();
        assert!(!e.excludes_zero() && !e.too_wide(), "{e:?}");
    }

    #[test]
    fn wild_spread_is_too_wide() {
        // The issue's ±560%: one repetition six times the others.
        let e = from_repetitions(&[100., 98., 660.], &[101., 99., 102.]).unwrap();
        assert!(e.too_wide(), "{e:?}");
    }

    #[test]
    fn one_wide_end_is_too_wide_and_swapping_sides_keeps_the_verdict() {
        let at = |lo: f64, hi: f64| Estimate {
            pct: (lo + hi) / 2.0,
            lo,
            hi,
            evidence: Evidence::Repetitions,
        };
        // The trial on a busy machine: "~ within the noise" for an interval allowing a doubling.
        assert!(at(-18.0, 99.7).too_wide());
        assert!(at(-18.4, 125.1).too_wide());
        assert!(at(-30.0, 5.0).too_wide(), "a 30% loss is not ruled out");
        // Narrow enough to say "no difference larger than the noise".
        assert!(!at(-16.0, 11.5).too_wide());
        assert!(!at(-7.1, 2.4).too_wide());
        // -18% is past 1/1.2 − 1: too noisy, and so is the swapped interval (+22%).
        let swap = |e: Estimate| {
            at(
                100.0 / (1.0 + e.hi / 100.0) - 100.0,
                100.0 / (1.0 + e.lo / 100.0) - 100.0,
            )
        };
        for e in [
            at(-18.0, 5.0),
            at(-16.0, 19.0),
            at(-16.9, 0.5),
            at(-5.0, 19.9),
            at(-5.0, 20.5),
        ] {
            assert_eq!(
                e.too_wide(),
                swap(e).too_wide(),
                "{e:?} against {:?}",
                swap(e)
            );
        }
        assert!(at(-18.0, 5.0).too_wide() && !at(-16.0, 19.0).too_wide());
        // From repetitions: the trial's GET rps (a ±22%, b ±21%), once "~ within the noise".
        let e =
            from_repetitions(&[54919.5, 50208.1, 39232.3], &[74476.0, 48895.1, 62228.0]).unwrap();
        assert!(!e.excludes_zero() && e.too_wide(), "{e:?}");
    }

    #[test]
    fn what_cannot_be_estimated() {
        assert_eq!(from_repetitions(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(from_repetitions(&[1.0, 0.0], &[2.0, 3.0]), None);
        let e = from_repetitions(&[5.0, 5.0], &[5.0, 5.0]).unwrap();
        assert_eq!((e.lo, e.pct, e.hi), (0.0, 0.0, 0.0));
        assert!(!e.excludes_zero());
        let e = from_repetitions(&[5.0, 5.0], &[6.0, 6.0]).unwrap();
        assert!(e.excludes_zero());
    }

    #[test]
    fn correlated_seconds_widen_the_interval() {
        assert!((block_inflation(0.0, 5) - 1.0).abs() < 1e-12);
        let (a, b) = (block_inflation(0.3, 5), block_inflation(0.6, 5));
        assert!(1.0 < a && a < b, "{a} {b}");
        assert!(block_inflation(0.3, 20) < a, "longer blocks share less");
        assert_eq!(
            lag1(&[1.0, 2.0, 1.0, 2.0, 1.0, 2.0]),
            0.0,
            "negative: clipped"
        );
        assert!(lag1(&[1.0, 1.1, 1.2, 1.3, 1.4, 1.5]) > 0.3);
    }

    #[test]
    fn seconds_are_blocked() {
        let short = vec![100.0; BLOCKS * MIN_BLOCK_SECONDS - 1];
        assert_eq!(from_seconds(&short, &short), None);
        // 21 seconds: the first is dropped, blocks of 5.
        let mut base = vec![1000.0];
        base.extend([100.0; 5].repeat(4));
        assert_eq!(
            block_means(&base).unwrap(),
            vec![100.0, 100.0, 100.0, 100.0]
        );
        let other: Vec<f64> = (0..20).map(|i| 109.0 + f64::from(i % 5)).collect();
        let e = from_seconds(&base, &other).unwrap();
        assert_eq!(e.evidence, Evidence::WithinRun);
        assert!((e.pct - 11.0).abs() < 1e-9 && e.excludes_zero(), "{e:?}");
    }
}
