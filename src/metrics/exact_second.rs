//! One second's full-precision histograms (3 significant figures, as the record's), for the
//! journal only: summed over a killed test's full seconds they are exactly the whole-test
//! histograms a Ctrl-C at its last full second would have written (`docs/journal.md`).
//!
//! Why the difference of the worker's whole-test figures between hand-overs, and not a second
//! pair of histograms recorded per reply: a histogram record costs about 50 instructions, so two
//! more per reply cost the worker about 10% (measured with callgrind, `docs/performance.md`);
//! the difference costs a few passes over the histograms' counts once a second per worker
//! ([`ExactSecond::take_delta`]) and nothing per reply. The timeline keeps its own histograms
//! coarse (2 significant figures, one per second for the whole test); these are moved out of it
//! when the second is handed over (`engine::seconds`), so memory holds only the seconds not yet
//! handed over. No allocation after the test's start, but an error reply's word, once per test.

use super::{CommandTally, ErrorCounts, FAILURE_KINDS, LatencyHistogram};

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
}

/// A worker's whole-test figures so far (its `Recorder`'s), to take a second's part of.
pub struct Whole<'a> {
    /// Corrected latency of replies that are not a mix command's (those are in `commands`).
    pub latency: &'a LatencyHistogram,
    pub uncorrected: &'a LatencyHistogram,
    pub errors: &'a ErrorCounts,
    pub commands: &'a [CommandTally],
}

impl ExactSecond {
    /// Sets `self` to what `whole` gained since `base`, and `base` to `whole`: the figures of
    /// the second that ended (each reply was counted in `whole` after its second's hand-over).
    pub fn take_delta(&mut self, base: &mut ExactSecond, whole: &Whole<'_>) {
        self.corrected.reset();
        self.corrected.merge(whole.latency);
        for c in whole.commands {
            self.corrected.merge(&c.latency);
        }
        self.corrected.subtract(&base.corrected);
        base.corrected.merge(&self.corrected);
        self.uncorrected.reset();
        self.uncorrected.merge(whole.uncorrected);
        self.uncorrected.subtract(&base.uncorrected);
        base.uncorrected.merge(&self.uncorrected);
        self.errors.zero();
        // Error replies only: lost requests are counted by kind in the second itself.
        for (word, n) in whole.errors.iter() {
            let d = n - base.errors.count(word).min(n);
            if d > 0 && !FAILURE_KINDS.contains(&word) {
                self.errors.record_kind(word, d);
                base.errors.record_kind(word, d);
            }
        }
        if self.commands.len() < whole.commands.len() {
            self.commands
                .resize_with(whole.commands.len(), CommandTally::default);
            base.commands
                .resize_with(whole.commands.len(), CommandTally::default);
        }
        for ((d, b), w) in self
            .commands
            .iter_mut()
            .zip(&mut base.commands)
            .zip(whole.commands)
        {
            d.latency.reset();
            d.latency.merge(&w.latency);
            d.latency.subtract(&b.latency);
            b.latency.merge(&d.latency);
            (d.completed, d.errors, d.nils) = (
                w.completed - b.completed,
                w.errors - b.errors,
                w.nils - b.nils,
            );
            (b.completed, b.errors, b.nils) = (w.completed, w.errors, w.nils);
        }
    }
}
