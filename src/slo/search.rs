//! The `--find-max` search as a state machine with no clock and no I/O: given each measured
//! window, the next offered rate or the conclusion. The run drives it (`run::find_max`); tests
//! drive it with synthetic servers (`slo::sim`).
//!
//! Words: a **window** is one measured run at one offered rate; a **step** is the search's visit
//! to a rate, one or more consecutive windows there. Every window at a rate adds to that rate's
//! [`Tally`], also when the search comes back to it later.
//!
//! Strategy: ramp up by doubling from the start while rates meet the SLO; if the very first
//! rate breaks it, halve a few times to find one that meets it; then bisect between the highest
//! rate that met it and the lowest above that broke it until they are within [`TOLERANCE`].
//! A window meets the SLO when every condition held *and* the offered rate was achieved (to
//! [`SATURATED_BELOW`]): a window that fell behind did not run at the rate it is filed under.
//!
//! Why windows and not one run per rate: on a shared machine one window can break an SLO the
//! server meets (a stall, another process on the core), and a search that trusts it caps the
//! answer there, or halves below rates that already met the SLO; the next run answers something
//! else. So a rate is decided only when one verdict leads the other by [`LEAD`] windows (two
//! agreeing windows when nothing disagrees), at most [`WINDOWS_PER_RATE`] windows; a rate with
//! no such lead by then is **split**, which the bisection treats as not meeting the SLO (the
//! answer must be a rate that meets it reliably). Before concluding, both bounds get at least
//! [`CONFIRM_WINDOWS`] windows: a failing bound that now leads to "met" was noise and the search
//! goes on above it.
//!
//! The bisection never goes below the highest rate that leads to "met", and one noisy window
//! cannot take that lead away: a rate that met the SLO twice is left only when later windows
//! there outvote it by [`LEAD`]. When windows keep disagreeing with the verdict at their own
//! rate ([`Noise::too_much`]), no rate can be trusted on this machine for this SLO: the search
//! ends [`End::TooNoisy`] rather than answering a number the next run would not.

use std::collections::BTreeMap;

/// The search ends when the lowest failing rate is within this share above the highest passing.
pub const TOLERANCE: f64 = 0.05;

/// A window whose achieved rate is below this share of the offered rate fell behind: the load
/// generator or the server could not keep up (the schedule's last slots and replies still in
/// flight make a window read a percent or two low, so 90% leaves room for that).
pub const SATURATED_BELOW: f64 = 0.9;

/// A rate is decided when one verdict has this many more windows than the other.
pub const LEAD: u32 = 2;

/// At most this many windows at one rate; a rate still without a [`LEAD`] is split.
pub const WINDOWS_PER_RATE: u32 = 6;

/// The answer's bounds have at least this many windows each before the search concludes.
pub const CONFIRM_WINDOWS: u32 = 3;

/// At most this many windows in a search (with the default 5 s windows and 1 s warmups, about
/// 4 minutes). A quiet search takes about 16: two per rate on a doubling ramp and a bisection to
/// 5%, and one more for each bound.
pub const MAX_WINDOWS: usize = 40;

/// The noise is judged once this many windows are decided (an unlucky start, two bursts in the
/// first six windows, is not yet a noisy machine).
pub const NOISE_MIN: u32 = 10;

/// When the first rate breaks the SLO, halve at most this many times (down to 1/16 of the
/// start) before concluding that no rate meets it.
pub const MAX_HALVINGS: u32 = 4;

/// The ramp never offers more than this (requests per second).
pub const MAX_RPS: u64 = 1_000_000_000;

/// One measured window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// The `--rps` the window offered.
    pub offered: u64,
    /// Requests per second it achieved.
    pub achieved: f64,
    /// Every SLO condition held.
    pub slo_met: bool,
}

impl Window {
    /// The achieved rate fell well below the offered one (see [`SATURATED_BELOW`]).
    pub fn saturated(&self) -> bool {
        self.achieved < self.offered as f64 * SATURATED_BELOW
    }

