//! One second's full-precision histograms (3 significant figures, as the record's), for the
//! journal only: summed over a killed test's full seconds they are exactly the whole-test
//! histograms a Ctrl-C at its last full second would have written (`docs/journal.md`).
//!
//! Why a second pair of histograms per worker and not the timeline's own: the timeline keeps one
//! histogram per second for the whole test, so it keeps them coarse (2 significant figures);
//! these are moved out of the timeline when the second is handed over (`engine::seconds`), so
//! memory holds only the seconds not yet handed over. Recording into them is two more constant-time
//! histogram records per reply, no allocation (each worker's pair is made when the test starts; an
//! error reply's word is kept for the test once it has appeared).

use super::{CommandTally, ErrorCounts, LatencyHistogram};

/// A second's corrected and uncorrected latencies at full precision.
#[derive(Clone, Debug, Default)]
pub struct ExactSecond {
    pub corrected: LatencyHistogram,
    pub uncorrected: LatencyHistogram,
    /// The second's error replies by first word (requests lost without a reply are counted by
    /// kind in the second itself). Words with a count of 0 may be listed.
    pub errors: ErrorCounts,
    /// A mix's commands (`--ratio`), by their index in the mix: each one's second (empty
    /// otherwise).
    pub commands: Vec<CommandTally>,
}

impl ExactSecond {
    /// Adds another second's (another worker's part of the same second).
    pub fn add(&mut self, o: &ExactSecond) {
        self.corrected.merge(&o.corrected);
        self.uncorrected.merge(&o.uncorrected);
        self.errors.merge(&o.errors);
        if self.commands.len() < o.commands.len() {
            self.commands
                .resize_with(o.commands.len(), CommandTally::default);
        }
        for (a, b) in self.commands.iter_mut().zip(&o.commands) {
            a.latency.merge(&b.latency);
            a.completed += b.completed;
            a.errors += b.errors;
            a.nils += b.nils;
        }
    }

    pub fn reset(&mut self) {
        self.corrected.reset();
        self.uncorrected.reset();
        self.errors.zero();
        for c in &mut self.commands {
            c.latency.reset();
            (c.completed, c.errors, c.nils) = (0, 0, 0);
        }
    }
}
