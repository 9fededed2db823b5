//! The record's `ab` block (`respbench ab`, issue 36): every block each side ran, in the order
//! they ran, each a whole record as `--json` writes it, and the paired answer per test and metric.
//!
//! Why whole records per block: a reader (`compare`, `report`, a person) can check any block's
//! histograms, timeline, server watch and verdict, and see the interleaving in time order; the
//! answer is computed from them and can be computed again.

use serde::{Deserialize, Serialize};

use super::document::Document;

/// An A/B run: how it was ordered, what ran, and the answer.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AbRecord {
    /// The seed of the block order (and of both sides' keys and values).
    pub seed: u64,
    /// Pairs of blocks asked for.
    pub rounds: u32,
    /// The order the measured blocks ran in, one letter per block (`ABBABAAB…`).
    pub order: String,
    /// Each side's own options as given (redacted), `a` then `b`.
    pub sides: Vec<AbSide>,
    /// Every block in the order it ran, warm-up blocks first.
    pub blocks: Vec<AbBlock>,
    /// One per test and metric, in test order.
    pub verdicts: Vec<AbVerdict>,
    /// What the run still cannot rule out, one sentence each (a side client-bound in its blocks,
    /// a server restarted between blocks, unequal errors).
    pub confounders: Vec<String>,
    /// The first line of the output.
    pub answer: String,
}

/// One side of the comparison.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AbSide {
    /// `a` or `b`.
    pub side: String,
    /// Its own options as typed (`--a '…'`, or `-u URI` from the short form), redacted.
    pub options: String,
}

/// One block: one side's run of every test.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AbBlock {
    /// `a` or `b`.
    pub side: String,
    /// The pair it belongs to, from 1; 0 for a warm-up block (not analysed).
    pub round: u32,
    /// The block's record, as `respbench --json` writes it.
    pub record: Document,
}

/// The paired answer for one test and metric.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AbVerdict {
    pub test: String,
    /// `rps`, `p50` or `p99` (corrected latencies, µs), or `cpu_us` (the server's CPU time per
    /// request, µs, from the server watch).
    pub metric: String,
    /// `better`, `worse`, `within_noise` or `cant_tell`: B against A.
    pub verdict: String,
    /// B's change against A in percent: the geometric mean of the pairs' ratios, minus one
    /// (`null` without two complete pairs).
    pub change_pct: Option<f64>,
    /// The 95 % interval of `change_pct` (Student's t over the pairs' log ratios).
    pub interval: Option<[f64; 2]>,
    /// Complete pairs the figures come from.
    pub pairs: u32,
    /// Each side's geometric mean over those pairs (rps, or µs): `b / a − 1` is `change_pct`.
    pub a: Option<f64>,
    pub b: Option<f64>,
}