    /// The window counts as "this rate meets the SLO".
    pub fn passed(&self) -> bool {
        self.slo_met && !self.saturated()
    }
}

/// What the windows at one rate say so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// "Met" leads by [`LEAD`].
    Met,
    /// "Broken" leads by [`LEAD`].
    Broken,
    /// [`WINDOWS_PER_RATE`] windows without a lead: noise, or the boundary itself.
    Split,
    /// Not yet decided: another window is needed.
    Open,
}

/// Every window at one offered rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tally {
    pub offered: u64,
    /// Windows that met the SLO at the rate.
    pub met: u32,
    /// Windows that broke it or fell behind.
    pub broken: u32,
    /// Sum of the achieved rates of the windows that met it.
    met_achieved: f64,
    /// Of the first two windows at the rate, those that broke it: always measured whatever they
    /// say (a rate is never decided on fewer), so an unbiased sample of the noise.
    early_broken: u32,
    /// The latest window that broke it (what the answer says about the failing bound).
    pub last_broken: Option<Window>,
    /// The latest window.
    pub last: Window,
}

impl Tally {
    fn new(w: Window) -> Self {
        Self {
            offered: w.offered,
            met: 0,
            broken: 0,
            met_achieved: 0.0,
            early_broken: 0,
            last_broken: None,
            last: w,
        }
    }

    /// The tally of `windows`, all at one rate (`None`: no window).
    pub fn of(windows: &[Window]) -> Option<Self> {
        let mut t = Self::new(*windows.first()?);
        for w in windows {
            debug_assert_eq!(w.offered, t.offered, "one rate per tally");
            t.add(*w);
        }
        Some(t)
    }

    fn add(&mut self, w: Window) {
        if w.passed() {
            self.met += 1;
            self.met_achieved += w.achieved;
        } else {
            self.early_broken += u32::from(self.windows() < LEAD);
            self.broken += 1;
            self.last_broken = Some(w);
        }
        self.last = w;
    }

    pub fn windows(&self) -> u32 {
        self.met + self.broken
    }

    pub fn decision(&self) -> Decision {
        if self.met >= self.broken + LEAD {
            Decision::Met
        } else if self.broken >= self.met + LEAD {
            Decision::Broken
        } else if self.windows() >= WINDOWS_PER_RATE {
            Decision::Split
        } else {
            Decision::Open
        }
    }

    /// The mean achieved rate of the windows that met the SLO, else the latest window's.
    pub fn achieved(&self) -> f64 {
        if self.met > 0 {
            self.met_achieved / f64::from(self.met)
        } else {
            self.last.achieved
        }
    }

    /// The window that stands for the failing side: the latest that broke the SLO.
    pub fn failing(&self) -> Window {
        self.last_broken.unwrap_or(self.last)
    }

    /// Decided, and with enough windows to be one of the answer's bounds.
    fn confirmed(&self) -> bool {
        self.windows() >= CONFIRM_WINDOWS && self.decision() != Decision::Open
    }
}

/// Why the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The highest met and lowest failing rates are within [`TOLERANCE`], both confirmed.
    Converged,
    /// Even the lowest rate tried broke the SLO.
    NeverMet,
    /// The ramp reached [`MAX_RPS`] with every rate meeting the SLO.
    RateCap,
    /// [`MAX_WINDOWS`] windows ran before the search converged.
    WindowLimit,
    /// The windows disagree too much to answer (see the module's documentation).
    TooNoisy,
    /// Stopped from outside (Ctrl-C, the time budget, a fatal error).
    Stopped,
}

/// Windows that disagree with the boundary the search found (see [`Search::noise`]): on a
/// quiet machine a few near the boundary, whatever the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Noise {
    pub disagreeing: u32,
    pub windows: u32,
}

