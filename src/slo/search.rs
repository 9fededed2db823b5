//! The `--find-max` search as a state machine with no clock and no I/O: given each step's
//! result, the next offered rate or the conclusion. The run drives it (`run::find_max`); tests
//! drive it with synthetic servers.
//!
//! Strategy: ramp up by doubling from the start while steps pass; if the very first step fails,
//! halve a few times to find one that passes; then bisect between the highest rate that passed
//! and the lowest that failed until they are within [`TOLERANCE`] of each other. A step passes
//! when the SLO held *and* the offered rate was achieved (to [`SATURATED_BELOW`]): a step that
//! fell behind did not run at the rate it is filed under, so it cannot vouch for that rate even
//! if its latencies looked fine.
//!
//! One noisy step (a stall of the host, another process taking the core) can fail a rate the
//! server sustains, and the bisection never goes back above a failed rate. So before concluding,
//! the failing bound is run once more: if it passes now, the search goes on upward from it.

/// The search ends when the lowest failing rate is within this share above the highest passing.
pub const TOLERANCE: f64 = 0.05;

/// A step whose achieved rate is below this share of the offered rate fell behind: the load
/// generator or the server could not keep up (the schedule's last slots and replies still in
/// flight make a step read a percent or two low, so 90% leaves room for that).
pub const SATURATED_BELOW: f64 = 0.9;

/// At most this many steps (with the default 5 s steps and 1 s warmups, about 2 minutes). A
/// doubling ramp from a quarter of the closed-loop probe plus a bisection to 5% takes about 8.
pub const MAX_STEPS: usize = 16;

/// When the first step fails, halve at most this many times (down to 1/16 of the start) before
/// concluding that no rate meets the SLO.
pub const MAX_HALVINGS: u32 = 4;

/// The ramp never offers more than this (requests per second).
pub const MAX_RPS: u64 = 1_000_000_000;

/// One measured step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The `--rps` the step offered.
    pub offered: u64,
    /// Requests per second it achieved over its measured window.
    pub achieved: f64,
    /// Every SLO condition held.
    pub slo_met: bool,
}

impl Step {
    /// The achieved rate fell well below the offered one (see [`SATURATED_BELOW`]).
    pub fn saturated(&self) -> bool {
        self.achieved < self.offered as f64 * SATURATED_BELOW
    }

    /// The step counts as "this rate meets the SLO".
    pub fn passed(&self) -> bool {
        self.slo_met && !self.saturated()
    }
}

/// Why the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The highest passing and lowest failing rates are within [`TOLERANCE`].
    Converged,
    /// Even the lowest rate tried failed.
    NeverMet,
    /// The ramp reached [`MAX_RPS`] with every step passing.
    RateCap,
    /// [`MAX_STEPS`] steps ran before the search converged.
    StepLimit,
    /// Stopped from outside (Ctrl-C, the time budget, a fatal error).
    Stopped,
}

/// What the search found: the highest passing step, the lowest failing one above it, and why it
/// ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Conclusion {
    pub best: Option<Step>,
    pub upper: Option<Step>,
    pub end: End,
    /// Steps taken.
    pub steps: usize,
}

/// What to do next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// Run a step at this offered rate.
    Run(u64),
    Done(Conclusion),
}

/// The search's state.
#[derive(Clone, Debug)]
pub struct Search {
    start: u64,
    steps: usize,
    max_steps: usize,
    best: Option<Step>,
    upper: Option<Step>,
    /// The failing bound has been run twice (set when its re-run failed too).
    upper_confirmed: bool,
    /// The next step re-runs the failing bound.
    confirming: bool,
}

/// The starting rate from a closed-loop probe's throughput: a quarter of it, so the ramp's first
/// steps show the latency at low load before it approaches what the probe reached.
pub fn start_from_probe(closed_loop_rps: f64) -> u64 {
    ((closed_loop_rps / 4.0).round() as u64).clamp(1, MAX_RPS)
}

