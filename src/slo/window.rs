//! One measured window of a find-max search: the rate it offered, what it achieved, and how it
//! stood against the SLO. Its own file because both the search (`search.rs`) and the paired
//! boundary (`pairs.rs`) read windows, and the search drives the pairs.

/// A window whose achieved rate is below this share of the offered rate fell behind: the load
/// generator or the server could not keep up (the schedule's last slots and replies still in
/// flight make a window read a percent or two low, so 90% leaves room for that).
pub const SATURATED_BELOW: f64 = 0.9;

/// One measured window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// The `--rps` the window offered.
    pub offered: u64,
    /// Requests per second it achieved.
    pub achieved: f64,
    /// Every SLO condition held.
    pub slo_met: bool,
    /// The SLO's figure over its limit, the largest of its conditions' (`slo::Slo::ratio`;
    /// above 1: broken): how far from the SLO the window was, so the search can tell whether
    /// the breaking grows with the load.
    pub slo_ratio: f64,
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