impl Noise {
    /// A fifth of the windows or more disagree with the others at their rate (at least three,
    /// of at least [`NOISE_MIN`]). A burst in one window of twenty (a build on the machine)
    /// stays below; bursts in most windows go above in most searches (`slo::sim` measures how
    /// often each way).
    pub fn too_much(&self) -> bool {
        self.windows >= NOISE_MIN && self.disagreeing >= 3 && self.disagreeing * 5 >= self.windows
    }
}

/// What the search found: the highest rate that met the SLO, the lowest above it that did not,
/// and why it ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Conclusion {
    /// The highest rate whose windows lead to "met".
    pub best: Option<Tally>,
    /// The lowest rate above `best` that broke the SLO or split.
    pub upper: Option<Tally>,
    pub end: End,
    /// Windows measured.
    pub windows: usize,
    pub noise: Noise,
}

/// What to do next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// Measure a window at this offered rate.
    Run(u64),
    Done(Conclusion),
}

/// The search's state.
#[derive(Clone, Debug)]
pub struct Search {
    start: u64,
    windows: usize,
    max_windows: usize,
    /// Every rate measured, by rate.
    rates: BTreeMap<u64, Tally>,
    /// The rate of the latest window.
    current: Option<u64>,
}

/// The starting rate from a closed-loop probe's throughput: a quarter of it, so the ramp's first
/// steps show the latency at low load before it approaches what the probe reached.
pub fn start_from_probe(closed_loop_rps: f64) -> u64 {
    ((closed_loop_rps / 4.0).round() as u64).clamp(1, MAX_RPS)
}

impl Search {
    /// A search whose first window offers `start` (at least 1) and that measures at most
    /// `max_windows`.
    pub fn new(start: u64, max_windows: usize) -> Self {
        Self {
            start: start.clamp(1, MAX_RPS),
            windows: 0,
            max_windows: max_windows.max(1),
            rates: BTreeMap::new(),
            current: None,
        }
    }

    /// The first window's offered rate.
    pub fn first(&self) -> u64 {
        self.start
    }

    /// Every window so far at `rate`.
    pub fn tally(&self, rate: u64) -> Option<&Tally> {
        self.rates.get(&rate)
    }

    /// Takes a window's result; returns the next rate to offer or the conclusion.
    pub fn record(&mut self, w: Window) -> Next {
        self.windows += 1;
        self.current = Some(w.offered);
        let tally = self.rates.entry(w.offered).or_insert_with(|| Tally::new(w));
        tally.add(w);
        let decision = tally.decision();
        if let Some(end) = self.noisy() {
            return self.done(end);
        }
        let next = match self.next_rate(decision, w.offered) {
            Ok(rate) => rate,
            Err(end) => return self.done(end),
        };
        if self.windows >= self.max_windows {
            return self.done(End::WindowLimit);
        }
        Next::Run(next)
    }

    /// [`End::TooNoisy`] when too many windows disagree with what the rates around them say.
    fn noisy(&self) -> Option<End> {
        self.noise().too_much().then_some(End::TooNoisy)
    }

    /// The next rate, or how the search ends.
    fn next_rate(&self, decision: Decision, rate: u64) -> Result<u64, End> {
        if decision == Decision::Open {
            return Ok(rate);
        }
        match (self.best(), self.upper()) {
            (Some(b), None) if b.offered >= MAX_RPS => Err(End::RateCap),
            (Some(b), None) => Ok(b.offered.saturating_mul(2).min(MAX_RPS)),
            (None, Some(u)) => {
                let floor = (self.start >> MAX_HALVINGS).max(1);
                let half = u.offered / 2;
                if half >= floor && half > 0 {
                    Ok(half)
                } else if !u.confirmed() {
                    Ok(u.offered)
                } else if self.rates.values().map(|t| t.met).sum::<u32>() >= LEAD {
                    // Windows met it, at rates that then broke it: whether a rate meets it is
                    // up to this machine's noise (one such window is a fluke).
                    Err(End::TooNoisy)
                } else {
                    Err(End::NeverMet)
                }
            }
            (Some(b), Some(u)) => {
                let gap = u.offered.saturating_sub(b.offered) as f64;
                let mid = b.offered + (u.offered - b.offered) / 2;
                if gap > TOLERANCE * b.offered as f64 && mid > b.offered {
                    Ok(mid)
                } else if !u.confirmed() {
                    Ok(u.offered)
                } else if !b.confirmed() {
                    Ok(b.offered)
                } else {
                    Err(End::Converged)
                }
            }
            (None, None) => unreachable!("a decided rate was just recorded"),
        }
    }