impl Search {
    /// A search whose first step offers `start` (at least 1) and that takes at most `max_steps`.
    pub fn new(start: u64, max_steps: usize) -> Self {
        Self {
            start: start.clamp(1, MAX_RPS),
            steps: 0,
            max_steps: max_steps.max(1),
            best: None,
            upper: None,
            upper_confirmed: false,
            confirming: false,
        }
    }

    /// The first step's offered rate.
    pub fn first(&self) -> u64 {
        self.start
    }

    /// Takes a step's result; returns the next rate to offer or the conclusion.
    pub fn record(&mut self, step: Step) -> Next {
        self.steps += 1;
        let rerun = std::mem::take(&mut self.confirming);
        if step.passed() {
            if self.best.is_none_or(|b| step.offered > b.offered) {
                self.best = Some(step);
            }
            if self.upper.is_some_and(|u| step.offered >= u.offered) {
                // The failing bound passed on its re-run: it was noise; search above it.
                self.upper = None;
                self.upper_confirmed = false;
            }
        } else if rerun {
            self.upper = Some(step);
            self.upper_confirmed = true;
        } else if self.upper.is_none_or(|u| step.offered < u.offered) {
            self.upper = Some(step);
            self.upper_confirmed = false;
        }
        let next = match (self.best, self.upper) {
            (Some(b), None) if b.offered >= MAX_RPS => return self.done(End::RateCap),
            (Some(b), None) => b.offered.saturating_mul(2).min(MAX_RPS),
            (None, Some(u)) => {
                let floor = (self.start >> MAX_HALVINGS).max(1);
                let half = u.offered / 2;
                if half < floor || half == 0 {
                    return self.done(End::NeverMet);
                }
                half
            }
            (Some(b), Some(u)) => {
                let gap = u.offered.saturating_sub(b.offered) as f64;
                let mid = b.offered + (u.offered.saturating_sub(b.offered)) / 2;
                if gap <= TOLERANCE * b.offered as f64 || mid <= b.offered {
                    if self.upper_confirmed || self.steps >= self.max_steps {
                        return self.done(End::Converged);
                    }
                    self.confirming = true;
                    u.offered
                } else {
                    mid
                }
            }
            (None, None) => unreachable!("a step was just recorded"),
        };
        if self.steps >= self.max_steps {
            return self.done(End::StepLimit);
        }
        Next::Run(next)
    }

    /// The best answer so far, when the search is stopped from outside.
    pub fn stop(&self) -> Conclusion {
        self.conclusion(End::Stopped)
    }

    fn done(&self, end: End) -> Next {
        Next::Done(self.conclusion(end))
    }

