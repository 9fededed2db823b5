//! The blocks a killed run's modes leave beside (or instead of) a test, rebuilt from the
//! journal's full seconds as the run would have written them at a Ctrl-C there: a mode's
//! run-wide block from its parts' sums (`PartSums`, made sense of by the block's kind,
//! `record::block`: a `--connect-storm`'s `storm`, a `--fuzz` run's `fuzz`), a test's block
//! from its seconds' rows (`record::block::Recovered::rows`: a `--pubsub`/`--stream` test's
//! `delivery`). Each mode's `begin` line carries what the seconds do not say (the block's
//! head); the counts are the seconds' sums. What a killed run cannot know is listed in
//! `docs/journal.md`.
//!
//! Why sums kept as the lines are read, not the lines: the reader holds a line at a time
//! (`read.rs`: a day's journal is gigabytes); what a block needs beyond the test's own sums
//! (`read::Open`) is added up here, second by second.

use std::collections::BTreeMap;

use super::SecondLine;
use crate::metrics::LatencyHistogram;
use crate::record::hdr;

/// A mode's parts beyond a test's sums (a `--connect-storm`'s: a connection is a second's
/// request, its stages the parts; each opener counts into the second's full-precision part as it
/// goes, `SecondTally::direct`): each part's histogram and the parts' error words, while every
/// second that measured something has its parts. The mode's block makes sense of them
/// (`record::block::Block::recover`).
pub(super) struct PartSums {
    exact: bool,
    parts: Vec<LatencyHistogram>,
    errors: BTreeMap<String, u64>,
}

impl PartSums {
    pub(super) fn new() -> Self {
        Self {
            exact: true,
            parts: Vec::new(),
            errors: BTreeMap::new(),
        }
    }

    /// Adds one second's parts and their error words.
    pub(super) fn add(&mut self, s: &SecondLine) -> Result<(), String> {
        if s.exact.is_none() && s.completed + s.failed > 0 {
            self.exact = false;
            self.parts = Vec::new();
            self.errors = BTreeMap::new();
        }
        let Some(e) = s.exact.as_ref().filter(|_| self.exact) else {
            return Ok(());
        };
        let what = "journal mode second";
        for (k, part) in e.commands.iter().enumerate() {
            if self.parts.len() <= k {
                self.parts.resize_with(k + 1, LatencyHistogram::new);
            }
            hdr::add_encoded(&mut self.parts[k], &part.latency, what)?;
        }
        for (word, n) in &e.errors {
            *self.errors.entry(word.clone()).or_default() += n;
        }
        Ok(())
    }

    /// Whether every second that measured something had its parts.
    pub(super) fn exact(&self) -> bool {
        self.exact
    }

    /// The parts' histograms and error words (empty unless [`PartSums::exact`]).
    pub(super) fn into_parts(self) -> (Vec<LatencyHistogram>, Vec<(String, u64)>) {
        (self.parts, self.errors.into_iter().collect())
    }
}