    /// The highest rate that leads to "met".
    fn best(&self) -> Option<&Tally> {
        self.rates
            .values()
            .rev()
            .find(|t| t.decision() == Decision::Met)
    }

    /// The lowest decided rate above the best that does not lead to "met".
    fn upper(&self) -> Option<&Tally> {
        let above = self.best().map_or(0, |b| b.offered + 1);
        self.rates
            .range(above..)
            .map(|(_, t)| t)
            .find(|t| matches!(t.decision(), Decision::Broken | Decision::Split))
    }

    /// The windows that disagree with the verdict at their own rate (each decided rate's
    /// minority), among the windows of decided rates. Neither a rate still open nor the failing
    /// bound is counted: at the boundary windows disagree because the SLO is just about met
    /// there (a split failing bound says "the boundary is here"), and that is not noise.
    pub fn noise(&self) -> Noise {
        let boundary = self.upper().map(|u| u.offered);
        let decided = self
            .rates
            .values()
            .filter(|t| t.decision() != Decision::Open && Some(t.offered) != boundary);
        decided.fold(Noise::default(), |n, t| Noise {
            disagreeing: n.disagreeing + t.met.min(t.broken),
            windows: n.windows + t.windows(),
        })
    }

    /// The best answer so far, when the search is stopped from outside.
    pub fn stop(&self) -> Conclusion {
        self.conclusion(End::Stopped)
    }

    fn done(&self, end: End) -> Next {
        Next::Done(self.conclusion(end))
    }

