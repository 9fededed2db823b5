//! The boundary as a paired comparison (issue 36): once the search has a rate `low` that meets
//! the SLO and a rate `high` within `TOLERANCE` (`search.rs`) above it that does
//! not, it decides that boundary from windows at the two rates run **alternately** (low, high,
//! then high, low, …: a balanced order), not from each rate's windows run back to back.
//!
//! Why: machine noise is slow against a window. Measured back to back, the two bounds see
//! different machines (the failing bound's windows during a build, the met bound's after it),
//! and the boundary lands where the machine happened to be quiet; the next run answers
//! elsewhere. Run alternately, each round's two windows share the machine's state, so a slow
//! change in its load moves both sides alike and the round's ratio of the SLO's figures (high's
//! over low's) cancels it. Over the rounds, `stats::from_pairs` — the interval `respbench ab`
//! uses — gives how much more the higher rate breaks the SLO than the lower in the same moments,
//! with its 95% interval: the answer's interval. An interval wholly below zero says the higher
//! rate did *better* in the same moments: the boundary is not the load's, and the search ends
//! too noisy instead of answering.

use crate::stats::{self, Estimate};

use super::window::Window;

/// Rounds (one window at each rate) before the boundary is decided.
pub const ROUNDS: usize = 3;

/// The figure a window is compared by: its SLO figure over the limit, or for a window that fell
/// behind, at least how far behind (offered over achieved: it did not run at its rate, so it did
/// not meet the SLO there), kept finite and positive (a window without a reply reads
/// [`FIGURE_CAP`]) so that the pair's log ratio is a number.
pub fn figure(w: &Window) -> f64 {
    let mut f = w.slo_ratio;
    if w.saturated() {
        f = f.max(w.offered as f64 / w.achieved.max(f64::MIN_POSITIVE));
    }
    if f.is_nan() {
        f = FIGURE_CAP;
    }
    f.clamp(1.0 / FIGURE_CAP, FIGURE_CAP)
}

/// The largest figure a window is compared with (1,000 times the limit: anything beyond is
/// "broken by far").
pub const FIGURE_CAP: f64 = 1_000.0;

/// The alternating windows at the two rates of one bracket.
#[derive(Clone, Debug, PartialEq)]
pub struct Pairing {
    pub low: u64,
    pub high: u64,
    /// Per round, the figures at `low` and `high` (`None`: not measured yet).
    rounds: Vec<[Option<f64>; 2]>,
}

/// What the pairs say about a bracket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Boundary {
    pub low: u64,
    pub high: u64,
    /// Complete rounds.
    pub pairs: u32,
    /// The change of the SLO's figure from `low` to `high`, with its 95% interval (`None` with
    /// fewer than two pairs).
    pub change: Option<Estimate>,
}

impl Boundary {
    /// The higher rate broke the SLO by less than the lower in the same moments, beyond the
    /// interval's doubt: the load did not set this boundary.
    pub fn reversed(&self) -> bool {
        self.change.is_some_and(|e| e.hi < 0.0)
    }
}

impl Pairing {
    pub fn new(low: u64, high: u64) -> Self {
        Self {
            low,
            high,
            rounds: Vec::new(),
        }
    }

    /// Files a window at one of the two rates (others are ignored) in the round under way, or
    /// starts the next round with it.
    pub fn add(&mut self, w: &Window) {
        let side = match w.offered {
            r if r == self.low => 0,
            r if r == self.high => 1,
            _ => return,
        };
        match self.rounds.last_mut() {
            Some(round) if round[side].is_none() => round[side] = Some(figure(w)),
            _ => {
                let mut round = [None; 2];
                round[side] = Some(figure(w));
                self.rounds.push(round);
            }
        }
    }

    /// The rate to run next: the other side of a round under way, else the first side of the
    /// next round (low first in even rounds, high first in odd ones).
    pub fn next(&self) -> u64 {
        match self.rounds.last() {
            Some([Some(_), None]) => self.high,
            Some([None, Some(_)]) => self.low,
            _ if self.rounds.len().is_multiple_of(2) => self.low,
            _ => self.high,
        }
    }

