//! Pacing for `--rps`: when a worker's next send is due.
//!
//! The schedule is fixed in advance rather than derived from when replies arrive, so a slow
//! server cannot slow the offered load: a send time that passes while no connection is free keeps
//! its time, and the wait is charged to the request (coordinated omission corrected). The arrival
//! process (`--arrival`) only changes how the k-th time is computed, not how the worker uses it:
//!
//! - uniform: the k-th command is due at `start + k / rate` (computed from k, so no rounding
//!   error accumulates);
//! - Poisson: gaps are exponential with mean `1 / rate`, drawn from the worker's own seeded RNG
//!   (a run with the same `--seed` repeats its schedule). Real clients arrive independently, and
//!   bursts are what queues (and tail latency) react to; evenly spaced sends hide them.

use std::time::{Duration, Instant};

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// How `--rps` sends are spaced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arrival {
    /// Evenly, every `1 / rate` (valkey-benchmark's `--rps`).
    #[default]
    Uniform,
    /// A Poisson process: independent exponential gaps with the same mean rate.
    Poisson,
}

/// The `--rps` schedule of one worker.
pub(super) struct Pacer {
    start: Instant,
    interval_ns: f64,
    /// Commands already given a send time (the k of the next one).
    scheduled: u64,
    /// Poisson arrivals: the RNG the gaps come from and the next send time's offset from
    /// `start` in nanoseconds (a float: the sum of the gaps so far).
    poisson: Option<(Xoshiro256PlusPlus, f64)>,
    /// The next command's send time, computed once per [`Pacer::advance`]: a paced request
    /// asks for it several times (deciding, dispatching, arming the timer).
    due: Instant,
}

impl Pacer {
    /// A schedule of `rate` commands per second from `start`; `seed` (the run's seed mixed with
    /// the worker's index) seeds Poisson gaps.
    pub(super) fn new(start: Instant, rate: f64, arrival: Arrival, seed: u64) -> Self {
        let poisson = (arrival == Arrival::Poisson).then(|| {
            (
                Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15),
                0.0,
            )
        });
        Self {
            start,
            interval_ns: 1e9 / rate.max(1e-9),
            scheduled: 0,
            poisson,
            due: start,
        }
    }

    /// When the next command is due.
    #[inline]
    pub(super) fn next_due(&self) -> Instant {
        self.due
    }

    /// Gives the next `commands` commands their send times (a batch goes at the first one's).
    pub(super) fn advance(&mut self, commands: u64) {
        self.scheduled += commands;
        let offset_ns = match self.poisson.as_mut() {
            Some((rng, at)) => {
                for _ in 0..commands {
                    *at += exponential(rng) * self.interval_ns;
                }
                *at
            }
            None => self.scheduled as f64 * self.interval_ns,
        };
        self.due = self.start + Duration::from_nanos(offset_ns as u64);
    }
}

/// An exponential draw with mean 1 by inversion: `-ln(u)` for `u` uniform in `(0, 1]` (53
/// random bits, never 0, so the logarithm is finite).
fn exponential<R: RngCore>(rng: &mut R) -> f64 {
    let u = ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
    -u.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The offsets (ns from start) of the first `n` send times, one command at a time.
    fn offsets(arrival: Arrival, rate: f64, seed: u64, n: usize) -> Vec<u64> {
        let start = Instant::now();
        let mut p = Pacer::new(start, rate, arrival, seed);
        (0..n)
            .map(|_| {
                let at = p.next_due() - start;
                p.advance(1);
                at.as_nanos() as u64
            })
            .collect()
    }

    #[test]
    fn uniform_is_evenly_spaced() {
        let v = offsets(Arrival::Uniform, 1000.0, 1, 5);
        assert_eq!(v, [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    }

    #[test]
    fn poisson_has_the_mean_rate_and_exponential_gaps() {
        let n = 200_000;
        let v = offsets(Arrival::Poisson, 10_000.0, 7, n + 1);
        let gaps: Vec<f64> = v.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        // Mean gap 100 µs; the standard error over 200k gaps is 0.22%.
        assert!((mean - 100_000.0).abs() < 1_000.0, "mean gap {mean} ns");
        // Exponential: standard deviation equals the mean, and P(gap > mean) = 1/e.
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!((sd / mean - 1.0).abs() < 0.02, "sd/mean {}", sd / mean);
        let above = gaps.iter().filter(|&&g| g > mean).count() as f64 / n as f64;
        assert!((above - (-1f64).exp()).abs() < 0.005, "{above}");
        assert!(gaps.iter().any(|&g| g != gaps[0]), "gaps are not all equal");
    }

    #[test]
    fn poisson_is_reproducible_and_batches_take_their_commands_gaps() {
        assert_eq!(
            offsets(Arrival::Poisson, 500.0, 3, 50),
            offsets(Arrival::Poisson, 500.0, 3, 50)
        );
        assert_ne!(
            offsets(Arrival::Poisson, 500.0, 3, 50),
            offsets(Arrival::Poisson, 500.0, 4, 50)
        );
        // A batch of 4 commands moves the schedule as 4 single commands would.
        let start = Instant::now();
        let mut batch = Pacer::new(start, 500.0, Arrival::Poisson, 3);
        batch.advance(4);
        let singles = offsets(Arrival::Poisson, 500.0, 3, 5);
        assert_eq!((batch.next_due() - start).as_nanos() as u64, singles[4]);
    }
}