    fn conclusion(&self, end: End) -> Conclusion {
        let best = self.best().copied();
        let above = best.map_or(0, |b| b.offered + 1);
        let upper = self
            .rates
            .range(above..)
            .map(|(_, t)| *t)
            .find(|t| matches!(t.decision(), Decision::Broken | Decision::Split));
        Conclusion {
            best,
            upper,
            end,
            windows: self.windows,
            noise: self.noise(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic server: achieves at most `capacity`, and meets the SLO below `knee`.
    fn server(capacity: f64, knee: f64) -> impl FnMut(u64) -> Window {
        move |offered| Window {
            offered,
            achieved: (offered as f64).min(capacity),
            slo_met: (offered as f64) < knee,
        }
    }

    fn drive(
        search: &mut Search,
        mut measure: impl FnMut(u64) -> Window,
    ) -> (Conclusion, Vec<u64>) {
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
    fn converges_within_five_percent_of_the_knee_in_bounded_windows() {
        for knee in [37.0, 1_000.0, 4_321.0, 83_200.0, 250_000.0, 3_000_000.0] {
            for start_share in [0.01, 0.1, 0.25, 0.6, 0.95, 1.5, 8.0] {
                let start = (knee * start_share) as u64;
                let mut s = Search::new(start, MAX_WINDOWS);
                let (c, offered) = drive(&mut s, server(knee * 1.3, knee));
                let ctx = format!("knee {knee}, start {start}: {offered:?}");
                if c.end == End::NeverMet {
                    // Starting 8× above the knee, four halvings reach only half of it.
                    assert!(start as f64 / 16.0 >= knee / 2.0, "{ctx}");
                    continue;
                }
                assert_eq!(c.end, End::Converged, "{ctx}");
                let (best, upper) = (c.best.unwrap(), c.upper.unwrap());
                let rate = best.offered as f64;
                assert!(
                    rate < knee && rate >= knee * (1.0 - TOLERANCE) - 1.0,
                    "{ctx}"
                );
                assert_eq!((best.met, best.broken), (3, 0), "{ctx}");
                assert_eq!((upper.met, upper.broken), (0, 3), "{ctx}");
                // Two windows per rate, three for each bound: 26 from 1% of the knee.
                assert!(offered.len() <= 26, "{ctx}");
            }
        }
    }

    #[test]
    fn every_rate_needs_two_agreeing_windows_and_the_bounds_three() {
        let mut s = Search::new(1_000, MAX_WINDOWS);
        let (c, offered) = drive(&mut s, server(1e9, 3_000.0));
        assert_eq!(&offered[..6], &[1_000, 1_000, 2_000, 2_000, 4_000, 4_000]);
        assert_eq!(c.end, End::Converged);
        assert_eq!(c.noise.disagreeing, 0);
        assert!(c.best.unwrap().offered >= 2_850);
    }

    #[test]
    fn a_noisy_window_is_outvoted_and_the_search_goes_on_above_it() {
        // The first window at 2,000 breaks (a stall); the server really holds up to 5,000.
        let mut tried = 0;
        let measure = |offered: u64| {
            let noisy = offered == 2_000 && {
                tried += 1;
                tried == 1
            };
            Window {
                offered,
                achieved: offered as f64,
                slo_met: !noisy && offered < 5_000,
            }
        };
        let mut s = Search::new(1_000, MAX_WINDOWS);
        let (c, offered) = drive(&mut s, measure);
        // 2,000: broken, met, met, met: "met" leads by two after four windows.
        assert_eq!(
            &offered[..7],
            &[1_000, 1_000, 2_000, 2_000, 2_000, 2_000, 4_000]
        );
        assert_eq!(c.end, End::Converged, "{offered:?}");
        assert!(c.best.unwrap().offered >= 4_750, "{offered:?}");
        assert_eq!(c.noise.disagreeing, 1);
    }

    #[test]
    fn a_failing_bound_that_meets_on_confirmation_was_noise() {
        // Both first windows at 8,000 break (a long stall); the server holds up to 12,000.
        let mut at_8k = 0;
        let measure = |offered: u64| {
            let noisy = offered == 8_000 && {
                at_8k += 1;
                at_8k <= 2
            };
            Window {
                offered,
                achieved: offered as f64,
                slo_met: !noisy && offered < 12_000,
            }
        };
        let mut s = Search::new(1_000, MAX_WINDOWS);
        let (c, offered) = drive(&mut s, measure);
        assert_eq!(c.end, End::Converged, "{offered:?}");
        assert!(c.best.unwrap().offered >= 11_400, "{offered:?}");
        let t = s.tally(8_000).unwrap();
        assert_eq!(
            (t.met, t.broken, t.decision()),
            (4, 2, Decision::Met),
            "{offered:?}"
        );
    }

    #[test]
    fn one_noisy_window_never_sends_the_search_below_a_rate_that_met_twice() {
        // 4,000 meets twice, then its third window (the confirmation) breaks; the server holds
        // up to 4,100.
        let mut at_4k = 0;
        let measure = |offered: u64| {
            let noisy = offered == 4_000 && {
                at_4k += 1;
                at_4k == 3
            };
            Window {
                offered,
                achieved: offered as f64,
                slo_met: !noisy && offered < 4_100,
            }
        };
        let mut s = Search::new(1_000, MAX_WINDOWS);
        let (c, offered) = drive(&mut s, measure);
        assert_eq!(c.end, End::Converged, "{offered:?}");
        let first = offered.iter().position(|&r| r == 4_000).unwrap();
        assert!(offered[first..].iter().all(|&r| r >= 4_000), "{offered:?}");
        assert_eq!(c.best.unwrap().offered, 4_000, "{offered:?}");
        let t = s.tally(4_000).unwrap();
        assert_eq!((t.met, t.broken), (3, 1), "{offered:?}");
    }

    #[test]
    fn windows_that_keep_disagreeing_are_too_noisy_not_an_answer() {
        // Every other window breaks, whatever the rate: no rate can be trusted.
        let mut n = 0;
        let measure = |offered: u64| {
            n += 1;
            Window {
                offered,
                achieved: offered as f64,
                slo_met: n % 2 == 0 && offered < 50_000,
            }
        };
        let mut s = Search::new(1_000, MAX_WINDOWS);
        let (c, offered) = drive(&mut s, measure);
        assert_eq!(c.end, End::TooNoisy, "{offered:?}");
        assert!(c.noise.too_much(), "{c:?}");
    }

    #[test]
    fn a_ceiling_below_the_knee_is_the_upper_bound() {
        // The SLO would hold up to 10k, but only 6k can be served: windows above fall behind.
        let mut s = Search::new(1_000, MAX_WINDOWS);
        let (c, _) = drive(&mut s, server(6_000.0, 10_000.0));
        assert_eq!(c.end, End::Converged);
        let upper = c.upper.unwrap().failing();
        assert!(upper.slo_met && upper.saturated(), "{upper:?}");
        let best = c.best.unwrap().offered as f64;
        assert!(
            (6_000.0 * 0.95..=6_000.0 / SATURATED_BELOW).contains(&best),
            "{best}"
        );
    }

    #[test]
    fn a_first_rate_that_fails_halves_then_bisects() {
        let mut s = Search::new(8_000, MAX_WINDOWS);
        let (c, offered) = drive(&mut s, server(1e9, 3_000.0));
        assert_eq!(&offered[..6], &[8_000, 8_000, 4_000, 4_000, 2_000, 2_000]);
        assert_eq!(c.end, End::Converged);
        assert!(c.best.unwrap().offered >= 2_850);
    }

    #[test]
    fn no_rate_meets_an_impossible_slo() {
        let mut s = Search::new(1_600, MAX_WINDOWS);
        let (c, offered) = drive(&mut s, server(1e9, 0.0));
        assert_eq!(c.end, End::NeverMet);
        assert_eq!(
            offered,
            [1_600, 1_600, 800, 800, 400, 400, 200, 200, 100, 100, 100]
        );
        assert_eq!(c.best, None);
        assert_eq!(c.upper.unwrap().offered, 100);
    }

    #[test]
    fn the_window_limit_ends_the_search_with_the_best_so_far() {
        let mut s = Search::new(10, 5);
        let (c, offered) = drive(&mut s, server(1e12, 1e12));
        assert_eq!(offered, [10, 10, 20, 20, 40]);
        assert_eq!(c.end, End::WindowLimit);
        assert_eq!(c.best.unwrap().offered, 20);
        assert_eq!(s.stop().end, End::Stopped);
    }

    #[test]
    fn the_ramp_stops_at_the_rate_cap() {
        let mut s = Search::new(MAX_RPS / 2, MAX_WINDOWS);
        let (c, offered) = drive(&mut s, server(f64::MAX, f64::MAX));
        assert_eq!(offered, [MAX_RPS / 2, MAX_RPS / 2, MAX_RPS, MAX_RPS]);
        assert_eq!(c.end, End::RateCap);
    }

    #[test]
    fn a_rate_without_a_lead_after_six_windows_is_split() {
        let mut t = Tally::new(Window {
            offered: 10,
            achieved: 10.0,
            slo_met: true,
        });
        for met in [true, false, true, false, true] {
            t.add(Window {
                offered: 10,
                achieved: 10.0,
                slo_met: met,
            });
            assert_eq!(t.decision(), Decision::Open);
        }
        t.add(Window {
            offered: 10,
            achieved: 10.0,
            slo_met: false,
        });
        assert_eq!((t.met, t.broken, t.decision()), (3, 3, Decision::Split));
    }

    #[test]
    fn the_probe_start_is_a_quarter_and_at_least_one() {
        assert_eq!(start_from_probe(40_000.0), 10_000);
        assert_eq!(start_from_probe(0.0), 1);
    }
}