    fn conclusion(&self, end: End) -> Conclusion {
        Conclusion {
            best: self.best,
            upper: self.upper,
            end,
            steps: self.steps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic server: achieves at most `capacity`, and meets the SLO below `knee`.
    fn server(capacity: f64, knee: f64) -> impl Fn(u64) -> Step {
        move |offered| Step {
            offered,
            achieved: (offered as f64).min(capacity),
            slo_met: (offered as f64) < knee,
        }
    }

    fn drive(search: &mut Search, measure: impl Fn(u64) -> Step) -> (Conclusion, Vec<u64>) {
        let mut rate = search.first();
        let mut offered = Vec::new();
        loop {
            offered.push(rate);
            match search.record(measure(rate)) {
                Next::Run(r) => rate = r,
                Next::Done(c) => return (c, offered),
            }
        }
    }

    #[test]
    fn converges_within_five_percent_of_the_knee_in_bounded_steps() {
        for knee in [37.0, 1_000.0, 4_321.0, 83_200.0, 250_000.0, 3_000_000.0] {
            for start_share in [0.01, 0.1, 0.25, 0.6, 0.95, 1.5, 8.0] {
                let start = (knee * start_share) as u64;
                let mut s = Search::new(start, MAX_STEPS);
                let (c, offered) = drive(&mut s, server(knee * 1.3, knee));
                let ctx = format!("knee {knee}, start {start}: {offered:?}");
                if c.end == End::NeverMet {
                    // Starting 8× above the knee, four halvings reach only half of it.
                    assert!(start as f64 / 16.0 >= knee / 2.0, "{ctx}");
                    continue;
                }
                assert_eq!(c.end, End::Converged, "{ctx}");
                let best = c.best.unwrap().offered as f64;
                assert!(
                    best < knee && best >= knee * (1.0 - TOLERANCE) - 1.0,
                    "{ctx}"
                );
                assert!(offered.len() <= MAX_STEPS, "{ctx}");
            }
        }
    }

    #[test]
    fn a_noisy_failure_is_run_again_and_the_search_goes_on_above_it() {
        // The first try at 2,000 fails (a stall); the server really holds up to 5,000.
        let tried = std::cell::Cell::new(0);
        let measure = |offered: u64| {
            let noisy = offered == 2_000 && tried.replace(tried.get() + 1) == 0;
            Step {
                offered,
                achieved: offered as f64,
                slo_met: !noisy && offered < 5_000,
            }
        };
        let mut s = Search::new(1_000, MAX_STEPS);
        let (c, offered) = drive(&mut s, measure);
        assert_eq!(&offered[..4], &[1_000, 2_000, 1_500, 1_750]);
        assert!(
            offered.iter().filter(|&&r| r == 2_000).count() == 2,
            "{offered:?}"
        );
        assert_eq!(c.end, End::Converged, "{offered:?}");
        assert!(c.best.unwrap().offered >= 4_750, "{offered:?}");
    }

    #[test]
    fn a_ceiling_below_the_knee_is_the_upper_bound() {
        // The SLO would hold up to 10k, but only 6k can be served: steps above fall behind.
        let mut s = Search::new(1_000, MAX_STEPS);
        let (c, _) = drive(&mut s, server(6_000.0, 10_000.0));
        assert_eq!(c.end, End::Converged);
        let upper = c.upper.unwrap();
        assert!(upper.slo_met && upper.saturated(), "{upper:?}");
        let best = c.best.unwrap().offered as f64;
        assert!(
            (6_000.0 * 0.95..=6_000.0 / SATURATED_BELOW).contains(&best),
            "{best}"
        );
    }

    #[test]
    fn a_first_step_that_fails_halves_then_bisects() {
        let mut s = Search::new(8_000, MAX_STEPS);
        let (c, offered) = drive(&mut s, server(1e9, 3_000.0));
        assert_eq!(&offered[..3], &[8_000, 4_000, 2_000]);
        assert_eq!(c.end, End::Converged);
        assert!(c.best.unwrap().offered >= 2_850);
    }

    #[test]
    fn no_rate_meets_an_impossible_slo() {
        let mut s = Search::new(1_600, MAX_STEPS);
        let (c, offered) = drive(&mut s, server(1e9, 0.0));
        assert_eq!(c.end, End::NeverMet);
        assert_eq!(offered, [1_600, 800, 400, 200, 100]);
        assert_eq!(c.best, None);
        assert_eq!(c.upper.unwrap().offered, 100);
    }

    #[test]
    fn the_step_limit_ends_the_search_with_the_best_so_far() {
        let mut s = Search::new(10, 3);
        let (c, offered) = drive(&mut s, server(1e12, 1e12));
        assert_eq!(offered, [10, 20, 40]);
        assert_eq!(c.end, End::StepLimit);
        assert_eq!(c.best.unwrap().offered, 40);
        assert_eq!(s.stop().end, End::Stopped);
    }

    #[test]
    fn the_ramp_stops_at_the_rate_cap() {
        let mut s = Search::new(MAX_RPS / 2, MAX_STEPS);
        let (c, offered) = drive(&mut s, server(f64::MAX, f64::MAX));
        assert_eq!(offered, [MAX_RPS / 2, MAX_RPS]);
        assert_eq!(c.end, End::RateCap);
    }

    #[test]
    fn the_probe_start_is_a_quarter_and_at_least_one() {
        assert_eq!(start_from_probe(40_000.0), 10_000);
        assert_eq!(start_from_probe(0.0), 1);
    }
}