    /// Rounds with a window at both rates.
    pub fn complete(&self) -> usize {
        self.rounds
            .iter()
            .filter(|r| r[0].is_some() && r[1].is_some())
            .count()
    }

    /// A round is under way (one of its two windows measured).
    pub fn pending(&self) -> bool {
        self.rounds
            .last()
            .is_some_and(|r| r[0].is_some() != r[1].is_some())
    }

    /// What the complete rounds say.
    pub fn boundary(&self) -> Boundary {
        let (low, high): (Vec<f64>, Vec<f64>) = self
            .rounds
            .iter()
            .filter_map(|r| Some((r[0]?, r[1]?)))
            .unzip();
        Boundary {
            low: self.low,
            high: self.high,
            pairs: low.len() as u32,
            change: stats::from_pairs(&low, &high),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(offered: u64, ratio: f64) -> Window {
        Window {
            offered,
            achieved: offered as f64,
            slo_met: ratio < 1.0,
            slo_ratio: ratio,
        }
    }

    #[test]
    fn the_rates_alternate_in_a_balanced_order() {
        let mut p = Pairing::new(100, 105);
        let mut order = Vec::new();
        for _ in 0..6 {
            let r = p.next();
            order.push(r);
            p.add(&w(r, 1.0));
        }
        assert_eq!(order, [100, 105, 105, 100, 100, 105]);
        assert_eq!(p.complete(), 3);
        assert!(!p.pending());
        p.add(&w(105, 1.0));
        assert!(p.pending());
        assert_eq!(p.next(), 100);
        // A window at another rate (the load check's) is not the pairs'.
        p.add(&w(210, 1.0));
        assert_eq!(p.complete(), 3);
    }

    #[test]
    fn a_slow_change_of_the_machine_cancels_in_the_pairs() {
        // The machine gets busier round by round (the figure doubles at both rates), and the
        // higher rate always breaks the SLO by 30% more than the lower in the same round.
        let mut p = Pairing::new(1_000, 1_050);
        for (k, busy) in [0.5, 1.0, 2.0, 4.0].into_iter().enumerate() {
            let (a, b) = (w(1_000, 0.7 * busy), w(1_050, 0.7 * busy * 1.3));
            if k % 2 == 0 {
                p.add(&a);
                p.add(&b);
            } else {
                p.add(&b);
                p.add(&a);
            }
        }
        let b = p.boundary();
        assert_eq!(b.pairs, 4);
        let e = b.change.unwrap();
        assert!(
            (e.pct - 30.0).abs() < 1e-9 && e.lo > 29.0 && e.hi < 31.0,
            "{e:?}"
        );
        assert!(!b.reversed());
    }

    #[test]
    fn a_higher_rate_that_does_better_in_the_same_moments_is_reversed() {
        let mut p = Pairing::new(1_000, 1_050);
        for (a, b) in [(1.2, 0.6), (1.5, 0.7), (1.1, 0.65), (1.3, 0.7)] {
            p.add(&w(1_000, a));
            p.add(&w(1_050, b));
        }
        assert!(p.boundary().reversed(), "{:?}", p.boundary());
    }

    #[test]
    fn a_window_that_fell_behind_or_got_no_reply_is_compared_as_broken() {
        let behind = Window {
            offered: 1_000,
            achieved: 500.0,
            slo_met: true,
            slo_ratio: 0.3,
        };
        assert_eq!(figure(&behind), 2.0);
        let silent = Window {
            offered: 1_000,
            achieved: 0.0,
            slo_met: false,
            slo_ratio: f64::INFINITY,
        };
        assert_eq!(figure(&silent), FIGURE_CAP);
        assert_eq!(figure(&w(10, 0.0)), 1.0 / FIGURE_CAP);
    }
}
